"""What a viewer page shows, as plain data: the graph of one store tenant, read once.

A page is built from a corpus graph (:class:`kgkit.graph.GraphStore`) so a single run
folder and a corpus read the same way (:mod:`kgkit.view.source` loads run folders into a
throwaway store): the snapshot's nodes and items with their shared node ids, the review
queue's held items kept apart from the graph's own, every evidence row with the passage
of document text around it, the documents and the merge log.

Shapes (what ``kgkit/view/assets/viewer.js`` reads; document references are indexes
into ``documents``):

* node: ``{"id", "type", "name", "aliases", "docs": [int], "scope", "value"?, "x", "y"}``
* item: ``{"id", "item", "kind": edge|temporal|hyperedge|event, "rel", "ends": [[role, node id]],
  "views", "docs", "conf", "status": verified|accepted|held|rejected, "note"?, "x"?, "y"?}`` — ``id`` is
  the snapshot's item id, or the review entry's for an item held back (an item held in
  one document and stated in another is two items, never one)
* evidence: ``{id: [{"doc", "page", "view", "quote", "pre", "mark", "post"}]}`` — ``mark``
  is the document's text at the evidence span, ``pre``/``post`` the passage around it
  (absent when the document's text is not at hand)
"""
from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from typing import Any, Callable

from kgkit import __version__
from kgkit.graph import assemble
from kgkit.view.passages import Passages

Item = dict[str, Any]

#: Statuses of an item: in the graph (verified, or accepted by a reviewer), or waiting outside it.
STATUSES = ("verified", "accepted", "held", "rejected")


@dataclass(frozen=True)
class ViewerData:
    """Everything one page shows; :meth:`to_json` is what the page embeds."""

    meta: dict[str, Any]
    nodes: list[Item]
    items: list[Item]
    documents: list[Item]
    evidence: dict[str, list[Item]] = field(default_factory=dict)
    merges: dict[str, list[Item]] = field(default_factory=dict)
    review: list[Item] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        types = sorted({n["type"] for n in self.nodes if n.get("type")})
        views = sorted({v for it in self.items for v in it["views"]})
        relations = sorted({it["rel"] for it in self.items})
        return {"meta": self.meta, "types": types, "views": views, "relations": relations,
                "statuses": list(STATUSES), "documents": self.documents, "nodes": self.nodes, "items": self.items,
                "evidence": self.evidence, "merges": self.merges, "review": self.review}


def spread(key: str, radius: float) -> tuple[float, float]:
    """A stable starting place for ``key`` in a disc (the page's layout moves it from there):
    the same graph always opens the same way, with no random state."""
    digest = hashlib.sha256(key.encode()).digest()
    angle = int.from_bytes(digest[:4], "big") / 2**32 * 2 * math.pi
    r = radius * math.sqrt(int.from_bytes(digest[4:8], "big") / 2**32)
    return round(r * math.cos(angle), 2), round(r * math.sin(angle), 2)


def _kind_of(body: dict[str, Any]) -> str:
    """A held item's kind, from its stored body (the review queue does not name it)."""
    if "arguments" in body:
        return "event"
    if "roles" in body:
        return "hyperedge"
    return "temporal" if "qualifiers" in body else "edge"


def _ends(kind: str, shaped: Item) -> list[list[str]]:
    if kind in ("edge", "temporal"):
        return [["head", shaped["head"]], ["tail", shaped["tail"]]]
    fillers = shaped["arguments"] if kind == "event" else shaped["roles"]
    return [[role, node] for role, nodes in fillers.items() for node in nodes]


def _note(kind: str, shaped: Item) -> str | None:
    """What an item says besides its ends: an event's trigger and time, a temporal edge's qualifiers."""
    if kind == "event":
        parts = [f"trigger: {shaped['trigger']}" if shaped.get("trigger") else None,
                 f"time: {shaped['time'].get('text')}" if shaped.get("time") else None]
        return "; ".join(p for p in parts if p) or None
    if kind == "temporal":
        return "; ".join(f"{k}: {v.get('text')}" for k, v in (shaped.get("qualifiers") or {}).items()) or None
    return None


def _item(kind: str, shaped: Item, *, status: str, key: str | None = None) -> Item:
    out = {"id": key or shaped["id"], "item": shaped["id"], "kind": kind,
           "rel": shaped["type"] if kind == "event" else shaped["relation"], "ends": _ends(kind, shaped),
           "views": shaped.get("views", []), "docs": [], "conf": shaped.get("confidence"), "status": status}
    note = _note(kind, shaped)
    if note:
        out["note"] = note
    return out


