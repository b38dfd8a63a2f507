"""A read-only picture of one tenant's corpus graph: what a store hands to exporters.

The store (SQLite or PostgreSQL) and the export formats meet here and nowhere else, so an
exporter never sees SQL and a store never knows GraphML. Everything is plain data with
stable ids, sorted by id, so the same graph always exports to the same bytes.

Item shapes (every id is the one kgkit wrote in the run folders, node ids after
cross-document resolution):

* node: ``{"id", "type", "name", "aliases": [str], "documents": [doc id], "scope"}`` —
  ``scope`` is ``corpus``, ``document`` or ``value`` (kgkit/formats/scopes.py); a value node also
  has ``"value"``, its normalised value, when the run folder gave one; a value node that
  no visible item ends is left out (a literal of nothing)
* edge (binary, from the ``binary``/``person`` projections and other binary views):
  ``{"id", "head", "relation", "tail", "views": [view name], "confidence": float | None,
  "documents": [doc id]}``, and ``"properties": {name: scalar or [str]}`` when the edge was
  stored with some (a paper's ``CITES`` edge: intent, strength, mentions)
* hyperedge: ``{"id", "relation", "roles": {role: [node id]}, "views": [...], "documents": [...]}``
* event: ``{"id", "type", "trigger": str | None, "arguments": {role: [node id]},
  "time": {"text", "value"} | None, "views": [...], "documents": [...]}``
* temporal edge: ``{"id", "head", "relation", "tail", "qualifiers": {name: {"text", "type", "value"}},
  "views": [...], "documents": [...]}``
* evidence: ``{"item": item id, "document": doc id, "chunk": chunk id, "page": int | None,
  "span": [start, end] | None, "quote": str | None, "view": view name}`` — one per
  (item, document, place); an item supported by three documents has three.
* document: ``{"id", "name", "source": str | None, "sha256": str, "title": str | None,
  "pages": int | None, "added": ISO time, "node": node id | None}`` — ``node`` is the node
  that IS the document (a domain's ``document_type``), when its domain declares one

An item's ``documents`` are those whose visible rows state it (its evidence may name fewer,
when a view kept an item without a quote).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

Item = dict[str, Any]


@dataclass(frozen=True)
class GraphSnapshot:
    tenant: str
    version: int  # the store's graph version when the snapshot was taken
    nodes: list[Item] = field(default_factory=list)
    edges: list[Item] = field(default_factory=list)
    hyperedges: list[Item] = field(default_factory=list)
    events: list[Item] = field(default_factory=list)
    temporal: list[Item] = field(default_factory=list)
    evidence: list[Item] = field(default_factory=list)
    documents: list[Item] = field(default_factory=list)
