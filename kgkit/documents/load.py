"""Read a file (or stdin) into a :class:`~kgkit.documents.types.Document`.

Formats: PDF (its text layer, through pypdf, with page offsets kept for provenance;
or its layout, :mod:`kgkit.documents.layout`), Word .docx (the optional python-docx),
plain text, Markdown (kept as written: its markup is readable text) and HTML (tags,
scripts and styles stripped, block breaks kept). Every way a file can be unusable —
missing, a directory, unreadable, encrypted, corrupt, empty, a scan with no text
layer — becomes an :class:`~kgkit.errors.InputError` that says what to do; problems
that lose nothing important (invalid UTF-8 bytes, a few blank PDF pages) become
``Document.warnings`` instead.
"""
from __future__ import annotations

import dataclasses
import hashlib
import io
import logging
import os
import re
import sys
from html.parser import HTMLParser
from pathlib import Path
from typing import BinaryIO

from kgkit.documents.docx_reader import DOCX, read_docx
from kgkit.documents.types import Document, Page
from kgkit.documents.unicode_repair import surrogate_warning, valid_unicode
from kgkit.errors import InputError
from kgkit.ids import doc_id
from kgkit.guards.input_file import DEFAULT_MAX_BYTES, open_regular, read_bounded

PDF = "application/pdf"
TEXT = "text/plain"
MARKDOWN = "text/markdown"
HTML = "text/html"

_SUFFIXES = {
    ".pdf": PDF,
    ".docx": DOCX,
    ".md": MARKDOWN,
    ".markdown": MARKDOWN,
    ".html": HTML,
    ".htm": HTML,
    ".xhtml": HTML,
}

# Pages are joined by a blank line so the chunker sees a page break as a paragraph break.
PAGE_SEPARATOR = "\n\n"
TITLE_MAX = 120
# Unicode spaces that PDF and HTML text is full of (no-break, figure, narrow no-break);
# replaced one-for-one by a space so patterns and names match and offsets do not move.
_ODD_SPACES = str.maketrans({"\u00a0": " ", "\u2007": " ", "\u202f": " "})


def load_document(path_or_dash: str | os.PathLike, *, stdin: BinaryIO | None = None,
                  max_bytes: int = DEFAULT_MAX_BYTES, layout: bool = False) -> Document:
    """Load one document.

    ``"-"`` reads bytes from ``stdin`` (default ``sys.stdin.buffer``); the format is then
    sniffed from the content. A path's format comes from its suffix (``.pdf``, ``.md``,
    ``.html``; anything else is plain text), except that a file starting with ``%PDF-``
    is always read as a PDF.

    ``layout=True`` reads a PDF for its layout (:mod:`kgkit.documents.layout`: reading
    order across columns, running heads out, sections; ``Document.layout`` holds the
    blocks) and sets ``Document.boundaries`` at section starts (a Markdown or HTML
    document's headings too), so chunks never span two sections.

    Raises InputError for a file that cannot be used, with a message saying why: special
    files (FIFO, device, socket) and inputs over ``max_bytes`` (``input.max_bytes``) are
    refused before they are read.
    """
    source = os.fspath(path_or_dash)
    if source == "-":
        stream = stdin if stdin is not None else sys.stdin.buffer
        raw = read_bounded(stream, max_bytes, "stdin")
        if isinstance(raw, str):  # a text stream was passed; its bytes are its UTF-8
            raw = raw.encode("utf-8")
        return _from_bytes(raw, source="-", name="stdin", media_type=None, layout=layout)
    path = Path(source)
    try:
        with open_regular(path, max_bytes) as fh:
            head = fh.read(5)
            if not head:
                raise InputError(f"{source} is empty")
            media_type = PDF if head == b"%PDF-" else _SUFFIXES.get(path.suffix.lower(), TEXT)
            if media_type == PDF:
                # pypdf reads a path into memory whole; an open file lets it seek instead.
                fh.seek(0)
                reader = _load_pdf_layout if layout else _load_pdf
                return reader(fh, source=source, name=safe_name(path.stem), sha256=_sha256_file(fh))
            raw = head + read_bounded(fh, max_bytes - len(head), source)
    except IsADirectoryError:
        raise InputError(f"{source} is a directory; give the document files inside it") from None
    except FileNotFoundError:
        raise InputError(f"{source}: no such file") from None
    except PermissionError:
        raise InputError(f"{source}: permission denied (cannot read it)") from None
    except OSError as exc:
        raise InputError(f"{source}: cannot read it ({exc.strerror or exc})") from None
    return _from_bytes(raw, source=source, name=safe_name(path.stem), media_type=media_type, layout=layout)


