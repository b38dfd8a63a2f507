"""How fast the query operators answer on a large corpus graph, and what keeping their
indexes costs ``graph add``.

    python benchmarks/query_speed.py [--docs 10000] [--upkeep-docs 1000] [--runs 30] [--store PATH] [--bulk]
                                     [--grow N] [--pages N]

The store: synthetic documents as benchmarks/graph_store.py builds them (30 nodes + 70
binary edges each, names drawn Zipf-like from 100,000 synthetic names), except that each
edge's quote names its two ends and its relation, as a real sentence would, so full-text
search has words to find. Then, warm (each query once before timing), the median over
``--runs`` queries each of: find (an exact name, then a misspelt one), neighbours at 2 hops
with the default caps (fan-out 50, limit 50), match on an indexed relation with one named
end, and search (two names and a relation word). Goals: find <= 20 ms, neighbours <= 50
ms, match <= 50 ms, search <= 100 ms.

Upkeep: ``--upkeep-docs`` documents added to a fresh store with the query indexes and to
one without them (their triggers and their indexes on the store's own tables dropped from
that store, refresh switched off for its updates), in turn, CPU per document compared; goal:
at most 20 % more. ``--grow N`` measures the same on the large store: N more documents added
to two copies of it, one stripped the same way (its index tables left as they were), so an
update whose cost grows with the corpus shows here, where a fresh store hides it.
``--pages N`` adds N more documents to each pair of stores (the fresh ones, the large store's
copies) and counts the pages each table and index writes to SQLite's log: what a commit
writes, and so why the upkeep costs what it does.
"""
from __future__ import annotations

import argparse
import collections
import contextlib
import os
import platform
import random
import shutil
import statistics
import struct
import sys
import tempfile
import time
from pathlib import Path
from typing import Iterator

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_store import RELATIONS, document, name_pool  # noqa: E402

from kgkit.graph import GraphStore, index, index_schema, item_ids  # noqa: E402
from kgkit.query import Query  # noqa: E402


def spoken(c, names: dict[str, str]) -> None:
    """Give every edge's evidence a quote that names its ends and relation."""
    rows = []
    bodies = {i["item"]: i["body"] for i in c.items}
    for ev in c.evidence:
        body = bodies.get(ev[0])
        if body:
            words = body["relation"].lower().replace("_", " ")
            ev = (*ev[:6], f"{names[body['head']]} {words} {names[body['tail']]} under this agreement.")
        rows.append(ev)
    c.evidence = rows


def docs(n: int, pool, first: int = 0):
    for i in range(first, first + n):
        c = document(i, pool, 30, 70)
        spoken(c, {node["node"]: node["name"] for node in c.nodes})
        yield c


def add_all(store: GraphStore, contributions) -> list[float]:
    cpu = []
    for c in contributions:
        p = time.process_time()
        store.add_contribution(c)
        cpu.append(time.process_time() - p)
    return cpu


def build_bulk(store: GraphStore, contributions) -> None:
    """Add every document with the index upkeep off (its triggers dropped, refresh a no-op), then
    put the triggers back and derive the indexes once (:func:`kgkit.graph.index.rebuild`): the
    same indexes as adding with upkeep (a test checks that a rebuild equals them), in less time."""
    for trigger in index_schema.TRIGGERS:
        store.db.execute(f"DROP TRIGGER {trigger}")
    saved = index.refresh
    index.refresh = lambda *args, **kwargs: None
    try:
        add_all(store, contributions)
    finally:
        index.refresh = saved
    for ddl in index_schema.sqlite_ddl():
        if ddl.startswith("CREATE TRIGGER"):
            store.db.execute(ddl)
    with store.db.write():
        index.rebuild(store)


