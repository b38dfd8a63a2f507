"""Cross-document entity resolution: which key groups are one real-world entity.

A *key group* is every document's node with one (type, canonical key); the run folders
already give them one id. Groups become one entity by the cascade each document's merge
uses (kgkit/canon/merge.py), applied across the corpus:

1. equal canonical keys -- already one group;
2. declared aliases and defined terms: a group whose nodes list an alias keyed like
   another group joins it, unless two groups claim that alias (a defined term such as
   "the Company" names a different party in every contract: claimed by many, it merges
   nothing);
3. fuzzy similarity within a type, by the *neighbourhood rule* (:func:`fuzzy_cluster`).
   Two groups are *neighbours* when canon's blocking puts them side by side and their
   similarity reaches the threshold (kgkit.canon.fuzzy.similar_keys), neither is an alias
   target and no unmerge keeps them apart. A group's *leader* is the first of itself and
   its neighbours in key order; a group that leads itself gathers the neighbours it leads,
   in key order, each joining only if it is a neighbour of every one gathered before
   (complete link: A~B and B~C never join A and C unless A~C). Any other group stands alone.

Unmerge decisions (pairs kept *apart*) override 2 and 3.

Why an update stays local and still equals a fresh load: a group's fuzzy cluster is a
function of the neighbours of the groups at most two links away from it, and of nothing
else, in an order derived from the keys alone. An update changes the neighbours only of
the groups it adds, drops or newly claims and of their neighbours; a leader's gathering
changes only if one of those joins or leaves it (the first candidate whose outcome
differs is one whose neighbours changed). So re-solving those groups, closed under
membership of one cluster or entity before and after and under alias claims, reaches
every group whose answer changes: a neighbourhood whose size follows the document, not
the corpus, and the answer is the one a fresh load of the same corpus computes. (The whole-component greedy clustering the
document merge uses would make every update re-solve every group chained to its names by
candidate pairs, which in a dense name space grows with the corpus.)
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Callable

from kgkit.canon.fuzzy import key_similarity
from kgkit.graph.candidates import BlockIndex


@dataclass(frozen=True)
class Group:
    node: str
    type: str
    key: str
    refs: int  # documents naming it


@dataclass(frozen=True)
class Assignment:
    entity: str  # node id of the group that stands for the entity
    reason: str | None  # None for that group itself; "alias" or "fuzzy"
    score: float | None


#: ``near(node)``: the node's fuzzy neighbours (not itself); ``order(node)``: its sort key.
Near = Callable[[str], frozenset[str]]
Order = Callable[[str], tuple]


def fuzzy_cluster(node: str, near: Near, order: Order) -> list[str]:
    """The members of ``node``'s fuzzy cluster by the neighbourhood rule, leader first."""
    def leader(n: str) -> str:
        return min((n, *near(n)), key=order)

    head = leader(node)
    if leader(head) != head:
        return [node]
    gathered = [head]
    for n in sorted((m for m in near(head) if leader(m) == head), key=order):
        if all(g in near(n) for g in gathered):
            gathered.append(n)
    return gathered if node in gathered else [node]


def neighbours_in(groups: dict[str, Group], targets: set[tuple[str, str]], apart: set[frozenset[str]],
                  threshold: float) -> dict[str, frozenset[str]]:
    """Fuzzy neighbours among ``groups`` alone, blocked as the store blocks them: the
    reference for a self-contained set (the store keeps these pairs in its ``links``)."""
    blocks: dict[str, list[tuple[str, str]]] = defaultdict(list)
    live = [g for g in groups.values() if g.refs > 0 and (g.type, g.key) not in targets]
    for g in live:
        for b in BlockIndex.blocks_of(g.type, g.key):
            blocks[b].append((g.node, g.key))
    index = BlockIndex(lambda b: blocks.get(b, []))
    adj: dict[str, set[str]] = {g.node: set() for g in groups.values()}
    for g in live:
        for m in index.similar(g.type, g.key, threshold):
            if m != g.node and frozenset((g.node, m)) not in apart:
                adj[g.node].add(m)
                adj[m].add(g.node)
    return {n: frozenset(s) for n, s in adj.items()}


