"""Vetting candidates against the train split's gold, and diagnosing misses."""
from __future__ import annotations

import json

import pytest

from kgkit.eval.gold import load_gold
from kgkit.formats.model import Domain, EntityType, RelationType
from kgkit.learning.diagnosis import diagnose
from kgkit.learning.vetting import Vetter, clean_text

DOMAIN = Domain(name="staff", entity_types=(EntityType("Person"), EntityType("Org"), EntityType("City")),
                relation_types=(RelationType("Work_For", head=("Person",), tail=("Org",)),
                                RelationType("Live_In", head=("Person",), tail=("City",))))
# (text, entities, relations)
DOCS = [
    ("Ann Lee works for Acme. Ann Lee visited Paris.",
     [("Ann Lee", "Person"), ("Acme", "Org"), ("Paris", "City")], [("Ann Lee", "Work_For", "Acme")]),
    ("Bob Stone works for Initech. Bob Stone lives in Nice. Bob Stone visited Rome.",
     [("Bob Stone", "Person"), ("Initech", "Org"), ("Rome", "City"), ("Nice", "City")],
     [("Bob Stone", "Work_For", "Initech"), ("Bob Stone", "Live_In", "Nice")]),
    ("Cy Moe visited Oslo. The boss Cy Moe smiled. Cy Moe, Lima. Acme grew.",
     [("Cy Moe", "Person"), ("Oslo", "City"), ("Acme", "Org"), ("Lima", "City")],
     [("Cy Moe", "Live_In", "Oslo"), ("Cy Moe", "Work_For", "Acme"), ("Cy Moe", "Live_In", "Lima")]),
]


@pytest.fixture
def gold(tmp_path):
    for i, (text, ents, rels) in enumerate(DOCS):
        entities = [{"name": n, "type": t, "aliases": [], "spans": [[text.index(n), text.index(n) + len(n)]]}
                    for n, t in ents]
        g = {"doc_id": f"d{i}", "source": "t", "title": None, "entities": entities,
             "relations": [{"head": h, "relation": r, "tail": t, "evidence": None} for h, r, t in rels],
             "hyperedges": [], "events": [], "temporal": []}
        (tmp_path / f"d{i}.txt").write_text(text)
        (tmp_path / f"d{i}.gold.json").write_text(json.dumps(g))
    return load_gold(tmp_path)


def cand(kind, target, phrases=(), regex=(), instruction="x", example=""):
    return {"kind": kind, "target": target, "pattern": {"phrases": list(phrases), "regex": list(regex)},
            "instruction": instruction, "example": example}


def test_a_cue_must_fire_in_two_documents_and_be_precise(gold):
    v = Vetter(DOMAIN, gold, min_support=2, min_precision=0.5)
    works = v.vet(cand("relation", "Work_For", ["works for"]))
    assert (works.verdict, works.fires_in, works.explains, works.precision) == ("skill", 2, 2, 1.0)
    # "visited" stands between a person and a city three times; gold says Live_In once (Cy Moe, Oslo)
    visited = v.vet(cand("relation", "Live_In", ["visited"]))
    assert (visited.verdict, visited.fires_in, visited.precision) == ("refused", 3, pytest.approx(1 / 3))
    assert visited.reason == "precision 0.33 on train < 0.5"
    lives = v.vet(cand("relation", "Live_In", ["lives in"]))
    assert lives.verdict == "refused" and lives.reason == "fires in 1 train document(s) and explains 1 (needs 2)"
    # an entity cue: the name after "boss" is a Person once, in one document
    boss = v.vet(cand("entity", "Person", regex=[r"\bboss\s+(?P<name>[A-Z]\w+ [A-Z]\w+)"]))
    assert (boss.verdict, boss.fires_in, boss.precision) == ("refused", 1, 1.0)


def test_names_are_gazetteer_entries_and_never_patterns(gold):
    v = Vetter(DOMAIN, gold, min_support=2, min_precision=0.5)
    assert v.vet(cand("entity", "Org", ["Acme"])).verdict == "gazetteer"  # in two train documents
    once = v.vet(cand("entity", "City", ["Paris"]))
    assert once.verdict == "refused" and once.reason == "a literal name in 1 train document(s) (needs 2)"
    spelled = v.vet(cand("relation", "Work_For", ["boss of acme"]))
    assert (spelled.verdict, spelled.reason) == ("refused", "its pattern spells a training name")


def test_prompt_text_never_quotes_a_training_name_or_the_passage(gold):
    v = Vetter(DOMAIN, gold, min_support=2, min_precision=0.5)
    dirty = cand("relation", "Work_For", ["works for"], instruction="Ann Lee works for Acme: emit Work_For.",
                 example="Ann Lee works for Acme.")
    clean = clean_text(dirty, v, "Ann Lee works for Acme.", DOMAIN)
    assert clean["instruction"] == 'Person … "works for" … Org in one sentence: emit Work_For(Person, Org).'
    assert clean["example"] == "[Person] works for [Org]"
    fine = cand("relation", "Work_For", ["works for"], instruction="Staff who work for a firm: Work_For.")
    assert clean_text(fine, v, "Ann Lee works for Acme.", DOMAIN) == fine


