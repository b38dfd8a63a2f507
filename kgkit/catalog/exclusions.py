"""``not_in_relations``: entity types and literal kinds a domain keeps out of every
relation, so a paper's numbers and hyper-parameters stay entities (or nothing) instead of
relation ends.

    not_in_relations:
      types: [Score, ImplementationDetail]   # no relation end, role filler of these types
      literals: [percent, quantity]          # no role, qualifier taking these literals

It is applied once, when a domain is built (kgkit/catalog/build.py), to the merged data:
binary relations lose the excluded types at their ends (``*`` becomes every other declared
type), n-ary relations and events lose them from their roles and the excluded literals from
their roles' literals, qualifiers of an excluded literal kind go. A relation, n-ary relation
or event left unable to hold (an end, or a required role, with nothing left) goes too, with
its examples. Every backend, prompt and mode then sees a domain without them. A domain that
extends one with exclusions includes everything again with ``not_in_relations: {}``.
"""
from __future__ import annotations

import copy
from typing import Any

KEY = "not_in_relations"


def excluded(data: dict[str, Any]) -> tuple[set[str], set[str]]:
    """(entity types, literal kinds) the merged domain ``data`` keeps out of relations;
    a type it no longer declares is no exclusion."""
    raw = data.get(KEY)
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    declared = {t.get("name") for t in data.get("entity_types") or () if isinstance(t, dict)}
    types = {t for t in spec.get("types") or () if t in declared}
    return types, set(spec.get("literals") or ())


def apply(data: dict[str, Any]) -> dict[str, Any]:
    """The merged domain data with its exclusions applied (``data`` itself is not changed)."""
    types, literals = excluded(data)
    if not types and not literals:
        return data
    out = copy.deepcopy(data)
    kept_types = [t["name"] for t in out.get("entity_types") or () if t["name"] not in types]
    out["relation_types"] = [r for r in (_binary(r, types, kept_types) for r in out.get("relation_types") or ()) if r]
    for key in ("nary_relation_types", "event_types"):
        out[key] = [r for r in (_with_roles(r, types, literals, kept_types) for r in out.get(key) or ()) if r]
    out["qualifiers"] = [q for q in out.get("qualifiers") or () if q.get("type") not in literals]
    relations = {r["name"] for r in out["relation_types"]} | {r["name"] for r in out["nary_relation_types"]}
    for q in out["qualifiers"]:
        if q.get("relations") and "*" not in q["relations"]:
            q["relations"] = [r for r in q["relations"] if r in relations]
    out["qualifiers"] = [q for q in out["qualifiers"] if q.get("relations") != []]
    labels = {label.lower() for r in out["relation_types"] for label in (r["name"], *(r.get("aliases") or ()))}
    for example in out.get("examples") or ():
        names = {e.get("name"): e.get("type") for e in example.get("entities") or ()}
        example["relations"] = [rel for rel in example.get("relations") or ()
                                if str(rel.get("relation", "")).lower() in labels
                                and names.get(rel.get("head")) not in types and names.get(rel.get("tail")) not in types]
    return out


def _ends(ends: list[str], types: set[str], kept: list[str]) -> list[str]:
    if "*" in ends:
        return kept
    return [t for t in ends if t not in types]


def _binary(relation: dict[str, Any], types: set[str], kept: list[str]) -> dict[str, Any] | None:
    head, tail = _ends(relation["head"], types, kept), _ends(relation["tail"], types, kept)
    if not head or not tail:
        return None
    return {**relation, "head": head, "tail": tail}


def _with_roles(item: dict[str, Any], types: set[str], literals: set[str], kept: list[str]) -> dict[str, Any] | None:
    roles = {}
    for name, role in (item.get("roles") or {}).items():
        role = dict(role)
        if role.get("types"):
            role["types"] = _ends(role["types"], types, kept)
            if not role["types"]:
                del role["types"]
        if role.get("literal") in literals:
            del role["literal"]
        if role.get("types") or role.get("literal"):
            roles[name] = role
        elif role.get("required"):
            return None  # it cannot be filled any more: the relation cannot hold
    return {**item, "roles": roles} if roles else None
