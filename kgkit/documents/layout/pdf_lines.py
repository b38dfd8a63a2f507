"""A PDF page's words as printed lines in reading order, through pdfplumber (MIT).

Why our own line building rather than pdfplumber's text: papers are set in two columns
whose lines share baselines, so a page's rows must be cut at the column gutter before
they are read; running heads, page numbers and line-number gutters must leave the flow;
rotated words (a table's sideways row label) must not land among the cells. Word
spacing comes from glyph gaps relative to the font size, because many papers' text
layers carry no space characters at all.
"""
from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass

from kgkit.documents.layout.model import Line, Segment
from kgkit.documents.unicode_repair import valid_unicode

_BOLD = re.compile(r"bold|black|heavy|semibold|demi|medi|\.b$|-b$|,b$|\+.*-?bd", re.IGNORECASE)
_ITALIC = re.compile(r"ital|oblique|\.i$|-i$|,i$", re.IGNORECASE)
_DIGITS = re.compile(r"^\d{1,4}$")
_CID = re.compile(r"\(cid:\d+\)")
# Ligature glyphs the text layer may carry; NFKC would also fold other characters, so only these.
_LIGATURES = str.maketrans({"\ufb00": "ff", "\ufb01": "fi", "\ufb02": "fl", "\ufb03": "ffi", "\ufb04": "ffl",
                            "\ufb05": "st", "\ufb06": "st", "\u00a0": " ", "\u2002": " ", "\u2009": " "})
# TeX sets an accent as its own glyph beside the letter: "Saur´ı", "Padro´" in the text layer.
_SPACING_ACCENTS = {"´": "\u0301", "`": "\u0300", "¨": "\u0308", "˜": "\u0303", "ˆ": "\u0302", "¸": "\u0327",
                    "ˇ": "\u030c"}
_ACCENT_BEFORE = re.compile("([´`¨˜ˆˇ])([a-zA-Z])")
_ACCENT_AFTER = re.compile("([aeiouyAEIOUYnNcCsSzZ])([´`¨˜ˆ¸ˇ])")
HEAD_ZONE = 0.075  # top and bottom share of a page where running heads and folios sit


@dataclass
class Word:
    text: str
    x0: float
    x1: float
    top: float
    bottom: float
    size: float
    bold: bool
    font: str = ""


@dataclass
class PageLines:
    number: int
    width: float
    height: float
    lines: list[Line]
    dropped_rotated: int = 0
    dropped_gutter: int = 0
    surrogates: int = 0


def page_words(page) -> tuple[list[Word], int, int]:
    """Upright words of a pdfplumber page, ligatures mended and text made valid Unicode;
    with the count of rotated words left out and of surrogates replaced."""
    raw = page.extract_words(extra_attrs=["fontname", "size", "upright"], x_tolerance_ratio=0.12,
                             y_tolerance=2, keep_blank_chars=False)
    words, rotated, surrogates = [], 0, 0
    for w in raw:
        if not w.get("upright", True):
            rotated += 1
            continue
        text, bad = valid_unicode(mend_accents(_CID.sub("", w["text"]).translate(_LIGATURES)))
        surrogates += bad
        if not text.strip():
            continue
        words.append(Word(text, float(w["x0"]), float(w["x1"]), float(w["top"]), float(w["bottom"]),
                          float(w["size"]), bool(_BOLD.search(w.get("fontname") or "")),
                          re.sub(r"^[A-Z]{6}\+", "", w.get("fontname") or "")))
    return words, rotated, surrogates


def mend_accents(text: str) -> str:
    """Spacing accents joined to their letter: "Saur´ı" -> "Saurí", "Padro´" -> "Padró"."""
    if not any(a in text for a in _SPACING_ACCENTS):
        return text
    import unicodedata

    def before(m):
        return unicodedata.normalize("NFC", m.group(2) + _SPACING_ACCENTS[m.group(1)])

    def after(m):
        return unicodedata.normalize("NFC", m.group(1) + _SPACING_ACCENTS[m.group(2)])

    text = re.sub("([´`¨˜ˆˇ])ı", lambda m: unicodedata.normalize("NFC", "i" + _SPACING_ACCENTS[m.group(1)]), text)
    text = _ACCENT_AFTER.sub(after, text)
    return _ACCENT_BEFORE.sub(before, text)


