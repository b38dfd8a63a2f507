"""The store's answer-level item ids (kgkit/graph/item_ids.py) on both backends: after every
kind of update (add, replace, merge and unmerge, remove, a review decision) each visible
stored item is found by the id the snapshot gives it, and by no other; a store made before
the table has it filled on its next open."""
from __future__ import annotations

from kgkit.graph import GraphStore, assemble, item_ids
from support.graph_support import graph_url, postgres, small_runs  # noqa: F401  (fixtures)


def _snapshot_ids(g: GraphStore) -> dict[tuple, str]:
    """Visible stored item -> its id, as the snapshot assembles it (the whole tenant read)."""
    with g.db.read():
        entity_of = dict(g._q("SELECT node, entity FROM groups WHERE tenant = ?"))
        doc_id = dict(g._q("SELECT doc, id FROM documents WHERE tenant = ?"))
        return assemble._items(g._q, lambda n: entity_of.get(n, n), doc_id)[1]


def _check(g: GraphStore) -> dict[tuple, str]:
    """The table agrees with the snapshot: every stored item has one row, the visible ones carry
    the snapshot's id, and each id's lookup gives exactly the stored items the snapshot merges into it."""
    expected = _snapshot_ids(g)
    with g.db.read():
        assert sorted(g._q("SELECT doc, view, item FROM qx_item_ids WHERE tenant = ?")) == \
            sorted(g._q("SELECT doc, view, item FROM items WHERE tenant = ?"))
        by_id: dict[str, list[tuple]] = {}
        for key, item in expected.items():
            by_id.setdefault(item, []).append(key)
        for item, keys in by_id.items():
            assert item_ids.keys_of(g, item) == sorted(keys), item
    assert expected
    return expected


def test_ids_follow_adds_replacements_merges_unmerges_and_removals(graph_url, small_runs):  # noqa: F811
    with GraphStore(graph_url) as g:
        g.add([small_runs["alpha"], small_runs["beta"]])
        merged = _check(g)
        g.add([small_runs["gamma"], small_runs["alpha_edited"]])  # a new document and a replaced one
        _check(g)
        northwind = next(n for n in g.snapshot().nodes if n["name"].startswith("Northwind"))
        member = next(m["node"] for m in g.merges() if m["action"] == "merge" and m["entity"] == northwind["id"])
        before = _check(g)
        g.unmerge(member, who="reviewer")
        after = _check(g)
        # the unmerge gave the items naming the split-off node new ids, without touching their rows
        assert any(before[k] != after[k] for k in before.keys() & after.keys())
        g.remove("beta")
        left = _check(g)
        assert not any(doc == "beta" for doc, _, _ in left) and any(doc == "beta" for doc, _, _ in merged)


def test_a_held_item_is_found_once_accepted(graph_url, small_runs):  # noqa: F811
    with GraphStore(graph_url, confidence_threshold=0.99) as g:  # every item under it waits for review
        g.add([small_runs["alpha"]])
        held = next(e for e in g.review_queue() if e["kind"] == "held" and e["item"].get("relation"))
        with g.db.read():
            hidden = g._q("SELECT id FROM qx_item_ids WHERE tenant = ? AND doc = 'alpha' AND item = ?", held["item"]["id"])
            assert len(hidden) == 1 and item_ids.keys_of(g, hidden[0][0]) == []
        g.decide(held["id"], "accept", who="dana")
        found = _check(g)
        assert hidden[0][0] in found.values()


def test_a_store_made_before_the_table_gets_it_on_its_next_open(graph_url, small_runs):  # noqa: F811
    from kgkit.graph.migrations import MIGRATIONS

    with GraphStore(graph_url) as g:
        g.add([small_runs["alpha"], small_runs["beta"], small_runs["gamma"]])
        fresh = _check(g)
        drop = ("DROP TRIGGER qx_item_ids_mark" if g.db.kind == "sqlite"
                else "DROP FUNCTION qx_item_ids_mark() CASCADE")  # and the trigger calling it
        for statement in (drop, *(f"DROP TABLE {t}" for t in ("qx_item_ids", "qx_item_ids_dirty", "qx_item_ids_state")),
                          f"UPDATE schema_version SET version = {MIGRATIONS.index(item_ids.migration())}"):
            g.db.execute(statement)
    with GraphStore(graph_url) as g:
        assert g.db.query("SELECT version FROM schema_version") == [(len(MIGRATIONS),)]
        assert _check(g) == fresh
        g.add([small_runs["alpha_edited"]])  # and kept from then on
        _check(g)
