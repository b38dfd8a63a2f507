"""Neo4j: CSV files for ``neo4j-admin database import`` and an equivalent Cypher script.

Both load the reified property graph of :mod:`.property_graph`: ``:Document``,
``:Entity``, ``:Hyperedge`` and ``:Event`` nodes keyed by ``id`` (one ID space: kgkit ids
are unique across kinds), an entity also labelled by its type (``:Party:Entity``) when the
type is a plain identifier (and not one of those four); binary and temporal edges as
relationships typed by their relation, ``:ROLE`` relationships (property ``role``) from a
hyperedge or event to each filler, ``:MENTIONED_IN`` from an entity and ``:SUPPORTED_BY``
from a hyperedge or event to each of its documents. A relation's control characters, if
any, become U+FFFD in the relationship type only. Property names are made identifiers
(``time.text`` -> ``time_text``); list properties are JSON array text, because the
importer's array delimiter could occur in any name.

* ``neo4j/nodes_*.csv`` and ``neo4j/relationships_*.csv``: headers in the importer's
  grammar (``id:ID``, ``:LABEL``, ``:START_ID``, ``:END_ID``, ``:TYPE``, ``name:int`` …);
  quoted fields may hold line breaks, so import with ``--multiline-fields=true``.
* ``neo4j/graph.cypher``: a uniqueness constraint on ``id`` per label (``IF NOT EXISTS``),
  then batched ``UNWIND [...] AS row MERGE`` statements with every string escaped;
  re-running it changes nothing. Run it with ``cypher-shell -f``.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable

from kgkit.graph.export.csv_tables import write_table
from kgkit.graph.export.escape import backslash_escaper
from kgkit.graph.export.property_graph import Link, Scalar, Vertex, property_graph, property_types
from kgkit.graph.export.registry import ExportOptions
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot

LABELS = {"document": "Document", "entity": "Entity", "hyperedge": "Hyperedge", "event": "Event"}
LINK_KINDS = ("edge", "temporal", "role", "mentioned_in", "supported_by")
ROLE_TYPE = "ROLE"
_PLAIN_LABEL = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
BATCH = 500  # rows per UNWIND statement: small enough for one transaction each
_HEADER_TYPES = {int: ":int", float: ":double", bool: ":boolean", str: ""}
_cypher_escape = backslash_escaper({"\\": "\\\\", "'": "\\'", "\n": "\\n", "\r": "\\r", "\t": "\\t",
                                    "\b": "\\b", "\f": "\\f"})


def property_name(name: str) -> str:
    """A property name Neo4j and Cypher take without quoting: non-word characters become ``_``."""
    return re.sub(r"\W", "_", name)


def cypher_string(text: str) -> str:
    """``text`` as a single-quoted Cypher string literal; control characters as ``\\uXXXX``."""
    return "'" + _cypher_escape(text) + "'"


def cypher_name(name: str) -> str:
    """A label, relationship type or key in backquotes (a backquote inside is doubled)."""
    return "`" + name.replace("`", "``") + "`"


def _cypher_value(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    return cypher_string(value)


def _cypher_map(props: dict[str, Scalar]) -> str:
    return "{" + ", ".join(f"{cypher_name(k)}: {_cypher_value(v)}" for k, v in props.items()) + "}"


def _renamed(props: dict[str, Scalar]) -> dict[str, Scalar]:
    return {property_name(k): v for k, v in props.items()}


def _columns(rows: list[dict[str, Scalar]], what: str) -> list[tuple[str, str]]:
    """(property, header cell) for every property of ``rows``, typed as the importer reads it."""
    types = property_types(rows, what)
    return [(name, name + _HEADER_TYPES[kind]) for name, kind in types.items() if name != "id"]


def labels(vertex: Vertex) -> tuple[str, ...]:
    """A vertex's labels: its kind's, and for an entity first its type (``Party``, ``Entity``)
    where the type is a plain identifier other than a kind's label."""
    kind = LABELS[vertex.kind]
    etype = vertex.props.get("type") if vertex.kind == "entity" else None
    if isinstance(etype, str) and _PLAIN_LABEL.fullmatch(etype) and etype not in LABELS.values():
        return etype, kind
    return (kind,)


