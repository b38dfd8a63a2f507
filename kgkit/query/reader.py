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
from typing import Any, Callable, Iterable, cast

from kgkit.errors import InputError, did_you_mean
from kgkit.graph import assemble
from kgkit.graph.index import _rows
from kgkit.graph.links import CHUNK
from kgkit.query.results import Evidence, Item, Node

#: A stored item's key as one value in SQL (its parts joined by SEP, a parameter), so an
#: aggregate can count items and pick one.
SEP = "\x1f"
KEY = "a.doc || ? || a.view || ? || a.item"


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
    def __init__(self, store, budget: Budget | None = None, documents: int = 50):
        self.store = store
        self.tenant = store.tenant
        self.version = store.version()
        self.budget = budget or Budget(None)
        self.documents_cap = documents  # documents listed per node (query.documents)
        self.documents_cut: dict[str, int] = {}  # entity -> documents naming it that were not listed
        self._entities: dict[str, dict[str, Any] | None] = {}
        self._doc_id: dict[str, str] = {}  # document name -> d_ id, read as needed
        self._all_docs = False

    # ---------------------------------------------------------------- vocabulary
    def types(self) -> list[str]:
        return self._distinct("qx_entities", "type")

    def relations(self) -> list[str]:
        return self._distinct("qx_items", "relation")

    def _distinct(self, table: str, column: str) -> list[str]:
        """The distinct values of an indexed (tenant, column) as a skip scan: one index probe
        per value, not a scan of every row (a 10,000-document store has 700,000 items)."""
        sql = (f"WITH RECURSIVE v(x) AS (SELECT MIN({column}) FROM {table} WHERE tenant = ? UNION ALL "
               f"SELECT (SELECT MIN({column}) FROM {table} WHERE tenant = ? AND {column} > v.x) FROM v "
               f"WHERE v.x IS NOT NULL) SELECT x FROM v WHERE x IS NOT NULL")
        return sorted(r[0] for r in self.store.db.query(sql, (self.tenant, self.tenant)))

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
        """Index rows of entities; ``documents``: also the documents naming each, at most
        ``documents_cap`` of them (read only for what an answer returns: a hub is named by
        thousands; the rest are counted in ``documents_cut``)."""
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
            lacking = [e for e in set(ids) if (row := self._entities.get(e)) and row["documents"] is None]
            for entity, docs in self.documents_of(lacking).items():
                cast(dict, self._entities[entity])["documents"] = docs
        return {e: row for e in ids if (row := self._entities.get(e))}

    def documents_of(self, entities: Iterable[str]) -> dict[str, list[str]]:
        """entity -> d_ ids of the first ``documents_cap`` documents naming it (by name), each
        read as a short range of the (tenant, node, doc) index; what the cap leaves out is
        counted in ``documents_cut``."""
        cap = self.documents_cap
        nodes_of: dict[str, list[str]] = {}
        for node, entity in self.members(entities).items():
            nodes_of.setdefault(entity, []).append(node)
        docs_of = self._first_documents(sorted(n for ns in nodes_of.values() for n in ns), cap + 1)
        names: dict[str, list[str]] = {}
        for entity, nodes in sorted(nodes_of.items()):
            found: set[str] = set()
            full = True
            for node in sorted(nodes):
                got = docs_of.get(node, [])
                full = full and len(got) <= cap
                found.update(got)
            chosen = sorted(found)[:cap]
            if not full or len(found) > cap:
                self.documents_cut[entity] = self._document_count(nodes) - len(chosen)
            names[entity] = chosen
        ids = self.doc_ids({d for docs in names.values() for d in docs})
        return {e: sorted(ids[d] for d in docs if d in ids) for e, docs in names.items()}

    def _document_count(self, nodes: list[str]) -> int:
        """How many documents name any of ``nodes`` (one entity's key groups): the largest
        group's refs (its documents), then each other group's documents that no group before
        it names, read by the documents' primary key: a hub's own thousands are not read."""
        refs = dict(_rows(self.store, "SELECT node, refs FROM groups WHERE tenant = ? AND node IN ({})", nodes))
        order = sorted(refs, key=lambda n: (-refs[n], n))
        total = refs[order[0]] if order else 0
        for i, node in enumerate(order[1:], 1):
            total += self.store._q(
                "SELECT COUNT(*) FROM doc_nodes a WHERE a.tenant = ? AND a.node = ? AND NOT EXISTS (SELECT 1 FROM "
                f"doc_nodes b WHERE b.tenant = a.tenant AND b.doc = a.doc AND b.node IN ({','.join('?' * i)}))",
                node, *order[:i])[0][0]
        return total

    def _first_documents(self, nodes: list[str], each: int) -> dict[str, list[str]]:
        """node -> the names of its first ``each`` documents, by name: one statement per 50
        nodes, each node's part a short range of the (tenant, node, doc) index."""
        out: dict[str, list[str]] = {}
        for i in range(0, len(nodes), 50):
            part = nodes[i:i + 50]
            sql = " UNION ALL ".join("SELECT * FROM (SELECT node, doc FROM doc_nodes WHERE tenant = ? AND node = ? "
                                     "ORDER BY doc LIMIT ?) AS d" for _ in part)
            for node, doc in self.store.db.query(sql, [x for n in part for x in (self.tenant, n, each)]):
                out.setdefault(node, []).append(doc)
        return out

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
                 min_confidence: float | None = None, others: Iterable[str] | None = None) -> list[Stored]:
        """The visible stored items that name any of ``entities`` (and, given ``others``, one
        of those too), with every filler as an entity: one joined read per 500 key groups."""
        member = sorted(self.members(entities))
        extra, extra_params = "", []
        if others is not None:
            other_nodes = sorted(self.members(others))
            if not other_nodes:
                return []
            extra = (" AND EXISTS (SELECT 1 FROM qx_fillers b WHERE b.tenant = a.tenant AND b.doc = a.doc "
                     f"AND b.view = a.view AND b.item = a.item AND b.node IN ({','.join('?' * len(other_nodes))}))")
            extra_params = other_nodes
        out: list[Stored] = []
        for i in range(0, len(member), CHUNK):
            part = member[i:i + CHUNK]
            keys = (f"(SELECT a.doc, a.view, a.item FROM qx_fillers a WHERE a.tenant = ? AND a.node IN "
                    f"({','.join('?' * len(part))}) AND a.visible = 1{extra}) k")
            out += self._stored(keys, [self.tenant, *part, *extra_params], relations, min_confidence)
        return sorted({s.key: s for s in out}.values(), key=lambda s: s.key)

    @staticmethod
    def _values(keys: list[tuple]) -> str:
        """Keys (doc, view, item) as a table ``k`` (both databases name VALUES' columns column1..3)."""
        return ("(SELECT column1 AS doc, column2 AS view, column3 AS item FROM (VALUES "
                + ", ".join(["(?, ?, ?)"] * len(keys)) + ") AS v) k")

    def keyed(self, columns: str, table: str, keys: Iterable[tuple]) -> list[tuple]:
        """``columns`` of ``table`` (as ``t``) for stored items ``keys`` (doc, view, item): one
        read per 500 keys, each key found by the table's index."""
        keys = sorted(set(keys))
        out: list[tuple] = []
        for i in range(0, len(keys), CHUNK):
            part = keys[i:i + CHUNK]
            out += self.store.db.query(
                f"SELECT {columns} FROM {self._values(part)} CROSS JOIN {table} t WHERE t.tenant = ? "
                "AND t.doc = k.doc AND t.view = k.view AND t.item = k.item", (*[x for k in part for x in k], self.tenant))
        return out

    def items(self, keys: Iterable[tuple], *, relations: Iterable[str] | None = None,
              min_confidence: float | None = None) -> list[Stored]:
        """The visible stored items of ``keys`` (doc, view, item): one joined read per 500 keys."""
        keys = sorted(set(keys))
        out: list[Stored] = []
        for i in range(0, len(keys), CHUNK):
            part = keys[i:i + CHUNK]
            out += self._stored(self._values(part), [x for key in part for x in key], relations, min_confidence)
        return sorted(out, key=lambda s: s.key)

    def _stored(self, keys_sql: str, params: list, relations: Iterable[str] | None,
                min_confidence: float | None) -> list[Stored]:
        """Stored items of the (doc, view, item) rows ``keys_sql`` gives, with their fillers
        resolved to entities, in one query."""
        where, more = _item_filters(relations, min_confidence)
        # CROSS JOIN: SQLite keeps this order (the keys, then their items by primary key) instead
        # of reading every item of a relation by the relation index; PostgreSQL plans it freely
        rows = self.store.db.query(
            "SELECT i.doc, i.view, i.item, i.kind, i.relation, i.confidence, c.role, c.node, COALESCE(g.entity, c.node) "
            f"FROM {keys_sql} CROSS JOIN qx_items i "
            "LEFT JOIN qx_fillers c ON c.tenant = i.tenant AND c.doc = i.doc AND c.view = i.view AND c.item = i.item "
            "LEFT JOIN groups g ON g.tenant = c.tenant AND g.node = c.node "
            f"WHERE i.tenant = ? AND i.doc = k.doc AND i.view = k.view AND i.item = k.item AND i.visible = 1{where}",
            (*params, self.tenant, *more))
        head: dict[tuple, tuple] = {}
        fills: dict[tuple, dict[tuple[str, str], str]] = {}
        for d, v, i, kind, relation, confidence, role, node, entity in rows:
            head[(d, v, i)] = (kind, relation, confidence)
            if role is not None:
                fills.setdefault((d, v, i), {})[(role, node)] = entity
        return [Stored(d, v, i, kind, relation, confidence,
                       tuple(sorted((r, e) for (r, _), e in fills.get((d, v, i), {}).items())))
                for (d, v, i), (kind, relation, confidence) in head.items()]

    def hood(self, entities: Iterable[str], *, relations: Iterable[str] | None = None,
             min_confidence: float | None = None, direction: str | None = None,
             types: Iterable[str] | None = None, scan: int | None = None
             ) -> tuple[list[tuple[str, str, float, int, int, tuple]], dict[str, int]]:
        """(entity, neighbour, best confidence, neighbour's degree, items, the keys of two of them) for every
        pair one visible
        item joins, aggregated in the database: a hub's thousands of items come back as one
        row per neighbour, not as items. ``direction`` forward: head to tail of binary items;
        backward: tail to head; None: any two fillers. ``scan``: statements read per key
        group of an entity at most (its first, in index order); returns also, per entity, how
        many of its statements were not read."""
        member = self.members(entities)
        where, more = _item_filters(relations, min_confidence)
        if direction is not None:
            near, far = ("head", "tail") if direction == "forward" else ("tail", "head")
            where += f" AND i.kind IN ('edge', 'temporal') AND a.role = '{near}' AND b.role = '{far}'"
        if types:
            types = sorted(set(types))
            where += f" AND e.type IN ({','.join('?' * len(types))})"
            more += types
        degree = {e: info["degree"] for e, info in self.entities(set(member.values())).items()}
        small = sorted(n for n, e in member.items() if scan is None or degree.get(e, 0) <= scan)
        large = sorted(set(member) - set(small))
        sources = [(f"IN ({','.join('?' * len(small[i:i + CHUNK]))})", small[i:i + CHUNK], None)
                   for i in range(0, len(small), CHUNK)] + [("= ?", [n], scan) for n in large]
        out: list[tuple[str, str, float, int, int, tuple]] = []
        unread: dict[str, int] = {}
        for cond, nodes, cap in sources:
            # one group (a capped hub's): its entity is a parameter, not a lookup per statement read
            lone = [member[nodes[0]]] if cap else []
            rows = self.store.db.query(_hood_sql(cond, bool(cap), where),
                                       (*[SEP] * 6, self.tenant, *nodes, *([cap] if cap else []), *lone, *more))
            out += [(*lone, *r[:5 - len(lone)], tuple(dict.fromkeys(tuple(k.split(SEP)) for k in r[5 - len(lone):])))
                    for r in rows]
            if cap:  # a group's visible fillers are its qx_degree (a lone group's: its entity's degree)
                entity = member[nodes[0]]
                groups = [n for n, e in member.items() if e == entity]
                total = degree[entity] if len(groups) == 1 else sum(r[0] for r in self.store._q(
                    "SELECT degree FROM qx_degree WHERE tenant = ? AND node = ?", nodes[0]))
                unread[entity] = unread.get(entity, 0) + max(0, total - cap)
        return out, unread

    def snapshot_ids(self, stored: Iterable[Stored]) -> dict[tuple, str]:
        """Stored key (doc, view, item) -> the item's id in a snapshot (entity-level, the same
        for every document stating it), from the items' bodies alone."""
        stored = list(stored)
        bodies = {(d, v, i): json.loads(b) for d, v, i, b in
                  self.keyed("t.doc, t.view, t.item, t.body", "items", {s.key for s in stored})}
        canon_map = self.entity_of({n for b in bodies.values() for n in assemble.item_nodes(b)})
        canon = _canonical(canon_map)
        return {s.key: assemble._item(s.kind, bodies[s.key], canon)["id"] for s in stored if s.key in bodies}

    def lift(self, stored: Iterable[Stored], ids: dict[tuple, str] | None = None) -> list[Item]:
        """Stored items as entity-level items (the snapshot's ids), merged across documents,
        each with its evidence and temporal values; ``ids`` gets stored key -> item id."""
        stored = list(stored)
        if not stored:
            return []
        keys = {s.key for s in stored}
        bodies = {(d, v, i): json.loads(b) for d, v, i, b in self.keyed("t.doc, t.view, t.item, t.body", "items", keys)}
        nodes = {n for b in bodies.values() for n in assemble.item_nodes(b)}
        canon_map = self.entity_of(nodes)
        canon = _canonical(canon_map)
        evidence = self.evidence(keys)
        times: dict[tuple, dict[str, dict[str, Any]]] = {}
        for d, v, i, name, text, lo, hi in self.keyed("t.doc, t.view, t.item, t.name, t.text, t.lo, t.hi", "qx_times",
                                                      keys):
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
            if shaped.get("properties"):
                item.properties = assemble.merge_properties(item.properties, shaped["properties"]) or {}
        for item in out.values():
            item.views.sort()
            item.evidence.sort(key=lambda e: (e.document_id, e.page or 0, e.quote or ""))
        return [out[k] for k in sorted(out)]

    def doc_ids(self, docs: Iterable[str] | None = None) -> dict[str, str]:
        """Document name -> d_ id: of ``docs`` (read by the primary key), or of every document."""
        if docs is None:
            if not self._all_docs:
                self._doc_id.update(self.store._q("SELECT doc, id FROM documents WHERE tenant = ?"))
                self._all_docs = True
            return dict(self._doc_id)
        docs = set(docs)
        lacking = [d for d in docs if d not in self._doc_id] if not self._all_docs else []
        self._doc_id.update(_rows(self.store, "SELECT doc, id FROM documents WHERE tenant = ? AND doc IN ({})",
                                  lacking))
        return {d: self._doc_id[d] for d in docs if d in self._doc_id}

    def doc_names(self, ids: Iterable[str]) -> dict[str, str]:
        """d_ id -> document name, for ``ids`` (by the documents' id index)."""
        return {i: d for d, i in _rows(self.store, "SELECT doc, id FROM documents WHERE tenant = ? AND id IN ({})",
                                       ids)}

    def evidence(self, keys: Iterable[tuple]) -> dict[tuple, list[Evidence]]:
        """Evidence rows of stored items (doc, view, item), quoted ones first, duplicates once."""
        found: dict[tuple, list[Evidence]] = {}
        keys = set(keys)
        ids = self.doc_ids({d for d, _, _ in keys})
        for d, v, i, chunk, page, quote in self.keyed("t.doc, t.view, t.item, t.chunk, t.page, t.quote", "evidence",
                                                      keys):
            ev = Evidence(d, ids.get(d, ""), page, quote, chunk, v)
            if ev not in found.setdefault((d, v, i), []):
                found[(d, v, i)].append(ev)
        return found

    def mentions(self, entities: Iterable[str], per_entity: int = 3) -> dict[str, list[Evidence]]:
        """Where each entity is named: the evidence of its groups' mentions in its first
        few documents (read per document, by the evidence's document index)."""
        member = self.members(entities)
        nodes_of: dict[str, list[str]] = {}
        for node, entity in member.items():
            nodes_of.setdefault(entity, []).append(node)
        docs: dict[str, list[str]] = {}
        for entity, nodes in nodes_of.items():  # a hub's first documents, not all its thousands
            stating = {r[0] for n in nodes for r in self.store._q(
                "SELECT doc FROM doc_nodes WHERE tenant = ? AND node = ? ORDER BY doc LIMIT ?", n, per_entity)}
            docs[entity] = sorted(stating)[:per_entity]
        ids = self.doc_ids({d for ds in docs.values() for d in ds})
        out: dict[str, list[Evidence]] = {}
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