def drop_line_numbers(words: list[Word]) -> tuple[list[Word], int]:
    """Words of a line-number gutter (a stack of bare numbers at one x, at least ten of
    them, rising down the page) taken out."""
    gone: set[int] = set()
    for edge in (lambda w: w.x0, lambda w: w.x1):  # left- or right-aligned numbers
        stacks: dict[int, list[Word]] = defaultdict(list)
        for w in words:
            if _DIGITS.match(w.text) and id(w) not in gone:
                stacks[round(edge(w) / 4)].append(w)
        for stack in stacks.values():
            if len(stack) < 10:
                continue
            stack.sort(key=lambda w: w.top)
            numbers = [int(w.text) for w in stack]
            rising = sum(b > a for a, b in zip(numbers, numbers[1:]))
            if rising >= 0.9 * (len(numbers) - 1):
                gone.update(id(w) for w in stack)
    return [w for w in words if id(w) not in gone], len(gone)


def find_gutter(words: list[Word], width: float) -> float | None:
    """The x of a two-column page's gutter: the widest vertical strip in the middle of the
    page that almost no word crosses; failing that, one that few printed rows cross (a
    page whose full-width abstract or float crosses it while its column text never does).
    At least 6 points wide, with text on both sides."""
    if len(words) < 40:
        return None
    found = _gutter(words, width)
    if found is None:  # full-width front matter over the top of a two-column first page
        lower = sorted(w.top for w in words)[len(words) // 2]
        found = _gutter([w for w in words if w.top >= lower], width)
    return found


def _gutter(words: list[Word], width: float) -> float | None:
    if len(words) < 20:
        return None
    lo, hi = int(width * 0.3), int(width * 0.7)
    by_words = [0] * (hi - lo)
    for w in words:
        for x in range(max(lo, int(w.x0)), min(hi, int(w.x1) + 1)):
            by_words[x - lo] += 1
    rows = _rows(words)
    by_rows = [0] * (hi - lo)
    for row in rows:
        for x in {x for w in row for x in range(max(lo, int(w.x0)), min(hi, int(w.x1) + 1))}:
            by_rows[x - lo] += 1
    for cover, limit in ((by_words, max(2, len(words) // 50)), (by_rows, max(1, int(0.35 * len(rows))))):
        gutter = _widest_gap(cover, limit, lo)
        if gutter is not None:
            left = sum(1 for w in words if w.x1 <= gutter)
            right = sum(1 for w in words if w.x0 >= gutter)
            if min(left, right) >= 0.2 * len(words):
                return gutter
    return None


def _widest_gap(cover: list[int], limit: int, lo: int) -> float | None:
    best, run_start, best_span = None, None, 0
    for i, c in enumerate(cover + [limit + 1]):
        if c <= limit and run_start is None:
            run_start = i
        elif c > limit and run_start is not None:
            if i - run_start > best_span:
                best_span, best = i - run_start, lo + (run_start + i) / 2
            run_start = None
    return best if best is not None and best_span >= 6 else None


def _rows(words: list[Word]) -> list[list[Word]]:
    """Words grouped into printed rows, each left to right. A word joins a row its box
    overlaps vertically by at least 40% of the lower of the two heights, so superscript
    markers and subscripts stay on their line while the next line (leading apart) does not."""
    rows: list[list] = []  # [top, bottom, words] of the rows' x-height bands
    for w in sorted(words, key=lambda w: (w.bottom, w.x0)):
        # The band between baseline and x-height: a glyph with a tall box (a bracket, a
        # math symbol) must not pull the next line into this one.
        top, bottom = w.bottom - 0.75 * w.size, w.bottom - 0.15 * w.size
        for row in reversed(rows[-4:]):
            overlap = min(row[1], bottom) - max(row[0], top)
            if overlap >= 0.4 * min(bottom - top, row[1] - row[0]):
                row[2].append(w)
                if w.size >= max(x.size for x in row[2]) - 0.1:  # the row is as tall as its main text
                    row[0], row[1] = min(row[0], top), max(row[1], bottom)
                break
        else:
            rows.append([top, bottom, [w]])
    return [sorted(r[2], key=lambda w: w.x0) for r in rows]


def _line(words: list[Word], page: int, column: int) -> Line:
    sizes: Counter[float] = Counter()
    for w in words:
        sizes[round(w.size, 1)] += len(w.text)
    size = sizes.most_common(1)[0][0]
    segments, current = [], [words[0]]
    for prev, w in zip(words, words[1:]):
        if w.x0 - prev.x1 > max(2.2 * size, 12):
            segments.append(current)
            current = [w]
        else:
            current.append(w)
    segments.append(current)
    segs = tuple(Segment(_join(s), s[0].x0, s[-1].x1) for s in segments)
    text = " ".join(s.text for s in segs)
    lettered = [w for w in words if re.search(r"[^\W\d_]", w.text)]
    bold = bool(lettered) and all(w.bold for w in lettered)
    faces: Counter[str] = Counter()
    for w in lettered:
        faces[w.font] += len(w.text)
    font = faces.most_common(1)[0][0] if faces else ""
    bbox = (min(w.x0 for w in words), min(w.top for w in words), max(w.x1 for w in words),
            max(w.bottom for w in words))
    return Line(text=text, page=page, bbox=bbox, size=size, bold=bold, column=column, segments=segs, font=font,
                italic=bool(_ITALIC.search(font)), words=tuple(Segment(w.text, w.x0, w.x1) for w in words))


def _join(words: list[Word]) -> str:
    out = words[0].text
    for prev, w in zip(words, words[1:]):
        # Superscript markers and punctuation sit close: pdfplumber split them on size.
        out += ("" if w.x0 - prev.x1 < 0.08 * max(w.size, prev.size) and not _word_gap(prev, w) else " ") + w.text
    return out


def _word_gap(prev: Word, w: Word) -> bool:
    return w.x0 - prev.x1 >= 0.12 * min(w.size, prev.size)


def page_lines(page, number: int) -> PageLines:
    """The page's lines in reading order: top band, then for each stretch between lines that
    span the gutter, the left column's lines before the right column's."""
    words, rotated, surrogates = page_words(page)
    lines = lines_from_words(words, number, float(page.width), float(page.height))
    lines.dropped_rotated, lines.surrogates = rotated, surrogates
    return lines


def lines_from_words(words: list[Word], number: int, width: float, height: float) -> PageLines:
    """Printed lines in reading order from a page's words (from its text layer or OCR)."""
    words, gutter_words = drop_line_numbers(words)
    gutter = find_gutter(words, width)
    ordered: list[Line] = []
    left: list[Line] = []
    right: list[Line] = []

    def flush():
        ordered.extend(left)
        ordered.extend(right)
        left.clear()
        right.clear()

    for row in _rows(words):
        if gutter is None:
            ordered.append(_line(row, number, 0))
            continue
        if any(w.x0 < gutter - 1 and w.x1 > gutter + 1 for w in row):
            flush()
            ordered.append(_line(row, number, -1))
            continue
        lhs = [w for w in row if w.x1 <= gutter + 1]
        rhs = [w for w in row if w.x0 >= gutter - 1 and w.x1 > gutter + 1]
        if lhs and rhs and rhs[0].x0 - lhs[-1].x1 < 0.6 * rhs[0].size:  # a centred line, one word space apart
            flush()
            ordered.append(_line(row, number, -1))
            continue
        if lhs:
            left.append(_line(lhs, number, 0))
        if rhs:
            right.append(_line(rhs, number, 1))
    flush()
    return PageLines(number, width, height, ordered, 0, gutter_words, 0)


def furniture_keys(pages: list[PageLines]) -> set[str]:
    """Texts of lines in the head or foot zone that recur on at least two pages (digits
    folded, so "Page 3 of 9" and a running title with its folio match): running heads."""
    seen: Counter = Counter()
    for p in pages:
        keys = {_key(line.text) for line in p.lines if _in_zone(line, p)}
        seen.update(keys)
    return {k for k, n in seen.items() if n >= 2 and len(pages) > 1}


def _in_zone(line: Line, page: PageLines) -> bool:
    return line.bbox[3] < page.height * HEAD_ZONE or line.bbox[1] > page.height * (1 - HEAD_ZONE)


def _key(text: str) -> str:
    return re.sub(r"\d+", "#", re.sub(r"\s+", "", text.lower()))


def is_furniture(line: Line, page: PageLines, keys: set[str]) -> bool:
    if not _in_zone(line, page):
        return False
    return _key(line.text) in keys or bool(re.fullmatch(r"(page\s*)?\d{1,4}(\s*(of|/)\s*\d+)?", line.text.lower().strip()))


def body_font(pages: list[PageLines]) -> str:
    """The face most of the text is set in."""
    faces: Counter = Counter()
    for p in pages:
        for line in p.lines:
            faces[line.font] += len(line.text)
    return faces.most_common(1)[0][0] if faces else ""


def body_size(pages: list[PageLines]) -> float:
    """The font size most of the text is set in."""
    sizes: Counter = Counter()
    for p in pages:
        for line in p.lines:
            sizes[line.size] += len(line.text)
    return sizes.most_common(1)[0][0] if sizes else 10.0


def median_gap(lines: list[Line]) -> float:
    gaps = [b.bbox[1] - a.bbox[3] for a, b in zip(lines, lines[1:])
            if a.page == b.page and a.column == b.column and 0 <= b.bbox[1] - a.bbox[3] < 20]
    return statistics.median(gaps) if gaps else 2.0
