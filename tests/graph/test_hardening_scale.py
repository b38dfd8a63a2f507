"""One document with more nodes than a PostgreSQL statement takes parameters (65,535) adds.
PostgreSQL only: this SQLite takes 250,000 parameters, and the document costs a minute or
more to add, too long to run twice."""
from __future__ import annotations

import json
import random
import shutil
from pathlib import Path

from support.graph_support import postgres, small_runs  # noqa: F401  (fixtures)
from kgkit import ids
from kgkit.graph import GraphStore
from kgkit.text.name_keys import canonical_key

NODES = 66_000


def big_run(src: Path, dst: Path, count: int) -> Path:
    """``src`` with ``count`` more nodes of distinct random two-word names (valid ids: type and key)."""
    shutil.copytree(src, dst)
    nodes = json.loads((dst / "nodes.json").read_text())
    rng = random.Random(7)
    seen: set[str] = set()
    while len(seen) < count:
        name = " ".join("".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(7)).title() for _ in range(2))
        key = canonical_key(name)
        if key not in seen:
            seen.add(key)
            nodes["nodes"].append({"id": ids.key_node_id("Party", key), "type": "Party", "name": name, "aliases": [],
                                   "mentions": [], "merged_from": [], "origin": "core"})
    (dst / "nodes.json").write_text(json.dumps(nodes))
    return dst


def test_a_document_of_66000_nodes_adds_and_removes_on_postgresql(postgres, small_runs, tmp_path):  # noqa: F811
    graph_url = postgres.new_database()
    run = big_run(small_runs["alpha"], tmp_path / "alpha", NODES)
    with GraphStore(graph_url) as g:
        [added] = g.add([run])
        assert added.status == "added"
        [(count,)] = g.db.query("SELECT count(*) FROM groups WHERE tenant = ?", (g.tenant,))
        assert count >= NODES
