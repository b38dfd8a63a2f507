"""What the query operators do not answer and an agent asks for: an item's evidence, a
document's summary, the list of documents, one node by id.

Each is read by id through the query layer (:mod:`kgkit.query.by_id`): a few index ranges
of the store per call, so a call costs what its answer holds, not what the corpus holds, and
a long-running server answers from the graph as it is now. An answer's item id is found by
the store's own index of answer-level ids (kgkit/graph/item_ids.py), so the first evidence
call costs what later ones do.
Every answer names its tenant and graph version, as the operators' answers do.
"""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Iterator

from kgkit.errors import NotFoundError, did_you_mean
from kgkit.query import by_id
from kgkit.query.reader import Reader

if TYPE_CHECKING:
    from kgkit.graph import GraphStore


class Corpus:
    """The corpus tools' answers over one store (one tenant), read by id at each call: an
    item's, a document's or a node's rows by the store's indexes; nothing is kept between calls."""

    def __init__(self, store: GraphStore, documents: int = 50) -> None:
        self.store = store
        self.documents_cap = documents  # documents listed per node, as the operators list them
        self._lock = threading.Lock()

    @contextmanager
    def _reading(self) -> Iterator[Reader]:
        with self._lock, self.store.db.read():
            yield Reader(self.store, documents=self.documents_cap)

    # ---------------------------------------------------------------- answers
    def evidence(self, item: str) -> dict[str, Any]:
        """Every document, page and quote that supports ``item`` (an edge, hyperedge, event or
        temporal edge id from an answer), with the item itself and its ends' names."""
        with self._reading() as r:
            found = by_id.item(r, item, by_id.item_keys(r, item))
            if found is None:
                hint = ("that is a node id: neighbours or the node resource list its items" if r.entities([item])
                        else "give an item id from an answer's items (an edge, hyperedge, event or temporal edge)")
                raise NotFoundError(f"no item {item!r} in tenant {r.tenant!r}", hint=hint)
            record, rows = found
            ends = sorted({x for ids in record["ends"].values() for x in ids})
            known = r.entities(ends)
            names = r.doc_names({ev["document"] for ev in rows})
            return {"tenant": r.tenant, "version": r.version, "item": record,
                    "nodes": [self._node_brief(known[n]) for n in ends if n in known],
                    "evidence": [self._evidence(ev, names) for ev in rows]}

    def document(self, ref: str) -> dict[str, Any]:
        """A document's record and what it contributes: nodes and items by kind, its types and
        relations, and how many of its nodes other documents name too."""
        with self._reading() as r:
            doc = self._document(r, ref)
            return {"tenant": r.tenant, "version": r.version, "document": doc,
                    **by_id.contribution(r, doc["name"], doc["id"])}

    def documents(self, limit: int) -> dict[str, Any]:
        """The documents of the tenant by name, with their node and item counts, ``limit`` at most."""
        with self._reading() as r:
            total, page = by_id.documents(r, limit)
            rows = [{"id": doc_id, "name": name, "title": title, "nodes": len(by_id.entities_of(r, name)),
                     "items": len(set(by_id.items_of(r, name).values()))} for name, doc_id, title in page]
            return {"tenant": r.tenant, "version": r.version, "total": total, "documents": rows,
                    "cut": max(0, total - len(rows))}

    def node(self, node: str, limit: int) -> dict[str, Any]:
        """One node by id: its record, the documents naming it (the first ``query.documents``),
        and up to ``limit`` of its items."""
        with self._reading() as r:
            entity = r.entities([node], documents=True).get(node)
            if entity is None:
                raise NotFoundError(f"no node {node!r} in tenant {r.tenant!r}", hint="find gives node ids by name")
            keys = by_id.node_items(r, node)
            items = sorted(keys)
            shown = [by_id.item(r, i, keys) for i in items[:limit]]
            names = r.doc_names(entity["documents"])
            return {"tenant": r.tenant, "version": r.version, "node": dict(entity),
                    "documents": [names[d] for d in entity["documents"] if d in names],
                    "documents_cut": r.documents_cut.get(node, 0),
                    "items": [s[0] for s in shown if s], "cut": max(0, len(items) - limit)}

    # ---------------------------------------------------------------- helpers
    @staticmethod
    def _document(r: Reader, ref: str) -> dict[str, Any]:
        doc = by_id.document(r, ref)
        if doc is None:
            names = [name for name, _, _ in by_id.documents(r, 10_000)[1]]
            hint = did_you_mean(ref, names) or "the documents tool lists them"
            raise NotFoundError(f"no document {ref!r} in tenant {r.tenant!r}", hint=hint)
        return doc

    @staticmethod
    def _node_brief(n: dict[str, Any]) -> dict[str, Any]:
        return {"id": n["id"], "type": n["type"], "name": n["name"]}

    @staticmethod
    def _evidence(ev: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
        return {"document": names.get(ev["document"], ev["document"]), "document_id": ev["document"],
                "page": ev.get("page"), "quote": ev.get("quote"), "chunk": ev.get("chunk"), "span": ev.get("span"),
                "view": ev.get("view")}
