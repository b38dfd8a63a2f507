"""O4 anchors: the figures, tables, equations and paragraph units a graph's documents are
anchored to, and "anchors about X" with their raw payload, so an answer can show or cite
them without opening the run folder.

A layout read (``reading: layout`` or ``scholarly``) stores each anchor as a node of its
document whose value is the payload: kind, modality, label, caption, serialised table
rows, equation or paragraph text, page, bounding box, section (kgkit/scholarly/anchor_nodes.py).
An anchor is about X when its label is X ("Table 2"), when its caption, rows or text name X
as a word, or when an entity whose key or alias is X's is ``grounded_in`` it. Labelled
matches rank first, then captions and rows, then text and grounding; ties by document and page.
"""
from __future__ import annotations

import re

from kgkit.errors import InputError, did_you_mean
from kgkit.query import anchor_reader
from kgkit.query.reader import Reader
from kgkit.query.results import Answer, Evidence, Node

KINDS = ("figure", "table", "equation", "paragraph")
#: What each reason an anchor is about X adds to its score.
WEIGHTS = {"label": 4.0, "caption": 2.0, "rows": 1.5, "grounded": 1.0, "text": 1.0}


def anchors(reader: Reader, *, about: str | None = None, kind: str | None = None, document: str | None = None,
            limit: int = 50) -> Answer:
    if kind is not None and kind not in KINDS:
        raise InputError(f"unknown anchor kind {kind!r}", hint=did_you_mean(kind, list(KINDS))
                         or f"expected one of {', '.join(KINDS)}")
    term = (about or "").strip() or None
    answer = Answer("anchors", reader.tenant, reader.version, {"about": term, "kind": kind, "document": document},
                    limits={"limit": limit})
    grounded = _grounded(reader, term) if term else set()
    found, stored = [], anchor_reader.anchors(reader, kind=kind, document=document, contains=term)
    seen = {a.node for a in stored}
    stored += [a for a in anchor_reader.anchors(reader, kind=kind, document=document, nodes=grounded - seen)]
    for anchor in stored:
        why = _why(anchor, term, grounded) if term else []
        if term and not why:
            continue
        found.append((sum(WEIGHTS[w] for w in why), anchor, why))
        if reader.budget.spent():
            answer.partial = True
            break
    if not found:
        if not anchor_reader.any_stored(reader, document):
            answer.note = ("no anchors: no document here was read with its layout "
                           "(a domain with reading: layout or scholarly, on a PDF)")
        return answer
    found.sort(key=lambda f: (-f[0], f[1].payload.get("label") is None, f[1].doc, f[1].payload.get("page", 0),
                              f[1].node))
    answer.cut("limit", len(found) - limit)
    ids = reader.doc_ids()
    degree = {e: info["degree"] for e, info in reader.entities(f[1].node for f in found[:limit]).items()}
    for score, anchor, why in found[:limit]:
        payload = anchor.payload
        quote = payload.get("caption") or payload.get("label")
        node = Node(anchor.node, anchor_reader.ANCHOR, anchor.name, [], [ids.get(anchor.doc, "")],
                    degree.get(anchor.node, 0),
                    score=score if term else None,
                    evidence=[Evidence(anchor.doc, ids.get(anchor.doc, ""), payload.get("page"), quote, None,
                                       "structure")])
        answer.nodes.append(node)
        answer.report.setdefault("anchors", []).append(
            {"id": anchor.node, "document": anchor.doc, "document_id": ids.get(anchor.doc, ""), "name": anchor.name,
             "why": why, **payload})
    return answer


def _grounded(reader: Reader, term: str) -> set[str]:
    """Anchor nodes that an entity named ``term`` (by key or alias) is ``grounded_in``."""
    entities = anchor_reader.named(reader, term)
    if not entities:
        return set()
    out = set()
    for stored in reader.incident(entities, relations=["grounded_in"]):
        ends = dict(stored.fillers)
        if ends.get("head") in entities and ends.get("tail"):
            out.add(ends["tail"])
    return out


def _why(anchor: anchor_reader.StoredAnchor, term: str, grounded: set[str]) -> list[str]:
    word = re.compile(rf"(?<!\w){re.escape(term)}(?!\w)", re.IGNORECASE)
    payload, why = anchor.payload, []
    if str(payload.get("label") or "").casefold() == term.casefold():
        why.append("label")
    if isinstance(payload.get("caption"), str) and word.search(payload["caption"]):
        why.append("caption")
    raw = payload.get("rows")
    rows: list = raw if isinstance(raw, list) else []
    if any(isinstance(cell, str) and word.search(cell) for row in rows if isinstance(row, list) for cell in row):
        why.append("rows")
    if isinstance(payload.get("text"), str) and word.search(payload["text"]):
        why.append("text")
    if anchor.node in grounded:
        why.append("grounded")
    return why
