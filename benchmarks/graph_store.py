"""How the corpus graph store scales: adding many documents, and re-adding one changed one.

Synthetic documents (built in memory, as :func:`kgkit.graph.runs.read_run` would return
them, so the figure is the store's and not the JSON reader's): each names ``--nodes``
entities drawn from a pool of ``--pool`` organisation and person names (Zipf-like, so
some recur in thousands of documents and most in a few; one in thirty is a spelling
variant of another, which fuzzy-merges) and holds ``--items`` binary edges among them, each with evidence.
10,000 documents of 30 nodes and 70 edges are about 1M items (nodes, edges, evidence).

Prints the time per document for each slice of the load (wall and CPU: the machine is
shared), the store's size, the graph's counts, and at each checkpoint the time to re-add a
changed document (random documents replaced by new content of ``--redo-sizes`` nodes, with
edges in the same proportion), which should follow that document's size and not grow
with the corpus.

    python benchmarks/graph_store.py [--docs 10000] [--nodes 30] [--items 70] [--pool 100000]
    python benchmarks/graph_store.py --near-duplicates [--shared ../shared/data]

``--near-duplicates`` asks whether the pool is realistic: the share of key groups with a
fuzzy neighbour (what chains names together) in the shared gold corpora's entity names
and aliases, against the pool's at about the same number of groups and at full size.
"""
from __future__ import annotations

import argparse
import glob
import json
import os
import platform
import random
import statistics
import tempfile
import time

from kgkit import ids
from kgkit.graph import GraphStore
from kgkit.graph.database import is_postgres
from kgkit.graph.resolution import Group, neighbours_in
from kgkit.graph.runs import Contribution
from kgkit.text.name_keys import canonical_key

# 24 onsets x 8 vowels = 192 syllables; names of 2-3 of them, so the name space is about as
# sparse as real names (a much denser one links many near-identical names into large
# components, which every update touching them must re-solve: see RESULTS.md)
SYLLABLES = [c + v for c in "b c d f g h j k l m n p r s t v w z br cr dr gr pr st".split()
             for v in "a e i o u ai ou ea".split()]
KINDS = ["Holdings", "Systems", "Labs", "Capital", "Logistics", "Media", "Energy", "Foods", "Bank", "Partners",
         "Group", "Industries", "Networks", "Pharma", "Motors", "Textiles", "Mining", "Airlines", "Insurance", "Studios",
         "Robotics", "Foundry", "Shipping", "Telecom", "Biotech", "Ventures", "Software", "Retail", "Chemicals", "Metals",
         "Optics", "Dairy", "Transit", "Realty", "Brewing", "Apparel", "Security", "Analytics", "Aerospace", "Marine"]
SUFFIXES = ["", " Inc.", " Corp.", " LLC", " Ltd", " GmbH"]
RELATIONS = ["HAS_PARTY", "LOCATED_IN", "WORKS_FOR", "OWNS", "SUPPLIES", "LICENSES_TO"]


def word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(rng.randint(2, 3))).capitalize()


def name_pool(n: int, seed: int = 0) -> list[tuple[str, str]]:
    """(type, name) pairs; one in thirty is a one-letter variant of an earlier name."""
    rng = random.Random(seed)
    pool: list[tuple[str, str]] = []
    while len(pool) < n:
        if pool and rng.random() < 1 / 30:
            etype, base = rng.choice(pool)
            i = rng.randrange(1, len(base))
            pool.append((etype, base[:i] + rng.choice("aeiou") + base[i + 1:]))
        elif rng.random() < 0.6:
            pool.append(("Organization", f"{word(rng)} {rng.choice(KINDS)}{rng.choice(SUFFIXES)}"))
        else:
            pool.append(("Person", f"{word(rng)} {word(rng)}"))
    return pool


