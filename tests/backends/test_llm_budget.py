"""Each pass's answer budget and decoding schema (kgkit/backends/budget.py)."""
from __future__ import annotations

import json

from kgkit.backends.base import ENTITIES, RELATIONS, PassRequest
from kgkit.backends.budget import GRAMMAR_ITEMS, answer_items, answer_tokens, decoding_schema, grammar_safe
from kgkit.config.model import LimitsConfig
from kgkit.documents.types import Chunk
from kgkit.engine.core import ENTITIES_SCHEMA, RELATIONS_SCHEMA
from kgkit.formats.model import Domain, EntityType, RelationType

DOMAIN = Domain(name="staff", entity_types=(EntityType("Person", aliases=("PER",)), EntityType("Organization")),
                relation_types=(RelationType("works_for", head=("Person",), tail=("Organization",),
                                             aliases=("employed_by",)),))
ENTITIES_SEEN = [{"id": "n1", "name": "Jane Doe", "type": "Person", "aliases": ["Jane"]},
                 {"id": "n2", "name": "Acme Corp", "type": "Organization", "aliases": []}]


def request(kind: str, text: str) -> PassRequest:
    chunk = Chunk(id="c", doc_id="d", index=0, text=text, start=0, end=len(text))
    schema = ENTITIES_SCHEMA if kind == ENTITIES else RELATIONS_SCHEMA
    return PassRequest(kind=kind, stage=kind, chunk=chunk, schema=schema, prompt=f"{kind}.j2",
                       context={"domain": DOMAIN, "entities": ENTITIES_SEEN, "skills": []})


def test_a_longer_chunk_gets_more_tokens_up_to_the_ceiling_and_the_item_limit():
    short, long = request(ENTITIES, "Jane Doe works for Acme."), request(ENTITIES, "Jane Doe works for Acme. " * 400)
    assert answer_tokens(short, 2048, LimitsConfig()) < 400 < answer_tokens(long, 2048, LimitsConfig()) == 2048
    assert answer_items(long, LimitsConfig(items_per_answer=12)) == 12
    assert answer_tokens(request(RELATIONS, "x" * 400), 10**6, LimitsConfig()) < answer_tokens(
        request(ENTITIES, "x" * 400), 10**6, LimitsConfig())  # fewer relations than entities fit a text


def test_the_decoding_schema_lists_only_what_the_engine_keeps():
    entities = decoding_schema(ENTITIES_SCHEMA, 9, request(ENTITIES, "text"))["properties"]["entities"]
    relations = decoding_schema(RELATIONS_SCHEMA, 9, request(RELATIONS, "text"))["properties"]["relations"]
    assert entities["maxItems"] == relations["maxItems"] == 9
    assert entities["items"]["properties"]["type"] == {"enum": ["Organization", "PER", "Person"]}
    rel = relations["items"]["properties"]
    assert rel["relation"] == {"enum": ["employed_by", "works_for"]}
    assert rel["head"] == rel["tail"] == {"enum": ["Acme Corp", "Jane", "Jane Doe"]}
    assert rel["evidence"] == RELATIONS_SCHEMA["properties"]["relations"]["items"]["properties"]["evidence"]
    assert ENTITIES_SCHEMA["properties"]["entities"].get("maxItems") is None  # the pass's own schema untouched


def test_a_bound_too_large_for_a_grammar_is_left_out():
    listed = decoding_schema(ENTITIES_SCHEMA, GRAMMAR_ITEMS + 1)["properties"]["entities"]
    assert "maxItems" not in listed and listed["items"] == ENTITIES_SCHEMA["properties"]["entities"]["items"]


ANSWER_SCHEMA = {  # the shape of an answer schema with string caps (as an ask role's might have)
    "type": "object", "required": ["answer", "claims"], "additionalProperties": False,
    "properties": {
        "answer": {"type": "string", "minLength": 1, "maxLength": 4000},
        "claims": {"type": "array", "maxItems": 5000, "minItems": 1, "items": {
            "type": "object", "required": ["head", "relation"],
            "properties": {"head": {"type": "string", "maxLength": 300, "pattern": "^[A-Z]"},
                           "relation": {"enum": ["governed_by", "party_to"]},
                           "date": {"type": "string", "format": "date", "minLength": 10},
                           "ids": {"type": "array", "uniqueItems": True, "maxItems": 8,
                                   "items": {"anyOf": [{"type": "string", "maxLength": 40}, {"type": "null"}]}}}}},
        "notes": {"$ref": "#/$defs/note"}},
    "$defs": {"note": {"type": "string", "maxLength": 2000}},
}


def test_the_grammar_is_built_without_keywords_that_grow_it_and_the_full_schema_still_validates():
    safe = grammar_safe(ANSWER_SCHEMA)
    text = json.dumps(safe)
    for keyword in ("maxLength", "pattern", "format", "uniqueItems"):
        assert keyword not in text, keyword
    claims = safe["properties"]["claims"]
    assert "maxItems" not in claims and claims["minItems"] == 1  # 5000: too many for a grammar; 1 is kept
    item = claims["items"]["properties"]
    assert item["relation"] == {"enum": ["governed_by", "party_to"]} and item["date"] == {"type": "string",
                                                                                        "minLength": 1}
    assert item["ids"] == {"type": "array", "maxItems": 8, "items": {"anyOf": [{"type": "string"}, {"type": "null"}]}}
    assert safe["$defs"] == {"note": {"type": "string"}} and safe["required"] == ["answer", "claims"]
    assert ANSWER_SCHEMA["properties"]["answer"]["maxLength"] == 4000  # the pass's own schema untouched
    # what the grammar no longer holds the answer to, the pass's schema still refuses (the re-ask corrects it)
    from kgkit.backends.replies import schema_problem

    too_long = {"answer": "x" * 4001, "claims": [{"head": "Acme", "relation": "party_to"}]}
    assert schema_problem(too_long, safe) is None and "answer" in (schema_problem(too_long, ANSWER_SCHEMA) or "")


def test_the_decoding_schemas_sent_to_a_grammar_are_safe():
    capped = {**ENTITIES_SCHEMA, "properties": {**ENTITIES_SCHEMA["properties"],
                                                "note": {"type": "string", "maxLength": 900}}}
    assert "maxLength" not in json.dumps(decoding_schema(capped, 9, request(ENTITIES, "text")))
    assert "maxLength" not in json.dumps(decoding_schema({"type": "string", "maxLength": 9}, 9))