def safe_name(stem: str) -> str:
    """A file-system-safe folder name: letters (any script), digits, ``._-``; no path
    separators, no leading dots, not empty."""
    name = re.sub(r"[^\w.-]+", "_", stem).strip("._-")[:100]
    return name or "document"


def _sha256_file(fh: BinaryIO) -> str:
    digest = hashlib.sha256()
    for block in iter(lambda: fh.read(1 << 20), b""):
        digest.update(block)
    fh.seek(0)
    return digest.hexdigest()


def _from_bytes(raw: bytes, *, source: str, name: str, media_type: str | None, layout: bool = False) -> Document:
    if not raw:
        raise InputError(f"{source} is empty")
    if media_type is None:
        media_type = _sniff(raw)
    sha = hashlib.sha256(raw).hexdigest()
    if media_type == DOCX:
        text, title, heads, warnings = read_docx(raw, source)
        if not text.strip():
            raise InputError(f"{source} has no text (an empty Word document)")
        return _document(text, source=source, name=name, media_type=DOCX, sha256=sha,
                         title=_shorten(title) if title else _first_line(text), warnings=warnings,
                         boundaries=heads if layout else ())
    if media_type == PDF:
        return (_load_pdf_layout if layout else _load_pdf)(io.BytesIO(raw), source=source, name=name, sha256=sha)
    text, warnings = _decode(raw, source, _html_charset(raw) if media_type == HTML else None)
    title = None
    bounds: tuple[int, ...] = ()
    if media_type == HTML:
        html = text
        text, title = html_to_text(html)
        bounds = html_heading_offsets(html, text) if layout else ()
    elif media_type == MARKDOWN:
        title = _markdown_title(text)
    if not text.strip():
        raise InputError(f"{source} has no text (only whitespace or markup)")
    if layout and media_type == MARKDOWN:
        bounds = markdown_heading_offsets(text)
    return _document(text, source=source, name=name, media_type=media_type, sha256=sha,
                     title=title or _first_line(text), warnings=warnings, boundaries=bounds)


def markdown_heading_offsets(text: str) -> tuple[int, ...]:
    """Where each ATX heading line (``## Methods``) starts, fenced code left out: the
    section starts of a Markdown document."""
    out, fenced = [], False
    for m in re.finditer(r"^[^\n]*", text, re.MULTILINE):
        line = m.group(0)
        if re.match(r"^ {0,3}(```|~~~)", line):
            fenced = not fenced
        elif not fenced and m.start() > 0 and re.match(r"^ {0,3}#{1,6}[ \t]+\S", line):
            out.append(m.start())
    return tuple(out)


def _document(text: str, **fields) -> Document:
    return Document(id=doc_id(text), text=text, **fields)


def _sniff(raw: bytes) -> str:
    if raw.startswith(b"%PDF-"):
        return PDF
    head = raw[:512].lstrip().lower()
    if head.startswith((b"<!doctype html", b"<html")):
        return HTML
    return TEXT


