"""event.v1: events — a typed trigger with role-labelled arguments and an optional time.

Event types and their roles come from the domain's ``event_types``; arguments name V_doc
nodes or literals as their roles allow, the time keeps its text beside the ISO 8601 value.
"""
from __future__ import annotations

from typing import Any

from kgkit import ids
from kgkit.modes.base import Scope, fill_roles, normalised
from kgkit.modes.upgrade import UpgradeMode, find_by_name


class EventMode(UpgradeMode):
    name = "event.v1"
    answer_key = "events"

    def unserved(self, domain) -> str | None:
        return None if domain.event_types else "declares no event types (event_types)"

    def can_build(self, view, domain, skeleton) -> bool:
        """An event needs a declared event type (its arguments may all be absent)."""
        return bool(domain.event_types)

    def item(self, raw: dict[str, Any], scope: Scope) -> dict[str, Any] | None:
        event_type = find_by_name(scope.domain.event_types, raw["type"])
        if event_type is None:
            scope.reject("unknown_type", raw, f"{raw['type']!r} is not an event type of the domain")
            return None
        arguments = fill_roles(raw.get("arguments", {}), event_type.role, scope, raw)
        if arguments is None:
            return None
        time_text = raw.get("time")
        time = {"text": time_text, "value": normalised("date", time_text)} if time_text else None
        evidence, verified = scope.locate(raw)
        if evidence is None:
            return None  # held back: its quote is not in the chunk
        return {
            "id": ids.content_id("v", {"type": event_type.name, "trigger": raw["trigger"], "arguments": arguments,
                                       "time": time_text}),
            "type": event_type.name,
            "trigger": raw["trigger"],
            "arguments": arguments,
            "time": time,
            "evidence": evidence,
            "verified": verified,
            "confidence": raw.get("confidence"),
        }


def register_modes(register) -> None:
    register(EventMode())
