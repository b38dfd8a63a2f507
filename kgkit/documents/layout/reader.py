"""Read a PDF for its layout (pdfplumber, an optional extra) into a
:class:`~kgkit.documents.layout.model.LayoutDocument`, and turn one into the
:class:`~kgkit.documents.types.Document` the engine reads, whose text is the blocks'
text in reading order: every block's ``start``/``end`` index that text, so a span found
in a chunk points back at a block, its page and its bounding box."""
from __future__ import annotations

import logging
import os
from typing import BinaryIO

from kgkit.documents.layout.blocks import assign_sections, build_blocks
from kgkit.documents.layout.model import LayoutDocument, Line
from kgkit.documents.layout.pdf_lines import body_font, body_size, furniture_keys, is_furniture, median_gap, page_lines
from kgkit.documents.types import Page
from kgkit.errors import InputError

BLOCK_SEPARATOR = "\n\n"
MAX_PAGES = 2000  # a layout read holds every page's lines; longer files are refused, not half-read


def layout_available() -> bool:
    """Whether the optional layout extra (pdfplumber) is installed."""
    import importlib.util

    return importlib.util.find_spec("pdfplumber") is not None


def pdfplumber_module():
    try:
        import pdfplumber
    except ImportError:
        raise InputError("reading a PDF's layout needs pdfplumber",
                         hint="pip install 'kgkit[layout]' (or read the text layer only: a domain without "
                              "'reading: layout')") from None
    return pdfplumber


def read_pdf_layout(fh: BinaryIO | str, *, source: str) -> LayoutDocument:
    """The PDF's blocks in reading order. Raises InputError for a file pdfplumber cannot
    open, one with no pages, and one with no text layer on any page (a scan)."""
    pdfplumber = pdfplumber_module()
    logging.getLogger("pdfminer").setLevel(logging.ERROR)
    pages, sizes, warnings = [], [], []
    rotated = gutter = surrogates = 0
    try:
        with pdfplumber.open(fh) as pdf:
            if len(pdf.pages) > MAX_PAGES:
                raise InputError(f"{source} has {len(pdf.pages)} pages; the layout reader takes at most {MAX_PAGES}")
            for number, page in enumerate(pdf.pages, start=1):
                lines = page_lines(page, number)
                if lines.dropped_rotated > sum(len(line.text.split()) for line in lines.lines):
                    lines = _upright_reading(page, number, lines)
                page.close()
                pages.append(lines)
                sizes.append((lines.width, lines.height))
                rotated += lines.dropped_rotated
                gutter += lines.dropped_gutter
                surrogates += lines.surrogates
    except InputError:
        raise
    except Exception as exc:  # pdfminer raises many types on malformed input
        if _raised_in_kgkit(exc):
            raise  # a bug of ours is not a corrupt file
        raise InputError(f"{source} cannot be read as a PDF (corrupt or truncated?): {exc or type(exc).__name__}") \
            from None
    if not pages:
        raise InputError(f"{source} is a PDF with no pages")
    warnings += _ocr_blank_pages(fh, pages)
    blank = [p.number for p in pages if not p.lines]
    if len(blank) == len(pages):
        raise InputError(f"{source} has no text layer; it needs OCR first (e.g. ocrmypdf in.pdf out.pdf), "
                         "kgkit does not OCR")
    if blank:
        warnings.append(f"{len(blank)} of {len(pages)} pages have no text layer (scanned?): "
                        + ", ".join(map(str, blank[:20])) + (" …" if len(blank) > 20 else ""))
    if rotated:
        warnings.append(f"{rotated} rotated word(s) (sideways labels) left out of the reading order")
    if gutter:
        warnings.append(f"{gutter} line number(s) in a margin gutter left out")
    if surrogates:
        warnings.append(f"{source}: {surrogates} unpaired UTF-16 surrogate(s) in the text layer replaced by U+FFFD")
    body = body_size(pages)
    keys = furniture_keys(pages)
    flow: list[Line] = []
    furniture: list[Line] = []
    for p in pages:
        for line in p.lines:
            small_first_footer = p.number == 1 and line.bbox[1] > p.height * 0.85 and line.size < body - 0.5
            (furniture if is_furniture(line, p, keys) or small_first_footer else flow).append(line)
    blocks = build_blocks(flow, body, median_gap(flow), body_font(pages))
    assign_sections(blocks)
    offset = 0
    for block in blocks:
        block.start, block.end = offset, offset + len(block.text)
        offset = block.end + len(BLOCK_SEPARATOR)
    return LayoutDocument(blocks=blocks, page_count=len(pages), page_sizes=sizes, furniture=furniture,
                          warnings=warnings, body_size=body)


