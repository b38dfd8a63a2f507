"""A table's lines as rows of cells, by where their words are printed.

The line reader splits a line into segments only at gaps wider than any word space could
be (:func:`kgkit.documents.layout.pdf_lines._line`), and LaTeX sets table columns closer
than that (12 pt apart in 9 pt type), so most tables come as lines of plain text. A
table's columns show in its words' positions instead: a column boundary is an x position
where many of its lines have a wide gap (:data:`GAP` ems or more, wider than a justified
word space) and almost none has a word. Each word goes to the column its middle is in; a
word across a boundary (a long label run into the next column) stays in the cell it
starts in, and a line left with one cell (a note, a line of prose) is no row.
"""
from __future__ import annotations

import bisect
import math
from dataclasses import replace

from kgkit.documents.layout.model import Line, Segment

GAP = 0.8  # ems: a gap between two words at least this wide may be a column's edge
STEP = 0.5  # points: the resolution column boundaries are looked for at
SHARE = 0.5  # of the lines reaching across a boundary: how many must have a wide gap there
CROSSED = 0.2  # of the lines reaching across a boundary: at most this many may have a word there


def gapped(line: Line) -> bool:
    """Whether some two neighbouring words of the line are a column gap apart."""
    words = _words(line)
    return any(b.x0 - a.x1 >= GAP * line.size for a, b in zip(words, words[1:]))


def table_cells(lines: list[Line]) -> list[list[str]]:
    """Rows of cells, one per line with two cells or more (every row as many cells as
    there are columns, "" where a row has nothing); empty when the lines show fewer than
    two columns."""
    lines = printed_rows(lines)
    cuts = column_cuts(lines)
    if not cuts:
        return []
    rows = []
    for line in lines:
        cells: list[list[str]] = [[] for _ in range(len(cuts) + 1)]
        for w in _words(line):
            crosses = any(w.x0 < c < w.x1 for c in cuts)  # a long label run into the next column
            cells[bisect.bisect(cuts, w.x0 if crosses else (w.x0 + w.x1) / 2)].append(w.text)
        row = [" ".join(c) for c in cells]
        if sum(1 for c in row if c) >= 2:
            rows.append(row)
    return rows


def printed_rows(lines: list[Line]) -> list[Line]:
    """The lines of a table joined where they share a baseline on the page: the column
    finder reads a wide table as blocks side by side, whose lines are parts of one row."""
    out: list[Line] = []
    for line in sorted(lines, key=lambda x: (x.page, (x.bbox[1] + x.bbox[3]) / 2, x.bbox[0])):
        prev = out[-1] if out else None
        middle = (line.bbox[1] + line.bbox[3]) / 2
        if prev is not None and prev.page == line.page and abs((prev.bbox[1] + prev.bbox[3]) / 2 - middle) < \
                0.4 * max(line.size, 1.0) and (prev.bbox[2] <= line.bbox[0] or line.bbox[2] <= prev.bbox[0]):
            words = tuple(sorted(_words(prev) + _words(line), key=lambda w: w.x0))
            bbox = (min(prev.bbox[0], line.bbox[0]), min(prev.bbox[1], line.bbox[1]),
                    max(prev.bbox[2], line.bbox[2]), max(prev.bbox[3], line.bbox[3]))
            out[-1] = replace(prev, text=" ".join(w.text for w in words), bbox=bbox, words=words,
                              segments=tuple(sorted(prev.segments + line.segments, key=lambda g: g.x0)))
        else:
            out.append(line)
    return out


def column_cuts(lines: list[Line]) -> list[float]:
    """The x positions of the column boundaries of a table's lines: the middle of each run
    of positions where, of the lines reaching across it, :data:`SHARE` have a wide gap and
    at most :data:`CROSSED` a word (so the columns of a part of the table only some rows
    reach count too)."""
    if len(lines) < 2:
        return []
    lo = min(w.x0 for line in lines for w in _words(line))
    hi = max(w.x1 for line in lines for w in _words(line))
    bins = int((hi - lo) / STEP) + 1
    gaps, covered, across = [0] * bins, [0] * bins, [0] * bins
    for line in lines:
        words = _words(line)
        for k in range(_bin(words[0].x0, lo), min(_bin(words[-1].x1, lo) + 1, bins)):
            across[k] += 1
        for w in words:
            for k in range(_bin(w.x0, lo), min(_bin(w.x1, lo) + 1, bins)):
                covered[k] += 1
        for a, b in zip(words, words[1:]):
            if b.x0 - a.x1 >= GAP * line.size:
                for k in range(_bin(a.x1, lo) + 1, _bin(b.x0, lo)):
                    gaps[k] += 1
    cuts, run = [], []
    for k in range(bins):
        if gaps[k] >= max(2, math.ceil(SHARE * across[k])) and covered[k] <= math.floor(CROSSED * across[k]):
            run.append(k)
        elif run:
            cuts.append(lo + STEP * (run[0] + run[-1]) / 2)
            run = []
    return cuts


def _bin(x: float, lo: float) -> int:
    return int((x - lo) / STEP)


def _words(line: Line) -> tuple[Segment, ...]:
    return line.words or line.segments
