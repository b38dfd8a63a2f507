"""JSON: the snapshot itself, one ``graph.json`` (keys sorted, items sorted by id).

The lossless format: every field of every item, evidence included, as the snapshot
contract in :mod:`kgkit.graph.snapshot` describes it.
"""
from __future__ import annotations

import json
from dataclasses import asdict

from kgkit.graph.export.order import by_id, evidence_sorted
from kgkit.graph.export.registry import ExportOptions
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot

FORMAT_VERSION = 1  # bumped when the shape of graph.json changes


def write_json(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    data = asdict(snapshot)
    for key, items in data.items():
        if isinstance(items, list):
            data[key] = evidence_sorted(items) if key == "evidence" else by_id(items)
    data["kgkit_graph_export"] = FORMAT_VERSION
    out.open("graph.json").write(json.dumps(data, ensure_ascii=False, indent=2, sort_keys=True) + "\n")
