"""O2: neighbours, lineage and paths, hop by hop over the indexed fillers.

One hop joins two nodes that one visible item names together: a binary or temporal edge
joins its head and tail, a hyperedge or event joins every pair of its fillers (the design's
reachability argument: an n-ary fact relates all its participants at once). Each hop reads
only the items of the current frontier. Limits, all reported in the answer when they cut:

* ``hops`` (at most ``query.max_hops``);
* ``fanout``: per node and hop, the neighbours kept (best confidence first, then the
  better-connected); a hub's other neighbours are dropped and counted;
* ``scan`` (``query.scan``): per node and hop, the statements its neighbours are ranked
  from (its first, in index order); a hub's others are not read, and counted as the cut
  ``scan``, so a 2-hop walk through hubs costs the caps, not the hubs' degrees;
* ``limit``: nodes returned (nearest first);
* per pair of returned nodes the walk joined, two stored statements shown (the rest counted
  as the cut ``items``: two hubs may share thousands);
* ``min_confidence``: items under it are not walked;
* the time budget: the answer so far, marked ``partial``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from kgkit.errors import InputError
from kgkit.query.reader import Reader
from kgkit.query.results import Answer

DIRECTIONS = ("forward", "backward")


@dataclass
class Limits:
    hops: int
    fanout: int
    limit: int
    min_confidence: float | None = None
    relations: list[str] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    scan: int | None = None  # statements read per node and hop (query.scan)

    def as_dict(self) -> dict:
        return {"hops": self.hops, "fanout": self.fanout, "limit": self.limit, "min_confidence": self.min_confidence,
                "relations": self.relations, "types": self.types, "scan": self.scan}


def check_hops(hops: int, max_hops: int) -> None:
    if not isinstance(hops, int) or hops < 1 or hops > max_hops:
        raise InputError(f"hop limit {hops} is out of range: 1 to {max_hops} (query.max_hops)",
                         hint="ask for fewer hops, or raise query.max_hops in kgkit.yaml")


def _weight(confidence: float | None) -> float:
    """An edge's length in weighted lineage: 1 for a certain edge, up to 2 for a doubtful one."""
    return 2.0 - (1.0 if confidence is None else confidence)


def step(reader: Reader, answer: Answer, frontier: set[str], lim: Limits, direction: str | None = None
         ) -> dict[str, dict[str, tuple[float, int, int, tuple]]]:
    """node -> neighbour -> (best confidence of the items joining them, the neighbour's
    degree, how many items join them, one of them), for every ``frontier`` node, aggregated by the
    database (:meth:`Reader.hood`): a hub's items come back as one row per neighbour."""
    out: dict[str, dict[str, tuple[float, int, int, tuple]]] = {f: {} for f in frontier}
    rows, unread = reader.hood(frontier, relations=lim.relations or None, min_confidence=lim.min_confidence,
                               direction=direction, types=lim.types or None, scan=lim.scan)
    for f, n, confidence, degree, count, key in rows:
        out[f][n] = (float(confidence), degree, count, key)
    for f, dropped in sorted(unread.items()):
        answer.cut("scan", dropped, at=f)
    return out


def _capped(answer: Answer, f: str, hood: dict[str, tuple[float, int, int, tuple]], fanout: int) -> list[str]:
    """``f``'s neighbours in the order kept, at most ``fanout``; the rest are reported cut."""
    order = sorted(hood, key=lambda n: (-hood[n][0], -hood[n][1], n))
    answer.cut("fanout", len(order) - fanout, at=f)
    return order[:fanout]


def walk(reader: Reader, answer: Answer, seeds: list[str], lim: Limits, direction: str | None = None):
    """Breadth-first from ``seeds``: (hops per node, graph of kept edges). Each hop ranks the
    frontier's neighbours in the database and caps them; no item is read here (the answer's
    items are read for what it keeps, :func:`_items`)."""
    import networkx as nx

    dist = {s: 0 for s in seeds}
    graph = nx.DiGraph() if direction else nx.Graph()
    graph.add_nodes_from(seeds)
    frontier = set(seeds)
    for hop in range(1, lim.hops + 1):
        if not frontier or reader.budget.spent():
            break
        hoods = step(reader, answer, frontier, lim, direction)
        nxt: set[str] = set()
        for f in sorted(hoods):
            for n in _capped(answer, f, hoods[f], lim.fanout):
                confidence, _, count, key = hoods[f][n]
                if not graph.has_edge(f, n) or graph[f][n]["weight"] > _weight(confidence):
                    graph.add_edge(f, n, weight=_weight(confidence), items=count, keys=key)
                if n not in dist:
                    dist[n] = hop
                    nxt.add(n)
        frontier = nxt
    answer.partial = reader.budget.ran_out
    return dist, graph


