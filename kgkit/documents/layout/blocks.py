"""Printed lines -> typed blocks: headings with their numbers and levels, captions with
their labels, numbered display equations, table rows and paragraphs, hyphenation mended.

Every rule reads the typography a paper prints (a heading is bold or larger than the body
and short; a caption starts with its label; an equation number sits apart at a line's
end), so the rules hold across templates rather than for one document.
"""
from __future__ import annotations

import re

from kgkit.documents.layout.model import (CAPTION, EQUATION, HEADING, PARAGRAPH, TABLE_ROW, TITLE, Block,
                                          Line)

_NUMBERED = re.compile(r"^(?P<num>(?:\d{1,2}|[A-H])(?:\.\d{1,2}){0,3})\.?\s+(?P<text>[A-Z\u00c0-\u024f(].{0,110})$")
_CAPTION = re.compile(
    r"^(?P<printed>(?P<word>Figure|Fig\.?|FIGURE|FIG\.?|Table|TABLE|Tab\.?|Supplementary\s+Table|Supplementary\s+Figure)"
    r"\s*(?P<num>\d{1,3}|[IVX]{1,5})(?P<punct>\s*[.:|]|\s*—|\s*-\s)?)\s*(?P<rest>.*)$")
_CAPTION_VERBS = re.compile(
    r"^(shows?|presents?|lists?|gives?|summari[sz]es?|reports?|illustrates?|compares?|contains?|depicts?|"
    r"displays?|provides?|describes?|and|or|in|of|to|we|is|are|was|were|also|above|below|here|,)\b", re.IGNORECASE)
_EQUATION_NUMBER = re.compile(r"^\((\d{1,3}[a-z]?)\)$")
_EQUATION_TAIL = re.compile(r"\s\((\d{1,3}[a-z]?)\)$")
_MATH = re.compile(r"[=+−∑∏∫∈×·≤≥≈∂√λφσμαβγθ^_]|\b[a-zA-Z]\s[a-zA-Z0-9]\b")
_STANDARD = re.compile(r"^(abstract|references|bibliography|acknowledg(e)?ments?|appendix|appendices|"
                       r"introduction|background|methods?|results?|discussion|conclusions?|"
                       r"competing interests|authors'? contributions|funding|declarations?|keywords)\b", re.IGNORECASE)
_REFERENCES_LINE = re.compile(r"^(references|bibliography|literature cited|works cited)\s*:?$", re.IGNORECASE)
_FRONT_END = re.compile(r"^(abstract|summary|keywords|1\.?\s+introduction|introduction|background)\b", re.IGNORECASE)


def caption_label(text: str) -> tuple[str, str, str] | None:
    """``(kind, label, printed label)`` when ``text`` opens a figure or table caption:
    "Fig. 2. Heat flow" -> ("figure", "Figure 2", "Fig. 2."). A sentence that only talks
    about a table ("Table 2 shows ...") is not a caption."""
    m = _CAPTION.match(text.strip())
    if not m:
        return None
    rest = m.group("rest")
    if not m.group("punct") and (not rest or not rest[0].isupper()):
        return None
    if _CAPTION_VERBS.match(rest):
        return None
    kind = "table" if m.group("word").lower().startswith(("tab", "supplementary t")) else "figure"
    return kind, f"{'Table' if kind == 'table' else 'Figure'} {m.group('num')}", m.group("printed").strip()


def heading_parts(line: Line, body: float, face: str = "") -> tuple[str | None, str] | None:
    """``(number, text)`` when a line reads as a heading: short, not ending a sentence, bold,
    set larger than the body text or in a face of its own (upright, at body size or more:
    templates whose bold face's name says nothing). A line that is only "References" is
    a heading in whatever type it is set."""
    text = line.text.strip()
    if _REFERENCES_LINE.match(text):
        return None, text.rstrip(":")
    if not text or len(text) > 120 or len(text.split()) > 16 or len(re.findall(r"[^\W\d_]", text)) < 3:
        return None
    own_face = bool(face) and line.font != face and not line.italic and line.size >= body - 1.0
    if not (line.bold or line.size >= body + 1.0 or own_face) or len(line.segments) > 1:
        return None
    if not line.bold and (len(text) > 80 or re.search(r"\[|\.\s\S|\(\d|[,;:=]$|=|\s(the|a|an|of|and|or|to|in|for|with)$", text)):
        return None  # larger type alone makes a heading only of a short line that is no sentence
    if caption_label(text):
        return None
    m = _NUMBERED.match(text)
    if m:
        number = m.group("num")
        rest = m.group("text").strip()
        if number.isdigit() and int(number) > 30:
            return None
        return number, rest
    if not (text[0].isupper() or text[0].isdigit()) or re.search(r"[.;,]$", text) and not _STANDARD.match(text):
        return None
    if re.search(r"@|https?://|\d{4,}", text):
        return None
    return None, text.rstrip(":")


