"""The query layer's reads of a store: the indexed columns (kgkit/graph/index.py) and the
store's own rows, inside one read transaction, so one answer sees one graph version.

Items are read as stored (one row per document, view and item, pointing at document node
ids) and lifted to entity level here the way a snapshot lifts them (kgkit/graph/assemble.py),
so an answer's ids are the snapshot's and the export's.
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any, Iterable

from kgkit.errors import InputError, did_you_mean
from kgkit.graph import assemble
from kgkit.graph.index import _rows
from kgkit.query.results import Evidence, Item, Node


@dataclass(frozen=True)
class Stored:
    """One stored item: its key, kind, relation, confidence and fillers as entities."""

    doc: str
    view: str
    item: str
    kind: str
    relation: str
    confidence: float | None
    fillers: tuple[tuple[str, str], ...]  # (role, entity)

    @property
    def key(self) -> tuple[str, str, str]:
        return self.doc, self.view, self.item

    def others(self, entity: str) -> set[str]:
        return {e for _, e in self.fillers if e != entity}


class Budget:
    """A query's time budget (config ``query.timeout``): operators ask :meth:`spent`
    between steps and return what they have, marked partial."""

    def __init__(self, seconds: float | None):
        self.until = None if not seconds else time.monotonic() + seconds
        self.ran_out = False

    def spent(self) -> bool:
        if self.until is not None and time.monotonic() > self.until:
            self.ran_out = True
        return self.ran_out


class Reader:
    def __init__(self, store, budget: Budget | None = None):
        self.store = store
        self.tenant = store.tenant
        self.version = store.version()
        self.budget = budget or Budget(None)
        self._entities: dict[str, dict[str, Any] | None] = {}
        self._doc_ids: dict[str, str] | None = None

    # ---------------------------------------------------------------- vocabulary
    def types(self) -> list[str]:
        return [r[0] for r in self.store._q("SELECT DISTINCT type FROM qx_entities WHERE tenant = ? ORDER BY type")]

    def relations(self) -> list[str]:
        return [r[0] for r in self.store._q("SELECT DISTINCT relation FROM qx_items WHERE tenant = ? ORDER BY relation")]

    def check(self, what: str, given: Iterable[str] | None, known: list[str], column: int | None = None) -> None:
        """Every ``given`` type or relation must be one the graph has; an empty graph has
        none, and answers every question with nothing rather than an error."""
        if not known:
            return
        for value in given or ():
            if value not in known:
                hint = did_you_mean(value, known)
                where = f" (column {column})" if column else ""
                raise InputError(f"unknown {what} {value!r}{where}",
                                 hint=hint or f"known: {', '.join(known[:20]) or 'none (empty graph)'}")

    # ---------------------------------------------------------------- entities
    def entities(self, ids: Iterable[str], documents: bool = False) -> dict[str, dict[str, Any]]:
        """Index rows of entities; ``documents``: also the documents naming each (read only
        for what an answer returns: a hub is named by thousands)."""
        ids = list(ids)
        want = [e for e in set(ids) if e not in self._entities]
        for e in want:
            self._entities[e] = None
        for entity, etype, name, aliases, degree in _rows(
                self.store, "SELECT entity, type, name, aliases, degree FROM qx_entities "
                            "WHERE tenant = ? AND entity IN ({})", want):
            self._entities[entity] = {"id": entity, "type": etype, "name": name, "aliases": json.loads(aliases),
                                      "documents": None, "degree": degree}
        if documents:
            lacking = [e for e in set(ids) if self._entities.get(e) and self._entities[e]["documents"] is None]
            found: dict[str, set[str]] = {e: set() for e in lacking}
            # CROSS JOIN: SQLite keeps this order (entity's groups, their rows, the documents)
            for entity, doc_id in _rows(self.store, "SELECT DISTINCT g.entity, d.id FROM groups g CROSS JOIN doc_nodes n "
                                                    "CROSS JOIN documents d WHERE g.tenant = ? AND g.entity IN ({}) "
                                                    "AND n.tenant = g.tenant AND n.node = g.node "
                                                    "AND d.tenant = n.tenant AND d.doc = n.doc", lacking):
                found[entity].add(doc_id)
            for entity, docs in found.items():
                self._entities[entity]["documents"] = sorted(docs)
        return {e: self._entities[e] for e in ids if self._entities.get(e)}

    def node(self, entity: str, **extra: Any) -> Node:
        e = self.entities([entity], documents=True)[entity]
        return Node(e["id"], e["type"], e["name"], list(e["aliases"]), list(e["documents"]), e["degree"], **extra)

    def resolve(self, ref: str) -> str | None:
        """An entity id for a node id (an entity's or a merged member's)."""
        rows = self.store._q("SELECT entity FROM groups WHERE tenant = ? AND node = ?", ref)
        return rows[0][0] if rows and self.entities([rows[0][0]]) else None

    def members(self, entities: Iterable[str]) -> dict[str, str]:
        """node id -> entity, for every key group of ``entities``."""
        return {n: e for n, e in _rows(self.store, "SELECT node, entity FROM groups WHERE tenant = ? AND entity IN ({})",
                                       entities)}

    def entity_of(self, nodes: Iterable[str]) -> dict[str, str]:
        return {n: e for n, e in _rows(self.store, "SELECT node, entity FROM groups WHERE tenant = ? AND node IN ({})",
                                       nodes)}

    # ---------------------------------------------------------------- items
    def incident(self, entities: Iterable[str], *, relations: Iterable[str] | None = None,
                 min_confidence: float | None = None) -> list[Stored]:
        """The visible stored items that name any of ``entities``, with every filler as an entity."""
        member = self.members(entities)
        keys = {(d, v, i) for d, v, i in _rows(self.store, "SELECT doc, view, item FROM qx_fillers "
                                                            "WHERE tenant = ? AND node IN ({})", member)}
        return self.items(keys, relations=relations, min_confidence=min_confidence)

    def items(self, keys: Iterable[tuple], *, relations: Iterable[str] | None = None,
              min_confidence: float | None = None) -> list[Stored]:
        keys = set(keys)
        if not keys:
            return []
        wanted = set(relations) if relations else None
        head = {}
        for d, v, i, kind, relation, confidence in _rows(
                self.store, "SELECT doc, view, item, kind, relation, confidence FROM qx_items WHERE tenant = ? "
                            "AND visible = 1 AND (doc, view, item) IN ({})", keys, 3):
            if wanted is not None and relation not in wanted:
                continue
            if min_confidence is not None and confidence is not None and confidence < min_confidence:
                continue
            head[(d, v, i)] = (kind, relation, confidence)
        fills: dict[tuple, list[tuple[str, str]]] = {}
        for d, v, i, role, node in _rows(self.store, "SELECT doc, view, item, role, node FROM qx_fillers "
                                                      "WHERE tenant = ? AND (doc, view, item) IN ({})", head, 3):
            fills.setdefault((d, v, i), []).append((role, node))
        canon = self.entity_of({n for fs in fills.values() for _, n in fs})
        return [Stored(*k, *head[k], tuple(sorted((r, canon.get(n, n)) for r, n in fills.get(k, []))))
                for k in sorted(head)]

    def lift(self, stored: Iterable[Stored], ids: dict[tuple, str] | None = None) -> list[Item]:
        """Stored items as entity-level items (the snapshot's ids), merged across documents,
        each with its evidence and temporal values; ``ids`` gets stored key -> item id."""
        stored = list(stored)
        if not stored:
            return []
        keys = {s.key for s in stored}
        bodies = {(d, v, i): json.loads(b) for d, v, i, b in _rows(
            self.store, "SELECT doc, view, item, body FROM items WHERE tenant = ? AND (doc, view, item) IN ({})",
            keys, 3)}
        nodes = {n for b in bodies.values() for n in _body_nodes(b)}
        canon_map = self.entity_of(nodes)
        canon = lambda n: canon_map.get(n, n)  # noqa: E731
        evidence = self.evidence(keys)
        times: dict[tuple, dict[str, dict[str, Any]]] = {}
        for d, v, i, name, text, lo, hi in _rows(self.store, "SELECT doc, view, item, name, text, lo, hi FROM qx_times "
                                                            "WHERE tenant = ? AND (doc, view, item) IN ({})", keys, 3):
            times.setdefault((d, v, i), {})[name] = {"text": text, "lo": lo, "hi": hi}
        out: dict[str, Item] = {}
        for s in stored:
            shaped = assemble._item(s.kind, bodies[s.key], canon)
            ends = ({"head": [shaped["head"]], "tail": [shaped["tail"]]} if s.kind in ("edge", "temporal")
                    else shaped.get("roles") or shaped.get("arguments") or {})
            item = out.setdefault(shaped["id"], Item(shaped["id"], s.kind, s.relation, ends, None, []))
            if ids is not None:
                ids[s.key] = shaped["id"]
            if s.view not in item.views:
                item.views.append(s.view)
            if s.confidence is not None and (item.confidence is None or s.confidence > item.confidence):
                item.confidence = s.confidence
            item.evidence += evidence.get(s.key, [])
            item.times.update(times.get(s.key, {}))
        for item in out.values():
            item.views.sort()
            item.evidence.sort(key=lambda e: (e.document_id, e.page or 0, e.quote or ""))
        return [out[k] for k in sorted(out)]

    def doc_ids(self) -> dict[str, str]:
        if self._doc_ids is None:
            self._doc_ids = dict(self.store._q("SELECT doc, id FROM documents WHERE tenant = ?"))
        return self._doc_ids

    def evidence(self, keys: Iterable[tuple]) -> dict[tuple, list[Evidence]]:
        """Evidence rows of stored items (doc, view, item), quoted ones first, duplicates once."""
        found: dict[tuple, list[Evidence]] = {}
        ids = self.doc_ids()
        for d, v, i, chunk, page, quote in _rows(self.store, "SELECT doc, view, item, chunk, page, quote FROM evidence "
                                                             "WHERE tenant = ? AND (doc, view, item) IN ({})",
                                                 set(keys), 3):
            ev = Evidence(d, ids.get(d, ""), page, quote, chunk, v)
            if ev not in found.setdefault((d, v, i), []):
                found[(d, v, i)].append(ev)
        return found

    def mentions(self, entities: Iterable[str], per_entity: int = 3) -> dict[str, list[Evidence]]:
        """Where each entity is named: the evidence of its groups' mentions in its first
        few documents (read per document, by the evidence's document index)."""
        member = self.members(entities)
        ids = self.doc_ids()
        docs: dict[str, list[str]] = {}
        for doc, node in _rows(self.store, "SELECT doc, node FROM doc_nodes WHERE tenant = ? AND node IN ({})", member):
            got = docs.setdefault(member[node], [])
            if len(got) < per_entity and doc not in got:
                got.append(doc)
        out: dict[str, list[Evidence]] = {}
        nodes_of: dict[str, list[str]] = {}
        for node, entity in member.items():
            nodes_of.setdefault(entity, []).append(node)
        for entity, chosen in sorted(docs.items()):
            found = out.setdefault(entity, [])
            for doc in sorted(chosen):
                nodes = nodes_of[entity]
                for v, chunk, page, quote in self.store._q(
                        "SELECT view, chunk, page, quote FROM evidence WHERE tenant = ? AND doc = ? AND item IN "
                        f"({','.join('?' * len(nodes))}) LIMIT ?", doc, *nodes, per_entity):
                    ev = Evidence(doc, ids.get(doc, ""), page, quote, chunk, v)
                    if len(found) < per_entity and ev not in found:
                        found.append(ev)
        return out


def _body_nodes(body: dict[str, Any]) -> list[str]:
    out = [body[k] for k in ("head", "tail") if isinstance(body.get(k), str)]
    for roles in (body.get("roles"), body.get("arguments")):
        for value in (roles or {}).values():
            out += assemble._node_ids(value)
    return out
