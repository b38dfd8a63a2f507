"""A pass's JSON Schema in the form providers' strict structured output accepts.

OpenAI-style strict mode (``response_format: {"type": "json_schema", "strict": true}``)
makes the model's decoder follow the schema, so an answer cannot be off-shape — but it
takes only a subset of JSON Schema: every object closed (``additionalProperties:
false``) with *all* its properties required, an optional property written as nullable,
and few keywords beyond type/properties/items/enum/anyOf. :func:`strict_schema` makes that
form from kgkit's pass schema; :func:`drop_unfilled` undoes the nulls in the answer (in
every output format), which is then validated against the original schema (bounds such as
``confidence`` ≤ 1 are checked there, since strict mode drops them).

A schema with a free-form map (the roles of an n-ary relation, a template's qualifiers)
has no strict form; :func:`strict_schema` returns None and the caller falls back to JSON
mode for that pass.
"""
from __future__ import annotations

from typing import Any, Mapping

# What strict mode takes; the rest (minLength, minimum, maxItems, pattern…) is dropped.
_KEPT = frozenset({"type", "properties", "required", "additionalProperties", "items", "enum", "const", "anyOf",
                   "description"})


class _NoStrictForm(Exception):
    """The schema has a part strict mode cannot say (an open map, a bare object)."""


def strict_schema(schema: Mapping[str, Any]) -> dict[str, Any] | None:
    """``schema`` rewritten for strict structured output, or None when it has no strict form."""
    try:
        return _strict(schema)
    except _NoStrictForm:
        return None


def _strict(node: Mapping[str, Any]) -> dict[str, Any]:
    if not isinstance(node, Mapping) or node is True:
        raise _NoStrictForm
    out = {k: v for k, v in node.items() if k in _KEPT}
    if "anyOf" in out:
        out["anyOf"] = [_strict(option) for option in out["anyOf"]]
    if "items" in out:
        out["items"] = _strict(out["items"])
    if out.get("type") == "object" or "properties" in out:
        if not out.get("properties") or out.get("additionalProperties") not in (None, False):
            raise _NoStrictForm
        required = set(node.get("required", ()))
        out["properties"] = {name: _strict(sub) if name in required else _nullable(_strict(sub))
                             for name, sub in out["properties"].items()}
        out["required"] = list(out["properties"])
        out["additionalProperties"] = False
    elif "type" not in out and "enum" not in out and "const" not in out and "anyOf" not in out:
        raise _NoStrictForm  # {} (anything) cannot be said strictly
    return out


def _nullable(node: dict[str, Any]) -> dict[str, Any]:
    """``node`` that also accepts null: how strict mode spells "optional"."""
    kind = node.get("type")
    if isinstance(kind, str):
        return {**node, "type": [kind, "null"]}
    if isinstance(kind, list):
        return node if "null" in kind else {**node, "type": [*kind, "null"]}
    if "enum" in node:
        return {**node, "enum": [*node["enum"], None]}
    return {"anyOf": [node, {"type": "null"}]}


def drop_unfilled(data: Any, schema: Mapping[str, Any]) -> Any:
    """``data`` without the nulls strict mode made the model write for optional properties
    it had nothing for (the original schema may not accept null there)."""
    if isinstance(data, dict) and isinstance(schema.get("properties"), Mapping):
        required = set(schema.get("required", ()))
        props = schema["properties"]
        return {k: drop_unfilled(v, props.get(k, {})) for k, v in data.items() if v is not None or k in required}
    if isinstance(data, list) and isinstance(schema.get("items"), Mapping):
        return [drop_unfilled(v, schema["items"]) for v in data]
    return data
