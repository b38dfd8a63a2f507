"""How long one pass's answer may be, and the schema its decoding is held to.

A flat ``max_tokens`` of 2048 lets a small model that has stopped producing new items run on
for minutes (2,047 tokens of repeats, at 10-20 tokens a second on a CPU) before the answer is
thrown away. An answer's useful length follows from its chunk: an entity pass names at most
about one entity every few tokens of text, each item a name, a type and a short quote; a
relation pass fewer. :func:`answer_tokens` sizes each pass's ``max_tokens`` that way, bounded
by ``limits.items_per_answer`` and with ``llm.max_tokens`` as the ceiling, and
:func:`decoding_schema` gives the pass's schema a ``maxItems`` of the same bound, so a decoder
constrained by the schema (llama.cpp's grammar) cannot list more, and narrows the core passes'
type, relation and end names to the ones the engine keeps. :func:`grammar_safe` is the form of a
schema a grammar is built from: without the keywords llama.cpp's converter expands into rules
that grow with their number (a ``maxLength`` of 4,000 is 4,000 nested rules, which crashes it);
the answer is still validated against the whole schema in Python.
"""
from __future__ import annotations

import math
from typing import Any, Mapping

from kgkit.backends.base import ENTITIES, RELATIONS, PassRequest
from kgkit.config.model import LimitsConfig

CHARS_PER_TOKEN = 4  # a deterministic estimate of a chunk's tokens (the cache key depends on it)
OPENING = 24  # tokens of the answer's braces and keys around its list
# kind -> (tokens of text per item at the densest, tokens of an item besides its evidence quote)
_SHAPE = {ENTITIES: (5, 20), RELATIONS: (8, 28)}
_OTHER = (10, 40)  # upgrades, combined passes, skill passes: items with more fields
QUOTE = 60  # tokens of an evidence quote at most: a sentence, or the whole chunk when it is shorter
MIN_ITEMS = 4
GRAMMAR_ITEMS = 100  # a bound above this is left out of the schema: the grammar would grow with it
GRAMMAR_ENDS = 300  # entity names a relation pass's grammar may list as its ends


def answer_items(request: PassRequest, limits: LimitsConfig) -> int:
    """At most this many items in one list of the answer to ``request``."""
    span, _ = _SHAPE.get(request.kind, _OTHER)
    tokens = len(request.chunk.text) / CHARS_PER_TOKEN
    return min(limits.items_per_answer, MIN_ITEMS + math.ceil(tokens / span))


def answer_tokens(request: PassRequest, ceiling: int, limits: LimitsConfig) -> int:
    """``max_tokens`` for ``request``: room for :func:`answer_items` items, at most ``ceiling``."""
    _, per_item = _SHAPE.get(request.kind, _OTHER)
    quote = min(QUOTE, math.ceil(len(request.chunk.text) / CHARS_PER_TOKEN))  # a chunk of one sentence is quoted whole
    return max(1, min(ceiling, OPENING + answer_items(request, limits) * (per_item + quote)))


def decoding_schema(schema: Mapping[str, Any], items: int, request: PassRequest | None = None) -> dict[str, Any]:
    """``schema`` with its top-level lists bounded to ``items`` (when small enough to say in a grammar)
    and, for a core pass, its names narrowed to those the engine keeps (:func:`_choices`)."""
    out = dict(schema)
    properties = schema.get("properties")
    if not isinstance(properties, Mapping):
        return grammar_safe(out)
    choices = _choices(request) if request is not None else {}
    out["properties"] = {name: _bounded(sub, items, choices) for name, sub in properties.items()}
    return grammar_safe(out)


# Keywords a grammar is not built from. String lengths and counts of properties become one rule
# per unit in llama.cpp's converter (a grammar that grows with the bound, and crashes llama.cpp's
# sampler when it is in the thousands); patterns and formats it translates partially or not at
# all. Each is checked in Python on the answer instead (the pass's full schema).
GRAMMAR_DROPPED = frozenset({"maxLength", "pattern", "format", "maxProperties", "minProperties", "multipleOf",
                             "uniqueItems", "contentEncoding", "contentMediaType"})
_SUBSCHEMA_LISTS = ("anyOf", "oneOf", "allOf", "prefixItems")
_SUBSCHEMA_MAPS = ("properties", "$defs", "definitions", "patternProperties")
_SUBSCHEMAS = ("items", "additionalProperties", "not", "contains")


def grammar_safe(schema: Any) -> Any:
    """``schema`` as a grammar may be built from it: :data:`GRAMMAR_DROPPED` removed at every level,
    a ``minLength`` above 1 lowered to 1, and list bounds above :data:`GRAMMAR_ITEMS` left out. The
    constrained answer may then break only what was dropped, which the validation of the answer
    against the original schema reports (and the re-ask corrects) as for any answer."""
    if isinstance(schema, list):
        return [grammar_safe(s) for s in schema]
    if not isinstance(schema, Mapping):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in GRAMMAR_DROPPED:
            continue
        if key == "minLength" and isinstance(value, int) and value > 1:
            value = 1
        elif key in ("maxItems", "minItems") and isinstance(value, int) and value > GRAMMAR_ITEMS:
            continue
        elif key in _SUBSCHEMA_LISTS and isinstance(value, list):
            value = [grammar_safe(s) for s in value]
        elif key in _SUBSCHEMA_MAPS and isinstance(value, Mapping):
            value = {name: grammar_safe(s) for name, s in value.items()}
        elif key in _SUBSCHEMAS:
            value = grammar_safe(value)
        out[key] = value
    return out


def _bounded(sub: Any, items: int, choices: Mapping[str, list[str]]) -> Any:
    if not (isinstance(sub, Mapping) and sub.get("type") == "array"):
        return sub
    out = dict(sub)
    if items <= GRAMMAR_ITEMS:
        out["maxItems"] = min(items, sub.get("maxItems", items))
    item = sub.get("items")
    if choices and isinstance(item, Mapping) and isinstance(item.get("properties"), Mapping):
        out["items"] = {**item, "properties": {key: ({"enum": choices[key]} if key in choices else value)
                                               for key, value in item["properties"].items()}}
    return out


def _choices(request: PassRequest) -> dict[str, list[str]]:
    """Item fields a core answer can only fill from a list: an entity's type (the domain's types),
    a relation's name (its relations) and ends (the entities the prompt lists). The engine drops
    any other value (unknown type, unknown relation, unknown head or tail), so a decoder held to
    these lists loses nothing and cannot spend tokens on what would be dropped."""
    domain = request.context.get("domain")
    if domain is None or not hasattr(domain, "entity_types"):
        return {}
    if request.kind == ENTITIES:
        types = _names(domain.entity_types)
        return {"type": types} if types else {}
    if request.kind == RELATIONS:
        relations = _names(domain.relation_types)
        ends = sorted({n for e in request.context.get("entities") or () for n in (e.get("name"), *e.get("aliases", ()))
                       if isinstance(n, str) and n})
        out = {"relation": relations} if relations else {}
        if ends and len(ends) <= GRAMMAR_ENDS:
            out.update(head=ends, tail=ends)
        return out
    return {}


def _names(kinds: Any) -> list[str]:
    return sorted({n for k in kinds for n in (k.name, *getattr(k, "aliases", ()))})
