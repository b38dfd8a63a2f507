"""``kgkit graph export GRAPH --format F -o OUT``: a thin layer over :func:`kgkit.graph.export.export_graph`.

The command does not know where snapshots come from: :func:`make_export_cli` takes a
provider ``(graph, tenant) -> GraphSnapshot`` (the store's, once ``kgkit graph`` has one)
and the graph command group registers the command it returns. Until then
:func:`run_folders_provider` reads run folders, so ``GRAPH`` may be a run folder or a
folder of them (``kgkit-out/``). Formats: docs/graph-export.md.
"""
from __future__ import annotations

from collections.abc import Callable

import click

from kgkit.graph.export.registry import export_formats
from kgkit.graph.snapshot import GraphSnapshot

SnapshotProvider = Callable[[str, str], GraphSnapshot]


def run_folders_provider(graph: str, tenant: str) -> GraphSnapshot:
    """A snapshot of the run folder ``graph``, or of every run folder inside it."""
    from kgkit.graph.export import find_run_folders, snapshot_from_run_folders

    return snapshot_from_run_folders(find_run_folders(graph), tenant=tenant)


def make_export_cli(provider: SnapshotProvider) -> click.Command:
    """The ``export`` command, reading its snapshot from ``provider``."""

    @click.command("export")
    @click.argument("graph")
    @click.option("--format", "fmt", required=True, help=f"What to write: {', '.join(export_formats())}.")
    @click.option("-o", "--out", required=True, type=click.Path(), help="Folder to write the files into.")
    @click.option("--tenant", default="default", show_default=True, help="Whose graph to export.")
    @click.option("--base-iri", default=None,
                  help="RDF formats: the IRI item ids are appended to [default: https://kgkit.dev/graph/<tenant>/].")
    def export_cli(graph, fmt, out, tenant, base_iri):
        """Export GRAPH as GraphML, Neo4j import files and Cypher, JSON-LD, Turtle, CSV or JSON.

        Every file of the export appears whole, or none does; nothing outside OUT is touched.
        """
        from kgkit.graph.export import ExportOptions, export_graph

        written = export_graph(provider(graph, tenant), fmt, out, ExportOptions(base_iri=base_iri))
        for path in written:
            click.echo(str(path))

    return export_cli


export_cli = make_export_cli(run_folders_provider)
