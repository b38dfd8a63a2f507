"""What SQLite's query planner makes of the statements a store ran: reads of a tenant's every row.

Each statement is explained as it ran (its values in place, from the connection's trace). A
step that searches a table by ``tenant`` alone, or scans it, reads every row the tenant has of
it, so its cost grows with the corpus; the tables below are the exceptions.
"""
from __future__ import annotations

import re
from contextlib import contextmanager
from typing import Iterator

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


@contextmanager
def recorded(store: GraphStore) -> Iterator[list[str]]:
    """The statements ``store`` runs inside the block (SQLite), as they ran."""
    statements: list[str] = []
    store.db.conn.set_trace_callback(statements.append)
    try:
        yield statements
    finally:
        store.db.conn.set_trace_callback(None)


def whole_tenant_reads(store: GraphStore, statements: list[str], scans: bool = True) -> list[tuple[str, str]]:
    """(plan step, statement) of each read of a tenant's every row. ``scans=False`` counts only
    searches by the tenant alone: a query scans its own derived tables (a subquery's rows, a
    list of values) by design, and the plan names them as it names tables."""
    found = []
    for sql in dict.fromkeys(statements):
        if not re.match(r"\s*(SELECT|UPDATE|DELETE|INSERT)\b", sql, re.IGNORECASE) or re.search(r"\bM(AX|IN)\(", sql):
            continue  # an aggregate's MAX/MIN seeks the end of its index
        for *_, step in store.db.conn.execute("EXPLAIN QUERY PLAN " + sql).fetchall():
            hit = WHOLE.match(step)
            if hit and (scans or hit["table"]) and (hit["scan"] or hit["table"]) not in SMALL \
                    and hit["index"] not in QUEUE:
                found.append((step, sql[:160]))
    return found
