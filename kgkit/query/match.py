"""O3 match: every binding of a pattern (kgkit/formats/query_pattern.py) in the graph.

A chain is matched from its most selective place: a node with a ``name`` or ``id`` (read
from the name index), else an edge with named relations (read from the relation index),
else the first node's type; then extended one edge at a time to both sides over the
indexed fillers. A role pattern reads the hyperedges and events of its relation. Temporal
conditions are checked on the items' normalised intervals (kgkit/graph/index.py).
"""
from __future__ import annotations

import itertools
from typing import Any, cast

from kgkit.text import timex
from kgkit.errors import InputError
from kgkit.graph.index import _rows, interval
from kgkit.text.name_keys import canonical_key
from kgkit.formats.query_pattern import DOCUMENT, Condition, NodeSpec, Pattern
from kgkit.query.reader import Reader, Stored
from kgkit.query.results import Answer, Row

BINARY = ("edge", "temporal")


def value_interval(value: str, column: int = 0) -> tuple[str, str]:
    """A condition's value as (lo, hi): a time value, or ``A..B``."""
    if ".." in value:
        a, b = value.split("..", 1)
        return value_interval(a, column)[0], value_interval(b, column)[1]
    span = interval(value) or interval(timex.normalise("date", value) or "")
    if span is None:
        raise InputError(f"pattern column {column}: {value!r} is not a date or time value",
                         hint="write it as ISO 8601: 2019, 2019-06, 2019-06-30, or A..B")
    return span


def holds(cond: Condition, lo: str | None, hi: str | None) -> bool:
    if lo is None or hi is None:
        return False
    vlo, vhi = value_interval(cond.value, cond.column)
    if cond.op == "after":  # some of the interval lies after the value (a day, a year, ...)
        return hi > vhi
    if cond.op == "before":
        return lo < vlo
    return lo < vhi and hi > vlo


class Matcher:
    def __init__(self, reader: Reader, pattern: Pattern, min_confidence: float | None):
        self.r = reader
        self.p = pattern
        self.min_confidence = min_confidence
        self._named: dict[int, set[str] | None] = {}

    # ------------------------------------------------------------ nodes
    def named(self, i: int) -> set[str] | None:
        """Entities a node's ``name``/``id`` allow (None: no such property)."""
        if i not in self._named:
            spec = self.p.nodes[i]
            allowed = None
            if spec.prop("name") is not None:
                key = canonical_key(spec.prop("name"), legal_suffixes=self.r.store.legal_suffixes)
                allowed = {e for (e,) in self.r.store._q("SELECT entity FROM qx_names WHERE tenant = ? AND key = ?", key)}
            if (ref := spec.prop("id")) is not None:
                one = self.r.resolve(ref)
                allowed = ({one} if one else set()) if allowed is None else allowed & {one}
            self._named[i] = allowed
        return self._named[i]

    def ok(self, i: int, entity: str) -> bool:
        spec: NodeSpec = self.p.nodes[i]
        named = self.named(i)
        if named is not None and entity not in named:
            return False
        info = self.r.entities([entity]).get(entity)
        if info is None or (spec.type and info["type"] != spec.type):
            return False
        if (within := spec.prop("in")) is not None:
            span = interval(timex.normalise("date", info["name"]) or "")
            lo, hi = value_interval(within, spec.column)
            return span is not None and span[0] >= lo and span[1] <= hi
        return True

    def seeds(self, i: int) -> set[str]:
        named = self.named(i)
        if named is None:
            spec = self.p.nodes[i]
            sql = "SELECT entity FROM qx_entities WHERE tenant = ?" + (" AND type = ?" if spec.type else "")
            named = {e for (e,) in self.r.store._q(sql, *([spec.type] if spec.type else []))}
        return {e for e in named if self.ok(i, e)}

    # ------------------------------------------------------------ items
    def by_relation(self, relations: tuple[str, ...], kinds: tuple[str, ...]) -> list[Stored]:
        keys = {(d, v, i) for d, v, i, k in _rows(self.r.store, "SELECT doc, view, item, kind FROM qx_items "
                                                                "WHERE tenant = ? AND visible = 1 AND relation IN ({})",
                                                  relations) if k in kinds}
        return self.r.items(keys, min_confidence=self.min_confidence)

    def ends(self, s: Stored, forward: bool) -> tuple[str, str]:
        f = dict(s.fillers)
        return (f["head"], f["tail"]) if forward else (f["tail"], f["head"])

    def across(self, j: int, frontier: set[str], rightward: bool) -> dict[str, list[tuple[str, Stored]]]:
        """Over edge ``j``: frontier node -> (node on the other side, item)."""
        edge = self.p.edges[j]
        out: dict[str, list[tuple[str, Stored]]] = {}
        for s in self.r.incident(frontier, relations=edge.relations or None, min_confidence=self.min_confidence):
            if s.kind not in BINARY:
                continue
            left, right = self.ends(s, edge.forward)
            near, far, far_pos = (left, right, j + 1) if rightward else (right, left, j)
            if near in frontier and self.ok(far_pos, far):
                out.setdefault(near, []).append((far, s))
        return out

    # ------------------------------------------------------------ chains
    def chain(self) -> list[tuple[tuple[str, ...], tuple[Stored, ...]]]:
        n = len(self.p.nodes)
        start = next((i for i in range(n) if self.named(i) is not None), None)
        rows: list[tuple[list, list]]
        if start is None and self.p.edges and any(e.relations for e in self.p.edges):
            j = next(j for j, e in enumerate(self.p.edges) if e.relations)
            rows = []
            for s in self.by_relation(self.p.edges[j].relations, BINARY):
                left, right = self.ends(s, self.p.edges[j].forward)
                if self.ok(j, left) and self.ok(j + 1, right):
                    rows.append(([None] * j + [left, right] + [None] * (n - j - 2), [None] * j + [s] + [None] * (n - j - 2)))
            lo, hi = j, j + 1
        else:
            start = start or 0
            rows = [([None] * start + [e] + [None] * (n - start - 1), [None] * (n - 1)) for e in sorted(self.seeds(start))]
            lo = hi = start
        while hi < n - 1 and rows and not self.r.budget.spent():
            hood = self.across(hi, {r[0][hi] for r in rows}, rightward=True)
            rows = [(r[0][:hi + 1] + [far] + r[0][hi + 2:], r[1][:hi] + [s] + r[1][hi + 1:])
                    for r in rows for far, s in hood.get(r[0][hi], [])]
            hi += 1
        while lo > 0 and rows and not self.r.budget.spent():
            hood = self.across(lo - 1, {r[0][lo] for r in rows}, rightward=False)
            rows = [(r[0][:lo - 1] + [far] + r[0][lo:], r[1][:lo - 1] + [s] + r[1][lo:])
                    for r in rows for far, s in hood.get(r[0][lo], [])]
            lo -= 1
        return [(tuple(nodes), tuple(items)) for nodes, items in rows]

    def roles(self) -> list[tuple[tuple[str, ...], tuple[Stored, ...]]]:
        out: list[tuple[tuple[str, ...], tuple[Stored, ...]]] = []
        # called only for a pattern that names its relation (match() below)
        for s in self.by_relation((cast(str, self.p.relation),), ("hyperedge", "event")):
            by_role: dict[str, list[str]] = {}
            for role, entity in s.fillers:
                by_role.setdefault(role, []).append(entity)
            choices = [[e for e in by_role.get(role, []) if self.ok(i, e)] for i, role in enumerate(self.p.roles)]
            for combo in itertools.product(*choices):
                out.append((combo, (s,)))
        return out


