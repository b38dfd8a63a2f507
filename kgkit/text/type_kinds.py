"""Which declared entity type stands for which generic kind (a date, an amount of money, a
party, a person, ...), read from the type's name and aliases.

The offline backend routes its generic finds by it, the merge and the modes read values by
it, and eval matches literals by it: a question about the domain, so it lives apart from
any backend.
"""
from __future__ import annotations

import re
from functools import lru_cache
from typing import TYPE_CHECKING, Sequence

if TYPE_CHECKING:  # read for .name and .aliases only: the text rules need no domain model
    from kgkit.formats.model import EntityType

#: The kinds that are values rather than names (the literal finder's kinds).
LITERAL_KINDS = ("date", "duration", "money", "percent", "quantity")

GENERIC_KINDS: dict[str, frozenset[str]] = {
    "date": frozenset({"date", "time", "datetime"}),
    "duration": frozenset({"duration", "period", "timeperiod"}),
    "money": frozenset({"money", "monetaryamount", "amount", "moneyamount", "price"}),
    "percent": frozenset({"percent", "percentage"}),
    "quantity": frozenset({"quantity", "dose", "dosage", "measurement"}),
    "party": frozenset({"party", "contractingparty"}),
    "organization": frozenset({"organization", "organisation", "org", "company"}),
    "person": frozenset({"person", "per", "peop", "people"}),
    "location": frozenset({"location", "loc", "place", "gpe"}),
    "defined_term": frozenset({"definedterm", "defined_term", "term"}),
    "name": frozenset({"name", "other", "misc", "namedentity"}),
}


def _norm_key(word: str) -> str:
    return re.sub(r"[^a-z_]", "", word.lower()).replace("_", "")


def generic_type_map(entity_types: Sequence[EntityType]) -> dict[str, str]:
    """Which declared entity type receives each generic rule's finds (first declared wins)."""
    return dict(_generic_type_map(tuple(entity_types)))


@lru_cache(maxsize=256)
def _generic_type_map(entity_types: tuple[EntityType, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for kind, words in GENERIC_KINDS.items():
        keys = {_norm_key(w) for w in words}
        for t in entity_types:
            if _norm_key(t.name) in keys or any(_norm_key(a) in keys for a in t.aliases):
                out[kind] = t.name
                break
    if "party" not in out and "organization" in out:
        out["party"] = out["organization"]
    return out


def literal_types(entity_types: Sequence[EntityType]) -> dict[str, str]:
    """Declared entity type -> the literal kind ("date", "money", …) whose finds it receives."""
    kinds = generic_type_map(entity_types)
    return {kinds[k]: k for k in LITERAL_KINDS if k in kinds}
