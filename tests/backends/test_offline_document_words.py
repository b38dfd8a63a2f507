"""A trigger regex's group ``document``: words that stand for the document's own node.

The texts and the two-relation domain are written for this test.
"""
from __future__ import annotations

from kgkit.backends.offline.relations import find_relations
from kgkit.formats.model import EntityType, Patterns, RelationType

TYPES = (EntityType("Charter"), EntityType("Place"), EntityType("Person"))
RULED = RelationType("RULED_BY", head=("Charter",), tail=("Place",),
                     triggers=Patterns(regex=(r"\b(?P<document>is\s+ruled)\s+from\b",)))
SIGNED = RelationType("SIGNED_BY", head=("Charter",), tail=("Person",), triggers=Patterns(phrases=("signed by",)))
OWN = {"name": "Harbour Charter", "type": "Charter", "document": True}
ENTITIES = [OWN, {"name": "Lisbon", "type": "Place"}, {"name": "Ana Reis", "type": "Person"}]


def _found(text, entities=ENTITIES):
    return {(r.head, r.relation, r.tail) for r in find_relations(text, entities, TYPES, (RULED, SIGNED))}


def test_the_group_stands_for_the_document_where_the_sentence_names_no_head():
    assert _found("Every matter is ruled from Lisbon.") == {("Harbour Charter", "RULED_BY", "Lisbon")}


def test_only_for_the_relation_whose_trigger_marks_it():
    """The words stand for the document in RULED_BY only: SIGNED_BY still needs a head."""
    assert _found("Every matter is ruled from Lisbon, signed by Ana Reis.") == {
        ("Harbour Charter", "RULED_BY", "Lisbon")}


def test_not_where_no_node_is_the_documents_own():
    entities = [{**OWN, "document": False}, *ENTITIES[1:]]
    assert _found("Every matter is ruled from Lisbon.", entities) == set()


def test_not_where_the_sentence_names_a_head_or_writes_its_type():
    """A head the sentence names is the head, as ever; a sentence that writes the head
    type's name speaks of a charter the finder does not know."""
    other = [*ENTITIES, {"name": "Old Charter", "type": "Charter"}]
    assert _found("The Old Charter is ruled from Lisbon.", other) == {("Old Charter", "RULED_BY", "Lisbon")}
    assert _found("The Dock Charter is ruled from Lisbon.") == set()
