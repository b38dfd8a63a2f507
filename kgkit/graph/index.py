"""Upkeep of the query indexes (tables in kgkit/graph/index_schema.py).

:func:`refresh` runs at the end of every store update, inside its transaction: it reads
what the triggers noted in ``qx_dirty`` and re-derives the index rows of those items,
evidence rows and entities, then clears the notes. Items are indexed as stored (pointing
at document node ids); entities are derived from ``groups``/``doc_nodes``, so a merge,
split or unmerge re-derives only the entities whose membership changed.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterable

from kgkit.text import timex
from kgkit.graph.links import CHUNK
from kgkit.text.name_keys import canonical_key

#: The kinds of full-text row; SQLite keeps each in its own FTS5 table, ``qx_fts_<kind>``.
TEXT_KINDS = ("entity", "quote")


#: Item kinds whose fillers are ``head``/``tail``.
BINARY_KINDS = ("edge", "temporal")


def _rows(store, sql: str, keys: Iterable, width: int = 1) -> list[tuple]:
    """``sql`` with ``IN ({})`` filled from ``keys``, in chunks. ``width`` 3: the keys are
    stored items (doc, view, item) and ``(doc, view, item) IN ({})`` (its columns maybe of an
    alias: ``(i.doc, i.view, i.item)``) is read per document and view, so every read is a
    range of the primary key."""
    keys = sorted(set(keys))
    out: list[tuple] = []
    if width == 3:
        by: dict[tuple[str, str], list[str]] = {}
        for doc, view, item in keys:
            by.setdefault((doc, view), []).append(item)
        per = re.sub(r"\((\w+\.)?doc, \1?view, \1?item\) IN \(\{\}\)", r"\1doc = ? AND \1view = ? AND \1item IN ({})", sql)
        for (doc, view), items in by.items():
            for i in range(0, len(items), CHUNK):
                part = items[i:i + CHUNK]
                out += store._q(per.format(",".join("?" * len(part))), doc, view, *part)
        return out
    for i in range(0, len(keys), CHUNK):
        part = keys[i:i + CHUNK]
        out += store._q(sql.format(",".join("?" * len(part))), *part)
    return out


def fillers(kind: str, body: dict[str, Any]) -> list[tuple[str, str]]:
    """(role, node id) of every node an item connects."""
    if kind in BINARY_KINDS:
        return [("head", body["head"]), ("tail", body["tail"])]
    roles = body.get("arguments") if kind == "event" else body.get("roles")
    out = []
    for role, value in (roles or {}).items():
        for v in value if isinstance(value, list) else [value]:
            if isinstance(v, dict) and isinstance(v.get("node"), str):
                out.append((role, v["node"]))
    return sorted(set(out))


def interval(value: Any) -> tuple[str, str] | None:
    """``(lo, hi)`` ISO date-times of a time value (hi exclusive), or None when it is none."""
    parsed = timex.parse_or_none(value) if isinstance(value, str) else None
    if isinstance(parsed, timex.Point):
        return parsed.start.isoformat(), parsed.end.isoformat()
    if isinstance(parsed, timex.Interval):
        return parsed.start.start.isoformat(), parsed.end.end.isoformat()
    return None


def times(kind: str, body: dict[str, Any]) -> list[tuple[str, str | None, str | None, str | None]]:
    """(name, text, lo, hi) of an item's temporal values: qualifiers, an event's time."""
    found = []
    values = dict(body.get("qualifiers") or {})
    if kind == "event" and body.get("time"):
        values["time"] = body["time"]
    for name, q in values.items():
        if isinstance(q, dict):
            span = interval(q.get("value")) or interval(timex.normalise("date", str(q.get("text") or "")))
            found.append((name, q.get("text"), *(span or (None, None))))
    return found


def relation_of(kind: str, body: dict[str, Any]) -> str:
    return str(body["type"] if kind == "event" else body["relation"])


def _visible(store, doc: str, held: str | None, key: str | None) -> int:
    return int(held is None or store._decision(doc, key) == "accept")


def refresh(store) -> None:
    """Bring the indexes up to the rows the current transaction changed."""
    dirty = store._q("SELECT what, a, b, c FROM qx_dirty WHERE tenant = ?")
    if not dirty:
        return
    # entity and node rows are ids; view rows (doc, view) and decision rows (doc, key) are pairs
    by: dict[str, set[Any]] = {"view": set(), "entity": set(), "node": set(), "decision": set()}
    for what, a, b, _ in dirty:
        by[what].add((a, b) if what in ("view", "decision") else a)
    entities = set(by["entity"])
    nodes = set(by["node"])
    touched, typed = _refresh_items(store, by["view"])
    nodes |= touched | _refresh_decisions(store, by["decision"])
    if nodes:
        entities |= {r[0] for r in _rows(store, "SELECT entity FROM groups WHERE tenant = ? AND node IN ({})", nodes)}
    _refresh_entities(store, entities)
    _refresh_quotes(store, by["view"], typed)
    store._x("DELETE FROM qx_dirty WHERE tenant = ?")


def _refresh_items(store, views: set[tuple[str, str]]) -> tuple[set[str], dict[tuple, str]]:
    """Re-derive the items of ``views`` (doc, view), each a range of the primary keys; returns
    the nodes they touch(ed) and each item's ``kind:relation`` (what its quotes are typed by)."""
    t = store.tenant
    delta: dict[str, int] = {}
    items, fills, spans = [], [], []
    typed: dict[tuple, str] = {}
    for doc, view in sorted(views):
        for node, visible in store._q("SELECT node, visible FROM qx_fillers WHERE tenant = ? AND doc = ? AND view = ?",
                                      doc, view):
            delta[node] = delta.get(node, 0) - visible
        for table in ("qx_items", "qx_fillers", "qx_times"):
            store._x(f"DELETE FROM {table} WHERE tenant = ? AND doc = ? AND view = ?", doc, view)
        for item, kind, body, confidence, held, key in store._q(
                "SELECT item, kind, body, confidence, held, review_key FROM items WHERE tenant = ? AND doc = ? "
                "AND view = ?", doc, view):
            body = json.loads(body)
            visible = _visible(store, doc, held, key)
            relation = relation_of(kind, body)
            typed[(doc, view, item)] = f"{kind}:{relation}"
            items.append((t, doc, view, item, kind, relation, confidence, visible, key))
            for role, node in fillers(kind, body):
                fills.append((t, doc, view, item, role, node, visible))
                delta[node] = delta.get(node, 0) + visible
            spans += [(t, doc, view, item, *span) for span in times(kind, body)]
    store.db.many("INSERT INTO qx_items (tenant, doc, view, item, kind, relation, confidence, visible, review_key) "
                  "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", items)
    store.db.many("INSERT INTO qx_fillers (tenant, doc, view, item, role, node, visible) VALUES (?, ?, ?, ?, ?, ?, ?) "
                  "ON CONFLICT DO NOTHING", fills)
    store.db.many("INSERT INTO qx_times (tenant, doc, view, item, name, text, lo, hi) VALUES (?, ?, ?, ?, ?, ?, ?, ?) "
                  "ON CONFLICT DO NOTHING", spans)
    _add_degree(store, delta)
    return set(delta), typed


