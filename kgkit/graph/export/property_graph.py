"""The snapshot as a property graph: what GraphML and Neo4j share.

A property graph has only vertices and binary links, so the snapshot is reified:

* every document is a vertex of kind ``document`` (name, source, sha256, title, pages,
  added), and every entity a vertex of kind ``entity`` with a ``MENTIONED_IN`` link to
  each document that names it;
* every hyperedge and every event is a vertex too (kind ``hyperedge`` / ``event``), with
  one ``role`` link from it to each node filling a role (the role name is a property)
  and a ``SUPPORTED_BY`` link to each document that states it;
* binary and temporal edges stay links between their two entities (kind ``edge`` /
  ``temporal``);
* a ``value``-scoped node (a date, a duration, an amount: kgkit/formats/scopes.py) is, by default,
  not a vertex: it is written as properties of what it ends, so a date never joins two
  contracts (``values="nodes"`` writes it as a vertex).

Properties are flat scalars (what Gephi, yEd and Neo4j's importer accept): lists are JSON
array text, a temporal qualifier ``q`` becomes ``qualifier.q.text`` / ``.type`` /
``.value``, an event's time ``time.text`` / ``time.value``, an edge's stored property ``p``
(a ``CITES`` edge's intent, strength) ``property.p``; a structured value (an amount
of money ``{"amount", "currency"}``, a range) is its JSON text, keys sorted
(:func:`scalar`), and a property whose values have two types across a kind is text in
every row of that kind, so each format can declare one type for it. Each item also carries its
documents by name, how many evidence rows it has and its best evidence inline (``quote``,
``page``, ``span_start``/``span_end``, ``evidence_document``). Vertices and links come in a
fixed order (kind, then id), so the same snapshot always yields the same file.
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
#: how value-scoped nodes are written: as properties of the items they end, or as vertices
VALUE_MODES = ("properties", "nodes")
MENTIONED_IN = "MENTIONED_IN"  # entity -> the document that names it
SUPPORTED_BY = "SUPPORTED_BY"  # hyperedge or event -> the document that states it


@dataclass(frozen=True)
class Vertex:
    id: str
    kind: str  # document | entity | hyperedge | event
    props: dict[str, Scalar]


@dataclass(frozen=True)
class Link:
    id: str
    source: str
    target: str
    kind: str  # edge | temporal | role | mentioned_in | supported_by
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
    return {k: s for k, v in props.items() if (s := scalar(v)) is not None}


def _best(rows: list[Item]) -> Item:
    """The evidence row to show inline: one with a quote, then with a page, then the first."""
    return min(rows, key=lambda r: (r.get("quote") is None, r.get("page") is None))


def _provenance(snapshot: GraphSnapshot) -> dict[str, dict[str, Scalar]]:
    """item id -> what a vertex or link carries of its evidence: its documents by name, how
    many evidence rows it has, and its best evidence inline (quote, page, span, document)."""
    names = {d["id"]: d["name"] for d in snapshot.documents}
    rows: dict[str, list[Item]] = defaultdict(list)
    for row in snapshot.evidence:
        rows[row["item"]].append(row)
    out = {}
    for item, found in rows.items():
        best = _best(found)
        span = best.get("span") or [None, None]
        out[item] = _clean({"documents": json_text(sorted({names.get(r["document"], r["document"]) for r in found})),
                            "evidence_count": len(found), "quote": best.get("quote"), "page": best.get("page"),
                            "span_start": span[0], "span_end": span[1],
                            "evidence_document": names.get(best["document"], best["document"])})
    return out


def _documents(item: Item, names: dict[str, str], prov: dict[str, Scalar]) -> dict[str, Scalar]:
    """An item's documents by name: those whose rows state it (the snapshot's ``documents``),
    else those of its evidence."""
    docs = item.get("documents")
    return {**prov, "documents": json_text(sorted(names.get(d, d) for d in docs))} if docs else dict(prov)


def _value_text(value: Any) -> str:
    return value if isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def property_graph(snapshot: GraphSnapshot, values: str = "properties") -> tuple[list[Vertex], list[Link]]:
    """Vertices and links of ``snapshot``, reified as the module docstring says.

    ``values``: ``"properties"`` writes a ``value``-scoped node (a date, a duration, an
    amount) as properties of the items it ends (``value.<RELATION>`` on an edge's other
    end, ``role.<role>`` on a hyperedge or event), never as a vertex that would join
    documents; ``"nodes"`` writes it as a vertex like any entity.

    Raises InputError naming the item when an edge, role or argument refers to a node
    the snapshot does not hold (an export never invents nodes).
    """
    if values not in VALUE_MODES:
        raise InputError(f"values must be one of {', '.join(VALUE_MODES)}, not {values!r}")
    g = _Builder(snapshot, values)
    g.documents()
    g.entities()
    g.edges()
    g.temporal()
    g.hyperedges_and_events()
    return g.finish()


class _Builder:
    """The vertices and links of one export as they are built, one method per kind of item;
    the value nodes written as properties gather in ``value_props`` until :meth:`finish`."""

    def __init__(self, snapshot: GraphSnapshot, values: str) -> None:
        self.snapshot = snapshot
        self.prov = _provenance(snapshot)
        self.names = {d["id"]: d["name"] for d in snapshot.documents}
        self.none: dict[str, Scalar] = {"documents": json_text([]), "evidence_count": 0}
        self.by_id = {n["id"]: n for n in snapshot.nodes}
        literal = {n["id"] for n in snapshot.nodes if n.get("scope") == "value"} if values == "properties" else set()
        # an edge between two values has no other end to hang on: those two stay vertices
        for e in (*snapshot.edges, *snapshot.temporal):
            if e["head"] in literal and e["tail"] in literal:
                literal -= {e["head"], e["tail"]}
        self.literal = literal
        self.value_props: dict[str, dict[str, list[Any]]] = defaultdict(lambda: defaultdict(list))
        self.vertices: list[Vertex] = []
        self.links: list[Link] = []

    def check(self, item: Item, node: str) -> str:
        if node not in self.by_id:
            raise InputError(f"graph item {item['id']} refers to node {node!r}, which the graph does not hold")
        return node

    def as_value(self, owner: str, prefix: str, node_id: str, item: Item | None) -> None:
        n = self.by_id[node_id]
        bag = self.value_props[owner]
        bag[prefix].append(n["name"])
        bag[prefix + ".value"].append(n.get("value"))
        if item is not None:
            p = self.prov.get(item["id"], {})
            bag[prefix + ".quote"].append(p.get("quote"))
            bag[prefix + ".documents"].append(json.loads(str(_documents(item, self.names, {**self.none, **p})["documents"])))

    def sources(self, item: Item) -> dict[str, Scalar]:
        return _documents(item, self.names, self.prov.get(item["id"], self.none))

    def documents(self) -> None:
        self.vertices += [Vertex(d["id"], "document", _clean({
            "name": d["name"], "source": d.get("source"), "sha256": d.get("sha256"), "title": d.get("title"),
            "pages": d.get("pages"), "added": d.get("added")})) for d in by_id(self.snapshot.documents)]

    def entities(self) -> None:
        names = self.names
        for n in by_id(self.snapshot.nodes):
            if n["id"] in self.literal:
                continue
            self.vertices.append(Vertex(n["id"], "entity", _clean({
                "type": n["type"], "name": n["name"], "aliases": json_text(list(n.get("aliases", []))),
                "scope": n.get("scope"), "value": None if n.get("value") is None else _value_text(n["value"]),
                "documents": json_text(sorted(names.get(d, d) for d in n.get("documents", []))),
                "evidence_count": self.prov.get(n["id"], self.none)["evidence_count"]})))
            self.links += [Link(f"{n['id']}|{MENTIONED_IN}|{d}", n["id"], d, "mentioned_in", MENTIONED_IN, {})
                           for d in sorted(n.get("documents", [])) if d in names]

    def _hung_as_value(self, e: Item, prefix: str) -> bool:
        """An edge with a value at one end becomes a property of its other end."""
        self.check(e, e["head"]), self.check(e, e["tail"])
        if e["tail"] not in self.literal and e["head"] not in self.literal:
            return False
        owner, other = (e["head"], e["tail"]) if e["tail"] in self.literal else (e["tail"], e["head"])
        self.as_value(owner, prefix, other, e)
        return True

    def edges(self) -> None:
        for e in by_id(self.snapshot.edges):
            if self._hung_as_value(e, f"value.{e['relation']}"):
                continue
            conf = e.get("confidence")
            stored = {f"property.{k}": v for k, v in sorted((e.get("properties") or {}).items())}
            self.links.append(Link(e["id"], e["head"], e["tail"], "edge", e["relation"], _clean({
                "relation": e["relation"], "views": json_text(e.get("views", [])),
                "confidence": None if conf is None else float(conf), **stored, **self.sources(e)})))

    def temporal(self) -> None:
        for t in by_id(self.snapshot.temporal):
            if self._hung_as_value(t, f"value.temporal.{t['relation']}"):
                continue
            qualifiers = {f"qualifier.{name}.{part}": q.get(part)
                          for name, q in sorted(t.get("qualifiers", {}).items()) for part in ("text", "type", "value")}
            self.links.append(Link(t["id"], t["head"], t["tail"], "temporal", t["relation"], _clean({
                "relation": t["relation"], "views": json_text(t.get("views", [])), **qualifiers,
                **self.sources(t)})))

    def hyperedges_and_events(self) -> None:
        for h in by_id(self.snapshot.hyperedges):
            self.vertices.append(Vertex(h["id"], "hyperedge", _clean({
                "relation": h["relation"], "views": json_text(h.get("views", [])), **self.sources(h)})))
            self.links += _role_links(h, h.get("roles", {}), self.check, self.literal, self.as_value)
            self.links += _supported_by(h, self.names)
        for v in by_id(self.snapshot.events):
            time = v.get("time") or {}
            self.vertices.append(Vertex(v["id"], "event", _clean({
                "type": v["type"], "trigger": v.get("trigger"), "time.text": time.get("text"),
                "time.value": time.get("value"), "views": json_text(v.get("views", [])), **self.sources(v)})))
            self.links += _role_links(v, v.get("arguments", {}), self.check, self.literal, self.as_value)
            self.links += _supported_by(v, self.names)

    def finish(self) -> tuple[list[Vertex], list[Link]]:
        """The gathered value properties onto their vertices; one type per property (:func:`one_type_each`)."""
        vertices, links = self.vertices, self.links
        for vertex in vertices:
            for name, found in sorted(self.value_props.get(vertex.id, {}).items()):
                vertex.props[name] = json_text([_value_text(x) if name.endswith(".value") and x is not None else x
                                                for x in found])
        for kind in {v.kind for v in vertices}:
            one_type_each([v.props for v in vertices if v.kind == kind])
        one_type_each([link.props for link in links])
        return vertices, links


def _supported_by(item: Item, names: dict[str, str]) -> list[Link]:
    return [Link(f"{item['id']}|{SUPPORTED_BY}|{d}", item["id"], d, "supported_by", SUPPORTED_BY, {})
            for d in sorted(item.get("documents", [])) if d in names]


def role_link_id(item_id: str, role: str, node: str) -> str:
    """One id per (item, role, filler): the same node may fill two roles of one item."""
    return f"{item_id}|{role}|{node}"


def _role_links(item: Item, roles: dict[str, list[str]], check, literal: set[str], as_value) -> list[Link]:
    """One link per (role, filler) of ``item``; a filler that is a value becomes the
    item's property ``role.<role>`` instead."""
    links = []
    for role in sorted(roles):
        for node in roles[role]:
            check(item, node)
            if node in literal:
                as_value(item["id"], f"role.{role}", node, None)
            else:
                links.append(Link(role_link_id(item["id"], role, node), item["id"], node, "role", role, {"role": role}))
    return links