def document(i: int, pool: list[tuple[str, str]], n_nodes: int, n_items: int, version: int = 0) -> Contribution:
    rng = random.Random(i * 7919 + version)
    picks: dict[str, tuple[str, str]] = {}
    while len(picks) < n_nodes:  # Zipf-like: low indices recur across many documents
        etype, name = pool[min(int(rng.paretovariate(0.6)) - 1, len(pool) - 1) if rng.random() < 0.3
                           else rng.randrange(len(pool))]
        picks.setdefault(ids.node_id(etype, name), (etype, name))
    c = Contribution(doc=f"doc{i:05d}", doc_id=ids.doc_id(f"doc{i} v{version}"), source=f"doc{i}.txt",
                     sha256=f"{i:08d}{version:056d}", fingerprint=f"{i}-{version}")
    node_ids = sorted(picks)
    for k, nid in enumerate(node_ids):
        etype, name = picks[nid]
        c.nodes.append({"node": nid, "type": etype, "key": canonical_key(name), "name": name, "aliases": []})
        c.evidence.append((nid, "core", f"c_{i}_{k % 5}", 1, k * 100, k * 100 + len(name), None))
    for k in range(n_items):
        head, tail = rng.sample(node_ids, 2)
        relation = rng.choice(RELATIONS)
        eid = ids.edge_id(head, relation, tail)
        c.items.append({"view": "binary", "item": eid, "kind": "edge",
                        "body": {"head": head, "relation": relation, "tail": tail},
                        "confidence": 0.9, "held": None, "review_key": None})
        c.evidence.append((eid, "binary", f"c_{i}_{k % 5}", 1, k * 50, k * 50 + 40, f"sentence {k} of document {i}"))
    return c


def near_duplicates(pairs: list[tuple[str, str]]) -> str:
    """Key groups of (type, name) pairs, the share with a fuzzy neighbour, the mean degree."""
    groups = {}
    for etype, name in pairs:
        key = canonical_key(name)
        if key:
            groups[f"{etype}|{key}"] = Group(f"{etype}|{key}", etype, key, 1)
    degrees = [len(n) for n in neighbours_in(groups, set(), set(), 90.0).values()]
    return (f"{len(groups)} key groups, {sum(d > 0 for d in degrees) / len(degrees):.1%} with a fuzzy neighbour, "
            f"mean degree {statistics.mean(degrees):.3f}")


def report_near_duplicates(shared: str) -> None:
    gold: list[tuple[str, str]] = []
    for folder in sorted(glob.glob(os.path.join(shared, "*", ""))):
        pairs = [(e["type"], name) for f in sorted(glob.glob(os.path.join(folder, "*.gold.json")))
                 for e in json.load(open(f, encoding="utf-8"))["entities"] for name in [e["name"], *e["aliases"]]]
        if pairs:
            print(f"{os.path.basename(folder.rstrip(os.sep))}: {near_duplicates(pairs)}")
            gold += pairs
    print(f"all shared sets: {near_duplicates(gold)}")
    pool = name_pool(100000)
    for docs in (100, 300, 2000, 10000):
        pairs = [(n["type"], n["name"]) for i in range(docs) for n in document(i, pool, 30, 0).nodes]
        print(f"synthetic pool, first {docs} documents: {near_duplicates(pairs)}", flush=True)