def _add_degree(store, delta: dict[str, int]) -> None:
    """Add ``delta`` (node -> change in visible fillers) to ``qx_degree``, so an entity's degree
    is the sum of its few groups' rows, never a count of a hub's thousands of fillers."""
    changed = sorted(n for n, d in delta.items() if d)
    store.db.many("INSERT INTO qx_degree (tenant, node, degree) VALUES (?, ?, ?) ON CONFLICT (tenant, node) "
                  "DO UPDATE SET degree = qx_degree.degree + excluded.degree",
                  [(store.tenant, n, delta[n]) for n in changed])
    store.db.many("DELETE FROM qx_degree WHERE tenant = ? AND node = ? AND degree = 0",  # only a fall reaches 0
                  [(store.tenant, n) for n in changed if delta[n] < 0])


def _refresh_decisions(store, keys: set[tuple]) -> set[str]:
    """A decision makes a held item visible or not; returns the nodes of the items it changed."""
    touched: set[str] = set()
    delta: dict[str, int] = {}
    for doc, key in sorted(keys):
        decision = store._decision(doc, key)
        for node, visible in store.db.query(  # the rows the update below changes
                "SELECT node, visible FROM qx_fillers WHERE tenant = ? AND doc = ? AND item IN "
                "(SELECT item FROM qx_items WHERE tenant = ? AND doc = ? AND review_key = ?)",
                (store.tenant, doc, store.tenant, doc, key)):
            delta[node] = delta.get(node, 0) + int(decision == "accept") - visible
        for table in ("qx_items", "qx_fillers"):
            store.db.execute(f"UPDATE {table} SET visible = ? WHERE tenant = ? AND doc = ? AND item IN "
                             "(SELECT item FROM qx_items WHERE tenant = ? AND doc = ? AND review_key = ?)",
                             (int(decision == "accept"), store.tenant, doc, store.tenant, doc, key))
        touched |= {r[0] for r in store._q(
            "SELECT f.node FROM qx_fillers f JOIN qx_items i ON i.tenant = f.tenant AND i.doc = f.doc "
            "AND i.view = f.view AND i.item = f.item WHERE f.tenant = ? AND i.doc = ? AND i.review_key = ?", doc, key)}
    _add_degree(store, delta)
    return touched