def build_blocks(lines: list[Line], body: float, gap: float, face: str = "") -> list[Block]:
    """Lines in reading order -> blocks. Page 1's lines before its abstract or first
    heading are front matter (title, authors, affiliations): kept as ``title`` blocks.
    After it, each line opens a heading, a caption or an equation, or goes on (or breaks)
    the paragraph or table it follows; each of those is a stage of its own below."""
    front = _front_matter_end(lines, body, face)
    built = _Open()
    seen_equations: set[str] = set()
    in_references = False
    for i, line in enumerate(lines):
        if i < front:
            _front_line(built, line, gap)
            continue
        if i == front:
            built.close()
        head = _heading_of(lines, i, body, face, gap, built.lines, in_references)
        if head and _REFERENCES_LINE.match(line.text.strip()):
            in_references = True
        starts = _starts_block(built.lines, line, gap)
        cap = caption_label(line.text) if starts or _punct_label(line.text) else None
        eq = _equation(line, seen_equations)
        if head and not cap:
            _heading_line(built, line, head, gap)
        elif cap:
            built.start(CAPTION, line)
        elif eq:
            built.close()
            built.blocks.append(_block(EQUATION, [line]))
            built.blocks[-1].label, built.blocks[-1].printed_label = f"Equation {eq}", f"({eq})"
        else:
            _body_line(built, line, gap)
    built.close()
    return built.blocks


class _Open:
    """The blocks built so far, and the open one: its kind and lines."""

    def __init__(self) -> None:
        self.blocks: list[Block] = []
        self.lines: list[Line] = []
        self.kind = PARAGRAPH

    def close(self) -> None:
        if self.lines:
            self.blocks.append(_block(self.kind, self.lines))
        self.lines, self.kind = [], PARAGRAPH

    def start(self, kind: str, line: Line) -> None:
        self.close()
        self.kind = kind
        self.lines.append(line)


def _front_line(built: _Open, line: Line, gap: float) -> None:
    """A front-matter line: a title block, broken where the size, the weight or a gap changes."""
    current = built.lines
    if current and (current[-1].size != line.size or current[-1].bold != line.bold
                    or _gap(current[-1], line) > 1.5 * gap + 2):
        built.close()
    built.kind = TITLE
    built.lines.append(line)


def _heading_of(lines: list[Line], i: int, body: float, face: str, gap: float, current: list[Line],
                in_references: bool) -> tuple[str | None, str] | None:
    """(number, text) when line ``i`` is a heading, else None. Among the references, the
    body face makes no heading."""
    line = lines[i]
    head = heading_parts(line, body, face if not in_references else "")
    if head and not (line.bold or line.size >= body + 1.0 or _REFERENCES_LINE.match(line.text.strip())):
        # A heading by its face alone must stand apart: a gap above it, and a gap below
        # or the body face going on below.
        nxt = lines[i + 1] if i + 1 < len(lines) else None
        if not (_starts_block(current, line, gap) and (nxt is None or _breaks(line, nxt, gap)
                                                       or (nxt.font == face and len(line.text) < 60))):
            head = None
    return head


def _heading_line(built: _Open, line: Line, head: tuple[str | None, str], gap: float) -> None:
    """A heading opens a block, unless it is the second line of an unnumbered heading wrapped over two."""
    prev = built.lines[-1] if built.lines else None
    if built.kind == HEADING and prev and prev.size == line.size and _gap(prev, line) < gap + 3 and \
            head[0] is None and not _STANDARD.match(line.text):
        built.lines.append(line)  # a heading wrapped over two lines
        return
    built.start(HEADING, line)


def _body_line(built: _Open, line: Line, gap: float) -> None:
    """A line of a paragraph or a table row: a table begins or ends where the segments say,
    a paragraph breaks after a heading or at a gap."""
    kind = built.kind
    is_row = len(line.segments) >= 3 or (len(line.segments) == 2 and len(line.text) < 60 and kind == TABLE_ROW)
    if is_row and kind != TABLE_ROW:
        built.close()
        built.kind = TABLE_ROW
    elif not is_row and kind == TABLE_ROW:
        built.close()
    elif kind == HEADING or (built.lines and _breaks(built.lines[-1], line, gap)):
        built.close()
    built.lines.append(line)


def _front_matter_end(lines: list[Line], body: float, face: str = "") -> int:
    """Index of the first line after page 1's front matter; 0 when the page has none."""
    first_page = [i for i, line in enumerate(lines) if line.page == lines[0].page] if lines else []
    for i in first_page:
        text = lines[i].text.strip()
        if _FRONT_END.match(text):
            return i
        parts = heading_parts(lines[i], body, face)
        if parts and parts[0] is not None:
            return i
    return 0


def _punct_label(text: str) -> bool:
    m = _CAPTION.match(text.strip())
    return bool(m and m.group("punct"))


