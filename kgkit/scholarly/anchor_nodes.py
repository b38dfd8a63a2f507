"""A layout read's middle layer in the corpus graph: sections and semantic anchors as nodes
of their document, so "anchors about X" (the query layer's O4) answers from the store.

Each figure, table, equation and paragraph unit of ``structure.json`` becomes an ``Anchor``
node whose value is its raw payload (kind, modality, label, caption, table rows, equation
or paragraph text, page, bounding box, section, span); each section a ``Section`` node.
Anchors ``belongs_to`` their section, sections their parent section or the document's own
node (a paper's, else the domain's document node), and every entity of ``nodes.json`` is
``grounded_in`` the anchors its mentions fall in. All of them are scoped to the document:
"Figure 1" of one paper never merges with another's.
"""
from __future__ import annotations

from typing import Any

from kgkit import ids
from kgkit.text.name_keys import canonical_key

VIEW = "structure"
KINDS = ("figure", "table", "equation", "paragraph")
#: The payload an anchor node carries (structure.json's anchor fields, text filled from its block).
PAYLOAD = ("kind", "modality", "label", "printed_label", "caption", "rows", "text", "page", "bbox", "section", "span")


def anchor_node_id(doc: str, anchor: str) -> str:
    """The graph id of a document's anchor (by the document's name, which an edit keeps)."""
    return ids.scoped_node_id(doc, "Anchor:" + anchor)


def anchor_name(anchor: dict[str, Any]) -> str:
    """A label when the anchor has one ("Table 2"), else what and where it is."""
    if anchor.get("label"):
        return str(anchor["label"])
    where = f", {anchor['section']}" if anchor.get("section") else ""
    return f"{anchor['kind']} {anchor['id']} (page {anchor['page']}{where})"


def add_layout(contribution, data: dict[str, Any], rename: dict[str, str], top: str | None) -> None:
    """Add ``data``'s (a parsed ``structure.json``) sections and anchors to a run folder's
    contribution; ``rename`` maps run-folder node ids to graph ids, ``top`` is the node
    top-level sections belong to (None: they belong to nothing)."""
    doc = contribution.doc
    sections: dict[str, str] = {}
    for i, sec in enumerate(_dicts(data.get("sections"))):
        if not isinstance(sec.get("name"), str) or not sec["name"].strip():
            continue
        node = ids.scoped_node_id(doc, f"Section:{i + 1}")
        sections.setdefault(sec["name"], node)
        _node(contribution, node, "Section", sec["name"], {"level": sec.get("level"), "page": sec.get("page")})
        _evidence(contribution, node, sec.get("page"), sec.get("span"), sec["name"])
        parent = sections.get(str(sec["parent"])) if sec.get("parent") else top
        if parent and parent != node:
            _edge(contribution, f"section_{i + 1}", node, "belongs_to", parent)
    blocks = {tuple(b["span"]): b.get("text") for b in _dicts(data.get("blocks"))
              if isinstance(b.get("span"), list) and len(b["span"]) == 2}
    anchors: dict[str, str] = {}  # structure.json's anchor id -> graph id
    for anchor in _dicts(data.get("anchors")):
        if not _usable(anchor) or f"{contribution.doc_id}/anchor/{anchor['id']}" in anchors:
            continue
        node = anchor_node_id(doc, anchor["id"])
        anchors[f"{contribution.doc_id}/anchor/{anchor['id']}"] = node
        payload = {k: anchor.get(k) for k in PAYLOAD if anchor.get(k) not in (None, [], "")}
        if "text" not in payload and anchor["kind"] in ("paragraph", "equation"):
            text = blocks.get(tuple(anchor.get("span") or ()))
            if text:
                payload["text"] = text
        _node(contribution, node, "Anchor", anchor_name(anchor), payload)
        _evidence(contribution, node, anchor["page"], anchor.get("span"),
                  anchor.get("caption") or anchor.get("label"))
        owner = (sections.get(anchor["section"]) if isinstance(anchor.get("section"), str) else None) or top
        if owner:
            _edge(contribution, f"anchor_{anchor['id']}", node, "belongs_to", owner)
    known = {n["node"] for n in contribution.nodes}
    for edge in _dicts((data.get("graph") or {}).get("edges") if isinstance(data.get("graph"), dict) else None):
        if edge.get("type") != "grounded_in" or not isinstance(edge.get("source"), str):
            continue
        entity, target = rename.get(edge["source"], edge["source"]), anchors.get(str(edge.get("target")))
        if target and entity in known:
            span = edge.get("span") if isinstance(edge.get("span"), list) else None
            _edge(contribution, f"grounded_{len(contribution.items)}", entity, "grounded_in", target, span)


def _usable(anchor: dict[str, Any]) -> bool:
    return (anchor.get("kind") in KINDS and isinstance(anchor.get("id"), str) and bool(anchor["id"])
            and isinstance(anchor.get("page"), int))


def _dicts(value: Any) -> list[dict[str, Any]]:
    return [v for v in value if isinstance(v, dict)] if isinstance(value, list) else []


def _node(contribution, node: str, type_: str, name: str, value: dict[str, Any]) -> None:
    contribution.nodes.append({"node": node, "type": type_, "key": canonical_key(name), "name": name,
                               "aliases": [], "scope": "document", "value": value})


def _edge(contribution, item: str, head: str, relation: str, tail: str, span: list | None = None) -> None:
    contribution.items.append({"view": VIEW, "item": item, "kind": "edge",
                               "body": {"head": head, "relation": relation, "tail": tail},
                               "confidence": None, "held": None, "review_key": None})
    start, end = (span + [None, None])[:2] if span else (None, None)
    contribution.evidence.append((item, VIEW, None, None, start, end, None))


def _evidence(contribution, node: str, page: Any, span: Any, quote: Any) -> None:
    start, end = (span[0], span[1]) if isinstance(span, list) and len(span) == 2 else (None, None)
    contribution.evidence.append((node, VIEW, None, page if isinstance(page, int) else None, start, end,
                                  quote if isinstance(quote, str) else None))
