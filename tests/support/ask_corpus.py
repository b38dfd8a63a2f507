"""A small store for the whole-graph ``kgkit ask`` tests (SQLite and PostgreSQL): the three
agreements of graph_support plus one with three parties and no governing law, and what the
store states, read from its snapshot (so expectations are recounted, not assumed)."""
from __future__ import annotations

from collections import defaultdict

from support.graph_support import extract_texts

# written for these tests: three parties, a date, no governing law
DELTA = ("CONSULTING AGREEMENT\n\nThis Consulting Agreement is made as of May 2, 2023 between Harbor Analytics Ltd. "
         "(\"Consultant\"), Quill Media Corp. (\"Client\") and Bluefin Logistics LLC (\"Carrier\").\n\n"
         "Consultant shall advise Client and Carrier shall carry the goods.\n")


def corpus_runs(small_runs, folder):
    """alpha, beta, gamma (tests/support/graph_support.py) and delta, as run folders."""
    return [small_runs[n] for n in ("alpha", "beta", "gamma")] + [extract_texts({"delta": DELTA}, folder)["delta"]]


def truth(store) -> tuple[dict[str, dict[str, set[str]]], set[str], set[str]]:
    """relation -> document -> tail names, every stored item id, every document, from the snapshot."""
    snap = store.snapshot()
    names = {n["id"]: n["name"] for n in snap.nodes}
    docs = {d["id"]: d["name"] for d in snap.documents}
    by: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    ids = set()
    for kind in (snap.edges, snap.temporal, snap.hyperedges, snap.events):
        ids |= {e["id"] for e in kind}
    for e in snap.edges + snap.temporal:
        for doc in e["documents"]:
            by[e["relation"]][docs[doc]].add(names[e["tail"]])
    return by, ids, set(docs.values())