def _equation(line: Line, seen: set[str]) -> str | None:
    """The number of a display equation printed at this line's end, set apart from the
    formula (its own segment) or closing a short line of mathematics."""
    if not line.segments:
        return None
    last = line.segments[-1].text.strip()
    m = _EQUATION_NUMBER.match(last) or (_EQUATION_TAIL.search(last) if len(line.text) < 50 else None)
    if not m or m.group(1) in seen:
        return None
    if m.re is _EQUATION_TAIL and not _MATH.search(line.text[:-len(m.group(0))]):
        return None
    if len(line.segments) == 1 and m.re is _EQUATION_NUMBER and len(line.text.strip()) > 6:
        return None
    seen.add(m.group(1))
    return m.group(1)


def _gap(a: Line, b: Line) -> float:
    return b.bbox[1] - a.bbox[3] if a.page == b.page and a.column == b.column else 1e9


def _starts_block(current: list[Line], line: Line, gap: float) -> bool:
    return not current or _breaks(current[-1], line, gap)


def _breaks(prev: Line, line: Line, gap: float) -> bool:
    """A paragraph ends between two lines: another page or column, a wide gap, another font size."""
    if prev.page != line.page or prev.column != line.column:
        return not _continues(prev, line)
    g = line.bbox[1] - prev.bbox[3]
    if g > 1.8 * gap + 2.5 or g < -2:
        return True
    return abs(prev.size - line.size) > 0.6


def _continues(prev: Line, line: Line) -> bool:
    """A paragraph running on into the next column or page: the previous line does not end
    a sentence and this one starts in lower case."""
    return not re.search(r"[.!?:]$", prev.text.strip()) and bool(re.match(r"[a-z(,;]", line.text.strip()))


def _block(kind: str, lines: list[Line]) -> Block:
    text = lines[0].text.strip()
    for line in lines[1:]:
        text = join_lines(text, line.text.strip())
    x0 = min(line.bbox[0] for line in lines if line.page == lines[0].page)
    top = min(line.bbox[1] for line in lines if line.page == lines[0].page)
    x1 = max(line.bbox[2] for line in lines if line.page == lines[0].page)
    bottom = max(line.bbox[3] for line in lines if line.page == lines[0].page)
    block = Block(kind=kind, text=text, page=lines[0].page, bbox=(x0, top, x1, bottom),
                  size=lines[0].size, bold=lines[0].bold, lines=list(lines))
    if kind == TABLE_ROW:
        block.rows = [[s.text for s in line.segments] for line in lines]
    if kind == CAPTION:
        found = caption_label(text)
        if found:
            block.label, block.printed_label = found[1], found[2]
    return block


def join_lines(text: str, nxt: str) -> str:
    """Two printed lines of one paragraph as one text: a word hyphenated at the line end
    is mended ("hyphen-" + "ation" -> "hyphenation"); a compound's hyphen before a capital
    or digit is kept without a space ("GPT-" + "4" -> "GPT-4")."""
    if text.endswith("-") and len(text) > 1 and text[-2].isalpha():
        if nxt[:1].islower():
            return text[:-1] + nxt
        return text + nxt
    return f"{text} {nxt}"


def assign_sections(blocks: list[Block]) -> None:
    """Number and level every heading, and give each block the section it sits under.

    A numbered heading's level is its depth ("2.1" -> 2). An unnumbered one takes the
    level of numbered headings set in its typography, else its rank among the heading
    styles by size (standard names such as References are top level)."""
    heads = [b for b in blocks if b.kind == HEADING]
    style_level: dict[tuple[float, bool], int] = {}
    for b in heads:
        m = _NUMBERED.match(b.text)
        if m:
            b.number = m.group("num")
            b.level = b.number.count(".") + 1
            b.text = m.group("text").strip()
            style_level.setdefault((b.size, b.bold), b.level)
    styles = sorted({(b.size, b.bold) for b in heads if b.level is None}, key=lambda s: (-s[0], not s[1]))
    for b in heads:
        if b.level is not None:
            continue
        b.text = b.text.rstrip(":").strip()
        if (b.size, b.bold) in style_level:
            b.level = style_level[(b.size, b.bold)]
        elif _STANDARD.match(b.text):
            b.level = 1
        else:
            b.level = _unnumbered_level(b, styles, style_level)
    _paths(blocks)


def _unnumbered_level(b: Block, styles: list[tuple[float, bool]], numbered: dict[tuple[float, bool], int]) -> int:
    """A paper with no numbered headings ranks its heading styles by size (at most three
    levels); one with numbered headings puts a style smaller than all of theirs at their
    deepest level, any other at the top."""
    if not numbered:
        return min(3, styles.index((b.size, b.bold)) + 1)
    if b.size < min(size for size, _ in numbered):
        return max(numbered.values())
    return 1


def _paths(blocks: list[Block]) -> None:
    path: list[Block] = []
    for b in blocks:
        if b.kind == HEADING:
            while path and (path[-1].level or 0) >= (b.level or 0):  # every heading has its level (>= 1)
                path.pop()
            path.append(b)
        b.section_path = [heading_name(h) for h in path]
        b.section = b.section_path[-1] if path else None


def heading_name(b: Block) -> str:
    """A heading as the number and text joined by a space: "2.1 New Corpora"."""
    return f"{b.number} {b.text}" if b.number else b.text
