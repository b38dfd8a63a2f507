"""Which key groups could fuzzy-merge with a name: canon's blocking, kept in memory.

Finding a name's fuzzy candidates means reading every group that shares a blocking key
with it (kgkit.canon.fuzzy.key_blocks: token prefixes and suffixes), and in a large corpus a
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

from bisect import bisect_left, bisect_right
from typing import Callable

from kgkit.canon.fuzzy import key_blocks, similar_keys


class _Block:
    """One block's groups as parallel lists sorted by key length, so a length window is
    a slice (no Python loop over the block)."""

    __slots__ = ("lengths", "nodes", "keys", "forms")

    def __init__(self, rows: list[tuple[str, str]]):
        entries = sorted((len(key), node, key) for node, key in rows)
        self.lengths = [e[0] for e in entries]
        self.nodes = [e[1] for e in entries]
        self.keys = [e[2] for e in entries]
        self.forms = [" ".join(sorted(k.split())) for k in self.keys]

    def insert(self, node: str, key: str) -> None:
        i = bisect_left(self.lengths, len(key))
        if node in self.nodes[i:bisect_right(self.lengths, len(key))]:
            return
        self.lengths.insert(i, len(key))
        self.nodes.insert(i, node)
        self.keys.insert(i, key)
        self.forms.insert(i, " ".join(sorted(key.split())))

    def delete(self, node: str, key: str) -> None:
        lo, hi = bisect_left(self.lengths, len(key)), bisect_right(self.lengths, len(key))
        for i in range(lo, hi):
            if self.nodes[i] == node:
                for column in (self.lengths, self.nodes, self.keys, self.forms):
                    del column[i]
                return

    def window(self, lo: float, hi: float) -> slice:
        return slice(bisect_left(self.lengths, lo), bisect_right(self.lengths, hi))


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
        for b in self.blocks_of(etype, key):
            if b in self._blocks:  # an unread block gets it from the store when read
                self._blocks[b].insert(node, key)

    def remove(self, node: str, etype: str, key: str) -> None:
        for b in self.blocks_of(etype, key):
            if b in self._blocks:
                self._blocks[b].delete(node, key)

    def similar(self, etype: str, key: str, threshold: float) -> list[str]:
        """Nodes of groups (of ``etype``) the fuzzy stage could join with ``key``."""
        if threshold > 100:
            return []
        t = max(threshold, 1e-6)
        lo, hi = len(key) * t / (200 - t) - 1e-6, len(key) * (200 - t) / t + 1e-6
        nodes: list[str] = []
        keys: list[str] = []
        forms: list[str] = []
        for b in self.blocks_of(etype, key):  # a group in several blocks is screened more than once: cheap
            block = self._block(b)
            part = block.window(lo, hi)
            nodes += block.nodes[part]
            keys += block.keys[part]
            forms += block.forms[part]
        return sorted({nodes[i] for i in similar_keys(key, keys, threshold, forms=forms)})
