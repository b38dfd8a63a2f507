"""Export formats by name: the built-ins and any a plugin adds go through :func:`register_format`.

A format is a writer ``write(snapshot, out: StagedOutput, options: ExportOptions)`` that
opens the files it needs on ``out``; :func:`export_graph` commits them only if it returns.
Built-in writers are imported on first use, so listing formats costs nothing.
"""
from __future__ import annotations

import importlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from kgkit.errors import InputError, did_you_mean
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot

DEFAULT_BASE_IRI = "https://kgkit.dev/graph/{tenant}/"


@dataclass(frozen=True)
class ExportOptions:
    """Settings a format may read; each ignores what it does not use."""

    base_iri: str | None = None  # RDF formats: item IRIs are base_iri + id (default DEFAULT_BASE_IRI)
    # GraphML and Neo4j: value-scoped nodes as "properties" of the items they end, or as "nodes"
    values: str = "properties"


Writer = Callable[[GraphSnapshot, StagedOutput, ExportOptions], None]

# name -> "module:function" (built-ins, imported lazily) or a registered callable
_FORMATS: dict[str, str | Writer] = {
    "csv": "kgkit.graph.export.csv_tables:write_csv",
    "graphml": "kgkit.graph.export.graphml:write_graphml",
    "json": "kgkit.graph.export.json_dump:write_json",
    "jsonld": "kgkit.graph.export.rdf:write_jsonld",
    "neo4j": "kgkit.graph.export.neo4j:write_neo4j",
    "turtle": "kgkit.graph.export.rdf:write_turtle",
}


def register_format(name: str, writer: Writer) -> None:
    """Add (or replace) an export format under ``name``."""
    _FORMATS[name] = writer


def export_formats() -> list[str]:
    return sorted(_FORMATS)


def get_writer(name: str) -> Writer:
    """The writer of format ``name``; InputError (with the nearest names) for an unknown one."""
    if name not in _FORMATS:
        hint = did_you_mean(name, _FORMATS)
        raise InputError(f"unknown export format {name!r}; formats: {', '.join(export_formats())}", hint=hint)
    writer = _FORMATS[name]
    if isinstance(writer, str):
        module, attr = writer.split(":")
        writer = getattr(importlib.import_module(module), attr)
    return writer


def export_graph(snapshot: GraphSnapshot, fmt: str, out: str | os.PathLike,
                 options: ExportOptions | None = None) -> list[Path]:
    """Write ``snapshot`` in format ``fmt`` into the folder ``out``; return the files written.

    All of a format's files appear together or none does (see :mod:`.staging`); files
    of other names already in ``out`` are left alone. Raises InputError for an unknown
    format, an output path that is a file, or a snapshot whose items name missing nodes.
    """
    writer = get_writer(fmt)
    staged = StagedOutput(out)
    try:
        writer(snapshot, staged, options or ExportOptions())
    except BaseException:
        staged.rollback()
        raise
    return staged.commit()
