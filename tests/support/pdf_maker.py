"""PDFs made at run time for the layout and scholarly tests: positioned text runs with
real fonts and font sizes, optional page rotation and a ToUnicode map, so every hostile
shape (two columns, running heads, line-number gutters, a rotated page, a glyph that maps
to a lone surrogate) is a file a real parser reads, not a mock."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pypdf
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject, NumberObject

WIDTH, HEIGHT = 612, 792


@dataclass(frozen=True)
class Run:
    """One line of text at (x, y) from the bottom-left corner, in points."""

    x: float
    y: float
    text: str
    size: float = 10
    bold: bool = False


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def make_pdf(path: Path, pages: list[list[Run]], *, rotate: dict[int, int] | None = None,
             to_unicode: dict[int, str] | None = None) -> Path:
    """Write ``pages`` (lists of runs) to ``path``. ``rotate`` maps a 0-based page index to
    its /Rotate angle; ``to_unicode`` maps byte codes of the regular font to UTF-16BE hex
    strings (e.g. ``{0x41: "D835"}``) written as the font's ToUnicode CMap."""
    writer = pypdf.PdfWriter()
    fonts = {}
    for key, base in (("/F1", "/Helvetica"), ("/F2", "/Helvetica-Bold")):
        font = DictionaryObject({
            NameObject("/Type"): NameObject("/Font"),
            NameObject("/Subtype"): NameObject("/Type1"),
            NameObject("/BaseFont"): NameObject(base),
        })
        if to_unicode and key == "/F1":
            chars = "\n".join(f"<{code:02X}> <{target}>" for code, target in to_unicode.items())
            cmap = DecodedStreamObject()
            cmap.set_data((
                "/CIDInit /ProcSet findresource begin 12 dict begin begincmap\n"
                "/CMapName /Test def /CMapType 2 def\n"
                "1 begincodespacerange <00> <FF> endcodespacerange\n"
                f"{len(to_unicode)} beginbfchar\n{chars}\nendbfchar\n"
                "endcmap CMapName currentdict /CMap defineresource pop end end\n"
            ).encode("ascii"))
            font[NameObject("/ToUnicode")] = writer._add_object(cmap)
        fonts[key] = writer._add_object(font)
    for index, runs in enumerate(pages):
        page = writer.add_blank_page(WIDTH, HEIGHT)
        if rotate and index in rotate:
            page[NameObject("/Rotate")] = NumberObject(rotate[index])
        if not runs:
            continue
        ops = []
        for run in runs:
            font = "/F2" if run.bold else "/F1"
            ops.append(f"BT {font} {run.size} Tf 1 0 0 1 {run.x} {run.y} Tm ({_escape(run.text)}) Tj ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject({NameObject(k): v for k, v in fonts.items()})})
    writer.write(path)
    return path


def column(x: float, top: float, lines: list[str | tuple[str, dict]], size: float = 10,
           leading: float = 12) -> tuple[list[Run], float]:
    """Runs for lines set one under another from ``top`` down; a line given as
    ``(text, {"bold": True, "size": 12, "gap": 6})`` changes its own style or adds space
    above it. Returns the runs and the y below the last line."""
    runs, y = [], top
    for item in lines:
        text, style = (item, {}) if isinstance(item, str) else item
        y -= style.get("gap", 0)
        runs.append(Run(x, y, text, size=style.get("size", size), bold=style.get("bold", False)))
        y -= leading
    return runs, y


def two_column_paper(path: Path, *, references: list[str] | None = None, gutter_numbers: bool = False,
                     extra_pages: int = 0, title: str = "Graph Methods for Citation Analysis",
                     authors: str = "Ada Lovelace1, Alan Turing2 and Grace Hopper1",
                     venue: str | None = None) -> Path:
    """A two-column paper of our own words: title, authors, affiliation, abstract, numbered
    and unnumbered headings, a figure and a table caption, a body line that only talks
    about a table, a numbered display equation, a word hyphenated at a line end, numeric
    citations, running heads and page numbers on every page, and a reference list."""
    refs = references if references is not None else [
        "[1] A. Smith and B. Jones. 2019. Learning graphs from text. In Proc. of the Graph",
        "Workshop, pages 1-9.",
        "[2] C. Brown. 2020. A survey of citation analysis. Journal of Examples, 4(2):10-20.",
        "[3] D. Green, E. White, and F. Black. 2018. Reading order in two columns. In Proc. of",
        "Layout Conference.",
    ]
    heading = title
    title = [Run(150, 740, heading, size=16, bold=True),
             Run(170, 716, authors, size=11),
             Run(160, 702, "1 Department of Computing, Example University", size=9),
             Run(160, 690, "2 Institute of Logic, Sample College", size=9)]
    left, y = column(72, 660, [
        ("Abstract", {"bold": True, "size": 11}),
        "We study how papers cite each other and",
        "propose a graph method for reading them.",
        ("1 Introduction", {"bold": True, "size": 11, "gap": 8}),
        "Citation graphs are old [1]. Most tools use a",
        "flat list of references [2-3], which loses the",
        "reason a paper is cited. We build on the hyphen-",
        "ated idea of typed links.",
        ("2 Related Work", {"bold": True, "size": 11, "gap": 8}),
        "Earlier work used a single edge type [2].",
        ("2.1 Typed Citations", {"bold": True, "gap": 6}),
        "Intent labels extend this view [3].",
    ])
    right, _ = column(320, 660, [
        ("Figure 1: Overview of the reading pipeline.", {"size": 9}),
        ("Table 2 shows that the method helps on every", {"gap": 8}),
        "paper we tried, as the counts below make clear.",
        ("Table 1: Results on the test papers.", {"size": 9, "gap": 8}),
    ])
    table = [Run(320, 560, "Method", size=9), Run(420, 560, "F1", size=9), Run(480, 560, "Time", size=9),
             Run(320, 548, "Ours", size=9), Run(420, 548, "0.91", size=9), Run(480, 548, "3s", size=9),
             Run(320, 536, "Flat", size=9), Run(420, 536, "0.72", size=9), Run(480, 536, "1s", size=9)]
    equation = [Run(340, 500, "s = a + b", size=10), Run(520, 500, "(1)", size=10)]
    after, _ = column(320, 480, ["The score in Equation 1 adds both parts and", "is what we report."])
    folio = [Run(300, 30, "1", size=9)] + ([Run(72, 45, venue, size=7)] if venue else [])
    pages = [title + left + right + table + equation + after + folio]
    body2, _ = column(72, 720, [("References", {"bold": True, "size": 11})] + refs, size=10, leading=12)
    head2 = [Run(72, 770, f"Preprint: {heading}", size=8), Run(300, 30, "2", size=9)]
    numbers = [Run(40, 720 - 12 * i, str(i + 1), size=7) for i in range(min(len(refs) + 1, 60))] if gutter_numbers else []
    pages.append(body2 + head2 + numbers)
    for extra in range(extra_pages):
        more, _ = column(72, 720, [f"Appendix text on page {extra + 3} continues the discussion."])
        pages.append(more + [Run(72, 770, f"Preprint: {heading}", size=8),
                             Run(300, 30, str(extra + 3), size=9)])
    return make_pdf(path, pages)