def _ocr_blank_pages(fh, pages) -> list[str]:
    """OCR the pages with no text layer when tesseract is installed; one warning per page
    with its mean confidence (a page OCR cannot read stays blank and is reported below)."""
    from kgkit.documents.layout.ocr import ocr_available, ocr_page
    from kgkit.documents.layout.pdf_lines import lines_from_words

    blank = [i for i, p in enumerate(pages) if not p.lines]
    if not blank or not ocr_available():
        return []
    if isinstance(fh, str):
        with open(fh, "rb") as f:
            data = f.read()
    else:
        fh.seek(0)
        data = fh.read()
    notes = []
    for i in blank:
        try:
            found = ocr_page(data, i)
        except Exception as exc:  # a render or OCR failure costs that page only
            notes.append(f"page {i + 1}: OCR failed ({exc or type(exc).__name__})")
            continue
        if found.words:
            pages[i] = lines_from_words(found.words, i + 1, pages[i].width, pages[i].height)
            notes.append(f"page {i + 1} has no text layer: read by OCR, mean word confidence {found.confidence:.0f}/100")
    return notes


def _upright_reading(page, number: int, lines):
    """A page whose words mostly run sideways once its /Rotate is applied (text set
    upright on a page turned for display): read it unturned, if that gives more text."""
    import copy

    import pdfplumber

    obj = copy.copy(page.page_obj)
    obj.attrs = {k: v for k, v in obj.attrs.items() if k != "Rotate"}
    obj.rotate = 0
    turned = pdfplumber.page.Page(page.pdf, obj, page.page_number, page.initial_doctop)
    try:
        again = page_lines(turned, number)
    finally:
        turned.close()
    return again if len(again.lines) > len(lines.lines) else lines


_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))) + os.sep


def _raised_in_kgkit(exc: BaseException) -> bool:
    """Whether the innermost frame is kgkit's own code. Compared by the package's folder,
    not by a "/kgkit/" in the path: a checkout named kgkit holds its venv's pdfminer too."""
    tb = exc.__traceback__
    while tb is not None and tb.tb_next is not None:
        tb = tb.tb_next
    return tb is not None and os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(_PACKAGE_DIR)


def layout_text(layout: LayoutDocument) -> tuple[str, tuple[Page, ...]]:
    """The shown text (blocks joined by blank lines) and the pages' offset ranges in it."""
    text = BLOCK_SEPARATOR.join(b.text for b in layout.blocks)
    pages: list[Page] = []
    for b in layout.blocks:
        if pages and pages[-1].number == b.page:
            pages[-1] = Page(b.page, pages[-1].start, b.end)
        elif not pages or b.page > pages[-1].number:
            pages.append(Page(b.page, b.start, b.end))
        else:  # a block placed back on an earlier page cannot happen in reading order; keep ranges ordered
            pages[-1] = Page(pages[-1].number, pages[-1].start, b.end)
    return text, tuple(pages)


def section_bounds(layout: LayoutDocument) -> tuple[int, ...]:
    """Offsets where a heading starts: chunks are cut there, so none spans two sections."""
    return tuple(b.start for b in layout.blocks if b.kind == "heading" and b.start > 0)
