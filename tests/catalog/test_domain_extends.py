"""``extends`` takes only what a domain asks for, and the built-in domains use it so a
contract is never read with news relations (issue 9, item 4)."""
from __future__ import annotations

import pytest

from kgkit.errors import ValidationError
from kgkit.catalog import load as catalog
from kgkit.catalog.validation import validate_file
from support.schema_support import fixture_project  # noqa: F401 - the fixture

NEWS_RELATIONS = {"works_for", "based_in", "lives_in", "located_in", "killed", "acquired", "subsidiary_of"}


def _child(tmp_path, extends: str, rest: str = "") -> str:
    path = tmp_path / "child.yaml"
    path.write_text(f"name: child\nextends:\n{extends}{rest}", encoding="utf-8")
    return path


def test_include_takes_only_the_named_parent_entries(tmp_path, fixture_project):
    path = _child(tmp_path, "  domain: people\n  include:\n    entity_types: [Person, Organization]\n"
                            "    relation_types: [Work_For]\n    event_types: []\n",
                  "relation_types:\n  - {name: Leads, head: [Person], tail: [Organization]}\n")
    domain = catalog.load_domain(str(path))
    assert [t.name for t in domain.entity_types] == ["Person", "Organization"]
    assert [r.name for r in domain.relation_types] == ["Work_For", "Leads"]
    assert domain.event_types == ()
    # a typed list the mapping does not name is taken whole, and examples come along by default
    assert [n.name for n in domain.nary_relation_types] == ["Employment"]
    assert domain.examples


def test_exclude_drops_named_entries_and_examples_false_drops_examples(tmp_path, fixture_project):
    path = _child(tmp_path, "  domain: people\n  exclude:\n    relation_types: [Based_In, Knows]\n  examples: false\n")
    domain = catalog.load_domain(str(path))
    assert [r.name for r in domain.relation_types] == ["Work_For", "Mentions"]
    assert [t.name for t in domain.entity_types] == ["Person", "Organization", "Location"]
    assert domain.examples == ()


def test_a_name_the_parent_lacks_is_reported_with_its_line_and_a_suggestion(tmp_path, fixture_project):
    path = _child(tmp_path, "  domain: people\n  include:\n    entity_types: [Person, Organisation]\n"
                            "    relation_types: [Knows]\n    nary_relation_types: []\n")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", path)
    [issue] = [i for i in caught.value.issues if "Organisation" in i.message]
    assert issue.line == 5 and issue.path[:3] == ("extends", "include", "entity_types")
    assert "no entity type 'Organisation'" in issue.message and "Organization" in issue.hint


def test_a_relation_whose_ends_were_left_behind_is_an_error(tmp_path, fixture_project):
    path = _child(tmp_path, "  domain: people\n  include:\n    entity_types: [Person]\n")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", path)
    messages = [i.message for i in caught.value.issues]
    assert any("relation type 'Work_For' needs entity type(s) Organization" in m for m in messages)
    assert any("nary relation type 'Employment' needs entity type(s) Organization" in m for m in messages)


def test_an_unknown_key_in_the_mapping_is_an_error(tmp_path, fixture_project):
    path = _child(tmp_path, "  domain: people\n  inclde:\n    entity_types: [Person]\n")
    with pytest.raises(ValidationError):
        validate_file("domains", path)


def test_legal_contracts_carries_no_news_relations_places_or_examples():
    legal = catalog.load_domain("legal_contracts")
    relations = {r.name for r in legal.relation_types}
    assert not relations & NEWS_RELATIONS
    assert legal.entity_type("Location") is None
    assert not {e.name for e in legal.event_types} & {"Attack", "Meeting", "Transaction"}
    assert not {n.name for n in legal.nary_relation_types} & {"Employment", "Acquisition"}
    for example in legal.examples:
        assert not {r["relation"] for r in example.relations} & NEWS_RELATIONS
    # a plain name still takes everything: general's relations are all in a child that says `extends: general`
    assert catalog.load_domain("general").relation_type("located_in") is not None
