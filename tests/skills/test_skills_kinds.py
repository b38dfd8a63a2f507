"""The skill kinds the loop proposes and whether the offline backend applies each one.

A skill accepted but never applied at extraction would be a defect; so would a candidate
that names a person or place. All texts here are written for these tests.
"""
from __future__ import annotations

import regex

from kgkit.backends.offline.entities import find_entities
from kgkit.backends.offline.relations import find_relations
from kgkit.backends.offline.skills import NAME_RX, juxtaposition_cue, nearest_cue, relation_candidates, relations_with_skills, role_cue, tight_cue, title_candidates, typed_cue
from kgkit.skills.cues import cue_ends
from kgkit.catalog.load import load_domain
from kgkit.learning.folding import room_for_a_name
from kgkit.skills.library import make_skill
from kgkit.skills.retrieve import gazetteer_skill
from kgkit.learning.vetting import PROMPT_TEXT_CHARS

DOMAIN = """\
name: towns
entity_types:
  - name: Official
  - name: Town
    patterns: {phrases: [Tarnow, Galicia, Brno, Moravia]}
relation_types:
  - name: Located_In
    head: [Town]
    tail: [Town]
  - name: Mayor_Of
    head: [Official]
    tail: [Town]
"""


def skill(kind, target, phrases=(), regexes=()):
    return make_skill(kind, target, {"phrases": list(phrases), "regex": list(regexes)}, "x", "", [], "2026-01-01")


def test_tight_cue_is_the_shape_between_two_names_never_the_names():
    rx = tight_cue(" in ")
    text = "The mill in Tarnow in Galicia closed; Brno in Moravia did not."
    spans = [text[m.start():m.end()] for m in regex.finditer(rx, text, regex.I)]
    assert spans == [" in ", " in "]  # between two capitalised words only ("mill in Tarnow" is not)
    assert "Tarnow" not in rx and "Galicia" not in rx
    assert regex.search(tight_cue(", "), "Tarnow, Galicia").group(0) == ", "
    # a list is no relation, and a long or capitalised gap is no tight cue
    assert tight_cue(" and ") is None and tight_cue(" far away from the old ") is None
    assert tight_cue(" of New ") is None and tight_cue("") is None


def test_relation_candidates_go_from_the_whole_trigger_to_shorter_cues_then_the_shape():
    """Longest cue first; with ``typed`` (skills.typed_cues) a one-word cue plain, then typed to the edge's ends; the tight cue last."""
    edge = {"head": "Tarnow", "relation": "Located_In", "tail": "Galicia", "head_type": "Place", "tail_type": "Place"}
    cands = relation_candidates(edge, "The town of Tarnow, a market town of Galicia, grew.")
    assert [c["pattern"]["phrases"] for c in cands] == [["market town of"], ["town of"], ["of"]]
    cands = relation_candidates(edge, "The town of Tarnow, a market town of Galicia, grew.", typed=True)
    assert [c["pattern"]["phrases"] or c["pattern"]["regex"] for c in cands] == [
        ["market town of"], ["town of"], ["of"], [typed_cue("of", "Place", "Place")]]
    cands = relation_candidates(edge, "The mill in Tarnow in Galicia closed.", typed=True)
    assert [c["pattern"]["phrases"] or c["pattern"]["regex"] for c in cands] == [
        ["in"], [typed_cue("in", "Place", "Place")], [tight_cue(" in ")]]
    assert cands[2]["example"] == "[Place] in [Place]" and "nearest" in cands[1]["instruction"]
    assert all("Tarnow" not in c["instruction"] + c["example"] for c in cands)


def test_a_title_pattern_is_proposed_only_where_the_rules_found_the_bare_name():
    sentence = "On Monday Mayor Ida Brandt opened the bridge."
    (cand,) = title_candidates("Mayor Ida Brandt", "Person", sentence, {"ida brandt"})
    (rx,) = cand["pattern"]["regex"]
    assert rx == r"(?<![\w.])(?P<name>(?-i:Mayor)\s+" + NAME_RX + ")"
    assert "Brandt" not in rx and "Brandt" not in cand["instruction"] + cand["example"]
    # it generalises: another mayor in another text
    assert regex.search(rx, "Yesterday Mayor Otto Lind spoke.", regex.I).group("name") == "Mayor Otto Lind"
    assert title_candidates("Mayor Ida Brandt", "Person", sentence, set()) == []  # the rules missed the name itself
    # a first name before a surname is no title; an abbreviation before one word is
    assert title_candidates("Ida Brandt", "Person", "Ida Brandt spoke.", {"brandt"}) == []
    (gen,) = title_candidates("Gen. Brandt", "Person", "Then Gen. Brandt spoke.", {"brandt"})
    assert gen["pattern"]["regex"] == [r"(?<![\w.])(?P<name>(?-i:Gen\.)\s+" + NAME_RX + ")"]


