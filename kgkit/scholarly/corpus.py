"""A paper's citations in the corpus graph: the paper itself and every work it cites as
``Paper`` nodes, with a ``CITES`` edge to each, keyed so that a cited work resolves to a
paper already in the store.

A paper's identity is, in order, its DOI, its arXiv id, then its normalised title with
year and first author's surname. The node is keyed by the first it has and claims the
others as aliases, so a reference that prints only a title and year still meets the
stored paper that printed its DOI too. What ``structure.json`` says about each citation
(intent, strength, mentions) stays in the run folder; the graph carries the link.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgkit.scholarly.anchor_nodes import add_layout
from kgkit.scholarly.references import surname
from kgkit.scholarly.text import fold

VIEW = "structure"


def identity_keys(doi: str | None, arxiv: str | None, title: str | None, year: Any, first_author: str | None
                  ) -> list[str]:
    """The keys a paper is known by, strongest first (empty when it has none of them)."""
    keys = []
    if doi:
        keys.append("doi:" + doi.strip().lower().rstrip("."))
    if arxiv:
        keys.append("arxiv:" + re.sub(r"v\d+$", "", arxiv.strip().lower()))
    if title and year and first_author:
        words = re.sub(r"[^0-9a-z ]", "", " ".join(fold(w) for w in title.split()))
        keys.append(f"title:{words} {str(year)[:4]} {re.sub(r'[^a-z]', '', fold(first_author))}")
    return keys


def add_structure(contribution, run: Path, digest, rename: dict[str, str] | None = None) -> None:
    """Add what ``run/structure.json`` holds to a run folder's graph contribution: its
    sections and anchors (any layout read, :mod:`kgkit.scholarly.anchor_nodes`) and, for
    a ``reading: scholarly`` run, the paper and its cited works; nothing for other runs.
    ``rename`` maps the run folder's node ids to graph ids (kgkit.graph.runs.scoped_ids)."""
    path = run / "structure.json"
    if not path.is_file():
        return
    raw = path.read_bytes()
    digest.update(b"structure.json\0" + raw)
    try:
        data = json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError):
        return  # the views and nodes still go in; a damaged structure file adds nothing
    if not isinstance(data, dict) or data.get("reading") not in ("layout", "scholarly"):
        return
    own = _add_paper(contribution, data) if data.get("reading") == "scholarly" else None
    add_layout(contribution, data, rename or {}, own or contribution.doc_node)


def _add_paper(contribution, data: dict[str, Any]) -> str | None:
    """The paper's node and a ``CITES`` edge to each cited work; the paper's node id (None:
    the paper has no identity to key it by)."""
    meta = data.get("metadata") or {}
    value = lambda field: (meta.get(field) or {}).get("value")  # noqa: E731
    authors = meta.get("authors") or []
    own_keys = identity_keys(value("doi"), value("arxiv_id"), value("title"), value("year"),
                             surname(authors[0]["value"]) if authors else None)
    if not own_keys:
        return None
    own = f"{contribution.doc_id}/paper"
    _node(contribution, own, value("title") or contribution.doc, own_keys)
    for i, ref in enumerate(data.get("references") or [], start=1):
        keys = identity_keys(ref.get("doi"), ref.get("arxiv_id"), ref.get("title"), ref.get("year"),
                             ref.get("first_author_surname"))
        if not keys:
            continue
        work = f"{contribution.doc_id}/work/{i}"
        _node(contribution, work, ref.get("title") or ref.get("raw", "")[:120], keys)
        item = f"cites_{i}"
        contribution.items.append({"view": VIEW, "item": item, "kind": "edge",
                                   "body": {"head": own, "relation": "CITES", "tail": work},
                                   "confidence": None, "held": None, "review_key": None})
        contribution.evidence.append((item, VIEW, None, ref.get("page"), None, None, ref.get("raw")))
    return own


def _node(contribution, node: str, name: str, keys: list[str]) -> None:
    contribution.nodes.append({"node": node, "type": "Paper", "key": keys[0], "name": name, "aliases": []})
    for key in keys[1:]:
        contribution.claims.append((node, "Paper", key))
