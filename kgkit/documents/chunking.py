"""Split a document into overlapping chunks that end where the text does.

A chunk ends, in order of preference, at a paragraph break (when that keeps it at least
half full), at the end of a sentence, at a line break, at a space, and only for a single
run of text longer than the chunk size, at the size itself. So a sentence is cut only
when it is longer than a chunk. The overlap carries the last sentences (or words) of a
chunk into the next one, so a relation stated across a boundary is seen whole once.

Every chunk keeps ``doc.text[chunk.start:chunk.end] == chunk.text``; leading and
trailing whitespace is left out of chunks, and every other character is in at least one.
"""
from __future__ import annotations

import bisect
import re

from kgkit.documents.types import Chunk, Document
from kgkit.errors import ConfigError
from kgkit.ids import chunk_id
from kgkit.text.page_breaks import page_breaks

# A paragraph break: a line break, optional blanks, another line break.
_PARAGRAPH = re.compile(r"\n[ \t\r\f\v]*\n\s*")
# A sentence end: terminal punctuation, optional closing quotes/brackets, then whitespace.
_SENTENCE = re.compile(r"[.!?…]+[\"'”’)\]]*(?=\s)")
_SPACE = re.compile(r"\s")
# Words whose trailing period does not end a sentence (common in contracts and papers).
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr prof st jr sr inc ltd co corp llc plc no nos art sec secs para vs etc "
    "e.g i.e cf al fig figs eq eqs approx dept est jan feb mar apr jun jul aug sep sept oct "
    "nov dec u.s u.k n.a s.a p.a".split()
)


def chunk_document(doc: Document, size: int, overlap: int) -> list[Chunk]:
    """Chunks of at most ``size`` characters, consecutive ones sharing up to ``overlap``.

    Raises ConfigError when the numbers cannot work (size < 1, overlap < 0 or >= size).
    """
    if size < 1 or overlap < 0 or overlap >= size:
        raise ConfigError(
            f"chunking needs size >= 1 and 0 <= overlap < size (got size={size}, overlap={overlap})"
        )
    text = doc.text
    breaks = _Breaks(text)
    chunks: list[Chunk] = []
    edges = [0, *sorted(b for b in set(doc.boundaries) if 0 < b < len(text)), len(text)]
    for lo, hi in zip(edges, edges[1:]):
        _chunk_range(doc, breaks, lo, hi, size, overlap, chunks)
    return chunks


def _chunk_range(doc: Document, breaks: "_Breaks", lo: int, hi: int, size: int, overlap: int,
                 chunks: list[Chunk]) -> None:
    """Chunks of ``doc.text[lo:hi]`` appended to ``chunks``: a section (a document's
    ``boundaries``) is chunked on its own, so no chunk holds the end of one and the start
    of the next."""
    text = doc.text
    last = _trim_end(text, lo, hi)
    start, end = _skip_space(text, lo), lo
    while start < last:
        limit = start + size
        cut: int | None
        if limit >= last:
            cut = last
        else:
            # A chunk must reach past the previous one, or it would only repeat the overlap.
            cut = breaks.best_end(start, _skip_space(text, end) + 1, limit, size)
            if cut is None and start < end:
                start = _skip_space(text, end)  # the overlap left no room for a clean cut: drop it
                continue
            if cut is None:
                cut = limit  # one unbroken run longer than a chunk: cut it at the size
        end = _trim_end(text, start, cut)
        chunks.append(_chunk(doc, len(chunks), start, end))
        if end >= last:
            break
        start = _skip_space(text, breaks.overlap_start(start, end, overlap))


def _chunk(doc: Document, index: int, start: int, end: int) -> Chunk:
    return Chunk(
        id=chunk_id(doc.id, index, start, end),
        doc_id=doc.id,
        index=index,
        text=doc.text[start:end],
        start=start,
        end=end,
        pages=doc.pages_for(start, end),
    )


def _skip_space(text: str, i: int) -> int:
    while i < len(text) and text[i].isspace():
        i += 1
    return i


def _trim_end(text: str, start: int, end: int) -> int:
    while end > start and text[end - 1].isspace():
        end -= 1
    return end


