"""`kgkit skills learn` with the offline backend, end to end through the CLI, and the
library commands (list, show, remove, diff)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgkit.backends.base import SKILL_HINDSIGHT, PassRequest
from kgkit.backends.offline import OfflineBackend
from kgkit.backends.offline.skills import role_cue
from kgkit.cli import cli
from kgkit.documents.types import Chunk
from kgkit.learning.report import SAMPLED_NOTE
from kgkit.learning.rollouts import SKILL_SCHEMA
from kgkit.learning.settings import split_docs
from kgkit.skills.library import load_library

PEOPLE = ["Ann Lee", "Bob Stone", "Cy Moe", "Dee Poe", "Eve Roe", "Fay Loo"]
ORGS = ["Acme", "Initech", "Globex", "Hooli", "Umbrella", "Wonka"]
CITIES = ["Paris", "Rome", "Oslo", "Lima", "Nice", "Kyiv"]

DOMAIN = f"""\
name: staff
entity_types:
  - name: Person
    patterns: {{phrases: {json.dumps(PEOPLE)}}}
  - name: Org
    patterns: {{phrases: {json.dumps(ORGS)}}}
  - name: City
    patterns: {{phrases: {json.dumps(CITIES)}}}
relation_types:
  - name: Work_For
    head: [Person]
    tail: [Org]
  - name: Live_In
    head: [Person]
    tail: [City]