def write_neo4j(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    vertices, links = property_graph(snapshot, options.values)
    label_of = {v.id: LABELS[v.kind] for v in vertices}
    for kind, label in LABELS.items():
        group = [v for v in vertices if v.kind == kind]
        props = [_renamed(v.props) for v in group]
        columns = _columns(props, f"Neo4j {label}")
        write_table(out, f"neo4j/nodes_{kind}.csv", ["id:ID", ":LABEL"] + [cell for _, cell in columns],
                    ([v.id, ";".join(labels(v))] + [p.get(name) for name, _ in columns] for v, p in zip(group, props)),
                    for_spreadsheets=False)
    for kind in LINK_KINDS:
        kind_links = [link for link in links if link.kind == kind]
        props = [_renamed(link.props) for link in kind_links]
        columns = _columns(props, f"Neo4j {kind} relationship")
        write_table(out, f"neo4j/relationships_{kind}.csv",
                    [":START_ID", ":END_ID", ":TYPE", "id"] + [cell for _, cell in columns],
                    ([link.source, link.target, _type(link), link.id] + [p.get(name) for name, _ in columns]
                     for link, p in zip(kind_links, props)), for_spreadsheets=False)
    script = out.open("neo4j/graph.cypher")
    for line in cypher_script(vertices, links, label_of):
        script.write(line + "\n")


def relationship_type(relation: str) -> str:
    """The relationship type of a relation: control characters become U+FFFD, so the
    script stays one statement per line (the ``relation`` property keeps the label exact)."""
    return re.sub(r"[\x00-\x1f\x7f\x85\u2028\u2029]", "\ufffd", relation)


def _type(link: Link) -> str:
    return ROLE_TYPE if link.kind == "role" else relationship_type(link.label)  # MENTIONED_IN, SUPPORTED_BY: labels


def cypher_script(vertices: list[Vertex], links: list[Link], label_of: dict[str, str]) -> Iterable[str]:
    """The statements of graph.cypher, one per line, each ending in ``;``."""
    yield "// kgkit graph export: run with `cypher-shell -f graph.cypher` (Neo4j 5)."
    used = sorted({label for v in vertices for label in labels(v)} | set(LABELS.values()))
    for label in used:  # a type's constraint keeps the label's case: PARTY and Party are two labels
        name = f"kgkit_{label.lower()}_id" if label in LABELS.values() else f"kgkit_type_{label}_id"
        yield (f"CREATE CONSTRAINT {cypher_name(name)} IF NOT EXISTS "
               f"FOR (n:{cypher_name(label)}) REQUIRE n.id IS UNIQUE;")
    by_labels: dict[tuple[str, ...], list[dict]] = defaultdict(list)
    order = {label: i for i, label in enumerate(LABELS.values())}
    for v in vertices:
        by_labels[labels(v)].append({"id": v.id, **_renamed(v.props)})
    for names in sorted(by_labels, key=lambda ls: (order[ls[-1]], ls)):
        pattern = "".join(f":{cypher_name(label)}" for label in names)
        for batch in _batches(by_labels[names]):
            yield (f"UNWIND [{', '.join(_cypher_map(r) for r in batch)}] AS row "
                   f"MERGE (n{pattern} {{id: row.id}}) SET n += row;")
    groups: dict[tuple[str, str, str], list[dict]] = defaultdict(list)
    for link in links:
        key = (label_of[link.source], _type(link), label_of[link.target])
        groups[key].append({"start": link.source, "end": link.target,
                            "props": _cypher_map({"id": link.id, **_renamed(link.props)})})
    for (start, rel, end), rows in sorted(groups.items()):
        for batch in _batches(rows):
            literal = ", ".join(f"{{start: {cypher_string(r['start'])}, end: {cypher_string(r['end'])}, "
                                f"props: {r['props']}}}" for r in batch)
            yield (f"UNWIND [{literal}] AS row MATCH (a:{cypher_name(start)} {{id: row.start}}) "
                   f"MATCH (b:{cypher_name(end)} {{id: row.end}}) "
                   f"MERGE (a)-[r:{cypher_name(rel)} {{id: row.props.id}}]->(b) SET r += row.props;")


def _batches(rows: list) -> Iterable[list]:
    for start in range(0, len(rows), BATCH):
        yield rows[start:start + BATCH]
