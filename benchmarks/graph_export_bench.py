"""How long each graph export format takes, and how big its files are, on a synthetic graph.

The snapshot is made up but shaped like a corpus graph: entities with aliases in a few
documents, binary and temporal edges between them, hyperedges and events with two to four
role fillers, two evidence rows per item with a sentence-long quote (quotes, a line break,
markup characters). Prints seconds and megabytes per format.

    python benchmarks/graph_export_bench.py [--nodes 20000] [--formats graphml,neo4j,...]
"""
from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from kgkit.graph.export import export_formats, export_graph
from kgkit.graph.snapshot import GraphSnapshot

QUOTE = 'The "Supplier" shall deliver <goods> & services\nwithin {days} days of the order.'


def synthetic_snapshot(nodes: int, seed: int = 0) -> GraphSnapshot:
    rng = random.Random(seed)
    docs = [f"d_{i:06d}" for i in range(max(1, nodes // 50))]
    ids = [f"n_{i:08d}" for i in range(nodes)]
    node_items = [{"id": n, "type": rng.choice(["Party", "Date", "Location"]), "name": f"Entity {i} & Co.",
                   "aliases": [f"E{i}"], "documents": sorted(set(rng.sample(docs, min(2, len(docs)))))}
                  for i, n in enumerate(ids)]
    edges = [{"id": f"e_{i:08d}", "head": rng.choice(ids), "relation": rng.choice(["HAS_PARTY", "LOCATED_IN"]),
              "tail": rng.choice(ids), "views": ["binary"], "confidence": 0.8} for i in range(2 * nodes)]
    temporal = [{"id": f"t_{i:08d}", "head": rng.choice(ids), "relation": "HAS_PARTY", "tail": rng.choice(ids),
                 "qualifiers": {"start": {"text": "1 May 2020", "type": "date", "value": "2020-05-01"}},
                 "views": ["temporal"]} for i in range(nodes // 2)]
    hyper = [{"id": f"h_{i:08d}", "relation": "Term", "roles": {r: [rng.choice(ids)] for r in ("a", "b", "c")},
              "views": ["nary"]} for i in range(nodes // 2)]
    events = [{"id": f"v_{i:08d}", "type": "Signing", "trigger": "signed", "time": None,
               "arguments": {"party": sorted(set(rng.sample(ids, 2)))}, "views": ["event"]} for i in range(nodes // 2)]
    evidence = [{"item": item["id"], "document": rng.choice(docs), "chunk": f"c_{k}", "page": 1, "span": [k, k + 80],
                 "quote": QUOTE.format(days=k), "view": "binary"}
                for group in (node_items, edges, temporal, hyper, events) for item in group for k in range(2)]
    return GraphSnapshot("bench", 1, nodes=node_items, edges=edges, hyperedges=hyper, events=events,
                         temporal=temporal, evidence=evidence,
                         documents=[{"id": d, "name": f"{d}.pdf", "source": None, "sha256": "0" * 64} for d in docs])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=20000)
    parser.add_argument("--formats", default=",".join(export_formats()))
    args = parser.parse_args()
    snap = synthetic_snapshot(args.nodes)
    items = len(snap.nodes) + len(snap.edges) + len(snap.temporal) + len(snap.hyperedges) + len(snap.events)
    print(f"{items:,} items ({len(snap.nodes):,} nodes), {len(snap.evidence):,} evidence rows")
    print(f"{'format':8}  {'seconds':>8}  {'MB':>8}")
    for fmt in args.formats.split(","):
        with tempfile.TemporaryDirectory() as out:
            start = time.perf_counter()
            files = export_graph(snap, fmt, out)
            seconds = time.perf_counter() - start
            size = sum(Path(f).stat().st_size for f in files) / 1e6
        print(f"{fmt:8}  {seconds:8.2f}  {size:8.1f}")


if __name__ == "__main__":
    main()
