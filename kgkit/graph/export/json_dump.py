"""JSON: the snapshot itself, one ``graph.json`` (keys sorted, items sorted by id).

The lossless format: every field of every item, evidence included, as the snapshot
contract in :mod:`kgkit.graph.snapshot` describes it. One item per line: readable,
diffable, and written by the C JSON encoder (an indented dump of a large graph is many
times slower).
"""
from __future__ import annotations

import json
from dataclasses import fields
from typing import Any, TextIO

from kgkit.graph.export.order import by_id, evidence_sorted
from kgkit.graph.export.registry import ExportOptions
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot

FORMAT_VERSION = 3  # 3: edges' stored properties; 2: documents as nodes (title, pages, added, node), scopes, items' documents; bumped when the shape of graph.json changes


def write_json_document(fh: TextIO, document: dict[str, Any]) -> None:
    """``document`` as JSON with its keys sorted, each element of a top-level list on a line of its own."""
    def dumps(value: Any) -> str:
        return json.dumps(value, ensure_ascii=False, sort_keys=True)

    fh.write("{")
    for i, key in enumerate(sorted(document)):
        value = document[key]
        fh.write(("," if i else "") + f"\n{dumps(key)}: ")
        if isinstance(value, list) and value:
            fh.write("[\n" + ",\n".join(dumps(item) for item in value) + "\n]")
        else:
            fh.write(dumps(value))
    fh.write("\n}\n")


def write_json(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    data = {f.name: getattr(snapshot, f.name) for f in fields(snapshot)}  # no deep copy: only read
    for key, items in data.items():
        if isinstance(items, list):
            data[key] = evidence_sorted(items) if key == "evidence" else by_id(items)
    data["kgkit_graph_export"] = FORMAT_VERSION
    write_json_document(out.open("graph.json"), data)