def test_the_offline_backend_applies_every_kind_of_accepted_skill(tmp_path):
    (tmp_path / "towns.yaml").write_text(DOMAIN)
    domain = load_domain(tmp_path / "towns.yaml")
    text = "Mayor Ida Brandt governs Tarnow. The mill of Tarnow, Galicia is old. Olek Wirth governs Brno."
    assert {(e.name, e.type) for e in find_entities(text, domain.entity_types)} == {
        ("Tarnow", "Town"), ("Galicia", "Town"), ("Brno", "Town")}  # no person without the skills
    title = skill("entity", "Official", regexes=[r"(?<![\w.])(?P<name>(?-i:Mayor)\s+" + NAME_RX + ")"])
    name = gazetteer_skill({"id": "gz_1", "name": "Olek Wirth", "type": "Official"})
    found = {(e.name, e.type) for e in find_entities(text, domain.entity_types, [title, name])}
    assert {("Mayor Ida Brandt", "Official"), ("Olek Wirth", "Official")} <= found

    entities = [{"name": n, "type": t} for n, t in sorted(found)]
    assert find_relations(text, entities, domain.entity_types, domain.relation_types) == []
    phrase = skill("relation", "Mayor_Of", phrases=["governs"])
    shape = skill("relation", "Located_In", regexes=[tight_cue(", ")])
    got = {(r.head, r.relation, r.tail) for r in find_relations(text, entities, domain.entity_types,
                                                                  domain.relation_types, [phrase, shape])}
    assert got == {("Mayor Ida Brandt", "Mayor_Of", "Tarnow"), ("Olek Wirth", "Mayor_Of", "Brno"),
                   ("Tarnow", "Located_In", "Galicia")}


def test_a_nearest_shaped_cue_binds_only_the_two_names_nearest_to_it_in_one_clause(tmp_path):
    """Plain, "in" binds any two towns it stands between; in its nearest shape only the
    names next to it, when no comma cuts them off and their types are the relation's ends."""
    (tmp_path / "towns.yaml").write_text(DOMAIN)
    domain = load_domain(tmp_path / "towns.yaml")
    text = ("Tarnow traders, the guide said, met in Brno. The Galicia mill in Moravia closed. "
            "Brno hosted Lee in Tarnow.")
    entities = [{"name": n, "type": "Town"} for n in ("Tarnow", "Brno", "Galicia", "Moravia")] + [
        {"name": "Lee", "type": "Official"}]

    def located(skills):
        return {(r.head, r.tail) for r in relations_with_skills(text, entities, domain.entity_types,
                                                                domain.relation_types, skills)}

    assert located([]) == set()
    assert located([skill("relation", "Located_In", phrases=["in"])]) == {
        ("Tarnow", "Brno"), ("Galicia", "Moravia"), ("Brno", "Tarnow")}
    assert located([skill("relation", "Located_In", regexes=[nearest_cue("in")])]) == {("Galicia", "Moravia")}
    # the same as find_relations when no cue is shaped
    plain = [skill("relation", "Located_In", phrases=["in"])]
    assert relations_with_skills(text, entities, domain.entity_types, domain.relation_types, plain) == \
        find_relations(text, entities, domain.entity_types, domain.relation_types, plain)


