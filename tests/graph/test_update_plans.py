"""An update's cost follows its document, not the corpus: no statement that adding, replacing,
unmerging, deciding or removing runs may read a whole tenant's rows of a table that grows
with the corpus (tests/support/plans.py: what SQLite's planner makes of each).

SQLite only: it is the store whose planner has no statistics to go by, and the one whose
plans can be read without a server. PostgreSQL reads the same statements through the same
indexes."""
from __future__ import annotations

from support.graph_support import small_runs  # noqa: F401  (fixture)
from support.plans import recorded, whole_tenant_reads
from kgkit.graph import GraphStore


def test_no_update_reads_a_whole_tenant(small_runs, tmp_path):  # noqa: F811
    with GraphStore(str(tmp_path / "graph.sqlite"), confidence_threshold=0.9) as g:
        g.add([small_runs["alpha"], small_runs["beta"]])  # a store with rows in every table first
        with recorded(g) as adding:
            g.add([small_runs["gamma"], small_runs["alpha_edited"]])  # a new document and a replaced one
        northwind = next(n for n in g.snapshot().nodes if n["name"].startswith("Northwind"))
        member = next(m["node"] for m in g.merges() if m["action"] == "merge" and m["entity"] == northwind["id"])
        held = next(e for e in g.review_queue() if e["kind"] == "held")
        with recorded(g) as changing:
            g.unmerge(member, who="reviewer")
            g.decide(held["id"], "accept", who="dana")
            g.remove("beta")
        statements = adding + changing
        assert len(adding) > 100 and len(changing) > 50  # the updates ran, and were seen
        found = whole_tenant_reads(g, statements)
        assert found == [], "\n".join(f"{step}: {sql}" for step, sql in found)