def timed(fn, runs: int) -> tuple[float, float]:
    """(median wall ms, median CPU ms) of ``runs`` calls, after one warm-up call."""
    fn(0)
    wall, cpu = [], []
    for r in range(runs):
        t, p = time.perf_counter(), time.process_time()
        fn(r)
        wall.append((time.perf_counter() - t) * 1000)
        cpu.append((time.process_time() - p) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def strip(store: GraphStore) -> GraphStore:
    """``store`` without the query indexes' upkeep: its triggers (the answer-level ids' too) and
    its indexes on the store's own tables dropped (the index tables stay; nothing notes or derives
    their rows while :func:`paired` has the refreshes off)."""
    for trigger in [*index_schema.TRIGGERS, "qx_item_ids_mark"]:
        store.db.execute(f"DROP TRIGGER {trigger}")
    for name in index_schema.STORE_INDEXES:  # the query layer's indexes on the store's own tables
        store.db.execute(f"DROP INDEX {name}")
    return store


@contextlib.contextmanager
def upkeep_off() -> Iterator[None]:
    """The refreshes of the query indexes and of the answer-level ids switched off meanwhile."""
    saved = index.refresh, item_ids.refresh
    index.refresh = item_ids.refresh = lambda *args, **kwargs: None
    try:
        yield
    finally:
        index.refresh, item_ids.refresh = saved


def paired(full: GraphStore, bare: GraphStore, n: int, pool, first: int = 0) -> tuple[float, float]:
    """CPU ms per document added, with the indexes and without, the two stores fed in turn
    (document i to one, then to the other), so a change in the machine's load weighs on both."""
    with_index, without = [], []
    for a, b in zip(docs(n, pool, first), docs(n, pool, first)):
        with_index += add_all(full, [a])
        with upkeep_off():
            without += add_all(bare, [b])
    return statistics.mean(with_index) * 1000, statistics.mean(without) * 1000


def written_pages(store: GraphStore, contributions) -> collections.Counter:
    """The pages of each table and index an add writes to the write-ahead log, summed over
    ``contributions``: the log is emptied before each add (automatic checkpoints off) and its
    frames' page numbers read after it, each named by its owner (SQLite's dbstat table).
    A commit writes every page its transaction changed, whichever row it changed there, so
    an index whose keys are spread (a hash, a node id) writes about a page a row."""
    path = store.db.query("PRAGMA database_list")[0][2]
    [(every,)] = store.db.query("PRAGMA wal_autocheckpoint")
    store.db.query("PRAGMA wal_autocheckpoint = 0")
    found: collections.Counter = collections.Counter()
    try:
        for c in contributions:
            store.db.query("PRAGMA wal_checkpoint(TRUNCATE)")
            store.add_contribution(c)
            log = Path(path + "-wal").read_bytes()
            # the log's header holds the page size at byte 8; each frame is a 24-byte header and a page
            size = struct.unpack(">I", log[8:12])[0]
            owner = dict(store.db.query("SELECT pageno, name FROM dbstat"))
            found.update(owner.get(struct.unpack(">I", log[at:at + 4])[0], "(free)")
                         for at in range(32, len(log) - 23, 24 + size))
    finally:
        store.db.query(f"PRAGMA wal_autocheckpoint = {int(every)}")
    return found


def page_table(full: GraphStore, bare: GraphStore, n: int, pool, first: int) -> None:
    """:func:`written_pages` of ``n`` more documents on each store, the tables and indexes
    that write the most first."""
    on = written_pages(full, docs(n, pool, first))
    with upkeep_off():
        off = written_pages(bare, docs(n, pool, first))
    print(f"pages written to the log a document, {n} documents: {sum(on.values()) / n:.0f} with the query indexes, "
          f"{sum(off.values()) / n:.0f} without")
    print(f"{'table or index':<36}{'with':>8}{'without':>9}")
    for name, count in sorted(on.items(), key=lambda kv: (-kv[1], kv[0]))[:25]:
        print(f"{name:<36}{count / n:>8.1f}{off.get(name, 0) / n:>9.1f}")


def upkeep(n: int, pool, folder: str, pages: int = 0) -> tuple[float, float]:
    """:func:`paired` on two fresh stores; then, with ``pages``, their :func:`page_table`."""
    full = GraphStore(os.path.join(folder, "with.sqlite"))
    bare = strip(GraphStore(os.path.join(folder, "without.sqlite")))
    figures = paired(full, bare, n, pool)
    if pages:
        page_table(full, bare, pages, pool, n)
    return figures


def grow(path: str, n: int, pool, folder: str, pages: int = 0) -> tuple[float, float]:
    """:func:`paired` on two copies of the (closed) store at ``path``, with the documents after
    its own; then, with ``pages``, their :func:`page_table`."""
    copies = [os.path.join(folder, f"grow-{kind}.sqlite") for kind in ("with", "without")]
    for copy in copies:
        shutil.copyfile(path, copy)
    full, bare = GraphStore(copies[0]), strip(GraphStore(copies[1]))
    try:
        first = full.db.query("SELECT count(*) FROM documents")[0][0]
        figures = paired(full, bare, n, pool, first)
        if pages:
            page_table(full, bare, pages, pool, first + n)
        return figures
    finally:
        for store, copy in zip((full, bare), copies):
            store.close()
            for suffix in ("", "-wal", "-shm"):
                if os.path.exists(copy + suffix):
                    os.remove(copy + suffix)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=10_000)
    ap.add_argument("--upkeep-docs", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--store", help="the store's file: built there when it does not exist, else read as it is")
    ap.add_argument("--bulk", action="store_true", help="build the store with upkeep off and one index rebuild at "
                                                         "the end (the same indexes, sooner)")
    ap.add_argument("--grow", type=int, default=0, help="then this many documents added to copies of the store, "
                                                        "with and without the upkeep")
    ap.add_argument("--pages", type=int, default=0, help="after each upkeep figure, this many more documents added "
                                                         "to its two stores, the pages each table and index writes "
                                                         "counted")
    args = ap.parse_args()
    pool = name_pool(100_000)
    folder = tempfile.mkdtemp()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    if args.upkeep_docs:
        on, off = upkeep(args.upkeep_docs, pool, folder, args.pages)
        print(f"upkeep: adding {args.upkeep_docs} documents, CPU mean {on:.1f} ms/doc with the query indexes, "
              f"{off:.1f} ms/doc without: +{(on / off - 1) * 100:.0f} %", flush=True)
    path = args.store or os.path.join(folder, "speed.sqlite")
    fresh = not os.path.exists(path)
    store = GraphStore(path)
    if fresh:
        start = time.perf_counter()
        (build_bulk if args.bulk else add_all)(store, docs(args.docs, pool))
        print(f"built {args.docs} documents in {time.perf_counter() - start:.0f} s", flush=True)
    q = Query(store)
    rng = random.Random(1)
    names = [name for _, name in (store.db.query("SELECT type, name FROM qx_entities ORDER BY entity LIMIT 2000"))]
    picks = [rng.choice(names) for _ in range(args.runs + 1)]
    typo = [p[:3] + p[4:] for p in picks]
    counts = store.db.query("SELECT (SELECT count(*) FROM qx_entities), (SELECT count(*) FROM qx_items), "
                            "(SELECT count(*) FROM qx_text)")[0]
    print(f"store: {counts[0]} entities, {counts[1]} stored items, {counts[2]} full-text rows, "
          f"graph version {store.version()}")
    cases = [
        ("find (exact name)", lambda r: q.find(picks[r]), 20),
        ("find (misspelt name)", lambda r: q.find(typo[r]), 20),
        ("neighbours, 2 hops, fan-out 50, limit 50", lambda r: q.neighbours([picks[r]], hops=2), 50),
        ("match, indexed relation, one named end",
         lambda r: q.match(f'* -{RELATIONS[r % len(RELATIONS)]}-> *{{name: "{picks[r]}"}}'), 50),
        ("search (two names and a relation word)",
         lambda r: q.search(f"{picks[r]} {picks[r - 1]} {RELATIONS[r % len(RELATIONS)].split('_')[0].lower()}"), 100),
    ]
    print(f"{'query':<44}{'median wall':>12}{'median CPU':>12}{'goal':>8}")
    for label, fn, goal in cases:
        wall, cpu = timed(fn, args.runs)
        print(f"{label:<44}{wall:>9.1f} ms{cpu:>9.1f} ms{goal:>5} ms", flush=True)
    store.close()
    if args.grow:
        on, off = grow(path, args.grow, pool, folder, args.pages)
        print(f"upkeep on this store: adding {args.grow} more documents, CPU mean {on:.1f} ms/doc with the query "
              f"indexes, {off:.1f} ms/doc without: +{(on / off - 1) * 100:.0f} %", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
