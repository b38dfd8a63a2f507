"""An update's cost follows its document, not the corpus: no statement that adding, replacing,
unmerging, deciding or removing runs may read a whole tenant's rows of a table that grows
with the corpus. Each statement is shown to SQLite's query planner as it ran (its values in
place); a step that searches such a table by ``tenant`` alone, or scans it, fails the test.

SQLite only: it is the store whose planner has no statistics to go by, and the one whose
plans can be read without a server. PostgreSQL reads the same statements through the same
indexes."""
from __future__ import annotations

import re

from support.graph_support import small_runs  # noqa: F401  (fixture)
from kgkit.graph import GraphStore

#: Tables a tenant holds a few rows of whatever the corpus: this update's notes, and one row per tenant.
SMALL = {"qx_dirty", "qx_item_ids_dirty", "graph_version", "qx_state", "qx_item_ids_state", "resolution_state",
         "schema_version", "tenant_roles"}
#: The review queue's own indexes (held items, rejected answers): a decision finds its entry among
#: them (an entry's id is a hash of its document and key), a read the size of the queue.
QUEUE = {"items_held", "sqlite_autoindex_review_1"}

#: A step that reads every row of a tenant: a scan, or a search constrained by the tenant alone.
WHOLE = re.compile(r"^(?:SCAN (?P<scan>\w+)(?!\w| VIRTUAL)|SEARCH (?P<table>\w+) USING "
                   r"(?:(?:COVERING )?INDEX (?P<index>\w+)|PRIMARY KEY) \(tenant=\?\))")


def _whole_tenant_reads(store: GraphStore, statements: list[str]) -> list[tuple[str, str]]:
    found = []
    for sql in dict.fromkeys(statements):
        if not re.match(r"\s*(SELECT|UPDATE|DELETE|INSERT)\b", sql, re.IGNORECASE) or re.search(r"\bM(AX|IN)\(", sql):
            continue  # an aggregate's MAX/MIN seeks the end of its index
        for *_, step in store.db.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall():
            hit = WHOLE.match(step)
            if hit and (hit["scan"] or hit["table"]) not in SMALL and hit["index"] not in QUEUE:
                found.append((step, sql[:160]))
    return found


def test_no_update_reads_a_whole_tenant(small_runs, tmp_path):  # noqa: F811
    with GraphStore(str(tmp_path / "graph.sqlite"), confidence_threshold=0.9) as g:
        g.add([small_runs["alpha"], small_runs["beta"]])  # a store with rows in every table first
        statements: list[str] = []

        def traced(update, *args, **kwargs):
            g.db.conn.set_trace_callback(statements.append)
            try:
                return update(*args, **kwargs)
            finally:
                g.db.conn.set_trace_callback(None)

        traced(g.add, [small_runs["gamma"], small_runs["alpha_edited"]])  # a new document and a replaced one
        northwind = next(n for n in g.snapshot().nodes if n["name"].startswith("Northwind"))
        member = next(m["node"] for m in g.merges() if m["action"] == "merge" and m["entity"] == northwind["id"])
        traced(g.unmerge, member, who="reviewer")
        held = next(e for e in g.review_queue() if e["kind"] == "held")
        traced(g.decide, held["id"], "accept", who="dana")
        traced(g.remove, "beta")
        assert len(statements) > 100  # the updates ran, and were seen
        found = _whole_tenant_reads(g, statements)
        assert found == [], "\n".join(f"{step}: {sql}" for step, sql in found)
