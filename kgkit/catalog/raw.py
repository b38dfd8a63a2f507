"""A catalog file's data as loaded, before it is built: the typed lists and the names they declare.

The cross-checks and the ``extends`` merge read files that may have failed their schema, so
each reader here skips what has the wrong shape instead of failing on it; the checks
report it.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

TYPED_LISTS = ("entity_types", "relation_types", "nary_relation_types", "event_types", "qualifiers")


def typed_items(data: Any, key: str) -> Iterator[tuple[int, dict[str, Any]]]:
    """(index, item) for the mapping items of a list-valued key; anything else is skipped."""
    value = data.get(key) if isinstance(data, dict) else None
    if isinstance(value, list):
        for i, item in enumerate(value):
            if isinstance(item, dict):
                yield i, item


def declared_names(data: Any, key: str) -> list[str]:
    return [item["name"] for _, item in typed_items(data, key) if isinstance(item.get("name"), str)]


def string_items(value: Any) -> Iterator[tuple[int, str]]:
    if isinstance(value, list):
        for i, v in enumerate(value):
            if isinstance(v, str):
                yield i, v


def binary_relation_names(data: dict[str, Any]) -> list[str]:
    names = []
    for _, r in typed_items(data, "relation_types"):
        if isinstance(r.get("name"), str):
            names.append(r["name"])
        names.extend(a for _, a in string_items(r.get("aliases")))
    return names