def test_names_side_by_side_give_a_juxtaposition_cue_in_the_shape_the_evidence_writes_them(tmp_path):
    """Nothing between the two names: the cue is their adjacency, nearest-shaped, and when the
    later name is in capitals (a source line) only before a name in capitals."""
    edge = {"head": "Tarnow", "relation": "Located_In", "tail": "Galicia", "head_type": "Town", "tail_type": "Town"}
    (caps,) = relation_candidates(edge, "Tarnow GALICIA in Polish, 3 May.")
    (plain,) = relation_candidates(edge, "Tarnow Galicia reported on 3 May.")
    assert caps["pattern"] == {"phrases": [], "regex": [juxtaposition_cue(True)]}
    assert plain["pattern"] == {"phrases": [], "regex": [juxtaposition_cue(False)]}
    assert "Tarnow" not in caps["instruction"] + caps["example"] and "capitals" in caps["instruction"]
    # short enough to reach an LLM prompt as written (not rewritten from the regex), CoNLL04's
    # type names or long ones
    long_names = {**edge, "head_type": "Organization", "tail_type": "Location", "relation": "headquartered_in"}
    for cand in (caps, relation_candidates(long_names, "Tarnow GALICIA in Polish, 3 May.")[0]):
        assert len(cand["instruction"]) <= PROMPT_TEXT_CHARS and "(?#" not in cand["instruction"]
    (tmp_path / "towns.yaml").write_text(DOMAIN)
    domain = load_domain(tmp_path / "towns.yaml")
    text = "Tarnow GALICIA in Polish. Brno Moravia fair. Tarnow, Old Mill and Moravia."
    entities = [{"name": n, "type": "Town"} for n in ("Tarnow", "GALICIA", "Brno", "Moravia")]

    def located(regexes):
        return {(r.head, r.tail) for r in relations_with_skills(
            text, entities, domain.entity_types, domain.relation_types,
            [skill("relation", "Located_In", regexes=regexes)])}

    assert located([juxtaposition_cue(True)]) == {("Tarnow", "GALICIA")}
    assert located([juxtaposition_cue(False)]) == {("Tarnow", "GALICIA"), ("Brno", "Moravia")}
    # bound as a plain trigger, the blank inside "Old Mill" joins the names around it
    assert ("Tarnow", "Moravia") in located([juxtaposition_cue(False).removeprefix("(?#nearest)")])


def test_a_role_noun_trigger_is_generalised_to_the_role_class(tmp_path):
    """"spokesman" between a town and its official: also proposed as any role noun, nearest-shaped."""
    edge = {"head": "Olek Wirth", "relation": "Mayor_Of", "tail": "Brno", "head_type": "Official",
            "tail_type": "Town"}
    cands = relation_candidates(edge, "The Brno spokesman Olek Wirth spoke.")
    assert [c["pattern"]["phrases"] or c["pattern"]["regex"] for c in cands] == [
        ["spokesman"], [role_cue()], [tight_cue(" spokesman ")]]
    assert "Wirth" not in cands[1]["instruction"] + cands[1]["example"]
    assert role_cue() not in str(relation_candidates(edge, "Olek Wirth governs Brno."))
    (tmp_path / "towns.yaml").write_text(DOMAIN)
    domain = load_domain(tmp_path / "towns.yaml")
    text = "The Tarnow mayor Ida Brandt spoke, and Brno said Olek Wirth left."
    entities = [{"name": "Tarnow", "type": "Town"}, {"name": "Brno", "type": "Town"},
                {"name": "Ida Brandt", "type": "Official"}, {"name": "Olek Wirth", "type": "Official"}]
    got = relations_with_skills(text, entities, domain.entity_types, domain.relation_types,
                                [skill("relation", "Mayor_Of", regexes=[role_cue()])])
    assert {(r.head, r.relation, r.tail) for r in got} == {("Ida Brandt", "Mayor_Of", "Tarnow")}


def test_gazetteer_names_stay_within_their_share_of_a_runs_accepted_items():
    assert not room_for_a_name({"skills": 0, "gazetteer": 0}, 0.2)  # no skill yet: no name
    assert not room_for_a_name({"skills": 3, "gazetteer": 0}, 0.2)  # 1 of 4 is 25 %
    assert room_for_a_name({"skills": 4, "gazetteer": 0}, 0.2)  # 1 of 5 is 20 %
    assert not room_for_a_name({"skills": 4, "gazetteer": 1}, 0.2)
    assert room_for_a_name({"skills": 8, "gazetteer": 1}, 0.2)  # 2 of 10
    assert room_for_a_name({"skills": 0, "gazetteer": 3}, 1.0)  # share 1: names as the cap allows


