"""Documents and chunks: the text the engine reads, with everything provenance needs."""
from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Page:
    number: int  # 1-based page number in the source
    start: int  # character offset of the page's first character in Document.text
    end: int  # exclusive


@dataclass(frozen=True)
class Document:
    """A loaded document.

    ``id`` derives from the content (sha256 of the text, prefixed ``d_``), so the same
    text gives the same id wherever it is read from. ``name`` is a file-system-safe stem
    used for the run folder. ``pages`` is empty for formats without pages.
    """

    id: str
    name: str
    text: str
    source: str  # path as given, or "-" for stdin
    media_type: str  # "application/pdf", "text/plain", "text/markdown", "text/html"
    sha256: str  # of the raw input bytes
    title: str | None = None
    pages: tuple[Page, ...] = ()
    warnings: tuple[str, ...] = ()

    def pages_for(self, start: int, end: int) -> tuple[int, ...]:
        """Page numbers the character range [start, end) touches."""
        return tuple(p.number for p in self.pages if p.start < max(end, start + 1) and p.end > start)


@dataclass(frozen=True)
class Chunk:
    """A slice of a document: ``doc.text[start:end] == text``."""

    id: str  # stable: derived from document id, index and offsets
    doc_id: str
    index: int
    text: str
    start: int
    end: int
    pages: tuple[int, ...] = field(default=())