def _decode(raw: bytes, source: str, declared: str | None = None) -> tuple[str, tuple[str, ...]]:
    """UTF-8 (a BOM is dropped); UTF-16 when it says so; an HTML page's declared charset;
    invalid bytes replaced, with a warning."""
    if declared:
        try:
            return raw.decode(declared), ()
        except (LookupError, UnicodeDecodeError):
            pass  # a wrong declaration is common; fall through to UTF-8
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return raw.decode("utf-16"), ()
        except UnicodeDecodeError:
            pass
    if b"\x00" in raw[:8192]:
        raise InputError(
            f"{source} looks like a binary file, not text",
            hint="kgkit reads PDF, Word (.docx), plain text, Markdown and HTML; convert other formats first",
        )
    try:
        return raw.decode("utf-8-sig"), ()
    except UnicodeDecodeError as exc:
        text = raw.decode("utf-8-sig", errors="replace")
        bad = text.count("\ufffd") - raw.decode("utf-8-sig", errors="ignore").count("\ufffd")
        return text, (
            f"{source} is not valid UTF-8 (first bad byte at offset {exc.start}); "
            f"{bad} invalid sequence(s) replaced by U+FFFD",
        )


def _first_line(text: str) -> str | None:
    return next((_shorten(line) for line in text.splitlines() if line.strip()), None)


def _shorten(title: str) -> str:
    """``title`` with whitespace collapsed, cut at a word to :data:`TITLE_MAX` characters."""
    title = " ".join(title.split())
    if len(title) <= TITLE_MAX:
        return title
    return title[:TITLE_MAX].rsplit(" ", 1)[0].rstrip(" ,;:") + "…"