def employed_by_gold(tmp_path):
    """Six one-sentence documents: dev states where people live, train and held-out whom they work for.

    So "employed by" (Work_For) is vetted and raises train F1 but changes nothing on dev.
    Returns the split (seed 0) and the learn arguments.
    """
    import json

    from kgkit.config.model import Config
    from kgkit.learning.settings import split_docs

    people, orgs, towns = ["Ann Lee", "Bo Stahl", "Cy Moe", "Di Poe", "Ed Roe", "Fe Loo"], \
        ["Acme", "Initech", "Globex", "Hooli", "Umbra", "Wonka"], ["Tarnow", "Brno", "Oslo", "Lima", "Nice", "Kyiv"]
    (tmp_path / "staff.yaml").write_text(f"""\
name: staff
entity_types:
  - {{name: Worker, patterns: {{phrases: {json.dumps(people)}}}}}
  - {{name: Firm, patterns: {{phrases: {json.dumps(orgs)}}}}}
  - {{name: Town, patterns: {{phrases: {json.dumps(towns)}}}}}
relation_types:
  - {{name: Work_For, head: [Worker], tail: [Firm]}}
  - {{name: Live_In, head: [Worker], tail: [Town], triggers: {{phrases: [resides in]}}}}
""")
    ids = [f"doc{i}" for i in range(6)]
    split = split_docs(ids, 0.3, 0.25, seed=0)
    gold = tmp_path / "gold"
    gold.mkdir()
    for i, doc in enumerate(ids):
        p, o, c = people[i], orgs[i], towns[i]
        head, rel, tail, sentence = (p, "Live_In", c, f"{p} lives in {c}.") if doc in split["dev"] else \
            (p, "Work_For", o, f"{p} is employed by {o}.")
        ents = [{"name": n, "type": t, "aliases": [], "spans": [[sentence.index(n), sentence.index(n) + len(n)]]}
                for n, t in ((head, "Worker"), (tail, "Town" if rel == "Live_In" else "Firm"))]
        (gold / f"{doc}.txt").write_text(sentence)
        (gold / f"{doc}.gold.json").write_text(json.dumps({
            "doc_id": doc, "source": "test", "title": None, "entities": ents,
            "relations": [{"head": head, "relation": rel, "tail": tail, "evidence": sentence}],
            "hyperedges": [], "events": [], "temporal": []}))
    return split, {"config": Config(), "library_dir": tmp_path / "lib"}, (gold, tmp_path / "staff.yaml")


def test_a_cue_that_helps_train_but_changes_nothing_on_dev_is_rejected_with_its_figure(tmp_path):
    """Vetting and the train check pass "employed by"; dev never states it: equal is a rejection."""
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills
    from kgkit.skills.library import load_library

    split, kwargs, (gold, domain) = employed_by_gold(tmp_path)
    report = learn_skills(gold, domain, settings=LearnSettings(rollouts=1, temperature=0.0, seed=0, gate="dev"), **kwargs)
    first = report.actions[0]
    assert (first["pattern"]["phrases"], first["vetting"]["applied"]["new_right"], first["outcome"],
            first["dev_gain"]) == (["employed by"], len(split["train"]), "rejected", 0.0)
    assert load_library("staff", tmp_path / "lib").skills == {}
    assert report.accepted() == {"skills": 0, "joined": 0, "gazetteer": 0, "induction": 0}


def test_a_gate_on_train_and_dev_keeps_that_cue_with_its_gain_and_it_reaches_held_out(tmp_path):
    """gate "train+dev": the same cue raises F1 over train and dev together, so it is kept,
    its gain recorded; the held-out documents (never gated on) then find their relations."""
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.gate import gate_docs
    from kgkit.learning.loop import learn_skills
    from kgkit.skills.library import load_library

    split, kwargs, (gold, domain) = employed_by_gold(tmp_path)
    assert gate_docs(split, "train+dev") == sorted(split["train"] + split["dev"])
    assert gate_docs(split, "dev") == split["dev"]
    report = learn_skills(gold, domain, settings=LearnSettings(rollouts=1, temperature=0.0, seed=0, gate="train+dev"),
                          **kwargs)
    first = report.actions[0]
    assert (first["pattern"]["phrases"], first["outcome"]) == (["employed by"], "accepted")
    assert first["dev_gain"] > 0 and first["dev_f1"] > first["dev_f1_before"]
    (kept,) = load_library("staff", tmp_path / "lib").skills.values()
    assert kept["pattern"]["phrases"] == ["employed by"] and kept["dev_gain"] == first["dev_gain"]
    assert report.heldout("before")["f1"] == 0.0 and report.heldout("after")["f1"] == 1.0


