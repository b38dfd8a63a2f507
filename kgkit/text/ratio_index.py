"""Which stored strings can reach a ``fuzz.ratio`` threshold with a probe: a q-gram prefix filter.

Why: the fuzzy merge (:mod:`kgkit.canon.merge`) and name resolution compare a name with every
other name of its type that shares a blocking key, and in a long text thousands of names
share one ("...ville", "... Holdings", a common first name), so the merge grew with the
square of the document. This index hands back a small *superset* of the strings whose
ratio with the probe can reach the threshold; the caller still scores every candidate, so
what merges is exactly what an exhaustive comparison would merge. (Which keys a name is
filed and looked up under is the caller's choice: canon's block purging, ``block_cap``,
leaves out the keys too many names share, and only then does the merge compare fewer
pairs than blocking alone.)

**The count bound.** ``fuzz.ratio(a, b) = 100 * (1 - d / S)`` with ``S = |a| + |b|`` and
``d`` the insert/delete (Indel) distance, and ``d = S - 2L`` where ``L`` is the length of a
longest common subsequence ``s``. So ratio >= t exactly when ``L >= t * S / 200``. Take the
``L - q + 1`` q-grams of ``s`` (substrings of length q). Wherever two consecutive characters of
``s`` are not adjacent in ``a`` (characters of ``a`` were deleted between them) or not
adjacent in ``b`` (characters were inserted), only the ``q - 1`` q-grams of ``s`` that span
that boundary can be broken; every other q-gram of ``s`` is a substring of ``a`` and of
``b``, at distinct positions. Such boundaries number at most ``d`` (each is next to at
least one deleted or inserted character, and each such run of characters makes one). So
``a`` and ``b`` share, counting repeats (a multiset), at least

    tau = (L - q + 1) - (q - 1) * d = (2q - 1) * L - (q - 1) * (S + 1)

q-grams, which grows with ``L``; at the least ``L`` the threshold allows,
``ceil(t * S / 200)``, it is a bound that holds for every pair of these lengths that
reaches ``t``. Where it is <= 0 (short strings) it rules nothing out and every such pair
stays a candidate.

**The prefix filter.** Number repeated q-grams (the second "ll" of a string is a different
element from the first), so the multiset becomes a set, and order all elements by how many
of the indexed strings hold them, rarest first (ties by text; an element no indexed string
holds comes first). If ``X`` and ``Y`` share at least ``tau >= 1`` elements, let ``z`` be
the first shared one in that order: at least ``tau - 1`` shared elements follow it in
``X``, so ``z`` is among the first ``|X| - tau + 1`` elements of ``X``, and likewise of
``Y``. Indexing each stored string under its first ``|Y| - tau_min + 1`` elements and
probing with the first ``|X| - tau_min + 1`` of the probe's, where ``tau_min`` is the least
bound over every length the other side could have, finds every pair that shares ``tau``;
a longer prefix than necessary only finds more. The rare elements come first, so the
posting lists probed are the shorter ones, and the common ones ("ll", "le" of "...ville")
are never probed at all. How sharp that is depends on the names: on names built from two
dozen syllables (benchmarks/offline_speed.py, 3.2 MB) ~350-1,000 strings come back per
probe (Person, Organization) against ~1,500 sharing a blocking key, while only 0.04-0.3 a
probe reach 90: the filter narrows the quadratic work but does not remove it. Sharper
exact filters were measured on the same probes (benchmarks/HISTORY.md, 2026-11-30
H28): a per-length-pair bound with length-partitioned postings, trigrams, two or three
shared prefix q-grams instead of one, and PassJoin's pigeonhole segments (with and without
picking each string's rarest segments) return 150-1,000 a probe too, and all but the
plainest cost more lookups than they save. The reason is the names, not the filters:
at 90 two names of 15-22 characters may differ by 2-4 edits, so every exact piece a
pigeonhole can promise is 2-5 characters long, and in a name space of a few dozen
syllables any such piece is shared by hundreds of names. Only whole-string signatures
(deletion neighbourhoods: up to C(22, 4) variants a name) are output-sensitive there.
:meth:`RatioIndex.matches` therefore scores the candidates in one rapidfuzz call (~35 ns
a candidate in C) rather than filtering them further in Python.

tests/text/test_ratio_index.py checks both, and :meth:`RatioIndex.matches`, against brute force
on random strings (short ones and repeats included) and on syllable-built names.
"""
from __future__ import annotations

import math
from collections import Counter, defaultdict
from itertools import chain
from operator import itemgetter
from typing import Iterable

from rapidfuzz import fuzz, process


def could_reach(la: int, lb: int, threshold: float) -> bool:
    """Whether two strings of these lengths can have ``fuzz.ratio`` >= ``threshold``.

    The ratio is 100 * (1 - d / (la + lb)) with d the insert/delete distance, and d is at
    least ``|la - lb|``: so it is at most 200 * min / (la + lb). A small slack keeps every
    pair the float comparison could pass; the screen itself still decides."""
    return la + lb == 0 or 200.0 * min(la, lb) / (la + lb) >= threshold - 1e-6


def shared_qgrams_bound(la: int, lb: int, threshold: float, q: int) -> int:
    """The least number of q-grams (a multiset) two strings of lengths ``la`` and ``lb``
    share when their ``fuzz.ratio`` reaches ``threshold`` (see the module docstring); <= 0
    when the lengths alone guarantee nothing. The slack of 1e-6 matches :func:`could_reach`."""
    s = la + lb
    lcs = max(0, math.ceil(threshold * s / 200.0 - 1e-6))
    return (2 * q - 1) * lcs - (q - 1) * (s + 1)