"""


def entity(name, type_, text):
    start = text.index(name)
    return {"name": name, "type": type_, "aliases": [], "spans": [[start, start + len(name)]]}


def make_gold(folder: Path, employed: range = range(0)) -> Path:
    """Six documents, each: a person works for an organisation (in the ``employed`` ones: is
    employed by it) and lives in a city."""
    folder.mkdir(parents=True)
    for i, (p, o, c) in enumerate(zip(PEOPLE, ORGS, CITIES)):
        s1, s2 = f"{p} {'is employed by' if i in employed else 'works for'} {o}.", f"{p} lives in {c}."
        text = f"{s1} {s2}"
        gold = {"doc_id": f"doc{i}", "source": "test", "title": None,
                "entities": [entity(p, "Person", text), entity(o, "Org", text), entity(c, "City", text)],
                "relations": [{"head": p, "relation": "Work_For", "tail": o, "evidence": s1},
                              {"head": p, "relation": "Live_In", "tail": c, "evidence": s2}],
                "hyperedges": [], "events": [], "temporal": []}
        (folder / f"doc{i}.txt").write_text(text)
        (folder / f"doc{i}.gold.json").write_text(json.dumps(gold))
    return folder


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")  # 2026-01-01
    monkeypatch.chdir(tmp_path)
    (tmp_path / "staff.yaml").write_text(DOMAIN)
    (tmp_path / "skill_library").mkdir()  # a project library: learn writes here, not to the user's
    make_gold(tmp_path / "gold")
    return tmp_path


def snapshot(folder: Path) -> dict[str, str]:
    return {p.relative_to(folder).as_posix(): p.read_text() for p in sorted(folder.rglob("*.yaml"))}


def test_split_is_seeded_sorted_and_disjoint():
    ids = [f"d{i}" for i in range(10)]
    a = split_docs(ids, 0.3, 0.25, seed=1)
    assert a == split_docs(list(reversed(ids)), 0.3, 0.25, seed=1)
    assert (len(a["heldout"]), len(a["dev"]), len(a["train"])) == (3, 2, 5)
    assert sorted(a["heldout"] + a["dev"] + a["train"]) == ids
    assert a != split_docs(ids, 0.3, 0.25, seed=2)


def test_learn_offline_improves_heldout_and_relearning_changes_nothing(project):
    runner = CliRunner()
    args = ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev", "--holdout", "0.3", "--json"]
    result = runner.invoke(cli, args)
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)
    split = split_docs([f"doc{i}" for i in range(6)], 0.3, 0.25, seed=0)
    assert report["split"] == split and len(split["train"]) == 3
    # no trigger is declared, so every edge is missed in every sampled rollout
    assert report["labels"] == {"stable": 0, "unstable": 0, "miss": 6}
    assert report["diagnoses"] == {"other": 6}  # ends found, a cue in the sentence, no trigger
    assert report["notes"] == [SAMPLED_NOTE]
    log = [(a["action"], a["target"], a["pattern"]["phrases"], a["outcome"]) for a in report["action_log"]]
    # each cue, proposed by all three train documents, is folded once with the three edges as provenance
    assert log == [("add", "Work_For", ["works for"], "accepted"), ("add", "Live_In", ["lives in"], "accepted")]
    assert [len(a["edges"]) for a in report["action_log"]] == [3, 3]
    assert report["action_log"][0]["dev_f1_before"] == 0.0 and report["action_log"][0]["dev_f1"] == 0.6667
    assert report["heldout_relations"] == {"before": {"precision": 0.0, "recall": 0.0, "f1": 0.0},
                                           "after": {"precision": 1.0, "recall": 1.0, "f1": 1.0}}
    assert report["library_version"] == {"before": 0, "after": 1} and report["changed"] is True

    lib = load_library("staff", project / "skill_library")
    assert sorted((s["target"], s["support"]["miss"]) for s in lib.skills.values()) == [("Live_In", 3), ("Work_For", 3)]
    assert all(s["created"] == s["updated"] == "2026-01-01" for s in lib.skills.values())
    assert lib.changelog[0]["heldout_relation_f1"] == {"before": 0.0, "after": 1.0}

    first = snapshot(project / "skill_library")
    result = runner.invoke(cli, args[:-1])
    assert result.exit_code == 0, result.output
    # every edge is found now; the sampled rollouts lose some sometimes, but those edges are
    # already learned from, so nothing changes
    assert "edges: 1 stable, 5 unstable, 0 miss" in result.output
    assert "actions: none; 5 edges already learned from" in result.output
    assert "library " + str(project / "skill_library" / "staff") + ": unchanged (version 1)" in result.output
    assert snapshot(project / "skill_library") == first


def test_learn_text_report_and_bad_input(project):
    runner = CliRunner()
    result = runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev"])
    lines = result.output.splitlines()
    assert lines[1] == "split (seed 0): 3 train, 1 dev, 2 held-out; 3 rollouts at temperature 0.7; gate dev"
    assert lines[2:9] == [
        "edges: 0 stable, 0 unstable, 6 miss",
        "misses by diagnosis: 6 other",
        "accepted: 2 skills (0 from path induction), 0 gazetteer entries",
        "actions: 2 add",
        "held-out relations   P      R      F1",
        "  before            0.000  0.000  0.000",
        "  after             1.000  1.000  1.000",
    ]
    sk = {s["target"]: s["id"] for s in load_library("staff", project / "skill_library").skills.values()}
    edges = lines[lines.index("edges (label, found in, document, edge, actions):") + 1:]
    train = split_docs([f"doc{i}" for i in range(6)], 0.3, 0.25, seed=0)["train"]
    first = int(train[0][3:])
    assert edges[:2] == [
        f"  miss     0/3  {train[0]}  {PEOPLE[first]} --Work_For--> {ORGS[first]} [other]  add {sk['Work_For']} accepted",
        f"  miss     0/3  {train[0]}  {PEOPLE[first]} --Live_In--> {CITIES[first]} [other]  add {sk['Live_In']} accepted",
    ]
    assert len(edges) == 6 and edges[2].endswith(f"add {sk['Work_For']} accepted")
    result = runner.invoke(cli, ["skills", "learn", "--gold", "nope", "--domain", "staff.yaml"])
    assert result.exit_code == 2 and result.output == "Error: gold folder not found: nope\n"
    result = runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev", "--holdout", "1.5"])
    assert result.exit_code == 2 and "--holdout" in result.output
    # the default gate folds every document that is not held out: no dev split
    result = runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--library", "cv"])
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[1] == ("split (seed 0): 4 train, 0 dev, 2 held-out; 3 rollouts at temperature 0.7; "
                                             "gate cv (4 folds of the train documents)")


def test_library_commands(project):
    runner = CliRunner()
    assert runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev"]).exit_code == 0
    saved = project / "before"
    import shutil

    shutil.copytree(project / "skill_library", saved)
    lib = load_library("staff", project / "skill_library")
    work = next(s for s in lib.skills.values() if s["target"] == "Work_For")

    listing = runner.invoke(cli, ["skills", "list", "staff"]).output.splitlines()
    assert listing[0] == "staff: library version 1, 2 skills, 0 gazetteer names"
    assert any(line.startswith(work["id"] + "  v1  relation Work_For")
               and line.endswith("miss 3  dev +0.6667  works for") for line in listing[1:])

    shown = runner.invoke(cli, ["skills", "show", "staff", work["id"][:7]])
    assert shown.exit_code == 0 and shown.output.startswith(f"id: {work['id']}\nversion: 1\nkind: relation\n")

    # show carries each miss's diagnosis in the provenance
    assert "diagnosis: other" in runner.invoke(cli, ["skills", "show", "staff", work["id"]]).output
    missing = runner.invoke(cli, ["skills", "show", "staff", "sk_zzz"])
    assert missing.exit_code == 2 and missing.output.startswith("Error: no skill 'sk_zzz' in the staff library")

    removed = runner.invoke(cli, ["skills", "remove", "staff", work["id"]])
    assert removed.exit_code == 0
    assert removed.output == f"removed {work['id']} from {project / 'skill_library' / 'staff'} (library version 2)\n"
    assert not (project / "skill_library" / "staff" / "skills" / f"{work['id']}.yaml").exists()
    assert load_library("staff").changelog[-1] == {"version": 2, "date": "2026-01-01", "removed": [work["id"]]}


    unknown = runner.invoke(cli, ["skills", "list", "staf"])
    assert unknown.exit_code == 2 and unknown.output.startswith("Error: unknown domain 'staf'; did you mean staff?")

    exported = runner.invoke(cli, ["skills", "export", "staff", str(project / "shared")])
    assert exported.exit_code == 0, exported.output
    assert load_library("staff", project / "shared").skills == load_library("staff").skills
    again = runner.invoke(cli, ["skills", "export", "staff", str(project / "shared")])
    assert again.exit_code == 2 and "already exists" in again.output

    diff = runner.invoke(cli, ["skills", "diff", "staff", str(saved)])
    assert diff.output == f"- {work['id']} relation Work_For\n"
    assert runner.invoke(cli, ["skills", "diff", "staff", str(project / "skill_library")]).output == "no differences\n"


def test_offline_hindsight_reads_the_words_between_the_mentions():
    def ask(edge, evidence, entities):
        chunk = Chunk(id="c", doc_id="d", index=0, text=evidence, start=0, end=len(evidence))
        context = {"domain": None, "gold_edge": edge, "evidence": evidence, "predictions": {"entities": entities}}
        result = OfflineBackend().run(PassRequest(kind=SKILL_HINDSIGHT, stage="skills", chunk=chunk,
                                                  schema=SKILL_SCHEMA, context=context, prompt="skill_hindsight.j2"))
        assert result.ok, result.error
        return [(s["kind"], s["target"], s["pattern"]["phrases"] or s["pattern"]["regex"]) for s in result.data["skills"]]

    edge = {"head": "John Smith", "relation": "Work_For", "tail": "Acme", "head_type": "Peop", "tail_type": "Org"}
    sentence = "John Smith, who was for many years an employee of Acme, retired."
    # the cue next to the later mention, without its article: it can fire in another document;
    # then the shorter cue inside it (vetting and the gate decide which, if any, holds); "employee"
    # is a role noun, so the role class too
    assert ask(edge, sentence, ["John Smith", "Acme"]) == [("relation", "Work_For", ["employee of"]),
                                                           ("relation", "Work_For", ["of"]),
                                                           ("relation", "Work_For", [role_cue()])]
    # an end never extracted: the relation cannot come out, so entity skills are proposed too —
    # a type cue (a capitalised name right before "retired"), then the name itself
    assert ask(edge, sentence, ["John Smith"]) == [
        ("relation", "Work_For", ["employee of"]),
        ("relation", "Work_For", ["of"]),
        ("relation", "Work_For", [role_cue()]),
        ("entity", "Org", [r"(?P<name>(?-i:[A-Z][A-Za-z'.-]*(?:\s+(?:[A-Z][A-Za-z'.-]*|de|van|von|der|la|bin|al))"
                           r"{0,4})),?\s+retired\b"]),
        ("entity", "Org", ["Acme"])]
    # two names joined by a comma alone: no cue word, but a tight cue — the shape, never the names
    apposition = {"head": "Chattanooga", "relation": "Located_In", "tail": "Tenn.", "head_type": "Loc",
                  "tail_type": "Loc"}
    assert ask(apposition, "He lives in Chattanooga, Tenn., now.", ["Chattanooga", "Tenn."]) == [
        ("relation", "Located_In", [r"(?<=\b(?-i:[A-Z])[\w'.-]*)\s*,\s*(?=(?-i:[A-Z]))"])]
    # names between the mentions never become part of a trigger; relative pronouns and auxiliaries go
    killed = {"head": "Oswald", "relation": "Kill", "tail": "Kennedy", "head_type": "Peop", "tail_type": "Peop"}
    assert ask(killed, "Oswald, who had shot Kennedy, fled.", ["Oswald", "Kennedy"]) == [("relation", "Kill", ["shot"])]
    # a capitalised word ends the cue ("met Ruby" is not part of it) and a bare "and" is none
    assert ask(killed, "Oswald met Ruby and Kennedy.", ["Oswald", "Kennedy"]) == []


def test_an_entity_type_cue_must_give_back_the_gold_name():
    from kgkit.backends.offline.skills import cue_candidates

    (cue,) = cue_candidates("Lee Harvey Oswald", "Peop", "The assassin Lee Harvey Oswald was shot.")
    assert cue["pattern"]["regex"][0].startswith(r"\bassassin\s+(?P<name>")
    # "Yesterday Reagan said": the capitalised run next to "said" is "Yesterday Reagan", not the name
    assert cue_candidates("Reagan", "Peop", "Yesterday Reagan said no.") == []
    # function words are no type cue
    assert cue_candidates("Boston", "Loc", "He lives in Boston.") == []


def test_extraction_uses_the_learned_skills_and_lists_them(project):
    runner = CliRunner()
    assert runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev"]).exit_code == 0
    lib = load_library("staff", project / "skill_library")
    doc = project / "new.txt"
    doc.write_text("Zed Ash works for Acme. Zed Ash lives in Oslo.")  # "Zed Ash" is no declared person
    (project / "staff.yaml").write_text(DOMAIN.replace('"Fay Loo"', '"Fay Loo", "Zed Ash"'))

    def run(*extra):
        out = project / ("out" + "".join(extra))
        result = runner.invoke(cli, ["extract", str(doc), "--domain", "staff.yaml", "--out", str(out), *extra])
        assert result.exit_code == 0, result.output
        folder = out / "new"
        manifest = json.loads((folder / "manifest.json").read_text())
        edges = json.loads((folder / "views" / "binary.json").read_text())["edges"]
        return manifest["skills"], len(edges)

    skills, edges = run()
    assert sorted(skills) == sorted(lib.skills) and edges == 2
    assert run("--no-skills") == ([], 0)


def test_skills_travel_from_the_user_library(project, monkeypatch):
    """Without ./skill_library, learn writes to the user's library and extract uses it from any folder."""
    import shutil

    shutil.rmtree(project / "skill_library")
    runner = CliRunner()
    assert runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev"]).exit_code == 0
    from kgkit.skills.library import user_library_root

    user = user_library_root()
    assert sorted(s["target"] for s in load_library("staff", user).skills.values()) == ["Live_In", "Work_For"]
    elsewhere = project / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(project / "staff.yaml", elsewhere / "staff.yaml")
    (elsewhere / "new.txt").write_text("Ann Lee works for Acme.")
    monkeypatch.chdir(elsewhere)
    result = runner.invoke(cli, ["extract", "new.txt", "--domain", "staff.yaml", "--out", "out"])
    assert result.exit_code == 0, result.output
    manifest = json.loads((elsewhere / "out" / "new" / "manifest.json").read_text())
    assert manifest["skills"] == [next(s["id"] for s in load_library("staff", user).skills.values()
                                       if s["target"] == "Work_For")]
    assert runner.invoke(cli, ["skills", "list", "staff"]).output.startswith("staff: library version 1, 2 skills")


