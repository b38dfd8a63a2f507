"""What the query operators do not answer and an agent asks for: an item's evidence, a
document's summary, the list of documents, one node by id.

They are read from the store's snapshot (:meth:`kgkit.graph.GraphStore.snapshot`, the
picture exporters read), indexed once per graph version and rebuilt when the version moves,
so a long-running server answers from the graph as it is now without re-reading it per call;
a server reads the first one ahead, as it starts (:meth:`Corpus.warm`).
Every answer names its tenant and graph version, as the operators' answers do.
"""
from __future__ import annotations

import logging
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

from kgkit.errors import NotFoundError, did_you_mean

if TYPE_CHECKING:
    from kgkit.graph import GraphStore

log = logging.getLogger("kgkit.serve")

#: snapshot list -> the item kind the query layer's answers name it by
KINDS = {"edges": "edge", "hyperedges": "hyperedge", "events": "event", "temporal": "temporal"}


def item_record(kind: str, raw: dict[str, Any]) -> dict[str, Any]:
    """A snapshot item in the shape of the query layer's ``Item``: kind, relation, ends by role."""
    if kind in ("edge", "temporal"):
        ends = {"head": [raw["head"]], "tail": [raw["tail"]]}
    else:
        ends = {role: list(ids) for role, ids in (raw.get("roles") or raw.get("arguments") or {}).items()}
    return {"id": raw["id"], "kind": kind, "relation": raw.get("relation") or raw.get("type") or "",
            "ends": ends, "confidence": raw.get("confidence"), "views": list(raw.get("views") or []),
            "documents": list(raw.get("documents") or [])}


@dataclass
class Indexed:
    """One snapshot with the lookups the tools need."""

    tenant: str
    version: int
    nodes: dict[str, dict[str, Any]] = field(default_factory=dict)
    items: dict[str, dict[str, Any]] = field(default_factory=dict)
    evidence: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # d_ id -> record
    by_name: dict[str, str] = field(default_factory=dict)  # document name -> d_ id
    items_of_node: dict[str, list[str]] = field(default_factory=dict)
    items_of_doc: dict[str, list[str]] = field(default_factory=dict)
    nodes_of_doc: dict[str, list[str]] = field(default_factory=dict)

    @classmethod
    def of(cls, snap) -> "Indexed":
        out = cls(snap.tenant, snap.version)
        out.nodes = {n["id"]: n for n in snap.nodes}
        out.documents = {d["id"]: d for d in snap.documents}
        out.by_name = {d["name"]: d["id"] for d in snap.documents}
        for n in snap.nodes:
            for doc in n.get("documents") or ():
                out.nodes_of_doc.setdefault(doc, []).append(n["id"])
        for attr, kind in KINDS.items():
            for raw in getattr(snap, attr):
                record = item_record(kind, raw)
                out.items[record["id"]] = record
                for node in {x for ids in record["ends"].values() for x in ids}:
                    out.items_of_node.setdefault(node, []).append(record["id"])
                for doc in record["documents"]:
                    out.items_of_doc.setdefault(doc, []).append(record["id"])
        for ev in snap.evidence:
            out.evidence.setdefault(ev["item"], []).append(ev)
        return out


