"""nary.v1: hyperedges — one relation with named roles (party, obligation, date, amount…).

Roles come from the domain's ``nary_relation_types``; a role value names a V_doc node the
role's types admit, or is a literal when the role declares one (dates normalised to
ISO 8601, the original text kept). The hyperedge ID derives from relation and roles.
"""
from __future__ import annotations

from typing import Any

from kgkit import ids
from kgkit.text.type_kinds import literal_types
from kgkit.text.literals import KINDS as LITERAL_KINDS, find_literals
from kgkit.modes.base import Scope, fill_roles
from kgkit.modes.upgrade import UpgradeMode, find_by_name


class NaryMode(UpgradeMode):
    name = "nary.v1"
    answer_key = "hyperedges"

    def unserved(self, domain) -> str | None:
        return None if domain.nary_relation_types else "declares no n-ary relation types (nary_relation_types)"

    def can_build(self, view, domain, skeleton) -> bool:
        """Some n-ary relation is declared, and a role can be filled: by a node, or a literal."""
        return any(skeleton.nodes or any(r.literal for r in rel.roles) for rel in domain.nary_relation_types)

    def can_contribute(self, view, domain, chunk, skeleton) -> bool:
        """A hyperedge needs two role fillers: some n-ary relation must find at least two
        among the chunk's own entities its roles admit (the skeleton's part for the chunk,
        edge ends included) and the literals of the kinds its roles take in the chunk."""
        nodes, edges = skeleton.part_for(chunk)
        types = {n["name"]: n["type"] for n in nodes}
        for edge in edges:
            for end in (edge["head"], edge["tail"]):
                types.setdefault(end, "*")  # an end named only in the edge: any type may fit
        literal_of = literal_types(domain.entity_types)
        wanted = {rel.name: {t for r in rel.roles for t in r.types} for rel in domain.nary_relation_types}
        kinds = {rel.name: {r.literal for r in rel.roles if r.literal} | {literal_of[t] for t in wanted[rel.name]
                                                                         if t in literal_of}
                 for rel in domain.nary_relation_types}
        every_kind = set().union(*kinds.values()) if kinds else set()
        literals = find_literals(chunk.text, [k for k in LITERAL_KINDS if k in every_kind]) if every_kind else []
        for rel in domain.nary_relation_types:
            admitted = wanted[rel.name]
            fillers = sum(t == "*" or "*" in admitted or t in admitted for t in types.values())
            fillers += sum(lit.kind in kinds[rel.name] for lit in literals)
            if fillers >= 2:
                return True
        return False

    def item(self, raw: dict[str, Any], scope: Scope) -> dict[str, Any] | None:
        relation = find_by_name(scope.domain.nary_relation_types, raw["relation"])
        if relation is None:
            scope.reject("unknown_relation", raw, f"{raw['relation']!r} is not an n-ary relation of the domain")
            return None
        roles = fill_roles(raw["roles"], relation.role, scope, raw)
        if roles is None:
            return None
        missing = [r.name for r in relation.roles if r.required and r.name not in roles]
        if missing:
            scope.review.append({"stage": scope.view.name, "chunk": scope.chunk.id, "item": raw,
                                 "reason": f"missing required role(s): {', '.join(missing)}"})
        evidence, verified = scope.locate(raw)
        if evidence is None:
            return None  # held back: its quote is not in the chunk
        return {
            "id": ids.content_id("h", {"relation": relation.name, "roles": roles}),
            "relation": relation.name,
            "roles": roles,
            "evidence": evidence,
            "verified": verified,
            "confidence": raw.get("confidence"),
        }


def register_modes(register) -> None:
    register(NaryMode())