def store_size(store: GraphStore, path: str) -> int:
    """Bytes the store takes: the SQLite file and its WAL, or the PostgreSQL database."""
    if is_postgres(path):
        return store.db.query("SELECT pg_database_size(current_database())")[0][0]
    return sum(os.path.getsize(p) for p in (path, path + "-wal") if os.path.exists(p))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--docs", type=int, default=10000)
    parser.add_argument("--nodes", type=int, default=30)
    parser.add_argument("--items", type=int, default=70)
    parser.add_argument("--pool", type=int, default=100000)
    parser.add_argument("--checkpoints", default="1000,5000,10000")
    parser.add_argument("--redo-sizes", default="10,30,100",
                        help="nodes of the changed documents re-added at each checkpoint (3 of each)")
    parser.add_argument("--store", help="SQLite file to write (default: a temp file, removed after), or the "
                                        "postgresql:// URL of an empty database")
    parser.add_argument("--near-duplicates", action="store_true", help="compare the pool's names with the shared "
                        "corpora's (no store is written)")
    parser.add_argument("--shared", default=os.path.join(os.path.dirname(__file__), "..", "..", "shared", "data"))
    args = parser.parse_args()
    if args.near_duplicates:
        report_near_duplicates(args.shared)
        return
    checkpoints = sorted({int(x) for x in args.checkpoints.split(",") if int(x) <= args.docs} | {args.docs})
    redo_sizes = [int(x) for x in args.redo_sizes.split(",")]
    pool = name_pool(args.pool)
    folder = tempfile.mkdtemp()
    path = args.store or os.path.join(folder, "bench.sqlite")
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}; "
          f"{args.docs} documents x ({args.nodes} nodes + {args.items} edges), name pool {args.pool}, "
          f"store {'PostgreSQL' if is_postgres(path) else 'SQLite'}")
    store = GraphStore(path)
    times: list[float] = []
    cpu: list[float] = []
    start = time.perf_counter()
    for i in range(args.docs):
        c = document(i, pool, args.nodes, args.items)
        t, p = time.perf_counter(), time.process_time()
        store.add_contribution(c)
        times.append(time.perf_counter() - t)
        cpu.append(time.process_time() - p)
        if i + 1 in checkpoints:
            lo = checkpoints[checkpoints.index(i + 1) - 1] if checkpoints.index(i + 1) else 0
            part, part_cpu = times[lo:], cpu[lo:]
            size = store_size(store, path)
            print(f"{i + 1:>6} docs: adding docs {lo + 1}-{i + 1}: wall mean {statistics.mean(part) * 1000:.1f} ms/doc, "
                  f"p95 {sorted(part)[int(len(part) * 0.95)] * 1000:.1f} ms, CPU mean {statistics.mean(part_cpu) * 1000:.1f}"
                  f" ms/doc; store {size / 1e6:.0f} MB; load average {os.getloadavg()[0]:.1f}; "
                  f"elapsed {time.perf_counter() - start:.0f} s", flush=True)
            victims = iter(random.Random(i).sample(range(i + 1), 3 * len(redo_sizes)))
            for nodes in redo_sizes:
                items = round(nodes * args.items / args.nodes)
                redo, redo_cpu = [], []
                for j in range(3):
                    changed = document(next(victims), pool, nodes, items, version=i + 1 + j)
                    t, p = time.perf_counter(), time.process_time()
                    assert store.add_contribution(changed).status == "replaced"
                    redo.append(time.perf_counter() - t)
                    redo_cpu.append(time.process_time() - p)
                print(f"{i + 1:>6} docs: re-adding a changed document of {nodes} nodes + {items} edges: median wall "
                      f"{statistics.median(redo) * 1000:.1f} ms, CPU {statistics.median(redo_cpu) * 1000:.1f} ms "
                      f"(3 documents; load average {os.getloadavg()[0]:.1f})", flush=True)
    counts = store.db.query("SELECT (SELECT count(*) FROM groups), (SELECT count(DISTINCT entity) FROM groups), "
                            "(SELECT count(*) FROM items), (SELECT count(*) FROM evidence), "
                            "(SELECT count(*) FROM merge_log WHERE action = 'merge')")[0]
    print(f"key groups {counts[0]}, entities {counts[1]}, items {counts[2]}, evidence rows {counts[3]}, "
          f"merges logged {counts[4]}; total {time.perf_counter() - start:.0f} s")
    store.close()
    if not args.store:
        for p in (path, path + "-wal", path + "-shm"):
            if os.path.exists(p):
                os.remove(p)


if __name__ == "__main__":
    main()