def _items(reader: Reader, answer: Answer, graph, pairs: list[tuple[str, str]]) -> None:
    """The answer's items: for each walked pair of kept nodes, two of the stored statements
    joining them (the walk's, enough to cite; two hubs may share thousands), the others
    reported as the cut ``items``."""
    edges = [graph[a][b] for a, b in sorted({tuple(p) for p in pairs})]
    answer.cut("items", sum(e["items"] - len(e["keys"]) for e in edges))
    answer.items = reader.lift(reader.items({k for e in edges for k in e["keys"]}))


def _finish(reader: Reader, answer: Answer, dist: dict[str, int], graph, lim: Limits,
            keep_first: Sequence[str] = ()) -> None:
    info = reader.entities(dist)
    order = list(dict.fromkeys([*keep_first, *sorted(dist, key=lambda n: (dist[n], -info[n]["degree"], n))]))
    order = [n for n in order if n in info]
    answer.cut("limit", len(order) - lim.limit)
    kept = set(order[:lim.limit])
    reader.entities(kept, documents=True)  # in one read
    answer.nodes = [reader.node(n, hops=dist[n]) for n in order[:lim.limit]]
    _items(reader, answer, graph, [(a, b) for a, b in graph.edges if a in kept and b in kept])


def neighbours(reader: Reader, seeds: list[str], lim: Limits) -> Answer:
    """The ``hops``-neighbourhood of one or more seeds; two or more seeds are answered by
    their connecting paths first. A seed without neighbours is returned alone (the node
    is in the graph; nothing joins it)."""
    import networkx as nx

    answer = Answer("neighbours", reader.tenant, reader.version, {"seeds": seeds}, limits=lim.as_dict())
    dist, graph = walk(reader, answer, seeds, lim)
    first: list[str] = []
    if len(seeds) > 1:
        for i, a in enumerate(seeds):
            for b in seeds[i + 1:]:
                if a in graph and b in graph and nx.has_path(graph, a, b):
                    path = nx.shortest_path(graph, a, b)
                    answer.paths.append(path)
                    first += path
    _finish(reader, answer, dist, graph, lim, keep_first=first)
    return answer


def lineage(reader: Reader, seed: str, lim: Limits, direction: str = "forward") -> Answer:
    """What ``seed`` leads to (forward: head to tail) or comes from (backward) along the
    chosen relations, each node with its weighted shortest path from the seed."""
    import networkx as nx

    if direction not in DIRECTIONS:
        raise InputError(f"direction must be forward or backward, not {direction!r}")
    answer = Answer("lineage", reader.tenant, reader.version, {"seed": seed, "direction": direction},
                    limits=lim.as_dict())
    dist, graph = walk(reader, answer, [seed], lim, direction)
    lengths, paths = nx.single_source_dijkstra(graph, seed, weight="weight")
    _finish(reader, answer, dist, graph, lim)
    kept = {n.id for n in answer.nodes}
    for node in answer.nodes:
        node.score = round(lengths.get(node.id, 0.0), 4)
    answer.paths = [paths[n] for n in sorted(kept - {seed}, key=lambda n: (lengths[n], n)) if n in paths]
    return answer


def path(reader: Reader, a: str, b: str, lim: Limits) -> Answer:
    """Shortest paths between ``a`` and ``b`` within ``hops`` (at most ``limit`` of them)."""
    import networkx as nx

    answer = Answer("path", reader.tenant, reader.version, {"from": a, "to": b}, limits=lim.as_dict())
    dist, graph = walk(reader, answer, [a], lim)
    if b in graph and nx.has_path(graph, a, b):
        found = []
        for p in nx.all_shortest_paths(graph, a, b):
            found.append(p)
            if len(found) > lim.limit:
                break
        answer.cut("limit", len(found) - lim.limit)
        answer.paths = sorted(found[:lim.limit])
    on_path = {n for p in answer.paths for n in p}
    answer.nodes = [reader.node(n, hops=dist[n]) for n in sorted(on_path, key=lambda n: (dist[n], n))]
    pairs = {(min(pair), max(pair)) for p in answer.paths for pair in zip(p, p[1:])}
    _items(reader, answer, graph, list(pairs))
    return answer
