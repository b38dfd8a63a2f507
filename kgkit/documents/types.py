"""Documents and chunks: the text the engine reads, with everything provenance needs."""
from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any


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
    # Offsets no chunk may span (where a section starts); empty: chunk the text as one run.
    boundaries: tuple[int, ...] = ()
    # A layout read of the document (kgkit.documents.layout.LayoutDocument) when one was made.
    layout: Any = field(default=None, compare=False, repr=False)

    def pages_for(self, start: int, end: int) -> tuple[int, ...]:
        """Page numbers the character range [start, end) touches.

        Pages are in text order, so a binary search finds the first one: chunking a
        document of thousands of pages stays linear.
        """
        if not self.pages:  # a text file: no pages
            return ()
        stop = max(end, start + 1)
        first = bisect.bisect_right(self.pages, start, key=lambda p: p.end)
        numbers = []
        for i in range(first, len(self.pages)):
            if self.pages[i].start >= stop:
                break
            numbers.append(self.pages[i].number)
        return tuple(numbers)


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
