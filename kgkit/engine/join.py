"""Cross-view join by node ID: every view of a run points at the same node table.

``join_views(run, ["binary", "nary", "temporal"])`` takes the first view as the anchor and
returns, for each of its items, the items of the other views that mention the anchor's
head node (for edges) or any of its nodes (for hyperedges and events) — e.g. for each
binary edge, the hyperedges and temporal edges about the same party. Because IDs derive
from content, this is a dictionary lookup, not a fuzzy match.
"""
from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Iterable

from kgkit.engine.outputs import view_file_name
from kgkit.errors import InputError, NotFoundError

ITEM_KEYS = ("edges", "hyperedges", "events", "relations")


def items_of(payload: dict[str, Any]) -> list[dict[str, Any]]:
    return [item for key in ITEM_KEYS for item in payload.get(key, [])]


def node_refs(item: dict[str, Any]) -> set[str]:
    """Every node ID an item refers to: edge ends and node-valued roles and arguments."""
    refs = {item[k] for k in ("head", "tail") if isinstance(item.get(k), str)}

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            if isinstance(value.get("node"), str):
                refs.add(value["node"])
            for v in value.values():
                walk(v)
        elif isinstance(value, list):
            for v in value:
                walk(v)

    walk(item.get("roles", {}))
    walk(item.get("arguments", {}))
    return refs


def anchor_nodes(item: dict[str, Any]) -> set[str]:
    """The nodes an anchor item joins on: an edge's head, else every node it names."""
    return {item["head"]} if isinstance(item.get("head"), str) else node_refs(item)


def load_view_file(run_dir: Path, view: str) -> dict[str, Any]:
    path = run_dir / "views" / view_file_name(view)
    if not path.is_file():
        present = sorted(p.stem.replace(".", ":") for p in (run_dir / "views").glob("*.json"))
        raise NotFoundError(f"run {run_dir} has no view {view!r}; it has: {', '.join(present) or 'none'}",
                            hint=f"add it with: kgkit extract --resume --view {view} <document>")
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc}")


def join_views(run_dir: str | os.PathLike, views: Iterable[str]) -> list[dict[str, Any]]:
    """For each item of the first view, the items of the other views sharing its node(s).

    Returns rows ``{"anchor": item, "node": {id, name, type}, "<view>": [items…]}`` for
    every anchor item (one row per anchor node); raises NotFoundError for a missing run or
    view, InputError for fewer than two views.
    """
    run = Path(run_dir)
    names = list(views)
    if len(names) < 2:
        raise InputError("a join needs at least two views, e.g. --views binary,nary")
    if not (run / "nodes.json").is_file():
        raise NotFoundError(f"{run} is not a kgkit run folder (no nodes.json)")
    nodes = {n["id"]: n for n in json.loads((run / "nodes.json").read_text(encoding="utf-8"))["nodes"]}
    payloads = {name: load_view_file(run, name) for name in names}
    anchor_view, others = names[0], names[1:]
    index: dict[str, dict[str, list[dict[str, Any]]]] = {name: {} for name in others}
    for name in others:
        for item in items_of(payloads[name]):
            for ref in node_refs(item):
                index[name].setdefault(ref, []).append(item)
    rows = []
    for item in items_of(payloads[anchor_view]):
        for node_id in sorted(anchor_nodes(item)):
            node = nodes.get(node_id, {})
            row: dict[str, Any] = {"anchor": item, "node": {"id": node_id, "name": node.get("name"), "type": node.get("type")}}
            row.update({name: index[name].get(node_id, []) for name in others})
            rows.append(row)
    return rows
