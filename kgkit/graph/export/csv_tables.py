"""Plain CSV: one table per kind of item, joined by id, for spreadsheets and dataframes.

``nodes.csv``, ``edges.csv`` + ``edge_properties.csv``, ``temporal_edges.csv`` + ``temporal_qualifiers.csv``,
``hyperedges.csv`` + ``hyperedge_roles.csv``, ``events.csv`` + ``event_arguments.csv``,
``evidence.csv`` and ``documents.csv``. Roles, arguments and qualifiers are rows of their
own (no nested cells), and so are an edge's stored properties (a ``CITES`` edge's intent
and strength: ``edge``, ``name``, ``value``); list cells (aliases, documents, views) are JSON array text, structured values
(an amount with its currency) JSON text; every item
names its documents (ids, joined to ``documents.csv``) and every node its scope. RFC
4180 quoting, UTF-8, CRLF line ends (so a lone CR in a cell is quoted too); an absent value is an empty cell.
A text cell that begins with ``= + - @``, a tab or a CR gets a leading ``'`` so that a
spreadsheet shows it rather than running it as a formula (docs/graph-export.md says how to
undo it).
"""
from __future__ import annotations

import csv
import json
from collections.abc import Iterable
from typing import Any

from kgkit.graph.export.escape import spreadsheet_safe
from kgkit.graph.export.order import by_id, evidence_sorted
from kgkit.graph.export.property_graph import json_text, scalar
from kgkit.graph.export.registry import ExportOptions
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot


def write_table(out: StagedOutput, name: str, header: list[str], rows: Iterable[list[Any]], *,
                for_spreadsheets: bool = True) -> None:
    """One CSV file; shared with the Neo4j import files, which follow the same quoting.
    ``for_spreadsheets``: a text cell a spreadsheet would run as a formula gets a leading
    ``'`` (:func:`~kgkit.graph.export.escape.spreadsheet_safe`); the Neo4j files, read by its
    importer and never by a spreadsheet, keep every value exact."""
    writer = csv.writer(out.open(name, csv=True), lineterminator="\r\n")
    writer.writerow(header)
    guard = spreadsheet_safe if for_spreadsheets else (lambda value: value)
    for row in rows:
        writer.writerow(["" if value is None else guard(value) for value in row])


def _value(value: Any) -> Any:
    """A value node's normalised value in one cell: text as it is, anything else as JSON."""
    return value if value is None or isinstance(value, str) else json.dumps(value, ensure_ascii=False, sort_keys=True)


def _roles(items, key):
    return ([item["id"], role, node] for item in by_id(items)
            for role in sorted(item.get(key, {})) for node in item[key][role])


def write_csv(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    write_table(out, "nodes.csv", ["id", "type", "name", "aliases", "documents", "scope", "value"],
                ([n["id"], n["type"], n["name"], json_text(list(n.get("aliases", []))),
                  json_text(list(n.get("documents", []))), n.get("scope"), _value(n.get("value"))]
                 for n in by_id(snapshot.nodes)))
    write_table(out, "edges.csv", ["id", "head", "relation", "tail", "confidence", "views", "documents"],
                ([e["id"], e["head"], e["relation"], e["tail"], e.get("confidence"), json_text(e.get("views", [])),
                  json_text(e.get("documents", []))] for e in by_id(snapshot.edges)))
    write_table(out, "edge_properties.csv", ["edge", "name", "value"],
                ([e["id"], name, scalar(value)] for e in by_id(snapshot.edges)
                 for name, value in sorted((e.get("properties") or {}).items())))
    write_table(out, "temporal_edges.csv", ["id", "head", "relation", "tail", "views", "documents"],
                ([t["id"], t["head"], t["relation"], t["tail"], json_text(t.get("views", [])),
                  json_text(t.get("documents", []))] for t in by_id(snapshot.temporal)))
    write_table(out, "temporal_qualifiers.csv", ["edge", "name", "text", "type", "value"],
                ([t["id"], name, q.get("text"), q.get("type"), scalar(q.get("value"))]
                 for t in by_id(snapshot.temporal) for name, q in sorted(t.get("qualifiers", {}).items())))
    write_table(out, "hyperedges.csv", ["id", "relation", "views", "documents"],
                ([h["id"], h["relation"], json_text(h.get("views", [])), json_text(h.get("documents", []))]
                 for h in by_id(snapshot.hyperedges)))
    write_table(out, "hyperedge_roles.csv", ["hyperedge", "role", "node"], _roles(snapshot.hyperedges, "roles"))
    write_table(out, "events.csv", ["id", "type", "trigger", "time_text", "time_value", "views", "documents"],
                ([v["id"], v["type"], v.get("trigger"), (v.get("time") or {}).get("text"),
                  scalar((v.get("time") or {}).get("value")), json_text(v.get("views", [])),
                  json_text(v.get("documents", []))]
                 for v in by_id(snapshot.events)))
    write_table(out, "event_arguments.csv", ["event", "role", "node"], _roles(snapshot.events, "arguments"))
    write_table(out, "evidence.csv", ["item", "document", "chunk", "page", "span_start", "span_end", "quote", "view"],
                ([r["item"], r["document"], r.get("chunk"), r.get("page"), *(r.get("span") or [None, None]),
                  r.get("quote"), r.get("view")] for r in evidence_sorted(snapshot.evidence)))
    write_table(out, "documents.csv", ["id", "name", "source", "sha256", "title", "pages", "added", "node"],
                ([d["id"], d["name"], d.get("source"), d.get("sha256"), d.get("title"), d.get("pages"), d.get("added"),
                  d.get("node")] for d in by_id(snapshot.documents)))
