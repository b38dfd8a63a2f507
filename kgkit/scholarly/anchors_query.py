"""Anchors about X (the design's O4 operator) from a run's ``structure.json``: the
figures, tables, equations and paragraph units that are about a term, with their raw
payload (caption, table rows, equation text, page, bounding box) so an answer can show or
cite them. An anchor is about X when its label is X ("Table 2"), when its caption, rows
or text mention X, or when an entity named X is ``grounded_in`` it."""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgkit.errors import InputError


def load_structure(run_dir: str | Path) -> dict[str, Any]:
    path = Path(run_dir) / "structure.json"
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"{path}: missing; extract with a domain that reads layout (reading: layout or scholarly)") \
            from None
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path}: unreadable JSON ({exc})") from None


def anchors_about(structure: dict[str, Any], term: str, *, nodes: list[dict[str, Any]] | None = None,
                  kinds: tuple[str, ...] = ("figure", "table", "equation", "paragraph")) -> list[dict[str, Any]]:
    """The anchors about ``term``, labelled ones first, each with ``why`` (label, caption,
    rows, text, grounded). ``nodes`` (``nodes.json``'s list) lets entity names count."""
    term = term.strip()
    if not term:
        return []
    word = re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE)
    grounded = _grounded(structure, term, nodes or [])
    blocks = {tuple(b["span"]): b["text"] for b in structure.get("blocks", [])}
    found = []
    for anchor in structure.get("anchors", []):
        if anchor.get("kind") not in kinds:
            continue
        why = []
        if anchor.get("label") and anchor["label"].lower() == term.lower():
            why.append("label")
        if anchor.get("caption") and word.search(anchor["caption"]):
            why.append("caption")
        if any(word.search(cell) for row in anchor.get("rows", []) for cell in row):
            why.append("rows")
        body = anchor.get("text") or blocks.get(tuple(anchor.get("span", ())))  # a paragraph's text is its block's
        if body and word.search(body) and anchor.get("kind") in ("paragraph", "equation"):
            why.append("text")
        if anchor.get("id") in grounded:
            why.append("grounded")
        if why:
            found.append({**anchor, "why": why})
    return sorted(found, key=lambda a: (a.get("label") is None, a.get("page", 0)))


def _grounded(structure: dict[str, Any], term: str, nodes: list[dict[str, Any]]) -> set[str]:
    """Ids (``anchor.id``) of anchors an entity named ``term`` (or aliased so) is grounded in."""
    wanted = {n["id"] for n in nodes
              if term.lower() in [str(n.get("name", "")).lower(), *(str(a).lower() for a in n.get("aliases", []))]}
    out = set()
    for edge in (structure.get("graph") or {}).get("edges", []):
        if edge.get("type") == "grounded_in" and edge.get("source") in wanted:
            out.add(str(edge["target"]).rsplit("/anchor/", 1)[-1])
    return out
