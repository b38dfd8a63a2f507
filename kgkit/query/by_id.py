"""Reads by id, for a server's corpus tools: one item with its evidence, one document's
contribution, a page of the documents, one node with its items. Each is a few index ranges
of the store (a document's rows, an item's rows, a key group's rows), never a read of the
whole tenant, and each answers as the tenant's snapshot would (the same ids, records and
counts). Call them with a :class:`~kgkit.query.reader.Reader` inside its read transaction.
"""
from __future__ import annotations

import json
from collections import Counter
from typing import Any, Iterable

from kgkit.graph import assemble
from kgkit.graph.item_ids import keys_of
from kgkit.query.reader import Reader

Key = tuple[str, str, str]  # a stored item: (doc, view, item)

_DOCUMENT = "SELECT doc, id, source, sha256, title, pages, added, node FROM documents WHERE tenant = ? AND {} = ?"


def item_keys(r: Reader, item_id: str) -> dict[str, list[Key]]:
    """The visible stored items an answer's item id is made of, as :func:`item` takes them. A
    stored item's own id is its run folder's, made from its document's node ids; the store
    keeps every item's answer-level id beside it (kgkit/graph/item_ids.py), so this is one
    index range however large the corpus."""
    keys = keys_of(r.store, item_id)
    return {item_id: keys} if keys else {}


def item_ids(r: Reader, keys: Iterable[Key]) -> dict[Key, str]:
    """Stored key -> the entity-level (snapshot) id of the item it stores."""
    return _ids(r, r.keyed("t.doc, t.view, t.item, t.kind, t.body", "items", keys))


def _ids(r: Reader, rows: list[tuple], canon_map: dict[str, str] | None = None) -> dict[Key, str]:
    """(doc, view, item, kind, body) rows -> their entity-level ids (ends through their key
    groups; ``canon_map``: node -> entity when already read)."""
    parsed = [(d, v, i, kind, json.loads(body)) for d, v, i, kind, body in rows]
    if canon_map is None:
        canon_map = r.entity_of({n for *_, body in parsed for n in assemble.item_nodes(body)})

    def canon(node: str) -> str:
        return canon_map.get(node, node)

    return {(d, v, i): assemble._item(kind, body, canon)["id"] for d, v, i, kind, body in parsed}


def item(r: Reader, item_id: str, index: dict[str, list[Key]]) -> tuple[dict[str, Any], list[dict[str, Any]]] | None:
    """The item ``item_id`` as a record (kind, relation, ends by role, confidence, views,
    documents) and its evidence rows as the snapshot has them; None when there is none.
    ``index``: :func:`item_keys`, or any map naming ``item_id``'s stored items."""
    ids: dict[tuple, str] = {}
    lifted = [i for i in r.lift(r.items(index.get(item_id, [])), ids) if i.id == item_id]
    if not lifted:
        return None
    mine = [k for k, v in ids.items() if v == item_id]
    docs = r.doc_ids({d for d, _, _ in mine})
    found = lifted[0]
    record = {"id": found.id, "kind": found.kind, "relation": found.relation, "ends": found.ends,
              "confidence": found.confidence, "views": list(found.views),
              "documents": sorted({docs[d] for d, _, _ in mine if d in docs})}
    return record, _evidence(r, mine, docs, {k: item_id for k in mine})


def _evidence(r: Reader, keys: list[Key], docs: dict[str, str], target: dict[Key, str]) -> list[dict[str, Any]]:
    rows = set()
    for d, v, i, chunk, page, start, end, quote in r.keyed(
            "t.doc, t.view, t.item, t.chunk, t.page, t.span_start, t.span_end, t.quote", "evidence", keys):
        span = (start, end) if start is not None else None
        rows.add((target[(d, v, i)], docs.get(d, ""), chunk, page, span, quote, v))
    ordered = sorted(rows, key=lambda e: (e[0], e[1], e[2] or "", e[4] or (-1, -1), e[6], e[5] or "", e[3] or 0))
    return [{"item": i, "document": d, "chunk": c, "page": p, "span": list(s) if s else None, "quote": q, "view": v}
            for i, d, c, p, s, q, v in ordered]


