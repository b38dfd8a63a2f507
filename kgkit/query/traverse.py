"""O2: neighbours, lineage and paths, hop by hop over the indexed fillers.

One hop joins two nodes that one visible item names together: a binary or temporal edge
joins its head and tail, a hyperedge or event joins every pair of its fillers (the design's
reachability argument: an n-ary fact relates all its participants at once). Each hop reads
only the items of the current frontier. Limits, all reported in the answer when they cut:

* ``hops`` (at most ``query.max_hops``);
* ``fanout``: per node and hop, the neighbours kept (best confidence first, then the
  better-connected); a hub's other neighbours are dropped and counted;
* ``limit``: nodes returned (nearest first);
* ``min_confidence``: items under it are not walked;
* the time budget: the answer so far, marked ``partial``.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kgkit.errors import InputError
from kgkit.query.reader import Reader, Stored
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

    def as_dict(self) -> dict:
        return {"hops": self.hops, "fanout": self.fanout, "limit": self.limit, "min_confidence": self.min_confidence,
                "relations": self.relations, "types": self.types}


def check_hops(hops: int, max_hops: int) -> None:
    if not isinstance(hops, int) or hops < 1 or hops > max_hops:
        raise InputError(f"hop limit {hops} is out of range: 1 to {max_hops} (query.max_hops)",
                         hint="ask for fewer hops, or raise query.max_hops in kgkit.yaml")


def _weight(confidence: float | None) -> float:
    """An edge's length in weighted lineage: 1 for a certain edge, up to 2 for a doubtful one."""
    return 2.0 - (1.0 if confidence is None else confidence)


def step(reader: Reader, frontier: set[str], lim: Limits, direction: str | None = None
         ) -> dict[str, dict[str, tuple[float, int]]]:
    """node -> neighbour -> (best confidence of the items joining them, the neighbour's
    degree), for every ``frontier`` node (aggregated by the database, :meth:`Reader.hood`)."""
    out: dict[str, dict[str, tuple[float, int]]] = {f: {} for f in frontier}
    for f, n, confidence, degree in reader.hood(frontier, relations=lim.relations or None,
                                                min_confidence=lim.min_confidence, direction=direction,
                                                types=lim.types or None):
        out[f][n] = (float(confidence), degree)
    return out


def _capped(answer: Answer, f: str, hood: dict[str, tuple[float, int]], fanout: int) -> list[str]:
    """``f``'s neighbours in the order kept, at most ``fanout``; the rest are reported cut."""
    order = sorted(hood, key=lambda n: (-hood[n][0], -hood[n][1], n))
    answer.cut("fanout", len(order) - fanout, at=f)
    return order[:fanout]


def _joins(s: Stored, kept: dict[str, set[str]], direction: str | None) -> bool:
    """Whether stored item ``s`` joins a frontier node to one of the neighbours kept for it."""
    if direction is None:
        ends = {e for _, e in s.fillers}
        return any(kept[f] & ends for f in ends & kept.keys())
    if s.kind not in ("edge", "temporal"):
        return False
    ends = dict(s.fillers)
    src, dst = (ends["head"], ends["tail"]) if direction == "forward" else (ends["tail"], ends["head"])
    return dst in kept.get(src, ())


def walk(reader: Reader, answer: Answer, seeds: list[str], lim: Limits, direction: str | None = None):
    """Breadth-first from ``seeds``: (hops per node, stored items walked, graph of kept edges).
    Each hop ranks the frontier's neighbours in the database, caps them, and then reads only
    the items that join a node to a neighbour it kept."""
    import networkx as nx

    dist = {s: 0 for s in seeds}
    used: dict[tuple, Stored] = {}
    graph = nx.DiGraph() if direction else nx.Graph()
    graph.add_nodes_from(seeds)
    frontier = set(seeds)
    for hop in range(1, lim.hops + 1):
        if not frontier or reader.budget.spent():
            break
        hoods = step(reader, frontier, lim, direction)
        nxt: set[str] = set()
        kept: dict[str, set[str]] = {}
        for f in sorted(hoods):
            kept[f] = set(_capped(answer, f, hoods[f], lim.fanout))
            for n in sorted(kept[f]):
                weight = _weight(hoods[f][n][0])
                if not graph.has_edge(f, n) or graph[f][n]["weight"] > weight:
                    graph.add_edge(f, n, weight=weight)
                if n not in dist:
                    dist[n] = hop
                    nxt.add(n)
        wanted = {n for ns in kept.values() for n in ns}
        if wanted:
            for s in reader.incident(frontier, relations=lim.relations or None, min_confidence=lim.min_confidence,
                                     others=wanted):
                if _joins(s, kept, direction):
                    used[s.key] = s
        frontier = nxt
    answer.partial = reader.budget.ran_out
    return dist, used, graph


