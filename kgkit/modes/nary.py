"""nary.v1: hyperedges — one relation with named roles (party, obligation, date, amount…).

Roles come from the domain's ``nary_relation_types``; a role value names a V_doc node the
role's types admit, or is a literal when the role declares one (dates normalised to
ISO 8601, the original text kept). The hyperedge ID derives from relation and roles.
"""
from __future__ import annotations

from typing import Any

from kgkit import ids
from kgkit.modes.base import Scope, fill_roles
from kgkit.modes.upgrade import UpgradeMode, find_by_name


class NaryMode(UpgradeMode):
    name = "nary.v1"
    answer_key = "hyperedges"

    def can_build(self, view, domain, skeleton) -> bool:
        """Some n-ary relation is declared, and a role can be filled: by a node, or a literal."""
        return any(skeleton.nodes or any(r.literal for r in rel.roles) for rel in domain.nary_relation_types)

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