def test_each_miss_gets_a_diagnosis(gold):
    d0, d1, d2 = gold

    def why(doc, rel, entities):
        return diagnose(doc, dict(zip(("head", "relation", "tail"), rel), evidence=None),
                        [{"entities": [{"name": n, "type": t} for n, t in entities]}], DOMAIN)

    assert why(d0, ("Ann Lee", "Work_For", "Acme"), [("Ann Lee", "Person")]) == "entity not found"
    assert why(d0, ("Ann Lee", "Work_For", "Acme"), [("Ann Lee", "Person"), ("Acme", "City")]) == "wrong type"
    assert why(d2, ("Cy Moe", "Work_For", "Acme"), [("Cy Moe", "Person"), ("Acme", "Org")]) == "relation across sentences"
    assert why(d2, ("Cy Moe", "Live_In", "Lima"), [("Cy Moe", "Person"), ("Lima", "City")]) == "no cue in the sentence"
    assert why(d0, ("Ann Lee", "Work_For", "Acme"), [("Ann Lee", "Person"), ("Acme", "Org")]) == "other"



def test_vetting_reads_a_nearest_shaped_cue_as_extraction_binds_it(tmp_path):
    """Plain, "in" fires in both documents (right in the first); in its nearest shape the
    comma cuts "Ann Lee" off from it, so it fires only in the second, where it is wrong."""
    from kgkit.backends.offline.skills import nearest_cue

    docs = [("Ann Lee, a guest, slept in Oslo.", [("Ann Lee", "Person"), ("Oslo", "City")],
             [("Ann Lee", "Live_In", "Oslo")]),
            ("Bob Stone sang in Rome.", [("Bob Stone", "Person"), ("Rome", "City")], [])]
    for i, (text, ents, rels) in enumerate(docs):
        (tmp_path / f"s{i}.txt").write_text(text)
        (tmp_path / f"s{i}.gold.json").write_text(json.dumps({
            "doc_id": f"s{i}", "source": "t", "title": None, "hyperedges": [], "events": [], "temporal": [],
            "entities": [{"name": n, "type": t, "aliases": [], "spans": [[text.index(n), text.index(n) + len(n)]]}
                         for n, t in ents],
            "relations": [{"head": h, "relation": r, "tail": t, "evidence": None} for h, r, t in rels]}))
    vetter = Vetter(DOMAIN, load_gold(tmp_path), min_support=1, min_precision=0.0)
    plain = vetter.vet({"kind": "relation", "target": "Live_In", "pattern": {"phrases": ["in"], "regex": []}})
    shaped = vetter.vet({"kind": "relation", "target": "Live_In", "pattern": {"phrases": [], "regex": [nearest_cue("in")]}})
    assert (plain.fires_in, plain.explains, plain.precision) == (2, 1, 0.5)
    assert (shaped.fires_in, shaped.explains, shaped.precision) == (1, 0, 0.0)


def test_vetting_reads_a_typed_cue_with_the_ends_it_was_learned_with(tmp_path):
    """"in" between an organisation and a city, and between a person and a city: the relation
    allows both heads, so the nearest "in" fires twice (right once); typed to Org>City, once, right."""
    from kgkit.backends.offline.skills import nearest_cue, typed_cue

    domain = Domain(name="based", entity_types=(EntityType("Person"), EntityType("Org"), EntityType("City")),
                    relation_types=(RelationType("Based_In", head=("Org", "Person"), tail=("City",)),))
    text = "Acme in Oslo grew. Ann Lee in Rome sang."
    ents = [("Acme", "Org"), ("Oslo", "City"), ("Ann Lee", "Person"), ("Rome", "City")]
    (tmp_path / "b0.txt").write_text(text)
    (tmp_path / "b0.gold.json").write_text(json.dumps({
        "doc_id": "b0", "source": "t", "title": None, "hyperedges": [], "events": [], "temporal": [],
        "entities": [{"name": n, "type": t, "aliases": [], "spans": [[text.index(n), text.index(n) + len(n)]]}
                     for n, t in ents],
        "relations": [{"head": "Acme", "relation": "Based_In", "tail": "Oslo", "evidence": None}]}))
    vetter = Vetter(domain, load_gold(tmp_path), min_support=1, min_precision=0.0)
    near = vetter.vet({"kind": "relation", "target": "Based_In", "pattern": {"phrases": [], "regex": [nearest_cue("in")]}})
    typed = vetter.vet({"kind": "relation", "target": "Based_In",
                        "pattern": {"phrases": [], "regex": [typed_cue("in", "Org", "City")]}})
    assert (near.explains, near.precision) == (1, 0.5)
    assert (typed.explains, typed.precision) == (1, 1.0)
