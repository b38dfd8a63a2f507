"""Cross-document entity resolution: which key groups are one real-world entity.

A *key group* is every document's node with one (type, canonical key); the run folders
already give them one id. Groups become one entity by the cascade each document's merge
uses (kgkit/canon.py), applied across the corpus:

1. equal canonical keys -- already one group;
2. declared aliases and defined terms: a group whose nodes list an alias keyed like
   another group joins it, unless two groups claim that alias (a defined term such as
   "the Company" names a different party in every contract: claimed by many, it merges
   nothing);
3. fuzzy similarity within a type, blocked and complete-link (canon.cluster_keys): A~B and
   B~C never join A and C unless A~C.

Unmerge decisions (pairs kept *apart*) override 2 and 3.

Why the result can be updated incrementally and still equal a fresh load: the outcome is
computed per *component* -- groups connected by a candidate link (a shared block and a
score over the threshold, or an alias claim) -- and depends on nothing outside it, in
an order derived from the keys alone. An update re-solves only the components its
document touched (:func:`resolve` over the closure of what it touched), so its cost
follows the document, and the answer is the one a fresh load of the same corpus computes.
"""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from kgkit.canon import cluster_keys, key_similarity


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


def resolve(groups: dict[str, Group], claims: dict[str, set[str]], apart: set[frozenset[str]],
            threshold: float) -> dict[str, Assignment]:
    """The entity of every group in ``groups``, which must be closed under candidate links
    (pairs the fuzzy stage could join, :func:`kgkit.canon.similar_keys`, and alias
    claims): then each group's answer is the one a fresh load gives.

    ``claims``: group node -> alias keys its documents declare; ``apart``: pairs an
    unmerge keeps separate; ``threshold``: canon's fuzzy threshold (above 100: no fuzzy).
    """
    members = sorted(groups.values(), key=lambda g: g.node)
    by_key = {(g.type, g.key): g for g in members}
    claimed: dict[tuple[str, str], set[str]] = defaultdict(set)  # (type, alias key) -> claimant nodes
    for g in members:
        for akey in claims.get(g.node, ()):
            claimed[(g.type, akey)].add(g.node)
    targets = {k for k in claimed if k in by_key}

    def separated(a: list[Group], b: list[Group]) -> bool:
        return any(frozenset((x.node, y.node)) in apart for x in a for y in b)

    clusters: list[list[Group]] = []
    by_type: dict[str, list[Group]] = defaultdict(list)
    for g in members:
        if (g.type, g.key) not in targets:
            by_type[g.type].append(g)
    for etype in sorted(by_type):
        keyed = {g.key: g for g in by_type[etype]}
        for keys in cluster_keys(keyed, threshold):
            kept: list[Group] = []
            for k in keys:  # a member unmerged from the others stands on its own
                if separated([keyed[k]], kept):
                    clusters.append([keyed[k]])
                else:
                    kept.append(keyed[k])
            clusters.append(kept)
    for k in sorted(targets):
        clusters.append([by_key[k]])

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