def qgram_elements(form: str, q: int) -> list[str]:
    """The q-grams of ``form``, a repeated one numbered ("ll", "ll\x001") so they form a set."""
    grams = [form[i:i + q] for i in range(len(form) - q + 1)]
    if len(set(grams)) == len(grams):
        return grams
    seen: dict[str, int] = {}
    out = []
    for gram in grams:
        k = seen.get(gram, 0)
        seen[gram] = k + 1
        out.append(gram if not k else f"{gram}\x00{k}")
    return out


def pick(items, ids: list[int]) -> list:
    """``[items[i] for i in ids]``, gathered in C (``items``: a list or a dict)."""
    return list(itemgetter(*ids)(items)) if len(ids) > 1 else [items[i] for i in ids]


class RatioIndex:
    """Stored strings, each an integer item found under blocking keys, and the items that
    share a key with a probe and whose string may reach ``threshold`` with it: every such
    item whose ``fuzz.ratio`` with the probe is >= ``threshold`` is among
    :meth:`candidates` (a superset; score them to decide). A caller that does not block
    passes one key for everything.

    ``vocabulary``: strings whose q-grams set the rarest-first order, normally every string
    that will be added. Strings added later may hold other q-grams: the filter stays
    exact, only less sharp.

    Postings are kept per (key, q-gram), so a probe gathers its candidates with a few set
    unions and no per-candidate work in Python; a candidate whose length cannot reach is
    left to the scorer, which rules it out on the lengths before comparing.
    """

    def __init__(self, vocabulary: Iterable[str], threshold: float, q: int = 2):
        self.threshold, self.q = threshold, q
        self._elements = {form: qgram_elements(form, q) for form in vocabulary}
        counts = Counter(chain.from_iterable(self._elements.values()))
        self._rank = {e: i + 1 for i, e in enumerate(sorted(counts, key=lambda e: (counts[e], e)))}
        # (key, q-gram) -> items; (key, length) -> items of that length, for the lengths
        # where the bound is <= 0 and so every pair is a candidate (-1: every item, when
        # the threshold is <= 0 and every string reaches every other)
        self._postings: dict[tuple[str, str | int], set[int]] = defaultdict(set)
        self._items: dict[int, tuple[int, list[str]]] = {}  # item -> (length, prefix)
        self._forms: dict[int, str] = {}  # item -> its string
        self._plans: dict[int, tuple[int, list[int]]] = {}
        self._prefixes: dict[str, list[str]] = {}  # form -> the q-grams it is indexed or probed by

    def _plan(self, length: int) -> tuple[int, list[int]]:
        """For a string of ``length``: how many of its rarest q-grams to index or probe (the
        least count bound over every length it can reach, see the module docstring), and
        the reachable lengths where the bound is <= 0."""
        if length not in self._plans:
            t = self.threshold
            reach = [m for m in range(int(length * (200.0 - t) / t) + 3) if could_reach(length, m, t)]
            bounds = {m: shared_qgrams_bound(length, m, t, self.q) for m in reach}
            grams = max(0, length - self.q + 1)
            least = min(bounds.values(), default=grams + 1)  # no reachable length: probe nothing
            self._plans[length] = (max(0, grams - least + 1), [m for m in reach if bounds[m] <= 0])
        return self._plans[length]

    def _prefix(self, form: str) -> list[str]:
        if form not in self._prefixes:
            elements = self._elements.get(form) or qgram_elements(form, self.q)
            try:  # every q-gram known (ranks are distinct): sorted in C
                ordered = sorted(elements, key=self._rank.__getitem__)
            except KeyError:  # unknown ones first, by text: still one total order
                ordered = sorted(elements, key=lambda e: (self._rank.get(e, 0), e))
            self._prefixes[form] = ordered[:self._plan(len(form))[0]]
        return self._prefixes[form]

    def add(self, form: str, item: int, keys: Iterable[str]) -> None:
        """Store ``form`` as ``item`` (an item is added once), found under ``keys``."""
        self._items[item] = (len(form), self._prefix(form) if self.threshold > 0 else [])
        self._forms[item] = form
        self.add_keys(item, keys)

    def add_keys(self, item: int, keys: Iterable[str]) -> None:
        """Make a stored item found under more ``keys`` too."""
        length, prefix = self._items[item]
        postings = self._postings
        for key in keys:
            postings[(key, length if self.threshold > 0 else -1)].add(item)
            for e in prefix:
                postings[(key, e)].add(item)

    def candidates(self, form: str, keys: Iterable[str]) -> set[int]:
        """Every item under one of ``keys`` whose string may reach the threshold with
        ``form`` (and few others)."""
        get, empty = self._postings.get, ()
        if self.threshold <= 0:  # every string reaches every other
            return set().union(*[get((key, -1), empty) for key in keys])
        probes = self._prefix(form) + self._plan(len(form))[1]
        return set().union(*[get((key, e), empty) for key in keys for e in probes])

    def matches(self, form: str, keys: Iterable[str]) -> list[tuple[int, float]]:
        """``(item, fuzz.ratio)`` of every item under one of ``keys`` whose string reaches
        the threshold with ``form``, by item: :meth:`candidates` scored in one rapidfuzz
        call (C), so the filter's false positives cost no Python work each."""
        ids = list(self.candidates(form, keys))
        if not ids:
            return []
        hits = process.extract(form, pick(self._forms, ids), scorer=fuzz.ratio, score_cutoff=self.threshold,
                               limit=None)
        return sorted((ids[i], score) for _, score, i in hits)