def resolve(groups: dict[str, Group], claims: dict[str, set[str]], apart: set[frozenset[str]],
            threshold: float, near: Near | None = None, order: Order | None = None) -> dict[str, Assignment]:
    """The entity of every group in ``groups``, which must hold, with each group, its
    entity's other members, its fuzzy cluster and its alias partners (claimants and
    targets): then each group's answer is the one a fresh load gives.

    ``claims``: group node -> alias keys its documents declare; ``apart``: pairs an
    unmerge keeps separate; ``threshold``: canon's fuzzy threshold (above 100: no fuzzy);
    ``near``: the fuzzy neighbours of a group and ``order`` the key order of any group it
    names (the store reads both from its links); by default computed among ``groups``
    alone (:func:`neighbours_in`).
    """
    members = sorted(groups.values(), key=lambda g: g.node)
    by_key = {(g.type, g.key): g for g in members}
    claimed: dict[tuple[str, str], set[str]] = defaultdict(set)  # (type, alias key) -> claimant nodes
    for g in members:
        for akey in claims.get(g.node, ()):
            claimed[(g.type, akey)].add(g.node)
    targets = {k for k in claimed if k in by_key}
    if near is None:
        adj = neighbours_in(groups, targets, apart, threshold)
        near = lambda n: adj.get(n, frozenset())  # noqa: E731
        order = lambda n: (groups[n].key, n)  # noqa: E731
    assert order is not None, "order is given with near"
    clusters = _clusters(groups, members, by_key, targets, near, order)
    alias_joined = _join_aliases(clusters, by_key, claimed, targets, apart)
    return _assignments(clusters, alias_joined)


def _clusters(groups: dict[str, Group], members: list[Group], by_key: dict[tuple[str, str], Group],
              targets: set[tuple[str, str]], near: Near, order: Order) -> list[list[Group]]:
    """Each group's fuzzy cluster (alias targets stay out of fuzzy matching), then each
    alias target alone."""
    clusters: list[list[Group]] = []
    placed: set[str] = set()
    for g in sorted(members, key=lambda g: (g.key, g.node)):
        if g.node in placed or (g.type, g.key) in targets:
            continue
        cluster = [groups[n] for n in fuzzy_cluster(g.node, near, order)]
        placed.update(c.node for c in cluster)
        clusters.append(cluster)
    for k in sorted(targets):
        clusters.append([by_key[k]])
    return clusters


def _join_aliases(clusters: list[list[Group]], by_key: dict[tuple[str, str], Group],
                  claimed: dict[tuple[str, str], set[str]], targets: set[tuple[str, str]],
                  apart: set[frozenset[str]]) -> set[str]:
    """In place: an alias target one cluster alone claims (and no unmerge keeps apart)
    joins that cluster; the nodes that joined so."""
    def separated(a: list[Group], b: list[Group]) -> bool:
        return any(frozenset((x.node, y.node)) in apart for x in a for y in b)

    cluster_of = {g.node: i for i, c in enumerate(clusters) for g in c}
    alias_joined: set[str] = set()
    for akey in sorted(targets):
        owners = sorted({cluster_of[n] for n in claimed[akey]})
        target = cluster_of[by_key[akey].node]
        if len(owners) != 1 or owners[0] == target or separated(clusters[owners[0]], clusters[target]):
            continue
        owner = owners[0]
        alias_joined.add(by_key[akey].node)
        clusters[owner].extend(clusters[target])
        for g in clusters[target]:
            cluster_of[g.node] = owner
        clusters[target] = []
    return alias_joined


def _assignments(clusters: list[list[Group]], alias_joined: set[str]) -> dict[str, Assignment]:
    """Each group's entity: its cluster's representative (the least key among the groups
    not joined by an alias), and how it joined."""
    result: dict[str, Assignment] = {}
    for cluster in clusters:
        if not cluster:
            continue
        primary = [g for g in cluster if g.node not in alias_joined] or cluster
        rep = min(primary, key=lambda g: (g.key, g.node))  # keys only: adding support re-points nothing
        for g in cluster:
            if g is rep:
                result[g.node] = Assignment(rep.node, None, None)
            elif g.node in alias_joined:
                result[g.node] = Assignment(rep.node, "alias", 100.0)
            else:
                result[g.node] = Assignment(rep.node, "fuzzy", round(key_similarity(g.key, rep.key, 0), 2))
    return result