def document(r: Reader, ref: str) -> dict[str, Any] | None:
    """The document named or d_-numbered ``ref``: its record as the snapshot lists it."""
    rows = r.store.db.query(_DOCUMENT.format("doc"), (r.tenant, ref)) or \
        r.store.db.query(_DOCUMENT.format("id"), (r.tenant, ref))
    if not rows:
        return None
    name, doc_id, source, sha256, title, pages, added, node = rows[0]
    canon = r.entity_of([node]) if node else {}
    return {"id": doc_id, "name": name, "source": source, "sha256": sha256, "title": title, "pages": pages,
            "added": added, "node": canon.get(node, node) if node else None}


def documents(r: Reader, limit: int) -> tuple[int, list[tuple[str, str, str | None]]]:
    """How many documents the tenant has, and the first ``limit`` by name: (name, d_ id, title)."""
    total = r.store.db.query("SELECT COUNT(*) FROM documents WHERE tenant = ?", (r.tenant,))[0][0]
    rows = r.store.db.query("SELECT doc, id, title FROM documents WHERE tenant = ? ORDER BY doc LIMIT ?",
                            (r.tenant, limit))
    return total, [tuple(row) for row in rows]


def entities_of(r: Reader, name: str) -> dict[str, dict[str, Any]]:
    """The entities document ``name`` names (the snapshot's nodes listing it), by id."""
    nodes = [row[0] for row in r.store.db.query("SELECT node FROM doc_nodes WHERE tenant = ? AND doc = ?",
                                                (r.tenant, name))]
    return r.entities(set(r.entity_of(nodes).values()))


def items_of(r: Reader, name: str) -> dict[Key, str]:
    """The visible stored items of document ``name``, each with its entity-level id."""
    keys = [tuple(row) for row in r.store.db.query(
        "SELECT doc, view, item FROM qx_items WHERE tenant = ? AND doc = ? AND visible = 1", (r.tenant, name))]
    return item_ids(r, keys)


def contribution(r: Reader, name: str, doc_id: str) -> dict[str, Any]:
    """What document ``name`` contributes: its entities and items counted (items by kind), its
    evidence rows, types, relations, and how many of its entities other documents name too."""
    entities = entities_of(r, name)
    keys = items_of(r, name)
    stored = r.items(keys)
    kinds: dict[str, str] = {}
    relations: dict[str, str] = {}
    for s in stored:
        kinds[keys[s.key]], relations[keys[s.key]] = s.kind, s.relation
    evidence = _evidence(r, list(keys), {name: doc_id}, keys)
    members: dict[str, list[str]] = {}
    for node, entity in r.members(entities).items():
        members.setdefault(entity, []).append(node)
    shared = sum(1 for entity, nodes in members.items() if any(r.store.db.query(
        "SELECT 1 FROM doc_nodes WHERE tenant = ? AND node = ? AND doc <> ? LIMIT 1", (r.tenant, n, name))
        for n in nodes))
    return {"counts": {"nodes": len(entities), **{k: sum(1 for x in kinds.values() if x == k)
                                                  for k in ("edge", "hyperedge", "event", "temporal")},
                       "evidence": len(evidence)},
            "types": dict(sorted(Counter(e["type"] for e in entities.values()).items())),
            "relations": dict(sorted(Counter(relations.values()).items())), "shared_nodes": shared}


def node_items(r: Reader, entity: str) -> dict[str, list[Key]]:
    """The visible items naming ``entity``: entity-level id -> its stored items."""
    out: dict[str, list[Key]] = {}
    for key, item in item_ids(r, [s.key for s in r.incident([entity])]).items():
        out.setdefault(item, []).append(key)
    return out

