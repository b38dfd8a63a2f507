"""Checks of a domain's named queries (``queries:``; kgkit/query/named.py runs them): the
pattern parses, every ``$name`` is a declared parameter and every parameter is used, and the
pattern's types and relations are the domain's, each reported at its place in the file."""
from __future__ import annotations

from typing import Any, Iterator

from kgkit.errors import Issue, did_you_mean
from kgkit.formats.query_pattern import PatternError, parse


def _list(data: Any, key: str) -> list:
    """``data[key]`` when it is a list (a file that failed its schema may hold anything)."""
    value = data.get(key) if isinstance(data, dict) else None
    return value if isinstance(value, list) else []


def issues(src, merged: dict[str, Any]) -> Iterator[Issue]:
    """Semantic checks of a domain's ``queries``, on whatever shape the file has."""
    entity_types = [t["name"] for t in _list(merged, "entity_types") if isinstance(t, dict) and "name" in t]
    relations: list[Any] = [r.get("name") for key in ("relation_types", "nary_relation_types", "event_types")
                 for r in _list(merged, key) if isinstance(r, dict)]
    relations += [a for r in _list(merged, "relation_types") if isinstance(r, dict) for a in _list(r, "aliases")]
    seen: set[str] = set()
    for i, q in enumerate(_list(src.data, "queries")):
        if not isinstance(q, dict) or not isinstance(q.get("pattern"), str):
            continue
        if isinstance(q.get("name"), str) and q["name"] in seen:
            yield src.issue(("queries", i, "name"), f"duplicate named query {q['name']!r}")
        if isinstance(q.get("name"), str):
            seen.add(q["name"])
        try:
            pattern = parse(q["pattern"])
        except PatternError as exc:
            yield src.issue(("queries", i, "pattern"), exc.message)
            continue
        declared = [p["name"] for p in _list(q, "params") if isinstance(p, dict) and isinstance(p.get("name"), str)]
        for name in sorted(pattern.params() - set(declared)):
            yield src.issue(("queries", i, "pattern"), f"parameter ${name} is not declared in params",
                            did_you_mean(name, declared))
        for j, name in enumerate(declared):
            if name not in pattern.params():
                yield src.issue(("queries", i, "params", j, "name"), f"parameter {name!r} is not used in the pattern")
        for node in pattern.nodes:
            if node.type and node.type not in entity_types:
                yield src.issue(("queries", i, "pattern"), f"column {node.column}: unknown entity type {node.type!r}",
                                did_you_mean(node.type, entity_types))
        for edge in pattern.edges:
            for rel in edge.relations:
                if rel not in relations:
                    yield src.issue(("queries", i, "pattern"), f"column {edge.column}: unknown relation {rel!r}",
                                    did_you_mean(rel, relations))
        if pattern.relation and pattern.relation not in relations:
            yield src.issue(("queries", i, "pattern"), f"unknown relation {pattern.relation!r}",
                            did_you_mean(pattern.relation, relations))
        select = q.get("select", 0)
        if q.get("returns") == "nodes" and isinstance(select, int) and select >= len(pattern.nodes):
            yield src.issue(("queries", i, "select"), f"select {q.get('select')} is past the pattern's "
                                                      f"{len(pattern.nodes)} nodes")
