"""Word documents (.docx) through python-docx (MIT, the optional extra ``kgkit[docx]``):
paragraphs and tables in body order, tables as rows with cells split by `` | ``, and the
headings (styles "Title", "Heading 1"…) as section starts."""
from __future__ import annotations

import io
import re

from kgkit.documents.unicode_repair import valid_unicode
from kgkit.errors import InputError

DOCX = "application/vnd.openxmlformats-officedocument.wordprocessingml.document"
SEPARATOR = "\n\n"


def read_docx(raw: bytes, source: str) -> tuple[str, str | None, tuple[int, ...], tuple[str, ...]]:
    """``(text, title, heading offsets, warnings)``. Raises InputError for a file that is
    not a Word document, and when python-docx is not installed."""
    try:
        import docx
        from docx.table import Table
        from docx.text.paragraph import Paragraph
    except ImportError:
        raise InputError(f"{source}: reading Word documents needs python-docx",
                         hint="pip install 'kgkit[docx]', or save the document as PDF or text") from None
    try:
        document = docx.Document(io.BytesIO(raw))
    except Exception as exc:  # zipfile, lxml and python-docx raise many types on a damaged file
        raise InputError(f"{source} cannot be read as a Word document (corrupt, or not .docx?): "
                         f"{exc or type(exc).__name__}") from None
    parts: list[str] = []
    headings: list[int] = []
    title = None
    offset = replaced = 0
    for child in document.element.body.iterchildren():
        tag = child.tag.rsplit("}", 1)[-1]
        if tag == "p":
            paragraph = Paragraph(child, document)
            text = " ".join(paragraph.text.split())
            style = (paragraph.style.name if paragraph.style is not None else "") or ""
            heading = bool(re.match(r"(Heading \d|Title)$", style))
        elif tag == "tbl":
            rows = [" | ".join(" ".join(cell.text.split()) for cell in row.cells) for row in Table(child, document).rows]
            text, heading = "\n".join(r for r in rows if r.strip(" |")), False
        else:
            continue
        text, bad = valid_unicode(text)
        replaced += bad
        if not text:
            continue
        if parts:
            offset += len(SEPARATOR)
        if heading:
            title = title or text
            if offset:
                headings.append(offset)
        parts.append(text)
        offset += len(text)
    warnings = (f"{source}: {replaced} unpaired UTF-16 surrogate(s) replaced by U+FFFD",) if replaced else ()
    core_title = (document.core_properties.title or "").strip()
    return SEPARATOR.join(parts), core_title or title, tuple(headings), warnings