def _hood_sql(cond: str, lone: bool, where: str) -> str:
    """:meth:`Reader.hood`'s aggregated read of the statements of the key groups ``cond``
    selects (``lone``: one group, read up to a LIMIT, its entity a parameter). CROSS JOIN:
    SQLite keeps this order (the group's fillers, then each statement's other fillers)."""
    # a capped group's first statements in the index's order, so both stores keep the same ones
    first = " ORDER BY doc, view, item, role LIMIT ?" if lone else ""
    fillers = f"(SELECT * FROM qx_fillers WHERE tenant = ? AND node {cond} AND visible = 1{first}) a"
    near = "" if lone else "ga.entity, "
    return (f"SELECT {near}gb.entity, MAX(COALESCE(i.confidence, 1.0)), e.degree, "
            f"COUNT(DISTINCT {KEY}), MIN({KEY}), MAX({KEY}) FROM {fillers} "
            + ("" if lone else "CROSS JOIN groups ga ")
            + "CROSS JOIN qx_items i CROSS JOIN qx_fillers b CROSS JOIN groups gb CROSS JOIN qx_entities e WHERE "
            + ("" if lone else "ga.tenant = a.tenant AND ga.node = a.node AND ")
            + "i.tenant = a.tenant AND i.doc = a.doc AND i.view = a.view AND i.item = a.item "
            "AND b.tenant = a.tenant AND b.doc = a.doc AND b.view = a.view AND b.item = a.item "
            "AND gb.tenant = b.tenant AND gb.node = b.node AND e.tenant = gb.tenant AND e.entity = gb.entity "
            f"AND gb.entity <> {'?' if lone else 'ga.entity'}{where} GROUP BY {near}gb.entity, e.degree")


def _canonical(canon_map: dict[str, str]) -> Callable[[str], str]:
    """A node's entity id, the node itself where it is in no group."""
    return lambda node: canon_map.get(node, node)


def _item_filters(relations: Iterable[str] | None, min_confidence: float | None) -> tuple[str, list]:
    """The SQL conditions (on items aliased ``i``) and their parameters for a relation filter
    and a query-time confidence threshold, as every item read applies them."""
    where: str = ""
    params: list = []
    if relations:
        names = sorted(set(relations))
        where += f" AND i.relation IN ({','.join('?' * len(names))})"
        params += names
    if min_confidence is not None:
        where += " AND (i.confidence IS NULL OR i.confidence >= ?)"
        params.append(min_confidence)
    return where, params
