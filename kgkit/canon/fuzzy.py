"""Fuzzy matching within a type: blocking keys, block purging, complete-link clusters."""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz import fuzz, process

from kgkit.canon.records import Mention
from kgkit.config.model import CanonConfig
from kgkit.text.ratio_index import RatioIndex, could_reach as _could_reach


# Tokens too common to be useful blocking keys.
_STOP_TOKENS = frozenset({"the", "of", "and", "for", "a", "an", "in", "on", "to", "de", "la"})


@dataclass
class _Group:
    """Mentions of one type sharing one canonical key."""

    type: str
    key: str
    mentions: list[Mention] = field(default_factory=list)
    surfaces: Counter = field(default_factory=Counter)
    sorted_form: str = ""
    numbers: tuple[str, ...] = ()
    letters: tuple[str, ...] = ()
    blocks: frozenset[str] = frozenset()


def _prepare(group: _Group) -> None:
    tokens = group.key.split()
    group.sorted_form = " ".join(sorted(tokens))
    group.numbers = tuple(t for t in tokens if any(c.isdigit() for c in t))  # in order: "3.1" != "1.3"
    group.letters = tuple(t for t in tokens if len(t) == 1 and t.isalpha())
    keys = set()
    for t in tokens:
        if t in _STOP_TOKENS or len(t) == 1:  # middle initials would put everyone in one block
            continue
        keys.add("<" + t[:3])
        if len(t) >= 4:
            keys.add(">" + t[-3:])
    group.blocks = frozenset(keys or {"<" + group.sorted_form[:3]})


def _labels_agree(a: _Group, b: _Group) -> bool:
    """Numbers must be equal; one-letter labels must not conflict (one side may lack them)."""
    return a.numbers == b.numbers and (a.letters == b.letters or not a.letters or not b.letters)


def _score(a: _Group, b: _Group, threshold: float) -> float:
    """Token-sort similarity of two groups, 0 when it cannot reach ``threshold``."""
    if not _labels_agree(a, b):
        return 0.0
    if not _could_reach(len(a.sorted_form), len(b.sorted_form), threshold):  # length alone rules it out
        return 0.0
    return fuzz.ratio(a.sorted_form, b.sorted_form, score_cutoff=threshold)


BLOCK_CAP = CanonConfig.block_cap  # declared with the setting canon.block_cap; see _usable_blocks


def _usable_blocks(order: list[_Group], cap: int | None) -> tuple[dict[int, frozenset[str]], Counter]:
    """(id(group) -> the blocking keys the group is looked up under, key -> groups holding
    it): block purging (Papadakis et al.), which bounds what one name costs the fuzzy stage.

    A key held by more than ``cap`` of the type's groups says next to nothing about
    identity -- a first name, "holdings", "...ville" -- and is dropped for every group that
    holds at least one key under the cap, so two names that share only such keys are never
    compared. The count is over every group known up front (``order``), so the choice does
    not depend on the order the names are met in.

    The cap is a count, not a share of the groups: with a share the kept blocks still grow
    with the document and the work with its square, while with a count a name that holds a
    kept key is compared with at most ``cap`` groups per key. A group whose keys are all
    over the cap keeps its rarest key(s) (the least held; every one of them on a tie) rather
    than none: on the benchmark text (6.4 MB, cap 200) two groups in three are such, and
    leaving them without candidates kept 12,232 more nodes apart where the rarest key keeps
    3,528 (benchmarks/HISTORY.md). Such a key still finds no more than
    ``cap`` groups: :func:`_fuzzy_clusters` files only the first ``cap`` under it (the
    most mentioned first), so no name costs more than ``cap`` per key and the stage is
    linear in the number of names. ``cap`` None keeps every key.

    The default, :data:`BLOCK_CAP` (200), is ten times the largest block of any document
    of the shared gold sets (18 names), so none of them merges otherwise than with every
    key; on the benchmark's generated text (benchmarks/offline_speed.py: every name a
    distinct entity, near names differing in the first letters of their one distinctive
    word) it keeps apart pairs that share only "... Holdings" or "...ville", and the whole
    run stays linear to 6.4 MB where without it the merge grew 2.7-3.3x a doubling
    (benchmarks/HISTORY.md, 2026-11-30).
    """
    held = Counter(k for g in order for k in g.blocks) if cap is not None else Counter()
    return {id(g): _usable(g.blocks, held, cap) for g in order}, held


