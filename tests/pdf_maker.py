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
