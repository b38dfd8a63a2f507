"""The snapshot as a property graph: what GraphML and Neo4j share.

A property graph has only vertices and binary links, so the snapshot is reified:

* every entity is a vertex of kind ``entity``;
* every hyperedge and every event is a vertex too (kind ``hyperedge`` / ``event``), with
  one ``role`` link from it to each node filling a role (the role name is a property);
* binary and temporal edges stay links between their two entities (kind ``edge`` /
  ``temporal``).

Properties are flat scalars (what Gephi, yEd and Neo4j's importer accept): lists are JSON
array text, a temporal qualifier ``q`` becomes ``qualifier.q.text`` / ``.type`` /
``.value``, an event's time ``time.text`` / ``time.value``; a structured value (an amount
of money ``{"amount", "currency"}``, a range) is its JSON text, keys sorted
(:func:`scalar`). A property whose values have two types across a kind (a price that is a
number in one edge and an amount with its currency in another) is written as text in
every row of that kind, so each format can still declare one type for it. Each item also carries the
documents its evidence comes from and how many evidence rows it has. Vertices and links
come in a fixed order (kind, then id), so the same snapshot always yields the same file.
"""
from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

from kgkit.errors import InputError
from kgkit.graph.export.order import by_id
from kgkit.graph.snapshot import GraphSnapshot, Item

Scalar = str | int | float | bool


@dataclass(frozen=True)
class Vertex:
    id: str
    kind: str  # entity | hyperedge | event
    props: dict[str, Scalar]


@dataclass(frozen=True)
class Link:
    id: str
    source: str
    target: str
    kind: str  # edge | temporal | role
    label: str  # the relation, or the role name
    props: dict[str, Scalar]


def property_types(rows: list[dict[str, Scalar]], what: str) -> dict[str, type]:
    """name -> Python type of every property used in ``rows`` (sorted by name); ValueError
    when one name has values of two types, which no typed format could declare."""
    types: dict[str, type] = {}
    for props in rows:
        for name, value in props.items():
            if types.setdefault(name, type(value)) is not type(value):
                raise ValueError(f"{what} property {name!r} has values of two types")
    return dict(sorted(types.items()))


def json_text(values: list[Any]) -> str:
    """A list as one flat, lossless string property (JSON array text)."""
    return json.dumps(values, ensure_ascii=False)


def scalar(value: Any) -> Scalar | None:
    """A value as one flat property: scalars as they are, a mapping or list as JSON text
    (keys sorted, so equal values give equal text), None as None."""
    if value is None or isinstance(value, (str, bool, int, float)):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True, allow_nan=False, default=str)


def _text(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return value if isinstance(value, str) else repr(value)


def one_type_each(rows: list[dict[str, Scalar]]) -> None:
    """Make every property of ``rows`` one type: one with values of two types becomes text
    in every row (in place)."""
    types: dict[str, set[type]] = defaultdict(set)
    for props in rows:
        for name, value in props.items():
            types[name].add(type(value))
    mixed = {name for name, kinds in types.items() if len(kinds) > 1}
    for props in rows:
        for name in mixed & props.keys():
            props[name] = _text(props[name])


def _clean(props: dict[str, Any]) -> dict[str, Scalar]:
    """Absent values (None) are left out rather than written as empty strings; structured
    values are JSON text."""
    return {k: scalar(v) for k, v in props.items() if v is not None}


def _provenance(snapshot: GraphSnapshot) -> dict[str, dict[str, Scalar]]:
    docs: dict[str, set[str]] = defaultdict(set)
    counts: dict[str, int] = defaultdict(int)
    for row in snapshot.evidence:
        docs[row["item"]].add(row["document"])
        counts[row["item"]] += 1
    return {item: {"documents": json_text(sorted(docs[item])), "evidence_count": counts[item]} for item in counts}


def property_graph(snapshot: GraphSnapshot) -> tuple[list[Vertex], list[Link]]:
    """Vertices and links of ``snapshot``, reified as the module docstring says.

    Raises InputError naming the item when an edge, role or argument refers to a node
    the snapshot does not hold (an export never invents nodes).
    """
    prov = _provenance(snapshot)
    none = {"documents": json_text([]), "evidence_count": 0}
    nodes = {n["id"] for n in snapshot.nodes}

    def check(item: Item, node: str) -> str:
        if node not in nodes:
            raise InputError(f"graph item {item['id']} refers to node {node!r}, which the graph does not hold")
        return node

    vertices = [Vertex(n["id"], "entity", _clean({
        "type": n["type"], "name": n["name"], "aliases": json_text(list(n.get("aliases", []))),
        "documents": json_text(list(n.get("documents", []))),
        "evidence_count": prov.get(n["id"], none)["evidence_count"]})) for n in by_id(snapshot.nodes)]
    links: list[Link] = []
    for e in by_id(snapshot.edges):
        conf = e.get("confidence")
        links.append(Link(e["id"], check(e, e["head"]), check(e, e["tail"]), "edge", e["relation"], _clean({
            "relation": e["relation"], "views": json_text(e.get("views", [])),
            "confidence": None if conf is None else float(conf), **prov.get(e["id"], none)})))
    for t in by_id(snapshot.temporal):
        qualifiers = {f"qualifier.{name}.{part}": q.get(part)
                      for name, q in sorted(t.get("qualifiers", {}).items()) for part in ("text", "type", "value")}
        links.append(Link(t["id"], check(t, t["head"]), check(t, t["tail"]), "temporal", t["relation"], _clean({
            "relation": t["relation"], "views": json_text(t.get("views", [])), **qualifiers,
            **prov.get(t["id"], none)})))
    for h in by_id(snapshot.hyperedges):
        vertices.append(Vertex(h["id"], "hyperedge", _clean({
            "relation": h["relation"], "views": json_text(h.get("views", [])), **prov.get(h["id"], none)})))
        links += _role_links(h, h.get("roles", {}), check)
    for v in by_id(snapshot.events):
        time = v.get("time") or {}
        vertices.append(Vertex(v["id"], "event", _clean({
            "type": v["type"], "trigger": v.get("trigger"), "time.text": time.get("text"),
            "time.value": time.get("value"), "views": json_text(v.get("views", [])), **prov.get(v["id"], none)})))
        links += _role_links(v, v.get("arguments", {}), check)
    for kind in ("entity", "hyperedge", "event"):
        one_type_each([v.props for v in vertices if v.kind == kind])
    one_type_each([link.props for link in links])
    return vertices, links


def role_link_id(item_id: str, role: str, node: str) -> str:
    """One id per (item, role, filler): the same node may fill two roles of one item."""
    return f"{item_id}|{role}|{node}"


def _role_links(item: Item, roles: dict[str, list[str]], check) -> list[Link]:
    return [Link(role_link_id(item["id"], role, node), item["id"], check(item, node), "role", role, {"role": role})
            for role in sorted(roles) for node in roles[role]]
