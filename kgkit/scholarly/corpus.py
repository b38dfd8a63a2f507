"""A paper's citations in the corpus graph: the paper itself and every work it cites as
``Paper`` nodes, with a ``CITES`` edge to each, keyed so that a cited work resolves to a
paper already in the store.

The paper's authors (in printed order) and venue come in with it as ``Author`` and
``Venue`` nodes, joined by the structural ``AUTHORED_BY`` and ``PUBLISHED_IN`` edges.
A paper's identity is, in order, its DOI, its arXiv id, its normalised title with year
and first author's surname, then title and first author alone (so a paper whose first page
prints no year still has a node, and meets the references that name it). The node is
keyed by the first it has and claims the others as aliases, so a reference that prints
only a title and year still meets the stored paper that printed its DOI too. Each ``CITES`` edge carries what
``structure.json`` says of the citation as the edge's properties (:data:`CITES_PROPERTIES`:
intent, its SciCite and ACL-ARC labels, the finer function, the five-level strength and
its label, the count of in-text mentions and the sections they are in), and its evidence
is the reference entry (its page and printed text) and each citing sentence (page, span
and text), so an export or a query answer shows why and how strongly a paper cites a work.
"""
from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from kgkit.scholarly.anchor_nodes import add_layout
from kgkit.scholarly.references import surname
from kgkit.scholarly.text import fold
from kgkit.text.name_keys import canonical_key

VIEW = "structure"
#: Bumped when what the store takes from ``structure.json`` changes, so re-adding a run
#: folder stored before brings the new parts in (2: CITES properties, authors and venue).
READ_VERSION = b"structure.json/3"  # 3: affiliations, CITES tagged structural
#: What a ``CITES`` edge keeps of a cited work's entry in ``structure.json``.
CITES_PROPERTIES = ("intent", "scicite", "aclarc", "function", "strength", "strength_label", "mentions")


def identity_keys(doi: str | None, arxiv: str | None, title: str | None, year: Any, first_author: str | None
                  ) -> list[str]:
    """The keys a paper is known by, strongest first (empty when it has none of them)."""
    keys = []
    if doi:
        keys.append("doi:" + doi.strip().lower().rstrip("."))
    if arxiv:
        keys.append("arxiv:" + re.sub(r"v\d+$", "", arxiv.strip().lower()))
    if title and first_author:
        words = re.sub(r"[^0-9a-z ]", "", " ".join(fold(w) for w in title.split()))
        author = re.sub(r"[^a-z]", "", fold(first_author))
        if year:
            keys.append(f"title:{words} {str(year)[:4]} {author}")
        keys.append(f"work:{words} {author}")  # the weakest: a paper whose first page prints no year
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
    digest.update(READ_VERSION + b"\0" + raw)
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
    _add_meta(contribution, own, meta)
    for i, ref in enumerate(data.get("references") or [], start=1):
        keys = identity_keys(ref.get("doi"), ref.get("arxiv_id"), ref.get("title"), ref.get("year"),
                             ref.get("first_author_surname"))
        if not keys:
            continue
        work = f"{contribution.doc_id}/work/{i}"
        _node(contribution, work, ref.get("title") or ref.get("raw", "")[:120], keys)
        item = f"cites_{i}"
        body: dict[str, Any] = {"head": own, "relation": "CITES", "tail": work}
        body["properties"] = {"kind": "structural", **citation_properties(ref)}
        contribution.items.append({"view": VIEW, "item": item, "kind": "edge", "body": body,
                                   "confidence": None, "held": None, "review_key": None})
        contribution.evidence.append((item, VIEW, None, _int(ref.get("page")), None, None, _text(ref.get("raw"))))
        for mention in _mentions(ref):
            contribution.evidence.append((item, VIEW, None, *mention))
    return own


