"""A paper read whole: layout, metadata (module A), sections, semantic anchors, the
reference list as cited works and the in-text citations typed by intent and strength
(module D). Everything here is deterministic; the LLM views add modules B, C and E."""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgkit.documents.layout.model import CAPTION, EQUATION, HEADING, PARAGRAPH, TABLE_ROW, Block, LayoutDocument
from kgkit.documents.layout.tables import gapped, table_cells
from kgkit.scholarly.citations import Citation, find_citations
from kgkit.scholarly.intent import ACLARC, INTENT, SCICITE, citation_function, mention_level, pooled_strength
from kgkit.scholarly.metadata import Metadata, read_metadata
from kgkit.scholarly.references import Reference, read_references

MODALITY = {"figure": "image", "table": "table", "equation": "equation", "paragraph": "text"}


@dataclass
class Anchor:
    """A semantic anchor: a figure, table, equation or paragraph unit, with what a reader
    needs to find it on the page."""

    id: str
    kind: str  # figure | table | equation | paragraph
    label: str | None
    printed_label: str | None
    caption: str | None
    page: int
    bbox: tuple[float, float, float, float]
    section: str | None
    span: tuple[int, int]
    rows: list[list[str]] = field(default_factory=list)
    text: str | None = None  # equation text as the layer gives it; a paragraph's text

    @property
    def modality(self) -> str:
        return MODALITY[self.kind]

    def as_dict(self) -> dict:
        out: dict[str, Any] = {"id": self.id, "kind": self.kind, "modality": self.modality, "label": self.label,
               "printed_label": self.printed_label, "caption": self.caption, "page": self.page,
               "bbox": [round(v, 1) for v in self.bbox], "section": self.section, "span": list(self.span)}
        if self.rows:
            out["rows"] = self.rows
        if self.text is not None:
            out["text"] = self.text
        return out


@dataclass
class Section:
    number: str | None
    text: str
    level: int
    page: int
    span: tuple[int, int]
    parent: str | None

    @property
    def name(self) -> str:
        return f"{self.number} {self.text}" if self.number else self.text

    def as_dict(self) -> dict:
        return {"name": self.name, "number": self.number, "text": self.text, "level": self.level,
                "page": self.page, "span": list(self.span), "parent": self.parent}


@dataclass
class CitedWork:
    reference: Reference
    mentions: list[Citation]
    functions: list[str]

    def as_dict(self) -> dict:
        strength = pooled_strength(self.functions)
        top = max(self.functions, key=mention_level) if self.functions else None
        return {**self.reference.as_dict(), "mentions": len(self.mentions),
                "intent": INTENT[top] if top else None, "function": top,
                "scicite": SCICITE[top] if top else None, "aclarc": ACLARC[top] if top else None,
                "strength": strength.level, "strength_label": strength.label,
                "evidence": [{"sentence": c.sentence, "section": c.section, "page": c.page, "span": list(c.span),
                              "sentence_span": list(c.sentence_span), "function": f}
                             for c, f in zip(self.mentions, self.functions)][:20]}


@dataclass
class Paper:
    layout: LayoutDocument
    metadata: Metadata
    sections: list[Section]
    anchors: list[Anchor]
    references: list[Reference]
    citations: list[Citation]
    works: list[CitedWork]

    def as_dict(self) -> dict:
        return {"metadata": self.metadata.as_dict(), "sections": [s.as_dict() for s in self.sections],
                "anchors": [a.as_dict() for a in self.anchors],
                "references": [w.as_dict() for w in self.works],
                "citations": [dict(c.as_dict(), function=citation_function(c.sentence)) for c in self.citations],
                "warnings": self.layout.warnings}


def read_paper(layout: LayoutDocument) -> Paper:
    refs = read_references(layout.blocks)
    citations = find_citations(layout.blocks, refs)
    by_key: dict[str, list[Citation]] = {r.key: [] for r in refs}
    for c in citations:
        for key in c.refs:
            by_key.setdefault(key, []).append(c)
    works = [CitedWork(r, by_key[r.key], [citation_function(c.sentence) for c in by_key[r.key]]) for r in refs]
    return Paper(layout=layout, metadata=read_metadata(layout), sections=sections(layout.blocks),
                 anchors=anchors(layout.blocks), references=refs, citations=citations, works=works)


def sections(blocks: list[Block]) -> list[Section]:
    out: list[Section] = []
    for b in blocks:
        if b.kind == HEADING:
            parent = b.section_path[-2] if b.section_path and len(b.section_path) > 1 else None
            out.append(Section(b.number, b.text, b.level or 1, b.page, (b.start, b.end), parent))
    return out


