"""The document model a layout reader produces: blocks in reading order, each with its
kind, text, page, bounding box and section, and the offsets of its text in the
:class:`~kgkit.documents.types.Document` kgkit shows (so spans index that text)."""
from __future__ import annotations

from dataclasses import dataclass, field

# Block kinds. A caption carries its anchor's label ("Figure 3"); an equation block is the
# display line that carries a printed number ("(4)").
PARAGRAPH, HEADING, CAPTION, EQUATION, TABLE_ROW, TITLE = (
    "paragraph", "heading", "caption", "equation", "table_row", "title")

BBox = tuple[float, float, float, float]  # x0, top, x1, bottom in PDF points, top-left origin


@dataclass(frozen=True)
class Segment:
    """A run of words on one line with no wide gap inside (a table cell, an author's name)."""

    text: str
    x0: float
    x1: float


@dataclass(frozen=True)
class Line:
    """One printed line of one column, words joined as read."""

    text: str
    page: int
    bbox: BBox
    size: float  # the line's dominant font size
    bold: bool  # every word in a bold face
    column: int  # 0 left / single, 1 right, -1 spans the columns
    segments: tuple[Segment, ...] = ()
    font: str = ""  # the face most of its letters are set in (subset prefix dropped)
    italic: bool = False
    words: tuple[Segment, ...] = ()  # each word where it is printed: a table's cells by their columns


@dataclass
class Block:
    kind: str
    text: str
    page: int
    bbox: BBox
    size: float = 0.0
    bold: bool = False
    section: str | None = None  # the heading this block sits under ("2.1 New Corpora")
    label: str | None = None  # captions and equations: "Table 2", "Figure 1", "Equation 4"
    printed_label: str | None = None  # as printed: "Fig. 1.", "(4)"
    level: int | None = None  # headings: 1 for a top-level heading
    number: str | None = None  # headings: "2.1"
    rows: list[list[str]] = field(default_factory=list)  # tables read as rows, where the layer allows
    section_path: list[str] | None = None  # the headings above it, outermost first
    start: int = 0  # offsets of text in the shown document text
    end: int = 0
    lines: list[Line] = field(default_factory=list, repr=False)  # as printed, for readers of line structure

    def as_dict(self) -> dict:
        out = {"kind": self.kind, "text": self.text, "page": self.page,
               "bbox": [round(v, 1) for v in self.bbox], "section": self.section, "span": [self.start, self.end]}
        for key in ("label", "printed_label", "level", "number"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        if self.rows:
            out["rows"] = self.rows
        return out


@dataclass
class LayoutDocument:
    """A PDF read for its layout. ``furniture`` holds the running heads, footers and page
    numbers taken out of the reading order (first-page footers are kept there too, for
    metadata such as a licence line)."""

    blocks: list[Block]
    page_count: int
    page_sizes: list[tuple[float, float]]
    furniture: list[Line] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    body_size: float = 10.0
