"""A query seeded by a name reads that name's rows, not the tenant's every row: each statement
that find, neighbours, match, lineage and path run from a named node is shown to SQLite's
planner (tests/support/plans.py), and a search by the tenant alone fails the test. SQLite
only, as in tests/graph/test_update_plans.py."""
from __future__ import annotations

import pytest

from support.graph_support import small_runs  # noqa: F401  (fixture)
from support.plans import recorded, whole_tenant_reads
from kgkit.graph import GraphStore
from kgkit.query import Query

QUESTIONS = {
    "find": lambda q: q.find("Northwind Traders"),
    "neighbours": lambda q: q.neighbours(["Northwind Traders"], hops=2),
    "match, a named end": lambda q: q.match('Agreement -GOVERNING_LAW-> Jurisdiction{name: "New York"}'),
    "lineage": lambda q: q.lineage("Northwind Traders", relations=["GOVERNING_LAW"]),
    "path": lambda q: q.path("Northwind Traders", "New York"),
}


@pytest.fixture(scope="module")
def store(small_runs, tmp_path_factory):  # noqa: F811
    with GraphStore(str(tmp_path_factory.mktemp("plans") / "graph.sqlite")) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        yield g


@pytest.mark.parametrize("question", QUESTIONS)
def test_a_named_seed_is_read_by_its_key(store, question):
    with recorded(store) as statements:
        answer = QUESTIONS[question](Query(store))
    assert answer.nodes, answer  # the question found what it asked for
    found = whole_tenant_reads(store, statements, scans=False)
    assert found == [], "\n".join(f"{step}: {sql}" for step, sql in found)
