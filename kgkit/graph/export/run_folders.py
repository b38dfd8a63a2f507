"""A :class:`GraphSnapshot` read straight from run folders, without a store.

The store (``kgkit graph add``) is the real source of snapshots: it resolves entities
across documents and keeps the review gate. Until a graph command is wired to it, this
reader lets exports, their tests and a CLI fallback work on what ``kgkit extract`` wrote:
nodes are joined by their content id only (the same type and canonical name in two
documents is one node, nothing fuzzier), items the engine marked unverified stay out as
the review gate would keep them out, and literal role fillers are dropped because the
snapshot's roles hold node ids only.
"""
from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from kgkit.engine.join import node_refs
from kgkit.errors import InputError, NotFoundError
from kgkit.graph.export.order import by_id, evidence_sorted
from kgkit.graph.snapshot import GraphSnapshot, Item


def find_run_folders(root: str | os.PathLike) -> list[Path]:
    """``root`` itself when it is a run folder, else its sub-folders that are (sorted)."""
    root = Path(root)
    if (root / "nodes.json").is_file():
        return [root]
    if not root.is_dir():
        raise NotFoundError(f"{root} is not a folder")
    found = sorted(p for p in root.iterdir() if (p / "nodes.json").is_file())
    if not found:
        raise NotFoundError(f"{root} holds no kgkit run folder (no nodes.json in it or its sub-folders)",
                            hint="run `kgkit extract --out FOLDER DOCUMENT...` first")
    return found


def snapshot_from_run_folders(paths: Iterable[str | os.PathLike], tenant: str = "default") -> GraphSnapshot:
    """One snapshot of every run folder in ``paths``, sorted by id (same folders -> same snapshot).

    Raises NotFoundError for a folder that is not a run folder, InputError for a file
    that is not the JSON kgkit writes.
    """
    builder = _Builder()
    for path in paths:
        builder.add_run(Path(path))
    return builder.snapshot(tenant)


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise NotFoundError(f"{path.parent} is not a kgkit run folder (no {path.name})") from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise InputError(f"{path} is not valid JSON: {exc}") from None


def _node_ids(value: Any) -> list[str]:
    """The node ids of one role or argument value (``{"node"}``, a list of them, or literals)."""
    values = value if isinstance(value, list) else [value]
    return [v["node"] for v in values if isinstance(v, dict) and isinstance(v.get("node"), str)]


def _roles(raw: dict[str, Any]) -> dict[str, list[str]]:
    roles = {role: sorted(set(_node_ids(value))) for role, value in raw.items()}
    return {role: ids for role, ids in sorted(roles.items()) if ids}


class _Builder:
    def __init__(self) -> None:
        self.nodes: dict[str, Item] = {}
        self.items: dict[str, dict[str, Item]] = {k: {} for k in ("edges", "hyperedges", "events", "temporal")}
        self.evidence: dict[tuple, Item] = {}
        self.documents: dict[str, Item] = {}

    def add_run(self, run: Path) -> None:
        manifest = _read_json(run / "manifest.json")
        table = _read_json(run / "nodes.json")
        try:
            source = manifest["input"]
            doc_id = table["doc_id"]
            nodes = table["nodes"]
        except (KeyError, TypeError) as exc:
            raise InputError(f"{run}: manifest.json or nodes.json lacks {exc}") from None
        self.documents[doc_id] = {"id": doc_id, "name": Path(source.get("path") or run.name).name,
                                  "source": source.get("path"), "sha256": source.get("sha256", "")}
        for node in nodes:
            self._add_node(node, doc_id)
        views = run / "views"
        for path in sorted(views.glob("*.json")) if views.is_dir() else []:
            payload = _read_json(path)
            view = payload.get("view", path.stem)
            for kind, raw in self._items_of(payload):
                if raw.get("verified") is False or not node_refs(raw) <= self.nodes.keys():
                    continue  # held back for review, or names a node the table lacks
                self._add_item(kind, raw, view, doc_id)

    def _add_node(self, raw: Item, doc_id: str) -> None:
        node = self.nodes.setdefault(raw["id"], {"id": raw["id"], "type": raw["type"], "name": raw["name"],
                                                  "aliases": [], "documents": []})
        node["aliases"] = sorted(set(node["aliases"]) | set(raw.get("aliases", [])))
        node["documents"] = sorted(set(node["documents"]) | {doc_id})
        for mention in raw.get("mentions", []):
            self._add_evidence(raw["id"], doc_id, mention, raw.get("origin") or "core")

    @staticmethod
    def _items_of(payload: dict[str, Any]) -> Iterable[tuple[str, Item]]:
        for raw in payload.get("edges", []):
            yield ("temporal" if "qualifiers" in raw else "edges"), raw
        for raw in payload.get("hyperedges", []) + payload.get("relations", []):
            yield "hyperedges", raw
        for raw in payload.get("events", []):
            yield "events", raw

    def _add_item(self, kind: str, raw: Item, view: str, doc_id: str) -> None:
        if kind == "edges":
            item = {"id": raw["id"], "head": raw["head"], "relation": raw["relation"], "tail": raw["tail"],
                    "confidence": raw.get("confidence")}
        elif kind == "temporal":
            item = {"id": raw["id"], "head": raw["head"], "relation": raw["relation"], "tail": raw["tail"],
                    "qualifiers": {name: {k: q.get(k) for k in ("text", "type", "value")}
                                   for name, q in sorted(raw.get("qualifiers", {}).items())}}
        elif kind == "hyperedges":
            item = {"id": raw["id"], "relation": raw["relation"], "roles": _roles(raw.get("roles", {}))}
        else:
            time = raw.get("time")
            item = {"id": raw["id"], "type": raw["type"], "trigger": raw.get("trigger"),
                    "arguments": _roles(raw.get("arguments", {})),
                    "time": {"text": time.get("text"), "value": time.get("value")} if time else None}
        kept = self.items[kind].setdefault(item["id"], {**item, "views": []})
        kept["views"] = sorted(set(kept["views"]) | {view})
        if kind == "edges" and item["confidence"] is not None:
            kept["confidence"] = max(kept["confidence"] or 0.0, float(item["confidence"]))
        if raw.get("evidence"):
            self._add_evidence(item["id"], doc_id, raw["evidence"], view)

    def _add_evidence(self, item: str, doc_id: str, place: Item, view: str) -> None:
        span = place.get("span")
        row = {"item": item, "document": doc_id, "chunk": place.get("chunk"), "page": place.get("page"),
               "span": list(span) if span else None, "quote": place.get("quote"), "view": view}
        self.evidence.setdefault((item, doc_id, row["chunk"], tuple(span or ())), row)

    def snapshot(self, tenant: str) -> GraphSnapshot:
        items = {kind: by_id(list(found.values())) for kind, found in self.items.items()}
        return GraphSnapshot(tenant=tenant, version=0, nodes=by_id(list(self.nodes.values())),
                             evidence=evidence_sorted(list(self.evidence.values())),
                             documents=by_id(list(self.documents.values())), **items)
