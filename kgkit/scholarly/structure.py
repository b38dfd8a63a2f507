"""``structure.json``: what a layout read adds to a run folder, as data and as a graph.

The graph is the design's middle layer: the document, its sections (``belongs_to`` their
parent section or the document), its anchors (figures, tables, equations, paragraph
units, each ``belongs_to`` its section), the entities of ``nodes.json`` ``grounded_in``
the anchors their mentions fall in; for a paper also module A's and D's structural
relations (``kind: structural``): its authors (``AUTHORED_BY``), their affiliations
(``AFFILIATED_WITH``), its venue (``PUBLISHED_IN``) and the cited works (``CITES``, with
intent, strength and the citing sentences as evidence).
"""
from __future__ import annotations

import bisect
from typing import Any

from kgkit.documents.types import Document
from kgkit.scholarly.paper import Paper, anchors, read_paper, sections

STRUCTURE_VERSION = 1


def structure_payload(doc: Document, nodes: list[dict[str, Any]], *, scholarly: bool) -> dict[str, Any]:
    layout = doc.layout
    paper: Paper | None = read_paper(layout) if scholarly else None
    secs = paper.sections if paper else sections(layout.blocks)
    anchs = paper.anchors if paper else anchors(layout.blocks)
    out: dict[str, Any] = {"version": STRUCTURE_VERSION, "doc_id": doc.id,
                           "reading": "scholarly" if scholarly else "layout",
                           "pages": [{"number": i + 1, "width": w, "height": h}
                                     for i, (w, h) in enumerate(layout.page_sizes)],
                           "blocks": [b.as_dict() for b in layout.blocks]}
    if paper:
        out.update(paper.as_dict())
    else:
        out.update({"sections": [s.as_dict() for s in secs], "anchors": [a.as_dict() for a in anchs]})
    out["graph"] = graph(doc, secs, anchs, nodes, paper)
    return out


def graph(doc: Document, secs, anchs, nodes: list[dict[str, Any]], paper: Paper | None) -> dict[str, list]:
    gnodes: list[dict[str, Any]] = [{"id": doc.id, "type": "Document", "name": doc.title or doc.name}]
    edges: list[dict[str, Any]] = []
    section_id = {}
    for i, s in enumerate(secs):
        sid = f"{doc.id}/section/{i + 1}"
        section_id[s.name] = sid
        gnodes.append({"id": sid, "type": "Section", "name": s.name, "level": s.level, "page": s.page,
                       "span": list(s.span)})
        edges.append({"source": sid, "target": section_id.get(s.parent, doc.id) if s.parent else doc.id,
                      "type": "belongs_to"})
    starts = []
    for a in anchs:
        aid = f"{doc.id}/anchor/{a.id}"
        node = {"id": aid, "type": "Anchor", "kind": a.kind, "modality": a.modality, "label": a.label,
                "caption": a.caption, "page": a.page, "bbox": [round(v, 1) for v in a.bbox], "span": list(a.span)}
        gnodes.append({k: v for k, v in node.items() if v is not None})
        edges.append({"source": aid, "target": section_id.get(a.section, doc.id), "type": "belongs_to"})
        starts.append((a.span[0], a.span[1], aid))
    starts.sort()
    edges += _grounding(nodes, starts)
    if paper:
        _paper_graph(doc, paper, gnodes, edges)
    return {"nodes": gnodes, "edges": edges}


def _paper_graph(doc: Document, paper: Paper, gnodes: list[dict[str, Any]], edges: list[dict[str, Any]]) -> None:
    """Modules A and D as a graph, all of it structural (read from the layout, never from a
    sentence): ``AUTHORED_BY`` each author, ``AFFILIATED_WITH`` (an author to each
    affiliation the page ties them to), ``PUBLISHED_IN`` the venue, ``CITES`` each cited
    work (with intent, strength and the citing sentences)."""
    meta = paper.metadata
    for j, affiliation in enumerate(meta.affiliations):
        gnodes.append({"id": f"{doc.id}/affiliation/{j + 1}", "type": "Affiliation", "name": affiliation.value,
                       "page": affiliation.page})
    for i, author in enumerate(meta.authors):
        au = f"{doc.id}/author/{i + 1}"
        gnodes.append({"id": au, "type": "Author", "name": author.value, "order": i + 1, "page": author.page})
        edges.append({"source": doc.id, "target": au, "type": "AUTHORED_BY", "kind": "structural"})
        for j in (meta.author_affiliations[i] if i < len(meta.author_affiliations) else []):
            edges.append({"source": au, "target": f"{doc.id}/affiliation/{j + 1}", "type": "AFFILIATED_WITH",
                          "kind": "structural"})
    if meta.venue is not None:
        gnodes.append({"id": f"{doc.id}/venue", "type": "Venue", "name": meta.venue.value, "page": meta.venue.page})
        edges.append({"source": doc.id, "target": f"{doc.id}/venue", "type": "PUBLISHED_IN", "kind": "structural"})
    for i, work in enumerate(paper.works):
        data = work.as_dict()
        wid = f"{doc.id}/work/{i + 1}"
        gnodes.append({"id": wid, "type": "CitedWork", "name": data["title"] or data["raw"][:120],
                       "key": data["key"], "year": data["year"], "first_author": data["first_author_surname"],
                       "doi": data["doi"], "arxiv_id": data["arxiv_id"], "page": data["page"]})
        edges.append({"source": doc.id, "target": wid, "type": "CITES", "kind": "structural",
                      "intent": data["intent"], "function": data["function"], "scicite": data["scicite"],
                      "aclarc": data["aclarc"], "strength": data["strength"],
                      "strength_label": data["strength_label"], "mentions": data["mentions"],
                      "evidence": data["evidence"]})


def _grounding(nodes: list[dict[str, Any]], anchors: list[tuple[int, int, str]]) -> list[dict[str, Any]]:
    """``grounded_in`` edges: each entity to the anchors its mentions' spans start in."""
    firsts = [a[0] for a in anchors]
    edges, seen = [], set()
    for node in nodes:
        for mention in node.get("mentions", ()):
            span = mention.get("span")
            if not span:
                continue
            i = bisect.bisect_right(firsts, span[0]) - 1
            if i >= 0 and anchors[i][0] <= span[0] < anchors[i][1] and (node["id"], anchors[i][2]) not in seen:
                seen.add((node["id"], anchors[i][2]))
                edges.append({"source": node["id"], "target": anchors[i][2], "type": "grounded_in",
                              "span": list(span)})
    return edges
