"""Cue families: clean cues each too rare to show a development gain alone, pooled per
relation and gated as one skill — with the forming rule itself cross-validated.

All texts here are written for these tests.
"""
from __future__ import annotations

import json

from kgkit.config.model import Config
from kgkit.learning.loop import LearnSettings, learn_skills
from kgkit.skills.library import load_library

PEOPLE = ["Ann Lee", "Bo Stahl", "Cy Moe", "Di Poe", "Ed Roe", "Fe Loo", "Gil Orr", "Hal Ng", "Ivo Dee", "Jo Fry"]
FIRMS = ["Acme", "Initech", "Globex", "Hooli", "Umbra", "Wonka", "Vandelay", "Stark", "Tyrell", "Cyberdyne"]
# four cues, each written in two learning documents, and one more for each held-out document
CUES = ["heads", "heads", "leads", "leads", "runs", "runs", "manages", "manages", "heads", "runs"]


def family_gold(tmp_path):
    """Ten one-sentence documents, "<person> <cue> <firm>.": no cue is a trigger of the domain."""
    (tmp_path / "staff.yaml").write_text(f"""\
name: staff
entity_types:
  - {{name: Worker, patterns: {{phrases: {json.dumps(PEOPLE)}}}}}
  - {{name: Firm, patterns: {{phrases: {json.dumps(FIRMS)}}}}}
relation_types:
  - {{name: Work_For, head: [Worker], tail: [Firm]}}
""")
    gold = tmp_path / "gold"
    gold.mkdir()
    for i, (p, o, cue) in enumerate(zip(PEOPLE, FIRMS, CUES)):
        sentence = f"{p} {cue} {o}."
        ents = [{"name": n, "type": t, "aliases": [], "spans": [[sentence.index(n), sentence.index(n) + len(n)]]}
                for n, t in ((p, "Worker"), (o, "Firm"))]
        (gold / f"doc{i}.txt").write_text(sentence)
        (gold / f"doc{i}.gold.json").write_text(json.dumps({
            "doc_id": f"doc{i}", "source": "test", "title": None, "entities": ents,
            "relations": [{"head": p, "relation": "Work_For", "tail": o, "evidence": sentence}],
            "hyperedges": [], "events": [], "temporal": []}))
    return gold, tmp_path / "staff.yaml"


def learn(tmp_path, families: bool):
    gold, domain = family_gold(tmp_path)
    settings = LearnSettings(rollouts=1, temperature=0.0, seed=0, folds=4, families=families,
                             heldout_from=("doc8", "doc9"), holdout=0.99)
    return learn_skills(gold, domain, config=Config(), settings=settings, library_dir=tmp_path / "lib")


def test_each_cue_alone_is_rejected_by_the_cross_validated_gate(tmp_path):
    """A cue in two learning documents: the learner scored on one sees it fire once and would not learn it."""
    report = learn(tmp_path, families=False)
    assert {tuple(a["pattern"]["phrases"]) for a in report.actions} == {("heads",), ("leads",), ("runs",),
                                                                         ("manages",), ()}  # () : tight cues
    assert all(a["outcome"] == "rejected" and a["dev_gain"] == 0.0 for a in report.actions)
    assert load_library("staff", tmp_path / "lib").skills == {}
    assert report.heldout("after")["f1"] == report.heldout("before")["f1"] == 0.0


def test_pooled_as_a_family_they_show_a_development_gain_fold_by_fold(tmp_path):
    """The family is one skill (a cue list, one instruction, no name); each fold scores the
    family its own learner forms from the other folds, and held-out documents gain."""
    report = learn(tmp_path, families=True)
    (family,) = [a for a in report.actions if a.get("family")]
    assert family["outcome"] == "accepted" and family["family"] == ["heads", "leads", "manages", "runs"]
    assert family["pattern"] == {"phrases": ["heads", "leads", "manages", "runs"], "regex": []}
    assert len(family["fold_gains"]) == 4 and all(g > 0 for g in family["fold_gains"])
    assert family["dev_gain"] > 0
    (skill,) = load_library("staff", tmp_path / "lib").skills.values()
    assert skill["pattern"]["phrases"] == ["heads", "leads", "manages", "runs"]
    assert not any(n in skill["instruction"] + skill["example"] for n in PEOPLE + FIRMS)
    assert len(skill["provenance"]) == 8 and skill["dev_gain"] == family["dev_gain"]
    # the members' turned-down edges are decided now: out of `rejected`
    assert load_library("staff", tmp_path / "lib").rejected == []
    assert report.heldout("before")["f1"] == 0.0 and report.heldout("after")["f1"] == 1.0


def test_a_learner_forms_its_family_only_from_cues_proposed_and_clean_in_its_own_documents(tmp_path):
    """The rule the cross-validated gate asks fold by fold: "heads" was proposed only by
    doc0 and doc1, so a learner without them leaves it out; one clean cue is no family."""
    from kgkit.eval.gold import load_gold
    from kgkit.catalog.load import load_domain
    from kgkit.learning.family import FamilyRule
    from kgkit.learning.loop import EdgeLabel, _default_factory, _Loop
    from kgkit.skills.library import Library
    from kgkit.learning.vetting import Vetter

    gold, domain_file = family_gold(tmp_path)
    domain, docs = load_domain(domain_file), {d.doc_id: d for d in load_gold(gold)}
    settings = LearnSettings(rollouts=1, temperature=0.0, families=True)
    (tmp_path / "work").mkdir()
    loop = _Loop(tmp_path / "work", domain, docs, Config(), settings, _default_factory, gold)
    pool = {}
    for i, cue in enumerate(CUES[:8]):
        label = EdgeLabel(f"doc{i}", (PEOPLE[i], "Work_For", FIRMS[i]), "miss", 0)
        cand, by = pool.setdefault(cue, ({"kind": "relation", "target": "Work_For", "instruction": "x", "example": "",
                                          "pattern": {"phrases": [cue], "regex": []}, "provenance": []}, []))
        cand["provenance"].append({"doc": label.doc, "edge": list(label.edge), "label": "miss"})
        by.append(label)
    rule = FamilyRule("Work_For", list(pool.values()), loop, Library("staff"), settings)

    def family(ids):
        formed = rule.form(ids, Vetter(domain, [docs[d] for d in ids], min_support=2, min_precision=0.5))
        return formed and (formed[0]["pattern"]["phrases"], sorted({x.doc for x in formed[1]}))

    rest = [f"doc{i}" for i in range(2, 8)]
    assert family(rest) == (["leads", "manages", "runs"], rest)
    assert family(["doc0", "doc2"]) == (["heads", "leads"], ["doc0", "doc2"])
    assert family(["doc0", "doc1"]) is None
    small = FamilyRule("Work_For", list(pool.values()), loop, Library("staff"),
                       LearnSettings(rollouts=1, temperature=0.0, families=True, family_size=2))
    formed, _ = small.form(rest, Vetter(domain, [docs[d] for d in rest], min_support=2, min_precision=0.5))
    assert formed["pattern"]["phrases"] == ["leads", "manages"]  # capped: most right first, then by text