class Corpus:
    """The snapshot-backed answers over one store (one tenant), current as of each call."""

    def __init__(self, store: GraphStore) -> None:
        self.store = store
        self._index: Indexed | None = None
        self._lock = threading.Lock()  # one reader of the snapshot at a time: the warm-up or a call

    def warm(self, open_store: Callable[[], GraphStore]) -> threading.Thread:
        """Read and index the snapshot in a thread of its own, on a connection ``open_store``
        gives (a connection belongs to one thread), while the server starts answering the
        query operators: on a large graph the first corpus call then finds it ready, or waits
        only for the rest of it. A failure here is logged; the first call reads it again."""
        self._lock.acquire()  # taken here, so no call can start a second read meanwhile

        def work() -> None:
            try:
                with open_store() as other:
                    self._index = Indexed.of(other.snapshot())
            except Exception:  # noqa: BLE001 - only a head start: the first call reads it on its own
                log.warning("reading the snapshot ahead failed; the first corpus call reads it", exc_info=True)
            finally:
                self._lock.release()

        thread = threading.Thread(target=work, name="kgkit-serve-snapshot", daemon=True)
        thread.start()
        return thread

    def current(self) -> Indexed:
        with self._lock:
            if self._index is None or self._index.version != self.store.version():
                self._index = Indexed.of(self.store.snapshot())
            return self._index

    # ---------------------------------------------------------------- answers
    def evidence(self, item: str) -> dict[str, Any]:
        """Every document, page and quote that supports ``item`` (an edge, hyperedge, event or
        temporal edge id from an answer), with the item itself and its ends' names."""
        g = self.current()
        if item not in g.items:
            hint = ("that is a node id: neighbours or the node resource list its items" if item in g.nodes
                    else "give an item id from an answer's items (an edge, hyperedge, event or temporal edge)")
            raise NotFoundError(f"no item {item!r} in tenant {g.tenant!r}", hint=hint)
        record = g.items[item]
        ends = sorted({x for ids in record["ends"].values() for x in ids})
        return {"tenant": g.tenant, "version": g.version, "item": record,
                "nodes": [self._node_brief(g, n) for n in ends if n in g.nodes],
                "evidence": [self._evidence(g, ev) for ev in g.evidence.get(item, [])]}

    def document(self, ref: str) -> dict[str, Any]:
        """A document's record and what it contributes: nodes and items by kind, its types and
        relations, and how many of its nodes other documents name too."""
        g = self.current()
        doc = self._doc_id(g, ref)
        items = [g.items[i] for i in g.items_of_doc.get(doc, [])]
        nodes = [g.nodes[n] for n in g.nodes_of_doc.get(doc, [])]
        return {"tenant": g.tenant, "version": g.version, "document": dict(g.documents[doc]),
                "counts": {"nodes": len(nodes), **{k: sum(1 for i in items if i["kind"] == k) for k in KINDS.values()},
                           "evidence": sum(1 for i in items for ev in g.evidence.get(i["id"], [])
                                           if ev["document"] == doc)},
                "types": dict(sorted(Counter(n["type"] for n in nodes).items())),
                "relations": dict(sorted(Counter(i["relation"] for i in items).items())),
                "shared_nodes": sum(1 for n in nodes if len(n.get("documents") or ()) > 1)}

    def documents(self, limit: int) -> dict[str, Any]:
        """The documents of the tenant by name, with their node and item counts, ``limit`` at most."""
        g = self.current()
        rows = [{"id": d["id"], "name": d["name"], "title": d.get("title"),
                 "nodes": len(g.nodes_of_doc.get(d["id"], [])), "items": len(g.items_of_doc.get(d["id"], []))}
                for d in sorted(g.documents.values(), key=lambda d: d["name"])]
        return {"tenant": g.tenant, "version": g.version, "total": len(rows), "documents": rows[:limit],
                "cut": max(0, len(rows) - limit)}

    def node(self, node: str, limit: int) -> dict[str, Any]:
        """One node by id: its record, the documents naming it, and up to ``limit`` of its items."""
        g = self.current()
        if node not in g.nodes:
            raise NotFoundError(f"no node {node!r} in tenant {g.tenant!r}", hint="find gives node ids by name")
        items = sorted(g.items_of_node.get(node, []))
        record = dict(g.nodes[node])
        return {"tenant": g.tenant, "version": g.version, "node": record,
                "documents": [g.documents[d]["name"] for d in record.get("documents") or () if d in g.documents],
                "items": [g.items[i] for i in items[:limit]], "cut": max(0, len(items) - limit)}

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _doc_id(g: Indexed, ref: str) -> str:
        if ref in g.documents:
            return ref
        if ref in g.by_name:
            return g.by_name[ref]
        hint = did_you_mean(ref, g.by_name) or "the documents tool lists them"
        raise NotFoundError(f"no document {ref!r} in tenant {g.tenant!r}", hint=hint)

    @staticmethod
    def _node_brief(g: Indexed, node: str) -> dict[str, Any]:
        n = g.nodes[node]
        return {"id": n["id"], "type": n["type"], "name": n["name"]}

    @staticmethod
    def _evidence(g: Indexed, ev: dict[str, Any]) -> dict[str, Any]:
        doc = g.documents.get(ev["document"], {})
        return {"document": doc.get("name", ev["document"]), "document_id": ev["document"], "page": ev.get("page"),
                "quote": ev.get("quote"), "chunk": ev.get("chunk"), "span": ev.get("span"), "view": ev.get("view")}
