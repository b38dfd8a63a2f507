"""temporal.v1: binary edges among V_doc with typed, time-aware qualifiers.

Each qualifier (start date, notice period, term…) is declared in the domain with a literal
type; its value keeps the text and adds the normalised form (:func:`kgkit.text.timex.normalise`:
a value already written as ISO 8601 / TimeML — ``2013-W12``, ``2013-03-23T15:00``, ``P3Y``,
``PRESENT_REF`` — keeps its canonical form; a phrase becomes an ISO date or duration). A qualifier the domain does not declare for that relation is left out of the
edge and written for review, never silently dropped.
"""
from __future__ import annotations

from typing import Any

from kgkit import ids
from kgkit.text.literals import KINDS as LITERAL_KINDS, find_literals
from kgkit.modes.base import Scope, normalised, resolve_ends
from kgkit.modes.upgrade import UpgradeMode


def qualify(raw_qualifiers: dict[str, Any], declared, relation: str, scope: Scope, item: dict[str, Any]) -> dict[str, Any]:
    """``{name: text}`` -> ``{name: {"text","type","value"}}`` for qualifiers declared for
    ``relation`` (``declared`` looks one up by name); the rest are reported."""
    out = {}
    for name, text in (raw_qualifiers or {}).items():
        if text is None:  # "not stated"
            continue
        q = declared(name)
        if q is None or ("*" not in q.relations and relation not in q.relations):
            scope.reject("unknown_qualifier", item, f"qualifier {name!r} is not declared for {relation}")
            continue
        text = str(text)
        out[q.name] = {"text": text, "type": q.type, "value": normalised(q.type, text)}
    return out


class TemporalMode(UpgradeMode):
    name = "temporal.v1"
    answer_key = "edges"

    def unserved(self, domain) -> str | None:
        return None if domain.relation_types else "declares no relation types (relation_types)"

    def can_build(self, view, domain, skeleton) -> bool:
        """An edge joins two nodes of V_doc by a declared relation: none without nodes."""
        return bool(skeleton.nodes and domain.relation_types)

    def can_contribute(self, view, domain, chunk, skeleton) -> bool:
        """A chunk with no literal a declared qualifier could take (no date, no duration,
        nor the amount or rate a domain may also declare) cannot qualify an edge. Judged
        only when every qualifier is such a literal: an enum one ("phase: III") needs none."""
        kinds = {q.type for q in domain.qualifiers}
        if not kinds or not kinds <= set(LITERAL_KINDS):
            return True
        return bool(find_literals(chunk.text, [k for k in LITERAL_KINDS if k in kinds]))

    def item(self, raw: dict[str, Any], scope: Scope) -> dict[str, Any] | None:
        relation = scope.domain.relation_type(raw["relation"])
        if relation is None:
            scope.reject("unknown_relation", raw, f"{raw['relation']!r} is not a relation of the domain")
            return None
        head, tail, problem = resolve_ends(relation, raw, scope.skeleton)
        if problem:
            scope.reject(problem[0], raw, problem[1])
            return None
        qualifiers = qualify(raw.get("qualifiers", {}), scope.domain.qualifier, relation.name, scope, raw)
        evidence, verified = scope.locate(raw)
        if evidence is None:
            return None  # held back: its quote is not in the chunk
        return {
            "id": ids.content_id("t", {"head": head, "relation": relation.name, "tail": tail,
                                       "qualifiers": {k: v["text"] for k, v in qualifiers.items()}}),
            "head": head,
            "relation": relation.name,
            "tail": tail,
            "qualifiers": qualifiers,
            "evidence": evidence,
            "verified": verified,
            "confidence": raw.get("confidence"),
        }


def register_modes(register) -> None:
    register(TemporalMode())
