"""The query operators on the shared CUAD and CoNLL04 graphs (offline run folders), on both
stores, checked against networkx over each store's own snapshot: neighbourhoods, paths,
components and orphans, and every binary pattern of a relation.

No figure is published from these tests, so the tune/report split does not apply.
"""
from __future__ import annotations

import pytest

from support.graph_support import extract_texts, graph_url, postgres  # noqa: F401  (fixtures)
from support.query_support import snapshot_graph
from support.shared_data import DATA
from kgkit.config.model import QueryConfig
from kgkit.graph import GraphStore
from kgkit.query import Query

pytestmark = pytest.mark.corpus

SETS = {"cuad": "legal_contracts", "conll04": "general"}


@pytest.fixture(scope="module")
def corpus_runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("query-corpus")
    runs = {}
    for name, domain in SETS.items():
        texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted((DATA / name).glob("*.txt"))[:12]}
        runs[name] = list(extract_texts(texts, base / name, domain).values())
    return runs


@pytest.mark.parametrize("name", sorted(SETS))
def test_operators_equal_networkx_over_the_snapshot(graph_url, corpus_runs, name):
    import networkx as nx

    with GraphStore(graph_url) as g:
        g.add(corpus_runs[name])
        snap = g.snapshot()
        graph = snapshot_graph(snap)
        q = Query(g, QueryConfig(fanout=100_000, limit=100_000))
        for node in snap.nodes[::max(1, len(snap.nodes) // 25)]:
            got = {n.id: n.hops for n in q.neighbours([node["id"]], hops=2).nodes}
            assert got == nx.single_source_shortest_path_length(graph, node["id"], cutoff=2), node["name"]
        ids = [n["id"] for n in snap.nodes]
        for a, b in zip(ids[::7], ids[3::11]):
            answer = q.path(a, b, hops=4)
            if a != b and nx.has_path(graph, a, b) and nx.shortest_path_length(graph, a, b) <= 4:
                assert len(answer.paths[0]) - 1 == nx.shortest_path_length(graph, a, b)
            elif a != b:
                assert answer.paths == []
        report = q.gaps(limit=100_000).report
        main = max(nx.connected_components(graph), key=len)
        assert set(report["outside_largest_component"]) == set(graph) - main
        assert set(report["orphans"]) == {n for n in graph if graph.degree(n) == 0}
        types = {n["id"]: n["type"] for n in snap.nodes}
        for relation in sorted({e["relation"] for e in snap.edges + snap.temporal}):
            rows = q.match(f"* -{relation}-> *").rows
            want = {(e["head"], e["tail"], e["id"]) for e in snap.edges + snap.temporal if e["relation"] == relation}
            assert {(r.nodes[0], r.nodes[1], r.items[0]) for r in rows} == want
            head_types = {types[h] for h, _, _ in want}
            for t in head_types:
                typed = q.match(f"{t} -{relation}-> *").rows
                assert {r.items[0] for r in typed} == {i for h, _, i in want if types[h] == t}