class _Breaks:
    """Candidate cut positions by kind, sorted, found once for the whole text.

    A position ``p`` means "a chunk may end at p" (exclusive) and the next text starts
    after the whitespace that follows.
    """

    def __init__(self, text: str):
        self.text = text
        joins = page_breaks(text)  # a page break inside a sentence ends neither a paragraph nor the sentence
        self.paragraphs = [m.start() for m in _PARAGRAPH.finditer(text) if not _within(joins, m.start())]
        sentences = [m.end() for m in _SENTENCE.finditer(text) if not _abbreviation(text, m.start())]
        # A paragraph break also ends a sentence (headings and list items have no period).
        self.sentences = sorted(set(sentences) | set(self.paragraphs))

    def best_end(self, start: int, lo: int, limit: int, size: int) -> int | None:
        """The best cut in [lo, limit] for a chunk that starts at ``start``; None if the
        text there has no break at all."""
        p = _last_in(self.paragraphs, max(lo, start + size // 2), limit)
        if p is None:
            p = _last_in(self.sentences, lo, limit)
        if p is None:  # no sentence ends here: a line break, else a space (searched in the window only)
            p = self.text.rfind("\n", lo, limit + 1)
        if p < lo:
            p = next((i for i in range(min(limit, len(self.text) - 1), lo - 1, -1) if self.text[i].isspace()), -1)
        return p if p >= lo else None

    def overlap_start(self, start: int, end: int, overlap: int) -> int:
        """Where the next chunk starts: the earliest sentence start within ``overlap``
        characters before ``end``. A chunk that ended inside a sentence (a sentence longer
        than a chunk) is overlapped by whole words instead. Else no overlap: a fragment
        of a sentence would only invite wrong extractions."""
        if overlap == 0:
            return end
        lo = max(start + 1, end - overlap)
        p = _first_in(self.sentences, lo, end - 1)
        if p is not None:
            return p
        if not self._ends_sentence(end):
            space = _SPACE.search(self.text, lo, end)
            if space:
                return space.start()
        return end

    def _ends_sentence(self, end: int) -> bool:
        i = bisect.bisect_left(self.sentences, end)
        return i < len(self.sentences) and not self.text[end:self.sentences[i]].strip()


def _within(spans: tuple[tuple[int, int], ...], at: int) -> bool:
    """Whether ``at`` falls in one of ``spans`` (sorted, disjoint (start, end) pairs), its ends included."""
    i = bisect.bisect_right(spans, (at, at)) - 1
    if i + 1 < len(spans) and spans[i + 1][0] == at:
        i += 1
    return i >= 0 and spans[i][0] <= at <= spans[i][1]


def _last_in(positions: list[int], lo: int, hi: int) -> int | None:
    """The largest position in [lo, hi], if any."""
    i = bisect.bisect_right(positions, hi)
    return positions[i - 1] if i and positions[i - 1] >= lo else None


def _first_in(positions: list[int], lo: int, hi: int) -> int | None:
    """The smallest position in [lo, hi], if any."""
    i = bisect.bisect_left(positions, lo)
    return positions[i] if i < len(positions) and positions[i] <= hi else None


_ENUMERATOR = re.compile(r"(?:\d{1,3}(?:\.\d{1,3})*|[ivxlcIVXLC]{1,5}|[A-Za-z]|\(?[A-Za-z0-9]{1,3}\))$")


def _abbreviation(text: str, dot: int) -> bool:
    """True when the period at ``dot`` closes an abbreviation, an initial ("J. Smith")
    or a clause number at the start of a line ("2.1. Term", "iv. Notices")."""
    if text[dot] != ".":
        return False
    word_start = dot
    while word_start > 0 and (text[word_start - 1].isalpha() or text[word_start - 1] == "."):
        word_start -= 1
    word = text[word_start:dot].lower()
    if len(word) == 1 and word.isalpha():
        return True  # an initial
    if word in _ABBREVIATIONS:
        return True
    # A clause number is short: look back a few characters only (a long line stays linear).
    line_start = text.rfind("\n", max(0, dot - 16), dot) + 1
    if line_start == 0 and dot > 16:
        return False
    head = text[line_start:dot].strip()
    return bool(head) and _ENUMERATOR.fullmatch(head) is not None