def _finish(reader: Reader, answer: Answer, dist: dict[str, int], used: dict[tuple, Stored], lim: Limits,
            keep_first: list[str] = ()) -> None:
    info = reader.entities(dist)
    order = list(dict.fromkeys([*keep_first, *sorted(dist, key=lambda n: (dist[n], -info[n]["degree"], n))]))
    order = [n for n in order if n in info]
    answer.cut("limit", len(order) - lim.limit)
    kept = set(order[:lim.limit])
    reader.entities(kept, documents=True)  # in one read
    answer.nodes = [reader.node(n, hops=dist[n]) for n in order[:lim.limit]]
    answer.items = [i for i in reader.lift(s for s in used.values() if sum(e in kept for _, e in s.fillers) >= 2
                                            and all(e in kept for _, e in s.fillers if e in dist))]


def neighbours(reader: Reader, seeds: list[str], lim: Limits) -> Answer:
    """The ``hops``-neighbourhood of one or more seeds; two or more seeds are answered by
    their connecting paths first. A seed without neighbours is returned alone (the node
    is in the graph; nothing joins it)."""
    import networkx as nx

    answer = Answer("neighbours", reader.tenant, reader.version, {"seeds": seeds}, limits=lim.as_dict())
    dist, used, graph = walk(reader, answer, seeds, lim)
    first: list[str] = []
    if len(seeds) > 1:
        for i, a in enumerate(seeds):
            for b in seeds[i + 1:]:
                if a in graph and b in graph and nx.has_path(graph, a, b):
                    path = nx.shortest_path(graph, a, b)
                    answer.paths.append(path)
                    first += path
    _finish(reader, answer, dist, used, lim, keep_first=first)
    return answer


def lineage(reader: Reader, seed: str, lim: Limits, direction: str = "forward") -> Answer:
    """What ``seed`` leads to (forward: head to tail) or comes from (backward) along the
    chosen relations, each node with its weighted shortest path from the seed."""
    import networkx as nx

    if direction not in DIRECTIONS:
        raise InputError(f"direction must be forward or backward, not {direction!r}")
    answer = Answer("lineage", reader.tenant, reader.version, {"seed": seed, "direction": direction},
                    limits=lim.as_dict())
    dist, used, graph = walk(reader, answer, [seed], lim, direction)
    lengths, paths = nx.single_source_dijkstra(graph, seed, weight="weight")
    _finish(reader, answer, dist, used, lim)
    kept = {n.id for n in answer.nodes}
    for node in answer.nodes:
        node.score = round(lengths.get(node.id, 0.0), 4)
    answer.paths = [paths[n] for n in sorted(kept - {seed}, key=lambda n: (lengths[n], n)) if n in paths]
    return answer


def path(reader: Reader, a: str, b: str, lim: Limits) -> Answer:
    """Shortest paths between ``a`` and ``b`` within ``hops`` (at most ``limit`` of them)."""
    import networkx as nx

    answer = Answer("path", reader.tenant, reader.version, {"from": a, "to": b}, limits=lim.as_dict())
    dist, used, graph = walk(reader, answer, [a], lim)
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
    pairs = {frozenset(pair) for p in answer.paths for pair in zip(p, p[1:])}
    answer.items = reader.lift(s for s in used.values()
                               if any(frozenset((x, y)) in pairs for _, x in s.fillers for _, y in s.fillers if x != y))
    return answer
