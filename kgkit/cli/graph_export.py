"""``kgkit graph export [GRAPH] --format F -o OUT``: a thin layer over :func:`kgkit.graph.export.export_graph`.

The command does not know where snapshots come from. :func:`make_export_cli` takes a
provider and the click options it needs (a tenant, a config file…); the values of those
options reach the provider as keyword arguments, with GRAPH (None when left out):

    export_cli = make_export_cli(lambda graph, tenant, config_path: open_store(...).snapshot(),
                                 options=[TENANT, CONFIG])
    graph_cli.add_command(export_cli)

The graph command group (kgkit/cli/graph.py) does exactly that. Formats: docs/graph-export.md.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence

import click

from kgkit.graph.export.registry import export_formats
from kgkit.graph.snapshot import GraphSnapshot

SnapshotProvider = Callable[..., GraphSnapshot]  # (graph: str | None, **option values) -> snapshot


def make_export_cli(provider: SnapshotProvider, options: Sequence[Callable] = ()) -> click.Command:
    """The ``export`` command, reading its snapshot from ``provider``; ``options`` are click
    option decorators whose values are handed to the provider."""

    def export_cli(graph, fmt, out, base_iri, values, **provider_options):
        """Export GRAPH as GraphML, Neo4j import files and Cypher, JSON-LD, Turtle, CSV or JSON.

        Every file of the export appears whole, or none does; nothing outside OUT is touched.
        """
        from kgkit.graph.export import ExportOptions, export_graph

        written = export_graph(provider(graph, **provider_options), fmt, out, ExportOptions(base_iri=base_iri, values=values))
        for path in written:
            click.echo(str(path))

    for option in reversed(options):
        export_cli = option(export_cli)
    export_cli = click.option("--base-iri", default=None, help=(
        "RDF formats: the IRI item ids are appended to [default: https://kgkit.dev/graph/<tenant>/]."))(export_cli)
    export_cli = click.option("--values", type=click.Choice(["properties", "nodes"]), default="properties",
                              show_default=True, help=(
        "GraphML and Neo4j: write dates, durations, amounts (value-scoped types) as properties of the "
        "items they end, or as nodes."))(export_cli)
    export_cli = click.option("-o", "--out", required=True, type=click.Path(),
                              help="Folder to write the files into; for a one-file format (graphml, json, jsonld, turtle) "
                              "also the file itself, e.g. corpus.graphml.")(export_cli)
    export_cli = click.option("--format", "fmt", required=True,
                              help=f"What to write: {', '.join(export_formats())}.")(export_cli)
    export_cli = click.argument("graph", required=False)(export_cli)
    return click.command("export")(export_cli)