def test_eval_scores_only_the_named_documents(project):
    runner = CliRunner()
    learned = runner.invoke(cli, ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev", "--json"])
    (project / "learn.json").write_text(learned.output)
    heldout = json.loads(learned.output)["split"]["heldout"]

    def relations(*extra):
        result = runner.invoke(cli, ["eval", "--gold", "gold", "--domain", "staff.yaml", "--view", "binary",
                                     "--json", *extra])
        assert result.exit_code == 0, result.output
        return json.loads(result.output)

    by_report = relations("--docs", "learn.json")
    assert sorted(by_report["per_document"]) == heldout
    (project / "ids.txt").write_text("# held out\n" + "\n".join(heldout) + "\n")
    assert relations("--docs", "ids.txt")["scores"] == by_report["scores"]
    assert relations("--docs", "learn.json", "--split", "train")["documents"] == 3
    bad = runner.invoke(cli, ["eval", "--gold", "gold", "--docs", "learn.json", "--split", "nope"])
    assert bad.exit_code == 2 and "no split 'nope'" in bad.output
    (project / "ids.txt").write_text("doc0\nmissing_doc\n")
    bad = runner.invoke(cli, ["eval", "--gold", "gold", "--docs", "ids.txt"])
    assert bad.exit_code == 2 and "missing_doc" in bad.output


def test_heldout_from_keeps_learning_on_the_other_documents():
    ids = [f"d{i}" for i in range(10)]
    split = split_docs(ids, 0.5, 0.25, seed=3, heldout_from=("d0", "d1", "d2", "d3"))
    assert len(split["heldout"]) == 2 and set(split["heldout"]) <= {"d0", "d1", "d2", "d3"}
    assert not set(split["train"] + split["dev"]) & {"d0", "d1", "d2", "d3"}
    assert sorted(split["train"] + split["dev"]) == ids[4:]


def _scripted_gate(monkeypatch, script):
    """Replace the gate's measurement (not the loop) by ``script``: candidate phrase or regex ->
    the gains of its successive gate calls. Returns the list of (target, cue) the gate was asked about."""
    from kgkit.learning.gate import Gate

    asked = []

    def gain(self, loop, lib, trial, cand, rule=None):
        cue = (cand["pattern"]["phrases"] or ["regex"])[0]
        asked.append((cand["target"], cue))
        gains = script.get((cand["target"], cue), [0.0])
        return gains[min(asked.count((cand["target"], cue)), len(gains)) - 1], {"fold_gains": []}

    monkeypatch.setattr(Gate, "gain", gain)
    return asked


def test_a_change_turned_down_before_a_later_acceptance_is_tried_once_more_at_the_end(project, monkeypatch):
    """"works for" is turned down at the gate (gain 0), then "lives in" is accepted: the
    library has changed since, so "works for" is gated again at the end, accepted, and its
    edges leave ``rejected``. "for" and the tight cue, turned down for the same edges, are not
    retried: the accepted "works for" covers those edges. Vetting and the applied check are real."""
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills

    asked = _scripted_gate(monkeypatch, {("Work_For", "works for"): [0.0, 0.1], ("Live_In", "lives in"): [0.1]})
    report = learn_skills(project / "gold", project / "staff.yaml",
                          settings=LearnSettings(rollouts=1, temperature=0.0, seed=0),
                          library_dir=project / "skill_library")
    assert asked == [("Work_For", "works for"), ("Work_For", "for"), ("Work_For", "regex"), ("Live_In", "lives in"),
                     ("Work_For", "works for")]
    log = [(a["target"], a["pattern"]["phrases"], a["outcome"]) for a in report.actions]
    assert log == [("Work_For", ["works for"], "rejected"), ("Work_For", ["for"], "rejected"),
                   ("Work_For", [], "rejected"), ("Live_In", ["lives in"], "accepted"),
                   ("Work_For", ["works for"], "accepted")]
    assert report.actions[-1]["dev_gain"] == 0.1 and report.accepted()["skills"] == 2
    lib = load_library("staff", project / "skill_library")
    assert sorted(s["pattern"]["phrases"][0] for s in lib.skills.values()) == ["lives in", "works for"]
    assert lib.rejected == []  # the retry's acceptance took its edges (and the shorter cues' turn-downs) out


def test_a_run_that_accepts_nothing_retries_nothing(project, monkeypatch):
    """No change was accepted after any turn-down, so no candidate meets the gate twice and nothing is written."""
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills

    asked = _scripted_gate(monkeypatch, {})
    report = learn_skills(project / "gold", project / "staff.yaml",
                          settings=LearnSettings(rollouts=1, temperature=0.0, seed=0),
                          library_dir=project / "skill_library")
    assert len(asked) == len(set(asked)) == 6  # three cues for each relation, each gated once
    assert report.accepted()["skills"] == 0 and not report.changed
    assert load_library("staff", project / "skill_library").skills == {}


def test_two_cues_of_one_relation_are_one_skill_each_with_its_own_gain(project, monkeypatch):
    """Fewer, fuller skills (``skills.join``, the default): "works for" and "employed by" are
    accepted for Work_For by two gate calls, and the library holds one Work_For skill with both
    cues, each with the gain it was accepted with; the report counts the join among the accepted
    skills. Without join the same run adds two skills. Vetting and the applied check are real."""
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills

    gold = make_gold(project / "gold2", employed=range(3, 6))  # half the documents say it another way
    script = {("Work_For", "works for"): [0.1], ("Work_For", "employed by"): [0.05]}
    settings = LearnSettings(rollouts=1, temperature=0.0, seed=0, holdout=0.0, min_support=1)
    _scripted_gate(monkeypatch, script)
    report = learn_skills(gold, project / "staff.yaml", settings=settings, library_dir=project / "skill_library")
    accepted = [(a["action"], a["pattern"]["phrases"]) for a in report.actions if a["outcome"] == "accepted"]
    assert accepted == [("add", ["works for"]), ("join", ["employed by"])]
    assert report.accepted() == {"skills": 2, "joined": 1, "gazetteer": 0, "induction": 0}
    (skill,) = load_library("staff", project / "skill_library").skills.values()
    assert skill["pattern"]["phrases"] == ["employed by", "works for"]
    assert skill["cue_gains"] == {"employed by": 0.05, "works for": 0.1} and skill["dev_gain"] == 0.05
    listing = CliRunner().invoke(cli, ["skills", "list", "staff"]).output
    assert listing.splitlines()[1].endswith("dev +0.0500  employed by (+0.0500), works for (+0.1000)")

    apart = learn_skills(gold, project / "staff.yaml", library_dir=project / "apart",
                         settings=LearnSettings(rollouts=1, temperature=0.0, seed=0, holdout=0.0, min_support=1,
                                                join=False))
    assert [a["action"] for a in apart.actions if a["outcome"] == "accepted"] == ["add", "add"]
    assert sorted(tuple(s["cue_gains"].items()) for s in load_library("staff", project / "apart").skills.values()) == [
        (("employed by", 0.05),), (("works for", 0.1),)]


def test_max_edges_bounds_the_skill_passes_spread_over_documents_and_a_later_run_asks_the_rest(project):
    runner = CliRunner()
    args = ["skills", "learn", "--gold", "gold", "--domain", "staff.yaml", "--gate", "dev", "--json"]
    report = json.loads(runner.invoke(cli, [*args, "--max-edges", "2"]).output)
    train = split_docs([f"doc{i}" for i in range(6)], 0.3, 0.25, seed=0)["train"]
    assert report["labels"]["miss"] == 6 and report["unasked"] == 4
    # each of the first two train documents' first edge (Work_For), not both edges of one document
    asked = sorted((doc, edge[1]) for a in report["action_log"] for doc, edge in zip(a["docs"], a["edges"]))
    assert asked == [(train[0], "Work_For"), (train[1], "Work_For")]
    assert [a["target"] for a in report["action_log"]] == ["Work_For"]
    # the edges not asked about are not learned from: the next run asks them (and only them)
    again = runner.invoke(cli, args[:-1])
    assert again.exit_code == 0, again.output
    assert "2 edges already learned from" in again.output and "not asked about" not in again.output
    result = runner.invoke(cli, [*args[:-1], "--max-edges", "0"])
    assert result.exit_code == 2 and "--max-edges" in result.output