def test_the_cross_validated_gate_keeps_that_cue_with_the_gain_of_each_fold(tmp_path):
    """gate "cv" (the default): no dev split; the four learning documents are four folds, each
    scored by a learner that vetted and applied "employed by" on the other three. It wins
    F1 1.0 on each of the three documents that say it and nothing on the one that does not."""
    from kgkit.learning.settings import LearnSettings, split_docs
    from kgkit.learning.loop import learn_skills
    from kgkit.skills.library import load_library

    _, kwargs, (gold, domain) = employed_by_gold(tmp_path)
    report = learn_skills(gold, domain, settings=LearnSettings(rollouts=1, temperature=0.0, seed=0), **kwargs)
    learning = split_docs([f"doc{i}" for i in range(6)], 0.3, 0.0, seed=0)
    assert report.split == learning and len(learning["train"]) == 4
    first = report.actions[0]
    assert (first["pattern"]["phrases"], len(first["edges"]), first["outcome"]) == (["employed by"], 3, "accepted")
    assert sorted(first["fold_gains"]) == [0.0, 1.0, 1.0, 1.0] and first["dev_gain"] == 0.75
    (kept,) = load_library("staff", tmp_path / "lib").skills.values()
    assert kept["dev_gain"] == 0.75
    assert report.heldout("before")["f1"] == 0.0 and report.heldout("after")["f1"] == 1.0


class _Scores:
    """A stand-in for the loop: relation F1 1.0 on every document with the trial library, 0 without."""

    def __init__(self, trial):
        self.trial = trial

    def evaluate(self, lib, docs):
        class Report:
            def f1(self, _category, value=1.0 if lib is self.trial else 0.0):
                return value
        return Report()

    def applied(self, lib, trial, docs):
        return {"f1_gain": 0.5, "precision": 1.0}


class _Vetter:
    def __init__(self, verdict):
        self.verdict = verdict

    def vet(self, cand):
        from kgkit.learning.vetting import Vetting

        return Vetting(self.verdict)


def test_a_fold_is_never_scored_by_a_learner_that_could_not_have_proposed_the_candidate():
    """A candidate drawn from fold 0's documents alone is not scored there (that fold's
    learner never saw the edge); drawn from folds 0 and 1, every fold is scored; a fold
    whose learner refuses it in vetting counts a gain of 0."""
    from kgkit.learning.gate import Gate, cv_folds
    from kgkit.learning.settings import LearnSettings

    folds = cv_folds([f"d{i}" for i in range(6)], 3, seed=0)
    assert sorted(d for f in folds for d in f) == [f"d{i}" for i in range(6)] and all(len(f) == 2 for f in folds)
    assert folds == cv_folds([f"d{i}" for i in reversed(range(6))], 3, seed=0) != cv_folds(
        [f"d{i}" for i in range(6)], 3, seed=1)
    trial = object()
    gate = Gate(LearnSettings(gate="cv"), sorted(d for f in folds for d in f), folds,
                [_Vetter("skill"), _Vetter("skill"), _Vetter("refused")])
    alone = {"provenance": [{"doc": folds[0][0]}, {"doc": folds[0][1]}]}
    assert gate.gain(_Scores(trial), object(), trial, alone) == (0.5, {"fold_gains": ["learned from", 1.0, 0.0]})
    both = {"provenance": [{"doc": folds[0][0]}, {"doc": folds[1][0]}]}
    assert gate.gain(_Scores(trial), object(), trial, both) == (2 / 3, {"fold_gains": [1.0, 1.0, 0.0]})


def test_an_unknown_gate_is_a_configuration_error(tmp_path):
    import pytest

    from kgkit.errors import ConfigError
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills

    _, kwargs, (gold, domain) = employed_by_gold(tmp_path)
    with pytest.raises(ConfigError, match="skills.gate must be one of dev, train\\+dev, cv"):
        learn_skills(gold, domain, settings=LearnSettings(rollouts=1, temperature=0.0, gate="held-out"), **kwargs)
    with pytest.raises(ConfigError, match="skills.folds must be at least 2"):
        learn_skills(gold, domain, settings=LearnSettings(rollouts=1, temperature=0.0, gate="cv", folds=1), **kwargs)


