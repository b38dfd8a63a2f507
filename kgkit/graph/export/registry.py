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


# formats that write one file: -o may name that file rather than a folder
_SINGLE_FILE = {"graphml", "json", "jsonld", "turtle"}


def register_format(name: str, writer: Writer, *, single_file: bool = False) -> None:
    """Add (or replace) an export format under ``name``; ``single_file``: it writes one file."""
    _FORMATS[name] = writer
    if single_file:
        _SINGLE_FILE.add(name)
    else:
        _SINGLE_FILE.discard(name)


def writes_one_file(fmt: str, out: str | os.PathLike) -> bool:
    """Whether ``out`` names the file itself: a single-file format, and ``out`` an existing
    file or a new path with a file suffix (``corpus.graphml``). A folder stays a folder."""
    path = Path(out)
    return fmt in _SINGLE_FILE and (path.is_file() or (not path.exists() and bool(path.suffix)))


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
    """Write ``snapshot`` in format ``fmt`` into the folder ``out`` (or, for a single-file
    format, into the file ``out`` names, see :func:`writes_one_file`); return the files written.

    All of a format's files appear together or none does (see :mod:`.staging`); files
    of other names already in ``out`` are left alone. Raises InputError for an unknown
    format, an output path that is a file, or a snapshot whose items name missing nodes.
    """
    writer = get_writer(fmt)
    staged = StagedOutput(out, file=writes_one_file(fmt, out))
    try:
        writer(snapshot, staged, options or ExportOptions())
    except BaseException:
        staged.rollback()
        raise
    return staged.commit()