class _Builder:
    """Reads one store tenant into :class:`ViewerData`; one method per part of the page."""

    def __init__(self, store, passages: Passages):
        self.store = store
        self.snap = store.snapshot()
        self.passages = passages
        self.doc_index = {d["id"]: i for i, d in enumerate(self.snap.documents)}
        self.doc_by_name = {d["name"]: i for i, d in enumerate(self.snap.documents)}
        self.radius = 40 * math.sqrt(max(len(self.snap.nodes), 1))

    def nodes(self) -> list[Item]:
        out = []
        for n in self.snap.nodes:
            x, y = spread(n["id"], self.radius)
            node = {"id": n["id"], "type": n["type"], "name": n["name"], "aliases": n["aliases"],
                    "docs": [self.doc_index[d] for d in n["documents"] if d in self.doc_index],
                    "scope": n.get("scope"), "x": x, "y": y}
            if "value" in n:
                node["value"] = n["value"]
            out.append(node)
        return out

    def graph_items(self, accepted: set[str]) -> list[Item]:
        out = []
        for kind, rows in (("edge", self.snap.edges), ("temporal", self.snap.temporal),
                           ("hyperedge", self.snap.hyperedges), ("event", self.snap.events)):
            for shaped in rows:
                item = _item(kind, shaped, status="accepted" if shaped["id"] in accepted else "verified")
                item["docs"] = [self.doc_index[d] for d in shaped["documents"] if d in self.doc_index]
                out.append(item)
        return out

    def held(self, queue: list[Item], canon: Callable[[str], str], known: set[str]) -> tuple[list[Item], set[str], dict]:
        """Held items as items of their own (status held or rejected), the ids of accepted
        ones (which the snapshot holds), and the held items' evidence by entry id."""
        items, accepted, evidence = [], set(), {}
        for entry in queue:
            if entry["kind"] != "held":
                continue
            body = {k: v for k, v in entry["item"].items() if k != "id"}
            kind = _kind_of(body)
            shaped = assemble._item(kind, body, canon)
            if entry["decision"] == "accept":
                accepted.add(shaped["id"])
                continue
            status = "rejected" if entry["decision"] == "reject" else "held"
            item = _item(kind, {**shaped, "views": [entry["view"]]}, status=status, key=entry["id"])
            item["ends"] = [end for end in item["ends"] if end[1] in known]
            item["docs"] = [self.doc_by_name[entry["document"]]] if entry["document"] in self.doc_by_name else []
            item["reason"] = entry["reason"]
            item["conf"] = body.get("confidence")
            items.append(item)
            doc = item["docs"][0] if item["docs"] else None
            evidence[entry["id"]] = [self.passages.row(doc, e.get("page"), e.get("span"), e.get("quote"),
                                                       entry["view"]) for e in entry["evidence"] if e.get("chunk")]
        return items, accepted, evidence

    def evidence(self) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = {}
        for e in self.snap.evidence:
            doc = self.doc_index.get(e["document"])
            out.setdefault(e["item"], []).append(self.passages.row(doc, e["page"], e["span"], e["quote"], e["view"]))
        return out

    def documents(self, nodes: list[Item], items: list[Item]) -> list[Item]:
        counts = [[0, 0] for _ in self.snap.documents]
        for n in nodes:
            for d in n["docs"]:
                counts[d][0] += 1
        for it in items:
            for d in it["docs"]:
                counts[d][1] += 1
        return [{"id": d["id"], "name": d["name"], "title": d.get("title"), "pages": d.get("pages"),
                 "node": d.get("node"), "source": d.get("source"), "nodes": c[0], "items": c[1]}
                for d, c in zip(self.snap.documents, counts)]

    def merges(self, known: set[str]) -> dict[str, list[Item]]:
        out: dict[str, list[Item]] = {}
        for row in self.store.merges():
            if row["entity"] in known:
                out.setdefault(row["entity"], []).append(
                    {k: row[k] for k in ("seq", "action", "node", "node_name", "reason", "score", "who", "at")})
        return out


def _place_items(items: list[Item], nodes: list[Item]) -> None:
    """An n-ary item or event starts at the middle of what it joins, so the first frame is readable."""
    at = {n["id"]: (n["x"], n["y"]) for n in nodes}
    for it in items:
        if it["kind"] in ("hyperedge", "event"):
            ends = [at[e[1]] for e in it["ends"] if e[1] in at]
            jx, jy = spread(it["id"], 10.0)
            it["x"] = round(sum(p[0] for p in ends) / len(ends) + jx, 2) if ends else jx
            it["y"] = round(sum(p[1] for p in ends) / len(ends) + jy, 2) if ends else jy


def entity_of(store, queue: list[Item]) -> Callable[[str], str]:
    """Document node id -> the entity id the snapshot shows it as, for the nodes of the queue's
    held items (which the snapshot leaves out and which still point at their document's nodes)."""
    nodes = {n for e in queue if e["kind"] == "held" for n in assemble.item_nodes(e["item"])}
    mapping = store.entities_of(nodes) if nodes else {}
    return lambda n: mapping.get(n, n)



#: Reads of a store that a writer keeps changing before one whole picture is had.
READ_TRIES = 3


def from_store(store, *, passages: Passages, title: str) -> ViewerData:
    """The page data of ``store``'s tenant, its document text read through ``passages``.

    The snapshot, review queue and merge log are three reads; a page is made of three taken
    at one graph version (read again while a writer moves it, a few times at most)."""
    for _ in range(READ_TRIES):
        data = _read(store, passages, title)
        if store.version() == data.meta["version"]:
            break
    return data


def _read(store, passages: Passages, title: str) -> ViewerData:
    b = _Builder(store, passages)
    passages.documents = b.snap.documents
    nodes = b.nodes()
    known = {n["id"] for n in nodes}
    queue = store.review_queue()
    held, accepted, held_evidence = b.held(queue, entity_of(store, queue), known)
    items = b.graph_items(accepted) + held
    _place_items(items, nodes)
    evidence = {**b.evidence(), **held_evidence}
    review = [{"document": e["document"], "view": e["view"], "reason": e["reason"], "decision": e["decision"],
               "text": json.dumps(e["item"], ensure_ascii=False)[:500]}
              for e in queue if e["kind"] != "held"]
    meta = {"title": title, "tenant": b.snap.tenant, "version": b.snap.version, "kgkit": __version__,
            "text": passages.enabled}
    return ViewerData(meta=meta, nodes=nodes, items=items, documents=b.documents(nodes, items),
                      evidence=evidence, merges=b.merges(known), review=review)
