"""The answer-level id of every stored item, kept in the store: ``qx_item_ids``.

An answer (the query operators', the snapshot's) names an item by an id made from its
relation and its ends' *entities* (kgkit/graph/assemble.py), while the store keys items by
their run folders' ids, made from one document's node ids. Without this table, finding the
stored rows behind an answer's item id meant reading every visible item's body once
(seconds on a corpus); with it, it is one index range (``qx_item_ids_id``).

What changes an answer-level id, and how the table follows (inside the update's
transaction, from :meth:`kgkit.graph.GraphStore._writing`, before the query indexes clear
their notes):

* an item added, replaced or removed: the query indexes' triggers note its document's view
  in ``qx_dirty`` (what ``view``); that view's rows are dropped and re-derived;
* a key group moved to another entity (a merge, a split, an unmerge): a trigger of this
  step notes the group in ``qx_item_ids_dirty``, and the items naming it (``qx_fillers``)
  are re-derived. A group inserted or deleted changes no stored item's id: no item names
  a group before it exists or after it is gone.

Visibility (held, accepted) is not kept here: a reader joins ``qx_items.visible``. A
tenant without a ``qx_item_ids_state`` row (a store made before this table) is filled on
its first open, once (:func:`ensure`).
"""
from __future__ import annotations

import json
from kgkit.graph import assemble
from kgkit.graph.index import _rows

Key = tuple[str, str, str]  # a stored item: (doc, view, item)

_TABLES = [
    "CREATE TABLE qx_item_ids (tenant TEXT NOT NULL, doc TEXT NOT NULL, view TEXT NOT NULL, item TEXT NOT NULL, "
    "id TEXT NOT NULL, PRIMARY KEY (tenant, doc, view, item))",
    "CREATE INDEX qx_item_ids_id ON qx_item_ids (tenant, id)",
    "CREATE TABLE qx_item_ids_dirty (tenant TEXT NOT NULL, node TEXT NOT NULL, PRIMARY KEY (tenant, node))",
    "CREATE TABLE qx_item_ids_state (tenant TEXT PRIMARY KEY, built INTEGER NOT NULL)",
]

_MARK = "INSERT INTO qx_item_ids_dirty (tenant, node) VALUES (NEW.tenant, NEW.node) ON CONFLICT DO NOTHING"


#: Dropped first, so the step can run again over a store that has them (one set back to an earlier version).
_DROP = [f"DROP TABLE IF EXISTS {t}" for t in ("qx_item_ids", "qx_item_ids_dirty", "qx_item_ids_state")]


def migration() -> dict[str, list[str]]:
    """The store's migration step that brings the table (kgkit/graph/migrations.py)."""
    return {
        "sqlite": ["DROP TRIGGER IF EXISTS qx_item_ids_mark", *_DROP, *_TABLES,
            "CREATE TRIGGER qx_item_ids_mark AFTER UPDATE ON groups FOR EACH ROW WHEN OLD.entity <> NEW.entity "
            f"BEGIN {_MARK}; END"],
        "postgresql": ["DROP FUNCTION IF EXISTS qx_item_ids_mark() CASCADE", *_DROP, *_TABLES,
            f"CREATE FUNCTION qx_item_ids_mark() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {_MARK}; "
            "RETURN NULL; END $$",
            "CREATE TRIGGER qx_item_ids_mark AFTER UPDATE ON groups FOR EACH ROW WHEN (OLD.entity <> NEW.entity) "
            "EXECUTE FUNCTION qx_item_ids_mark()"],
    }


def refresh(store) -> None:
    """Re-derive the ids of the items the current transaction changed, or whose ends' groups
    it moved to another entity. Call inside the write, before the query indexes' refresh
    (it reads their ``qx_dirty`` notes, which that refresh clears). A changed view is
    re-derived whole, from one range of its items; a moved group's items one by one."""
    views = store._q("SELECT a, b FROM qx_dirty WHERE tenant = ? AND what = 'view'")
    rows: list[tuple] = []
    for doc, view in views:
        store._x("DELETE FROM qx_item_ids WHERE tenant = ? AND doc = ? AND view = ?", doc, view)
        rows += [(doc, view, *r) for r in store._q("SELECT item, kind, body FROM items WHERE tenant = ? AND doc = ? "
                                                    "AND view = ?", doc, view)]
    moved = [n for (n,) in store._q("SELECT node FROM qx_item_ids_dirty WHERE tenant = ?")]
    if moved:
        done = set(views)
        # no DISTINCT (the set is): SQLite would read the tenant's every filler in key order, not the nodes' own
        keys = sorted({tuple(k) for k in _rows(store, "SELECT doc, view, item FROM qx_fillers "
                                                      "WHERE tenant = ? AND node IN ({})", moved)
                       if (k[0], k[1]) not in done})
        store._x("DELETE FROM qx_item_ids_dirty WHERE tenant = ?")
        store.db.many("DELETE FROM qx_item_ids WHERE tenant = ? AND doc = ? AND view = ? AND item = ?",
                      [(store.tenant, *k) for k in keys])
        rows += _rows(store, "SELECT doc, view, item, kind, body FROM items WHERE tenant = ? "
                             "AND (doc, view, item) IN ({})", keys, 3)
    if rows:
        _write(store, rows)


def ensure(store) -> None:
    """Fill the table for a tenant that has never had it (a store made before it), once."""
    if store._q("SELECT built FROM qx_item_ids_state WHERE tenant = ?"):
        return
    with store.db.write():
        if store._q("SELECT built FROM qx_item_ids_state WHERE tenant = ?"):
            return
        store._x("DELETE FROM qx_item_ids WHERE tenant = ?")
        _write(store, store._q("SELECT doc, view, item, kind, body FROM items WHERE tenant = ?"))
        store._x("DELETE FROM qx_item_ids_dirty WHERE tenant = ?")
        store._x("INSERT INTO qx_item_ids_state (tenant, built) VALUES (?, 1)")


def keys_of(store, item_id: str) -> list[Key]:
    """The visible stored items whose answer-level id is ``item_id`` (inside a read)."""
    # sorted here, not by ORDER BY: SQLite would walk the primary key in that order instead of the id's index
    return sorted(tuple(k) for k in store._q(
        "SELECT a.doc, a.view, a.item FROM qx_item_ids a CROSS JOIN qx_items q WHERE a.tenant = ? AND a.id = ? "
        "AND q.tenant = a.tenant AND q.doc = a.doc AND q.view = a.view AND q.item = a.item AND q.visible = 1", item_id))


def _write(store, rows: list[tuple]) -> None:
    """The ids of stored items ``rows`` (doc, view, item, kind, body), which have none."""
    parsed = [(d, v, i, kind, json.loads(body)) for d, v, i, kind, body in rows]
    nodes = {n for *_, body in parsed for n in assemble.item_nodes(body)}
    entity = dict(_rows(store, "SELECT node, entity FROM groups WHERE tenant = ? AND node IN ({})", nodes))
    store.db.many("INSERT INTO qx_item_ids (tenant, doc, view, item, id) VALUES (?, ?, ?, ?, ?)",
                  [(store.tenant, d, v, i, assemble._item(kind, body, lambda n: entity.get(n, n))["id"])
                   for d, v, i, kind, body in parsed])