def _markdown_title(text: str) -> str | None:
    """The first ATX (``# Title``) or setext (``Title\\n=====``) heading."""
    lines = text.splitlines()
    for i, line in enumerate(lines):
        atx = re.match(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", line)
        if atx:
            return _shorten(atx.group(1))
        if i + 1 < len(lines) and line.strip() and re.match(r"^ {0,3}(=+|-+)[ \t]*$", lines[i + 1]):
            return _shorten(line)
    return None


# ---------------------------------------------------------------- HTML


def _html_charset(raw: bytes) -> str | None:
    """The charset a page declares in a ``<meta>`` near its top, if any (UTF-8 needs none)."""
    match = re.search(rb"<meta[^>]+charset\s*=\s*[\"']?([A-Za-z0-9_.:-]+)", raw[:4096], re.IGNORECASE)
    charset = match.group(1).decode("ascii").lower() if match else None
    return None if charset in (None, "utf-8", "utf8") else charset

_BLOCK = {
    "address", "article", "aside", "blockquote", "body", "caption", "dd", "details", "div", "dl",
    "dt", "fieldset", "figcaption", "figure", "footer", "form", "h1", "h2", "h3", "h4", "h5",
    "h6", "header", "hr", "li", "main", "nav", "ol", "p", "pre", "section", "summary", "table",
    "tbody", "thead", "tfoot", "tr", "ul",
}
_SKIP = {"script", "style", "noscript", "template", "head", "svg", "iframe", "object"}


class _TextExtractor(HTMLParser):
    """Collects visible text; block elements become paragraph breaks, ``<br>`` a line break."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []
        self.title_parts: list[str] = []
        self._skip = 0
        self._pre = 0
        self._in_title = False

    def handle_starttag(self, tag, attrs):
        if tag == "title":
            self._in_title = True
        elif tag in _SKIP:
            self._skip += 1
        elif tag == "br":
            self.parts.append("\n")
        elif tag in ("td", "th"):
            self.parts.append(" ")
        elif tag in _BLOCK:
            self._pre += tag == "pre"
            self.parts.append("\n\n")

    def handle_startendtag(self, tag, attrs):
        if tag == "br":
            self.parts.append("\n")
        elif tag in _BLOCK:
            self.parts.append("\n\n")

    def handle_endtag(self, tag):
        if tag == "title":
            self._in_title = False
        elif tag in _SKIP:
            self._skip = max(0, self._skip - 1)
        elif tag in _BLOCK:
            if tag == "pre":
                self._pre = max(0, self._pre - 1)
            self.parts.append("\n\n")

    def handle_data(self, data):
        if self._in_title:
            self.title_parts.append(data)
        elif not self._skip:
            # Source line wrapping is not text structure, except inside <pre>.
            self.parts.append(data if self._pre else re.sub(r"\s+", " ", data))


class _Headings(HTMLParser):
    """The text of each ``<h1>``–``<h6>`` of a page, in order."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.headings: list[str] = []
        self._open: list[str] | None = None

    def handle_starttag(self, tag, attrs):
        if re.fullmatch(r"h[1-6]", tag):
            self._open = []

    def handle_endtag(self, tag):
        if re.fullmatch(r"h[1-6]", tag) and self._open is not None:
            heading = " ".join("".join(self._open).translate(_ODD_SPACES).split())
            if heading:
                self.headings.append(heading)
            self._open = None

    def handle_data(self, data):
        if self._open is not None:
            self._open.append(data)


def html_heading_offsets(html: str, text: str) -> tuple[int, ...]:
    """Where each heading of the page starts in its visible ``text`` (found in order, at
    the start of a line): the section starts of an HTML document."""
    parser = _Headings()
    parser.feed(html)
    parser.close()
    out, pos = [], 0
    for heading in parser.headings:
        at = text.find(heading, pos)
        while at > 0 and text[at - 1] != "\n":
            at = text.find(heading, at + 1)
        if at < 0:
            continue
        if at > 0:
            out.append(at)
        pos = at + len(heading)
    return tuple(out)


def html_to_text(html: str) -> tuple[str, str | None]:
    """Visible text of an HTML page with block breaks kept, and its ``<title>``."""
    parser = _TextExtractor()
    parser.feed(html)
    parser.close()
    text = "".join(parser.parts).translate(_ODD_SPACES)
    text = re.sub(r"[ \t]*\n[ \t]*", "\n", text)  # no spaces hugging line breaks
    text = re.sub(r"\n{3,}", "\n\n", text)
    text = re.sub(r"[ \t]{2,}", " ", text).strip()
    title = "".join(parser.title_parts)
    return text, (_shorten(title) if title.strip() else None)


# ---------------------------------------------------------------- PDF


class _Collect(logging.Handler):
    """Gathers pypdf's repair warnings so they reach Document.warnings, not stderr."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record):
        message = record.getMessage()
        if message not in self.messages and len(self.messages) < 20:
            self.messages.append(message)


def _load_pdf(fh: BinaryIO, *, source: str, name: str, sha256: str) -> Document:
    import pypdf
    from pypdf.errors import DependencyError, FileNotDecryptedError

    log = logging.getLogger("pypdf")
    collect = _Collect()
    log.addHandler(collect)
    propagate, log.propagate = log.propagate, False
    try:
        try:
            reader = pypdf.PdfReader(fh)
            if reader.is_encrypted and not reader.decrypt(""):
                raise FileNotDecryptedError("password required")
            pages: list[Page] = []
            texts: list[str] = []
            blank: list[int] = []
            offset = replaced = 0
            for number, page in enumerate(reader.pages, start=1):
                text, bad = valid_unicode(_clean_pdf_text(page.extract_text() or ""))
                replaced += bad
                _forget_contents(reader, page)
                if not text.strip():
                    blank.append(number)
                    continue
                if texts:
                    texts.append(PAGE_SEPARATOR)
                    offset += len(PAGE_SEPARATOR)
                pages.append(Page(number=number, start=offset, end=offset + len(text)))
                texts.append(text)
                offset += len(text)
            page_count = len(reader.pages)
            title = _pdf_title(reader)
        except (FileNotDecryptedError, DependencyError):
            raise InputError(f"{source} is encrypted; decrypt it first (e.g. qpdf --decrypt in.pdf out.pdf)") from None
        except InputError:
            raise
        except Exception as exc:  # pypdf raises many types on malformed input
            raise InputError(
                f"{source} cannot be read as a PDF (corrupt or truncated?): {exc or type(exc).__name__}"
            ) from None
    finally:
        log.removeHandler(collect)
        log.propagate = propagate
    if page_count == 0:
        raise InputError(f"{source} is a PDF with no pages")
    if not pages:
        raise InputError(
            f"{source} has no text layer; it needs OCR first (e.g. ocrmypdf in.pdf out.pdf), "
            "kgkit does not OCR"
        )
    warnings = [f"PDF repaired while reading: {m}" for m in collect.messages]
    if replaced:
        warnings.append(surrogate_warning(source, replaced))
    if blank:
        shown = ", ".join(map(str, blank[:20])) + (" …" if len(blank) > 20 else "")
        warnings.append(f"{len(blank)} of {page_count} pages have no text layer (scanned?): {shown}")
    text = "".join(texts)
    return _document(text, source=source, name=name, media_type=PDF, sha256=sha256,
                     title=title or _first_line(text), pages=tuple(pages), warnings=tuple(warnings))


def _load_pdf_layout(fh: BinaryIO, *, source: str, name: str, sha256: str) -> Document:
    """A PDF read for its layout: the shown text is its blocks in reading order."""
    from kgkit.documents.layout import layout_available, layout_text, read_pdf_layout, section_bounds

    if not layout_available():
        doc = _load_pdf(fh, source=source, name=name, sha256=sha256)
        note = ("read as a text layer only: sections, anchors and citations need the layout reader "
                "(pip install 'kgkit[layout]')")
        return dataclasses.replace(doc, warnings=(*doc.warnings, f"{source}: {note}"))
    layout = read_pdf_layout(fh, source=source)
    text, pages = layout_text(layout)
    if not text.strip():
        raise InputError(f"{source} has no text layer; it needs OCR first (e.g. ocrmypdf in.pdf out.pdf), "
                         "kgkit does not OCR")
    titles = [b for b in layout.blocks if b.kind == "title"]
    title = _shorten(max(titles, key=lambda b: b.size).text) if titles else _first_line(text)
    return _document(text, source=source, name=name, media_type=PDF, sha256=sha256, title=title, pages=pages,
                     warnings=tuple(layout.warnings), boundaries=section_bounds(layout), layout=layout)


def _forget_contents(reader, page) -> None:
    """Drop the page's content streams from pypdf's object cache once its text is taken.

    pypdf keeps every object it resolved, with the decoded bytes of each content stream
    (several KB a page), for the reader's lifetime; without this a long PDF costs
    memory in proportion to its pages' drawing operators rather than to its text
    (measured: 1,000 pages, 28 MB -> 9 MB). Fonts and resources shared between pages
    stay cached. Uses pypdf's ``resolved_objects`` when present; otherwise does nothing.
    """
    from pypdf.generic import ArrayObject, IndirectObject

    cache = getattr(reader, "resolved_objects", None)
    if not isinstance(cache, dict) or "/Contents" not in page:
        return
    refs = [page.raw_get("/Contents")]
    while refs:
        ref = refs.pop()
        if isinstance(ref, IndirectObject):
            resolved = cache.pop((ref.generation, ref.idnum), None)
            if isinstance(resolved, ArrayObject):
                refs.extend(resolved)
        elif isinstance(ref, ArrayObject):
            refs.extend(ref)


def _clean_pdf_text(text: str) -> str:
    text = text.translate(_ODD_SPACES).replace("\x00", "")
    return text.replace("\r\n", "\n").replace("\r", "\n").strip("\n")


def _pdf_title(reader) -> str | None:
    try:
        title = reader.metadata.title if reader.metadata else None
    except Exception:  # a broken Info dictionary only costs us the title
        return None
    title = valid_unicode(str(title))[0] if title else None
    title = _shorten(str(title)) if title else ""
    return title if title and title.lower() not in ("untitled", "title") else None