def _times(reader: Reader, stored: list[Stored]) -> dict[tuple, dict[str, tuple[str | None, str | None]]]:
    found: dict[tuple, dict[str, tuple]] = {}
    for d, v, i, name, lo, hi in _rows(reader.store, "SELECT doc, view, item, name, lo, hi FROM qx_times "
                                                      "WHERE tenant = ? AND (doc, view, item) IN ({})",
                                       {s.key for s in stored}, 3):
        found.setdefault((d, v, i), {})[name] = (lo, hi)
    return found


def _when(conds: list[Condition], spans: dict[str, tuple]) -> bool:
    """Every condition holds on this item's intervals."""
    for c in conds:
        if c.qualifier is not None:
            lo, hi = spans.get(c.qualifier, (None, None))
        else:
            los = [s[0] for s in spans.values() if s[0]]
            his = [s[1] for s in spans.values() if s[1]]
            lo, hi = (min(los), max(his)) if los and his else (None, None)
        if not holds(c, lo, hi):
            return False
    return True


def match(reader: Reader, pattern: Pattern, *, limit: int, min_confidence: float | None = None,
          query: dict[str, Any] | None = None) -> Answer:
    answer = Answer("match", reader.tenant, reader.version, query or {"pattern": pattern.text},
                    limits={"limit": limit, "min_confidence": min_confidence})
    _check_vocabulary(reader, pattern)
    timed = [c for c in pattern.where if c.op != DOCUMENT]
    for c in timed:
        value_interval(c.value, c.column)
    m = Matcher(reader, pattern, min_confidence)
    found = m.roles() if pattern.relation else m.chain()
    for c in pattern.where:
        if c.op == DOCUMENT:
            names = {d for d, i in reader.doc_ids().items() if c.value in (d, i)}
            found = [(nodes, items) for nodes, items in found if all(s.doc in names for s in items if s)]
    if timed:
        spans = _times(reader, [s for _, items in found for s in items if s])
        found = [(nodes, items) for nodes, items in found
                 if any(_when(timed, spans.get(s.key, {})) for s in items if s)]
    ids: dict[tuple, str] = {}
    lifted = {i.id: i for i in reader.lift({s.key: s for _, items in found for s in items if s}.values(), ids)}
    doc_id = reader.doc_ids({s.doc for _, items in found for s in items if s})
    rows: dict[tuple, Row] = {}
    for nodes, items in found:
        key = (nodes, tuple(ids[s.key] for s in items if s))
        row = rows.setdefault(key, Row(list(nodes), list(key[1]), []))
        stating = {s.doc for s in items if s}
        if len(stating) == 1 and doc_id.get(next(iter(stating))) not in row.documents:
            row.documents.append(doc_id[next(iter(stating))])  # one document states the whole match
    ordered = [rows[k] for k in sorted(rows)]
    for row in ordered:
        row.documents.sort()
    answer.cut("limit", len(ordered) - limit)
    answer.rows = ordered[:limit]
    answer.partial = reader.budget.ran_out
    used_nodes = sorted({n for row in answer.rows for n in row.nodes})
    used_items = {i for row in answer.rows for i in row.items}
    reader.entities(used_nodes, documents=True)  # in one read
    answer.nodes = [reader.node(n) for n in used_nodes]
    answer.items = [lifted[i] for i in sorted(used_items)]
    return answer


def _check_vocabulary(reader: Reader, pattern: Pattern) -> None:
    """Types and relations the graph does not have are typos more often than questions."""
    types, relations = reader.types(), reader.relations()
    for n in pattern.nodes:
        if n.type:
            reader.check("type", [n.type], types, n.column)
    for e in pattern.edges:
        reader.check("relation", e.relations, relations, e.column)
    if pattern.relation:
        reader.check("relation", [pattern.relation], relations, 1)