def test_the_same_candidate_from_several_edges_is_one_candidate_with_all_their_provenance():
    """Grouped by kind, target and pattern (phrase order and case aside), in proposal order;
    an unstable edge among its proposers makes it a path-induction candidate."""
    from kgkit.learning.report import EdgeLabel
    from kgkit.learning.folding import candidate_key, group_candidates

    def cand(phrase, label):
        return {"kind": "relation", "target": "Work_For", "pattern": {"phrases": [phrase], "regex": []},
                "instruction": "", "example": "",
                "provenance": [{"doc": label.doc, "edge": list(label.edge), "label": label.label}]}

    a = EdgeLabel("d1", ("A", "Work_For", "X"), "miss", 0)
    b = EdgeLabel("d2", ("B", "Work_For", "Y"), "unstable", 1)
    groups = group_candidates([(a, [cand("chief of", a), cand("of", a)]), (b, [cand("Of", b)])])
    assert list(groups) == [candidate_key(cand("chief of", a)), candidate_key(cand("of", a))]
    of, by = groups[candidate_key(cand("of", b))]
    assert by == [a, b] and [p["doc"] for p in of["provenance"]] == ["d1", "d2"]
    assert groups[candidate_key(cand("chief of", a))][1] == [a]


MILLS = """\
name: mills
entity_types:
  - name: Mill
  - name: Town
relation_types:
  - name: Located_In
    head: [Town, Mill]
    tail: [Town]
"""


def test_a_typed_cue_binds_only_the_end_types_it_was_learned_with(tmp_path):
    """The relation takes a mill or a town as its head; "in" learned between two towns, typed,
    binds two towns only, where the nearest-shaped "in" binds the mill too."""
    (tmp_path / "mills.yaml").write_text(MILLS)
    domain = load_domain(tmp_path / "mills.yaml")
    text = "Vexa Works in Tarnow hired. Brno in Moravia grew."
    entities = [{"name": "Vexa Works", "type": "Mill"}] + [{"name": n, "type": "Town"} for n in ("Tarnow", "Brno", "Moravia")]

    def located(regexes):
        return {(r.head, r.tail) for r in relations_with_skills(
            text, entities, domain.entity_types, domain.relation_types,
            [skill("relation", "Located_In", regexes=regexes)])}

    assert located([nearest_cue("in")]) == {("Vexa Works", "Tarnow"), ("Brno", "Moravia")}
    assert located([typed_cue("in", "Town", "Town")]) == {("Brno", "Moravia")}
    assert located([typed_cue("in", "Mill", "Town")]) == {("Vexa Works", "Tarnow")}
    assert cue_ends(typed_cue("in", "Mill", "Town")) == ("Mill", "Town") and cue_ends(nearest_cue("in")) is None


def test_typed_cues_are_proposed_for_one_word_cues_only_when_asked():
    edge = {"head": "Brno", "relation": "Located_In", "tail": "Moravia", "head_type": "Town", "tail_type": "Town"}
    sentence = "Brno, the old market of Moravia, grew."
    assert [c["pattern"]["phrases"] or c["pattern"]["regex"] for c in relation_candidates(edge, sentence)] == [
        ["old market of"], ["market of"], ["of"]]
    cands = relation_candidates(edge, sentence, typed=True)
    assert [c["pattern"]["phrases"] or c["pattern"]["regex"] for c in cands] == [
        ["old market of"], ["market of"], ["of"], [typed_cue("of", "Town", "Town")]]
    assert "Brno" not in cands[-1]["instruction"] + cands[-1]["example"]


def test_a_shaped_cue_is_retrieved_only_where_it_could_bind_two_names():
    """Retrieval's few places go to skills that can fire: a nearest-shaped "in" matches any
    text, but counts as found only with a capitalised word on each side in one clause."""
    from kgkit.skills.library import Library
    from kgkit.skills.retrieve import rank_skills

    lib = Library("mills", {})
    shaped = skill("relation", "Located_In", regexes=[typed_cue("in", "Town", "Town")])
    lib.skills[shaped["id"]] = shaped
    assert [s["id"] for _, s in rank_skills(lib, "a mill in Tarnow grew.", None)] == []
    assert [s["id"] for _, s in rank_skills(lib, "Brno in Moravia grew.", None)] == [shaped["id"]]
