"""The one order every export writes items in, so the same snapshot gives the same bytes."""
from __future__ import annotations

from kgkit.graph.snapshot import Item


def by_id(items: list[Item]) -> list[Item]:
    return sorted(items, key=lambda item: item["id"])


def evidence_key(row: Item) -> tuple:
    """Item, document, chunk, span: one evidence row per (item, document, place)."""
    return (row["item"], row["document"], row.get("chunk") or "", list(row.get("span") or []))


def evidence_sorted(rows: list[Item]) -> list[Item]:
    return sorted(rows, key=evidence_key)