def anchors(blocks: list[Block]) -> list[Anchor]:
    """One anchor per numbered figure, table and equation (a float continued on a later
    page counts once, at its first caption) and one per paragraph."""
    out: list[Anchor] = []
    seen: set[str] = set()
    paragraphs = 0
    tables: dict[int, Anchor] = {}  # caption block index -> its table's anchor
    for i, b in enumerate(blocks):
        if b.kind in (CAPTION, EQUATION) and b.label:
            if b.label in seen:
                continue
            seen.add(b.label)
            kind = "equation" if b.kind == EQUATION else b.label.split()[0].lower()
            anchor = Anchor(id=_anchor_id(b.label), kind=kind, label=b.label, printed_label=b.printed_label,
                            caption=None if kind == "equation" else _caption_text(b), page=b.page, bbox=b.bbox,
                            section=b.section, span=(b.start, b.end),
                            text=b.text if kind == "equation" else None)
            if kind == "table":
                tables[i] = anchor
            out.append(anchor)
        elif b.kind == PARAGRAPH:
            paragraphs += 1
            out.append(Anchor(id=f"p{paragraphs}", kind="paragraph", label=None, printed_label=None, caption=None,
                              page=b.page, bbox=b.bbox, section=b.section, span=(b.start, b.end)))
    for i, rows in table_rows(blocks, sorted(tables)).items():
        tables[i].rows = rows
    return out


def _anchor_id(label: str) -> str:
    return re.sub(r"\W+", "_", label.lower())


def _caption_text(b: Block) -> str:
    text = b.text[len(b.printed_label or ""):].strip(" .:|")
    return text or b.text


def table_rows(blocks: list[Block], captions: list[int]) -> dict[int, list[list[str]]]:
    """The rows of each table caption (by block index): the run of table-row blocks set
    next to it above or below (templates put captions on either side). Every run is a
    candidate of the captions beside it, at the gap between the caption and the run's
    block nearest to it; runs go to captions nearest first (runs with rows the layer split
    before runs of text lines only), and a run, like a caption, is taken once, so two
    tables stacked on a page, one caption between them, never read the same rows."""
    candidates = sorted((not any(blocks[k].kind == TABLE_ROW for k in owned), gap, i, rows, owned)
                        for i in captions for gap, rows, owned in _runs_beside(blocks, i))
    out: dict[int, list[list[str]]] = {}
    taken: set[int] = set()
    for _text_only, _gap, i, rows, owned in candidates:
        if i in out or taken & owned:
            continue
        out[i] = rows[:200]
        taken |= owned
    return out


def _runs_beside(blocks: list[Block], i: int) -> list[tuple[float, list[list[str]], frozenset[int]]]:
    """(gap, rows, indices of the table's blocks) of the run below and of the run above
    caption ``i`` on its page, stopping at another caption. A table's blocks are its rows
    and the paragraphs whose words leave column gaps (a table the layer gave as lines of
    text); another paragraph may sit between the caption and the rows (a line the words do
    not split into cells). The rows are the cells the words' positions give
    (:func:`~kgkit.documents.layout.tables.table_cells`), else the rows' own segments."""
    cap = blocks[i]
    found = []
    for step in (1, -1):
        j, gap = i + step, None
        owned: list[int] = []
        while 0 <= j < len(blocks) and blocks[j].page == cap.page and blocks[j].kind in (TABLE_ROW, PARAGRAPH):
            b = blocks[j]
            if gap is None:  # the block next to the caption, row or not, is where the table begins
                gap = b.bbox[1] - cap.bbox[3] if step == 1 else cap.bbox[1] - b.bbox[3]
            if b.kind == TABLE_ROW or _tabular(b):
                owned.append(j)
            elif owned or abs(j - i) > 2:
                break
            j += step
        owned.sort()
        lines = [line for k in owned for line in blocks[k].lines]
        rows = table_cells(lines) or [row for k in owned for row in blocks[k].rows]
        if rows and gap is not None:
            found.append((abs(gap), rows, frozenset(owned)))
    return found


def _tabular(b: Block) -> bool:
    """A paragraph that is a table's text: two lines or more, and most of them leave a column gap."""
    return b.kind == PARAGRAPH and len(b.lines) >= 2 and 2 * sum(gapped(line) for line in b.lines) > len(b.lines)