def _usable(blocks: frozenset[str], held: Counter, cap: int | None) -> frozenset[str]:
    """The keys of ``blocks`` that ``held`` (key -> groups holding it) leaves under ``cap``;
    the least held ones if none is (see :func:`_usable_blocks`); all of them if ``cap`` is None."""
    if cap is None:
        return blocks
    kept = frozenset(k for k in blocks if held[k] <= cap)
    if kept:
        return kept
    fewest = min(held[k] for k in blocks)
    return frozenset(k for k in blocks if held[k] == fewest)


def _fuzzy_clusters(groups: list[_Group], threshold: float, blocking: bool,
                    cap: int | None = None) -> list[list[_Group]]:
    """Complete-link clusters of one type's groups, in a content-derived order.

    Each group joins the candidate cluster whose *weakest* similarity to it is highest,
    if that reaches the threshold. Candidates are the clusters filed under a usable
    blocking key of it (:func:`_usable_blocks`: keys held by more than ``cap`` groups are
    purged, and one a group must keep files no more than ``cap`` clusters) whose first
    member it reaches (a cluster that fails there fails complete link anyway); they are
    then checked member by member. The first members that reach it come from
    :meth:`~kgkit.text.ratio_index.RatioIndex.matches`: a q-gram filter, then rapidfuzz on
    what passes. Without a cap the stage stays quadratic on names that share a common key
    (the ratio_index docstring says why no sharper exact filter was found).
    """
    order = sorted(groups, key=lambda g: (-len(g.mentions), g.key))
    if threshold > 100:  # fuzzy merging switched off
        return [[g] for g in order]
    everything = frozenset({""})  # the one key when not blocking
    if blocking:
        usable, held = _usable_blocks(order, cap)
    else:
        usable, held, cap = {id(g): everything for g in order}, Counter(), None
    filed: Counter = Counter()  # clusters filed so far under each key over the cap

    def fileable(keys: frozenset[str]) -> frozenset[str]:
        if cap is None or all(held[k] <= cap for k in keys):
            return keys
        keys = frozenset(k for k in keys if held[k] <= cap or filed[k] < cap)
        filed.update(k for k in keys if held[k] > cap)
        return keys

    clusters: list[list[_Group]] = []
    blocks: list[frozenset[str]] = []  # the keys each cluster is filed under (its members')
    reachable = RatioIndex((g.sorted_form for g in order), threshold)
    for g in order:
        keys = usable[id(g)]
        best, best_score = None, 0.0
        for c, _ in reachable.matches(g.sorted_form, keys):
            worst = min(_score(g, member, threshold) for member in clusters[c])
            if worst and worst > best_score:
                best, best_score = c, worst
        if best is None:
            clusters.append([g])
            blocks.append(fileable(keys))
            reachable.add(g.sorted_form, len(clusters) - 1, blocks[-1])
        else:
            clusters[best].append(g)
            if not keys <= blocks[best]:
                more = fileable(keys - blocks[best])
                reachable.add_keys(best, more)
                blocks[best] |= more
    return clusters


def key_blocks(key: str) -> frozenset[str]:
    """The blocking keys of a canonical key (token prefixes and suffixes): names that share
    none are never compared. Public so the corpus graph (:mod:`kgkit.graph`) blocks alike."""
    group = _Group(type="", key=key)
    _prepare(group)
    return group.blocks


def key_similarity(a: str, b: str, threshold: float) -> float:
    """Token-sort similarity of two canonical keys as the fuzzy stage scores it; 0 when it
    cannot reach ``threshold`` or their numbers or one-letter labels conflict."""
    ga, gb = _Group(type="", key=a), _Group(type="", key=b)
    _prepare(ga)
    _prepare(gb)
    return _score(ga, gb, threshold)


def similar_keys(key: str, others: list[str], threshold: float, *, forms: list[str] | None = None) -> list[int]:
    """Indices of the ``others`` the fuzzy stage could join with ``key``: one vectorised
    rapidfuzz screen over all of them, then the label check on the few that pass.
    ``forms``: the others' sorted token forms, if the caller keeps them."""
    if threshold > 100 or not others:
        return []
    probe = _Group(type="", key=key)
    _prepare(probe)
    if forms is None:
        forms = [" ".join(sorted(k.split())) for k in others]
    hits = process.extract(probe.sorted_form, forms, scorer=fuzz.ratio, score_cutoff=threshold, limit=None)
    found = []
    for _, _, i in hits:
        other = _Group(type="", key=others[i])
        _prepare(other)
        if _score(probe, other, threshold):
            found.append(i)
    return sorted(found)


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)
