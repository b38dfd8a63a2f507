"""GraphML for Gephi, yEd and networkx: one ``graph.graphml``.

The reified property graph of :mod:`.property_graph`, every attribute declared as a typed
``<key>`` (string, int, double) before use. Vertices and links carry ``kind`` and a
``label`` (an entity's name, a hyperedge's relation, an event's type; a link's relation
or role), which Gephi shows as the label. XML 1.0 cannot hold most control characters,
not even as references: each is written as U+FFFD. A carriage return is written as
``&#13;`` so a parser does not turn it into a line feed.
"""
from __future__ import annotations

from typing import cast

from kgkit.graph.export.escape import xml_escaper
from kgkit.graph.export.property_graph import Link, Scalar, Vertex, property_graph, property_types
from kgkit.graph.export.registry import ExportOptions
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot

_ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "\r": "&#13;", "\n": "&#10;", "\t": "&#9;"}
_attr = xml_escaper(_ESCAPES)  # attribute values: line breaks and tabs kept as references
_text = xml_escaper({k: _ESCAPES[k] for k in "&<>\r"})
_TYPES = {bool: "boolean", int: "int", float: "double", str: "string"}


def _value(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    return _text(repr(value) if isinstance(value, float) else str(value))


def _keys(domain: str, rows: list[dict[str, Scalar]]) -> dict[str, tuple[str, str]]:
    """name -> (key id, GraphML type) for every property used on ``domain`` (node/edge)."""
    types = property_types(rows, f"GraphML {domain}")
    return {name: (f"{domain[0]}{i}", _TYPES[kind]) for i, (name, kind) in enumerate(types.items())}


def _vertex_props(v: Vertex) -> dict[str, Scalar]:
    label = v.props.get("name") if v.kind in ("entity", "document") else v.props.get("relation", v.props.get("type"))
    # Every entity and document has a name, every item a relation or type: never None.
    return {"kind": v.kind, "label": cast(Scalar, label), **v.props}


def _link_props(link: Link) -> dict[str, Scalar]:
    return {"kind": link.kind, "label": link.label, **link.props}


def write_graphml(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    vertices, links = property_graph(snapshot, options.values)
    vprops = [_vertex_props(v) for v in vertices]
    lprops = [_link_props(link) for link in links]
    graph_props: dict[str, Scalar] = {"tenant": snapshot.tenant, "version": snapshot.version}
    keys = {"graph": _keys("graph", [graph_props]), "node": _keys("node", vprops), "edge": _keys("edge", lprops)}
    fh = out.open("graph.graphml")
    fh.write('<?xml version="1.0" encoding="UTF-8"?>\n'
             '<graphml xmlns="http://graphml.graphdrawing.org/xmlns" '
             'xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" '
             'xsi:schemaLocation="http://graphml.graphdrawing.org/xmlns '
             'http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd">\n')
    for domain, declared in keys.items():
        for name, (key_id, kind) in declared.items():
            fh.write(f'  <key id="{key_id}" for="{domain}" attr.name="{_attr(name)}" attr.type="{kind}"/>\n')
    fh.write('  <graph id="kgkit" edgedefault="directed">\n')
    _data(fh, keys["graph"], graph_props, "    ")
    for v, props in zip(vertices, vprops):
        fh.write(f'    <node id="{_attr(v.id)}">\n')
        _data(fh, keys["node"], props, "      ")
        fh.write("    </node>\n")
    for link, props in zip(links, lprops):
        fh.write(f'    <edge id="{_attr(link.id)}" source="{_attr(link.source)}" target="{_attr(link.target)}">\n')
        _data(fh, keys["edge"], props, "      ")
        fh.write("    </edge>\n")
    fh.write("  </graph>\n</graphml>\n")


def _data(fh, keys: dict[str, tuple[str, str]], props: dict[str, Scalar], indent: str) -> None:
    for name in sorted(props):
        fh.write(f'{indent}<data key="{keys[name][0]}">{_value(props[name])}</data>\n')
