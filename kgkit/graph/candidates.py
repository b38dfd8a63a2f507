"""Which key groups could fuzzy-merge with a name: canon's blocking, kept in memory.

Finding a name's fuzzy candidates means reading every group that shares a blocking key
with it (kgkit.canon.key_blocks: token prefixes and suffixes), and in a large corpus a
block such as "<hol" (Holdings, Holland, ...) holds thousands. Read from the database
for every update, those rows made adding a document cost time in proportion to the
corpus. So a store keeps the blocks it has read in memory, each sorted by key length (a
fuzzy ratio >= t bounds the length ratio, so only a window is screened), with the sorted
token forms rapidfuzz compares, and keeps them current with its own updates.

The cache is only trusted while nobody else writes: it remembers the tenant's graph
version it reflects, and a writer that finds another version (another process wrote in
between) or rolls back starts afresh from the database.
"""
from __future__ import annotations

from bisect import bisect_left, bisect_right, insort
from typing import Callable

from kgkit.canon import key_blocks, similar_keys


class _Block:
    __slots__ = ("entries",)

    def __init__(self, rows: list[tuple[str, str]]):
        self.entries = sorted((len(key), node, key, " ".join(sorted(key.split()))) for node, key in rows)

    def window(self, lo: float, hi: float) -> list[tuple[int, str, str, str]]:
        start = bisect_left(self.entries, (lo,))
        end = bisect_right(self.entries, (hi, "\uffff"))
        return self.entries[start:end]


class BlockIndex:
    """canon's blocking keys of one tenant's groups; ``load(block)`` reads a block's
    ``(node, key)`` rows from the store the first time it is needed."""

    def __init__(self, load: Callable[[str], list[tuple[str, str]]]):
        self._load = load
        self._blocks: dict[str, _Block] = {}
        self.version: int | None = None  # the graph version the cache reflects

    @staticmethod
    def blocks_of(etype: str, key: str) -> list[str]:
        return sorted(etype + "\x1f" + b for b in key_blocks(key))

    def reset(self, version: int | None) -> None:
        self._blocks.clear()
        self.version = version

    def _block(self, block: str) -> _Block:
        if block not in self._blocks:
            self._blocks[block] = _Block(self._load(block))
        return self._blocks[block]

    def add(self, node: str, etype: str, key: str) -> None:
        entry = (len(key), node, key, " ".join(sorted(key.split())))
        for b in self.blocks_of(etype, key):
            if b in self._blocks:  # an unread block gets it from the store when read
                insort(self._blocks[b].entries, entry)

    def remove(self, node: str, etype: str, key: str) -> None:
        entry = (len(key), node, key, " ".join(sorted(key.split())))
        for b in self.blocks_of(etype, key):
            if b in self._blocks:
                entries = self._blocks[b].entries
                i = bisect_left(entries, entry)
                if i < len(entries) and entries[i] == entry:
                    del entries[i]

    def similar(self, etype: str, key: str, threshold: float) -> list[str]:
        """Nodes of groups (of ``etype``) the fuzzy stage could join with ``key``."""
        if threshold > 100:
            return []
        t = max(threshold, 1e-6)
        lo, hi = len(key) * t / (200 - t) - 1e-6, len(key) * (200 - t) / t + 1e-6
        near: dict[str, tuple[str, str]] = {}
        for b in self.blocks_of(etype, key):
            for _, node, other, form in self._block(b).window(lo, hi):
                near[node] = (other, form)
        nodes = sorted(near)
        hits = similar_keys(key, [near[n][0] for n in nodes], threshold, forms=[near[n][1] for n in nodes])
        return [nodes[i] for i in hits]
