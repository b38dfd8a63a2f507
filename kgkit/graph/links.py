"""The fuzzy candidate pairs a store keeps, and the neighbourhoods an update reads from them.

A pair of key groups that canon's blocking and score could join (kgkit.graph.candidates)
is found once, when the later of the two groups is created, and kept in ``links`` both
ways (a key never changes, so neither does the pair). Re-solving a group then needs only
its neighbourhood -- a few indexed reads -- instead of screening large blocks again.

:class:`Neighbourhood` reads them for one update: the raw pairs (:meth:`ball`, what an
update may have changed) and the fuzzy neighbours proper (:meth:`near`: live groups that
are no alias target and no unmerge keeps apart), each node read once, level by level.
"""
from __future__ import annotations

from typing import Callable, Iterable

#: Rows per ``IN (...)`` list: under SQLite's and PostgreSQL's bound-parameter limits.
CHUNK = 500


class Neighbourhood:
    """One update's reads of the links. ``q(sql, *params)`` runs a tenant-scoped query
    (the tenant is the first ``?``); ``IN ({})`` lists are filled in here."""

    def __init__(self, q: Callable[..., list[tuple]]):
        self._q = q
        self._raw: dict[str, set[str]] = {}
        self._near: dict[str, frozenset[str]] = {}
        self.groups: dict[str, tuple[str, str, int]] = {}  # node -> (type, key, refs); absent: no such group
        self._target: dict[str, bool] = {}
        self._apart: dict[str, set[str]] = {}

    def rows(self, sql: str, nodes: Iterable[str]) -> list[tuple]:
        """``sql`` with its ``IN ({})`` list filled with ``nodes``, in chunks."""
        nodes = sorted(set(nodes))
        rows: list[tuple] = []
        for i in range(0, len(nodes), CHUNK):
            part = nodes[i:i + CHUNK]
            rows += self._q(sql.format(",".join("?" * len(part))), *part)
        return rows

    def _read_links(self, nodes: Iterable[str]) -> None:
        todo = [n for n in nodes if n not in self._raw]
        for n in todo:
            self._raw[n] = set()
        for a, b in self.rows("SELECT a, b FROM links WHERE tenant = ? AND a IN ({})", todo):
            self._raw[a].add(b)

    def read_groups(self, nodes: Iterable[str]) -> None:
        """Type, key and references of ``nodes``, and whether each is an alias target."""
        todo = sorted({n for n in nodes if n not in self._target})
        if not todo:
            return
        for node, etype, key, refs in self.rows("SELECT node, type, key, refs FROM groups "
                                                 "WHERE tenant = ? AND node IN ({})", todo):
            self.groups[node] = (etype, key, refs)
        keys = {self.groups[n][1] for n in todo if n in self.groups}
        claimed = {(t, k) for t, k in self.rows("SELECT DISTINCT type, alias_key FROM claims "
                                                 "WHERE tenant = ? AND alias_key IN ({})", keys)}
        for n in todo:
            self._target[n] = n in self.groups and self.groups[n][:2] in claimed
        for a, b in self.rows("SELECT a, b FROM apart WHERE tenant = ? AND a IN ({})", todo):
            self._apart.setdefault(a, set()).add(b)

    def order(self, node: str) -> tuple:
        """Key order (kgkit.graph.resolution.Order) of a group :meth:`read_groups` read."""
        return self.groups[node][1], node

    def linked(self, node: str) -> set[str]:
        """Every group ``node`` has a stored pair with, whatever their state."""
        self._read_links([node])
        return self._raw[node]

    def live(self, node: str) -> bool:
        """A group still named by a document and no alias target: in the fuzzy stage."""
        return node in self.groups and self.groups[node][2] > 0 and not self._target[node]

    def ball(self, seeds: Iterable[str], radius: int) -> set[str]:
        """Every group within ``radius`` raw links of ``seeds`` (dead ones and targets
        included: they link the graph before and after the update alike)."""
        found = set(seeds)
        frontier = set(found)
        for _ in range(radius):
            self._read_links(frontier)
            frontier = {b for a in frontier for b in self._raw[a]} - found
            found |= frontier
        return found

    def prime(self, nodes: Iterable[str], depth: int = 2) -> None:
        """Read what :meth:`near` needs for ``nodes`` and for groups ``depth`` links away:
        what the neighbourhood rule looks at (kgkit.graph.resolution.fuzzy_cluster)."""
        level = set(nodes)
        for _ in range(depth + 1):
            level = {n for n in level if n not in self._near}
            if not level:
                return
            self._read_links(level)
            self.read_groups(level | {b for a in level for b in self._raw[a]})
            for n in level:
                self._near[n] = frozenset(
                    b for b in self._raw[n] if self.live(n) and self.live(b) and b not in self._apart.get(n, ()))
            level = {b for a in level for b in self._near[a]}

    def near(self, node: str) -> frozenset[str]:
        """The fuzzy neighbours of ``node`` (kgkit.graph.resolution.Near)."""
        if node not in self._near:
            self.prime([node], depth=0)
        return self._near[node]
