"""Exports of the corpus graph: GraphML, Neo4j (import CSV and Cypher), JSON-LD, Turtle, CSV, JSON.

Exporters take a :class:`~kgkit.graph.snapshot.GraphSnapshot` and write files; they never
see the store. ``export_graph(snapshot, "graphml", "out/")`` is the whole API; formats and
the reification they share are documented in docs/graph-export.md.
"""
from kgkit.graph.export.registry import ExportOptions, export_formats, export_graph, register_format

__all__ = ["ExportOptions", "export_formats", "export_graph", "register_format"]