def _display_name(counts: dict[str, int]) -> str:
    """The name GraphStore._names gives a group: most frequent, longest on a tie."""
    return min(counts, key=lambda s: (-counts[s], -len(s), s))


def _refresh_entities(store, entities: set[str]) -> None:
    """Re-derive the rows of ``entities`` from their groups' spellings (a few rows each,
    however many documents name them); an entity whose type, name and aliases did not
    change keeps its name keys and full-text row, and only its degree is updated."""
    if not entities:
        return
    t = store.tenant
    before = {e: (ty, n, a) for e, ty, n, a in _rows(store, "SELECT entity, type, name, aliases FROM qx_entities "
                                                           "WHERE tenant = ? AND entity IN ({})", entities)}
    members: dict[str, list[tuple[str, str]]] = {}
    scope: dict[str, str] = {}
    for node, etype, entity, node_scope in _rows(store, "SELECT node, type, entity, scope FROM groups "
                                                        "WHERE tenant = ? AND entity IN ({})", entities):
        members.setdefault(entity, []).append((node, etype))
        if node == entity:
            scope[entity] = node_scope
    node_of = {n: e for e, ms in members.items() for n, _ in ms}
    spelt: dict[str, list[tuple[str, str, int]]] = {}  # entity -> (node, spelling, times written as the name)
    for node, spelling, names in _rows(store, "SELECT node, spelling, names FROM qx_spellings "
                                              "WHERE tenant = ? AND node IN ({})", node_of):
        spelt.setdefault(node_of[node], []).append((node, spelling, names))
    degree: dict[str, int] = {}
    for node, count in _rows(store, "SELECT node, degree FROM qx_degree WHERE tenant = ? AND node IN ({})", node_of):
        degree[node_of[node]] = degree.get(node_of[node], 0) + count
    rows, updates, keys, texts = [], [], [], []
    # a value (a date, an amount) that no visible item names is not in the graph (kgkit/formats/scopes.py)
    spelt = {e: f for e, f in spelt.items() if not (scope.get(e) == "value" and not degree.get(e))}
    renamed = set(before) - set(spelt)  # no document names them any more: their rows go
    for entity, found in spelt.items():
        etype = dict(members[entity]).get(entity, members[entity][0][1])
        own = {sp: n for node, sp, n in found if node == entity and n > 0}
        if not own:
            own = {}
            for _, sp, n in found:
                if n > 0:
                    own[sp] = own.get(sp, 0) + n
        name = _display_name(own)
        spelled = sorted({sp for _, sp, _ in found} - {name})
        aliases = json.dumps(spelled)
        if before.get(entity) == (etype, name, aliases):
            updates.append((degree.get(entity, 0), t, entity))
            continue
        if entity in before:
            renamed.add(entity)
        rows.append((t, entity, etype, name, aliases, degree.get(entity, 0)))
        for text, alias in [(name, 0)] + [(a, 1) for a in spelled]:
            keys.append((t, entity, canonical_key(text, legal_suffixes=store.legal_suffixes), alias))
        texts.append(("entity", entity, etype, "", "", "\n".join([name, *spelled])))
    for table in ("qx_entities", "qx_names"):
        store.db.many(f"DELETE FROM {table} WHERE tenant = ? AND entity = ?", [(t, e) for e in sorted(renamed)])
    _drop_text(store, "entity", [(e, "", "") for e in renamed])
    store.db.many("UPDATE qx_entities SET degree = ? WHERE tenant = ? AND entity = ?", updates)
    store.db.many("INSERT INTO qx_entities (tenant, entity, type, name, aliases, degree) VALUES (?, ?, ?, ?, ?, ?)", rows)
    store.db.many("INSERT INTO qx_names (tenant, entity, key, alias) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                  sorted(keys, key=lambda k: (k[1], k[2], k[3])))
    _add_text(store, texts)


def _spellings(store) -> None:
    """The tenant's qx_spellings from its doc_nodes rows (what the triggers keep)."""
    counts: dict[tuple[str, str], list[int]] = {}
    for node, name, aliases in store._q("SELECT node, name, aliases FROM doc_nodes WHERE tenant = ?"):
        for spelling in {name, *json.loads(aliases)}:
            entry = counts.setdefault((node, spelling), [0, 0])
            entry[0] += spelling == name
            entry[1] += 1
    store._x("DELETE FROM qx_spellings WHERE tenant = ?")
    store.db.many("INSERT INTO qx_spellings (tenant, node, spelling, names, total) VALUES (?, ?, ?, ?, ?)",
                  [(store.tenant, n, sp, c[0], c[1]) for (n, sp), c in sorted(counts.items())])


def _refresh_quotes(store, views: set[tuple[str, str]], typed: dict[tuple, str]) -> None:
    """Evidence quotes of ``views`` (doc, view) into the full-text index, typed by their item
    (``typed``: the views' items, just re-derived), in the order the document gave them."""
    if not views:
        return
    _drop_ids(store, "quote", [r[0] for doc, view in sorted(views) for r in store._q(
        "SELECT id FROM qx_text WHERE tenant = ? AND kind = 'quote' AND doc = ? AND view = ?", doc, view)])
    order = " ORDER BY rowid" if store.db.kind == "sqlite" else ""  # as added (PostgreSQL: as it reads them)
    rows = [(doc, view, *r) for doc, view in sorted(views) for r in store._q(
        f"SELECT item, quote FROM evidence WHERE tenant = ? AND doc = ? AND view = ? AND quote IS NOT NULL{order}",
        doc, view)]
    named = dict(_rows(store, "SELECT node, type FROM groups WHERE tenant = ? AND node IN ({})",
                       {i for d, v, i, _ in rows if (d, v, i) not in typed}))
    texts = []
    seen = set()
    for doc, view, item, quote in rows:
        if (doc, view, item, quote) in seen or not quote.strip():
            continue
        seen.add((doc, view, item, quote))
        kind = typed.get((doc, view, item)) or f"mention:{named.get(item, '')}"  # a node's own quote: a mention
        texts.append(("quote", item, kind, doc, view, quote))
    _add_text(store, texts)


def _drop_text(store, kind: str, refs: list[tuple]) -> None:
    """Delete full-text rows of ``kind`` by (ref, doc, view)."""
    by: dict[tuple, list[str]] = {}
    for ref in sorted(set(refs)):
        by.setdefault(tuple(ref[1:]), []).append(ref[0])
    ids: list[int] = []
    for where, names in by.items():
        for i in range(0, len(names), CHUNK):
            part = names[i:i + CHUNK]
            ids += [r[0] for r in store._q(f"SELECT id FROM qx_text WHERE tenant = ? AND kind = ? AND doc = ? "
                                           f"AND view = ? AND ref IN ({','.join('?' * len(part))})", kind, *where, *part)]
    _drop_ids(store, kind, ids)


def _drop_ids(store, kind: str, ids: list[int]) -> None:
    """Delete the full-text rows ``ids`` (all of ``kind``)."""
    if store.db.kind == "sqlite":
        store.db.many(f"DELETE FROM qx_fts_{kind} WHERE rowid = ?", [(i,) for i in ids])
    store.db.many("DELETE FROM qx_text WHERE id = ?", [(i,) for i in ids])


def _add_text(store, texts: list[tuple[str, str, str, str, str, str]]) -> None:
    """Rows (kind, ref, type, doc, view, text) into qx_text and, on SQLite, its FTS5 table."""
    if not texts:
        return
    t = store.tenant
    if store.db.kind == "sqlite":
        start = store.db.query("SELECT COALESCE(MAX(id), 0) FROM qx_text")[0][0] + 1
        rows = [(start + n, t, *row) for n, row in enumerate(texts)]
        store.db.many("INSERT INTO qx_text (id, tenant, kind, ref, type, doc, view, text) "
                      "VALUES (?, ?, ?, ?, ?, ?, ?, ?)", rows)
        for kind in TEXT_KINDS:
            store.db.many(f"INSERT INTO qx_fts_{kind} (rowid, text) VALUES (?, ?)",
                          [(r[0], r[-1]) for r in rows if r[2] == kind])
    else:
        store.db.many("INSERT INTO qx_text (tenant, kind, ref, type, doc, view, text) VALUES (?, ?, ?, ?, ?, ?, ?)",
                      [(t, *row) for row in texts])


def rebuild(store) -> None:
    """Derive the tenant's indexes from scratch (inside a write transaction): a store written
    before the indexes existed gets them on its first open, and ``ensure`` calls this."""
    for table in ("qx_items", "qx_fillers", "qx_times", "qx_entities", "qx_names", "qx_dirty", "qx_degree"):
        store._x(f"DELETE FROM {table} WHERE tenant = ?")
    _spellings(store)
    if store.db.kind == "sqlite":
        for kind in TEXT_KINDS:
            store.db.execute(f"DELETE FROM qx_fts_{kind} WHERE rowid IN (SELECT id FROM qx_text WHERE tenant = ? "
                             "AND kind = ?)", (store.tenant, kind))
    store._x("DELETE FROM qx_text WHERE tenant = ?")
    marks = [("view", "SELECT DISTINCT doc, view, '' FROM items WHERE tenant = ?"),
             ("view", "SELECT DISTINCT doc, view, '' FROM evidence WHERE tenant = ? AND quote IS NOT NULL"),
             ("entity", "SELECT DISTINCT entity, '', '' FROM groups WHERE tenant = ?")]
    for what, sql in marks:
        store.db.many("INSERT INTO qx_dirty (tenant, what, a, b, c) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                      [(store.tenant, what, *r) for r in store._q(sql)])
    refresh(store)
    store._x("INSERT INTO qx_state (tenant, built) VALUES (?, 1) ON CONFLICT (tenant) DO NOTHING")


def ensure(store) -> None:
    """Build the tenant's indexes if this store has never built them (an older store)."""
    if store._q("SELECT built FROM qx_state WHERE tenant = ?"):
        return
    with store.db.write():
        if not store._q("SELECT built FROM qx_state WHERE tenant = ?"):
            rebuild(store)