def _add_meta(contribution, own: str, meta: dict[str, Any]) -> None:
    """Module A's structural relations, materialised from the first page's layout, never
    from a sentence: ``AUTHORED_BY`` to each author in printed order (the node keyed by
    the printed name, so one author of two stored papers is one node), ``AFFILIATED_WITH``
    from an author to each affiliation the page ties them to (keyed by the printed text)
    and ``PUBLISHED_IN`` to the venue; each edge's properties say it is structural."""
    affiliations = _list(meta.get("affiliations"))
    for j, field in enumerate(affiliations, start=1):
        _meta_node(contribution, "Affiliation", j, field)
    for i, author in enumerate(_list(meta.get("authors")), start=1):
        node = _meta_node(contribution, "Author", i, author)
        if node is None:
            continue
        _meta_edge(contribution, f"authored_by_{i}", own, "AUTHORED_BY", node, author, {"order": i})
        for j in _list(author.get("affiliations")):
            if isinstance(j, int) and not isinstance(j, bool) and 0 <= j < len(affiliations):
                target = f"{contribution.doc_id}/affiliation/{j + 1}"
                if any(n["node"] == target for n in contribution.nodes):
                    _meta_edge(contribution, f"affiliated_with_{i}_{j + 1}", node, "AFFILIATED_WITH", target,
                               affiliations[j], {})
    venue = _meta_node(contribution, "Venue", 1, meta.get("venue"))
    if venue is not None:
        _meta_edge(contribution, "published_in_1", own, "PUBLISHED_IN", venue, meta["venue"], {})


def _meta_node(contribution, type_: str, order: int, field: Any) -> str | None:
    """A module-A node of the corpus graph keyed by its printed name (None: no name printed)."""
    if not isinstance(field, dict) or not isinstance(field.get("value"), str) or not field["value"].strip():
        return None
    name = field["value"].strip()
    node = f"{contribution.doc_id}/{type_.lower()}/{order}"
    contribution.nodes.append({"node": node, "type": type_, "key": canonical_key(name), "name": name,
                               "aliases": [], "scope": "corpus", "value": None})
    page, span = _where(field)
    contribution.evidence.append((node, VIEW, None, page, span[0], span[1], name))
    return node


def _meta_edge(contribution, item: str, head: str, relation: str, tail: str, field: dict[str, Any],
               properties: dict[str, Any]) -> None:
    contribution.items.append({"view": VIEW, "item": item, "kind": "edge",
                               "body": {"head": head, "relation": relation, "tail": tail,
                                        "properties": {"kind": "structural", **properties}},
                               "confidence": None, "held": None, "review_key": None})
    page, span = _where(field)
    contribution.evidence.append((item, VIEW, None, page, span[0], span[1], field["value"].strip()))


def _where(field: dict[str, Any]) -> tuple[int | None, list[Any]]:
    printed = field.get("span")
    return _int(field.get("page")), (printed if isinstance(printed, list) and len(printed) == 2 else [None, None])


def citation_properties(ref: dict[str, Any]) -> dict[str, Any]:
    """A ``CITES`` edge's properties from a cited work of ``structure.json`` (what a damaged
    entry lacks, or gives in the wrong type, is left out): intent, labels, strength, the
    mention count and the sorted distinct sections of its mentions."""
    out: dict[str, Any] = {}
    for name in CITES_PROPERTIES:
        value = ref.get(name)
        if name in ("strength", "mentions"):
            if isinstance(value, int) and not isinstance(value, bool):
                out[name] = value
        elif isinstance(value, str) and value:
            out[name] = value
    sections = sorted({e["section"] for e in _list(ref.get("evidence")) if isinstance(e, dict) and isinstance(e.get("section"), str)})
    if sections:
        out["sections"] = sections
    return out


def _mentions(ref: dict[str, Any]) -> list[tuple]:
    """(page, start, end, sentence) of each citing sentence structure.json lists for a work."""
    out = []
    for e in _list(ref.get("evidence")):
        if not isinstance(e, dict) or not isinstance(e.get("sentence"), str):
            continue
        span = e.get("sentence_span")  # the sentence's own span (the marker's is "span")
        start, end = (span[0], span[1]) if isinstance(span, list) and len(span) == 2 and all(
            isinstance(x, int) for x in span) else (None, None)
        out.append((_int(e.get("page")), start, end, e["sentence"]))
    return out


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _node(contribution, node: str, name: str, keys: list[str]) -> None:
    contribution.nodes.append({"node": node, "type": "Paper", "key": keys[0], "name": name, "aliases": []})
    for key in keys[1:]:
        contribution.claims.append((node, "Paper", key))
