"""Module A, deterministic: a paper's metadata read off its first page's layout.

The title is the first page's largest type above the abstract; the authors are the
person names in the lines under it (markers for affiliations stripped, order kept);
DOI, arXiv id, year, venue and licence come from patterns anywhere on the first page,
running heads and footers included. Each field keeps where it was read: a span of the
shown text when the line is in the reading order, else its page and bounding box.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgkit.documents.layout.model import TITLE, Block, LayoutDocument, Line
from kgkit.scholarly.references import surname

_DOI = re.compile(r"\b(10\.\d{4,9}/[-._;()/:A-Za-z0-9]+[A-Za-z0-9])")
_ARXIV = re.compile(r"arXiv:\s*(\d{4}\.\d{4,5}(?:v\d+)?)", re.I)
_AFFILIATION = re.compile(r"universit|department|institut|school|college|laborator|\blab\b|hospital|centre|center|"
                          r"faculty|ministry|@|\bemail\b|corresponding|academy|inc\.|ltd|gmbh|foundation|program|"
                          r"\bdept\b|\bUSA\b|\bUK\b|unit\b|division|clinic|research", re.I)
_MARKERS = re.compile(r"[\d*†‡§¶♣♦♥♠#∗✉]+(?:,[\d*†‡§¶♣♦♥♠#∗]+)*")
_NAME_WORD = re.compile(r"^(?:[A-Z\u00c0-\u024f][\w'’\-]*\.?|[A-Z]\.(?:-?[A-Z]\.)*|van|von|de|der|den|da|dos|du|la|le|di|"
                        r"del|al|el|bin|ibn)$")
_LICENCE = re.compile(r"creativecommons\.org/licenses/([a-z\-]+)/(\d\.\d)|\bCC[\s-]BY(?:[\s-](?:NC|SA|ND))*(?:[\s-]\d\.\d)?|"
                      r"Creative Commons Attribution(?: License)?(?: \d\.\d)?", re.I)
# An affiliation's marker, at the line's start or after a ";" ("1 Department …", "♣: University …; ♦: …").
_LEADING_MARKER = re.compile(r"(?:^|;)\s*(\d{1,2}|[*†‡§¶♣♦♥♠#∗])\s*:?\s*(?=[A-Z])")
_VENUE = re.compile(r"(proceedings|conference|journal|workshop|symposium|transactions|letters|web of|research|"
                    r"review|annals|bulletin|\bvol\.|volume)", re.I)


@dataclass
class Field:
    value: object
    page: int
    span: tuple[int, int] | None = None  # in the shown text
    bbox: tuple[float, float, float, float] | None = None

    def as_dict(self) -> dict:
        out = {"value": self.value, "page": self.page}
        if self.span:
            out["span"] = list(self.span)
        if self.bbox:
            out["bbox"] = [round(v, 1) for v in self.bbox]
        return out


@dataclass
class Metadata:
    title: Field | None = None
    authors: list[Field] = field(default_factory=list)  # printed names, in order
    affiliations: list[Field] = field(default_factory=list)
    # Each author's affiliations (indices into ``affiliations``), where the page ties them:
    # by the markers after a name and before an affiliation line ("Lairgi1", "1 Department
    # of ..."), or every author to the only affiliation a page without markers prints.
    author_affiliations: list[list[int]] = field(default_factory=list)
    year: Field | None = None
    venue: Field | None = None
    doi: Field | None = None
    arxiv_id: Field | None = None
    license: Field | None = None

    def as_dict(self) -> dict:
        def one(f):
            return f.as_dict() if f else None
        return {"title": one(self.title),
                "authors": [dict(a.as_dict(), sort_name=sort_name(str(a.value)),
                                 affiliations=self.author_affiliations[i] if i < len(self.author_affiliations) else [])
                            for i, a in enumerate(self.authors)],
                "affiliations": [a.as_dict() for a in self.affiliations], "year": one(self.year),
                "venue": one(self.venue), "doi": one(self.doi), "arxiv_id": one(self.arxiv_id),
                "license": one(self.license)}


def sort_name(name: str) -> str:
    """"Naushad UzZaman" -> "UzZaman, Naushad"."""
    family = surname(name)
    given = name[:len(name) - len(family)].strip() if name.endswith(family) else ""
    return f"{family}, {given}" if given else family


def read_metadata(layout: LayoutDocument) -> Metadata:
    meta = Metadata()
    front = [b for b in layout.blocks if b.kind == TITLE]
    if not front:
        front = _fallback_front(layout)
    title_block = max(front, key=lambda b: (b.size, b.bold, -b.bbox[1]), default=None)
    if title_block is not None:
        meta.title = Field(" ".join(title_block.text.split()), title_block.page,
                           (title_block.start, title_block.end), title_block.bbox)
        after = front[front.index(title_block) + 1:] if title_block in front else []
        _authors(meta, after)
    page_one: list[tuple[str, int, tuple[int, int] | None, tuple[float, float, float, float]]]
    page_one = [(b.text, b.page, (b.start, b.end), b.bbox) for b in layout.blocks if b.page == 1]
    page_one += [(text, 1, None, bbox) for text, bbox in _joined(layout.furniture)]
    meta.doi = _first(page_one, _DOI, 1)
    meta.arxiv_id = _first(page_one, _ARXIV, 1)
    meta.license = _licence(page_one)
    _venue_and_year(meta, _joined(layout.furniture), page_one)
    return meta


def _joined(furniture: list[Line]) -> list[tuple[str, tuple]]:
    """The first page's head and foot lines, a statement wrapped over lines joined back."""
    out: list[list] = []
    prev = None
    for line in furniture:
        if line.page != 1:
            continue
        if prev and abs(prev.size - line.size) < 0.3 and 0 <= line.bbox[1] - prev.bbox[3] < line.size:
            out[-1][0] = f"{out[-1][0]} {line.text}"
            b = out[-1][1]
            out[-1][1] = (min(b[0], line.bbox[0]), b[1], max(b[2], line.bbox[2]), line.bbox[3])
        else:
            out.append([line.text, line.bbox])
        prev = line
    return [(t, b) for t, b in out]


def _fallback_front(layout: LayoutDocument) -> list[Block]:
    """No front matter found: the first page's blocks above its first heading."""
    out = []
    for b in layout.blocks:
        if b.page != 1 or b.kind == "heading":
            break
        out.append(b)
    return out


def _authors(meta: Metadata, blocks: list[Block]) -> None:
    marks: list[set[str]] = []  # each author's markers
    affiliation_marks: list[set[str] | None] = []  # None: a contact line (an e-mail), no place
    for b in blocks:
        found = False
        for line in b.lines or []:
            names = author_names(line.text)
            if names:
                found = True
                meta.authors.extend(Field(n, line.page, None, line.bbox) for n in names)
                marks.extend(name_markers(line.text, n) for n in names)
            elif meta.authors and _AFFILIATION.search(line.text):
                meta.affiliations.append(Field(" ".join(line.text.split()), line.page, None, line.bbox))
                contact = re.search(r"correspond|e-?mail|@", line.text, re.I)  # "*Corresponding author", not a place
                affiliation_marks.append(None if contact else set(_LEADING_MARKER.findall(line.text)))
        if meta.authors and not found and not _AFFILIATION.search(b.text):
            break
    meta.author_affiliations = affiliated(marks, affiliation_marks)


def name_markers(line: str, name: str) -> set[str]:
    """The affiliation markers printed right after ``name`` on its line ("Lairgi1,2*" -> 1, 2, *)."""
    last = name.split()[-1]
    m = re.search(re.escape(last) + r"\s?(" + _MARKERS.pattern + ")", line)
    return set(re.findall(r"\d+|[^\d,]", m.group(1))) if m else set()


def affiliated(marks: list[set[str]], affiliation_marks: list[set[str] | None]) -> list[list[int]]:
    """Each author's affiliations by marker; with no markers at all and one affiliation
    (contact lines aside), every author's is that one; otherwise an author's list stays
    empty (not guessed)."""
    places = [j for j, mark in enumerate(affiliation_marks) if mark is not None]
    if not any(marks) and len(places) == 1 and not affiliation_marks[places[0]]:
        return [[places[0]] for _ in marks]
    return [[j for j, mark in enumerate(affiliation_marks) if mark and mark & own] for own in marks]


def author_names(text: str) -> list[str]:
    """The person names of one author line, in order: "Lamya Lairgi1*, Rachid Lagtayi2,3
    and Rabie Elotmani4" -> ["Lamya Lairgi", "Rachid Lagtayi", "Rabie Elotmani"]. A line
    that reads as an affiliation, an address or prose gives none."""
    if _AFFILIATION.search(text) or len(text) > 400:
        return []
    clean = re.sub(r"(?<=[^\W\d_])" + _MARKERS.pattern, " ", text)
    clean = re.sub(r"[♣♦♥♠†‡§¶∗✉*]", " ", clean)
    parts = [p.strip(" ,;") for p in re.split(r",|;|\sand\s|\s&\s|^and\s", clean) if p.strip(" ,;")]
    names = []
    for part in parts:
        words = part.split()
        if not 2 <= len(words) <= 5 or not all(_NAME_WORD.match(w) for w in words):
            return []
        if not any(len(w.strip(".")) > 1 for w in words):
            return []
        names.append(" ".join(words))
    return names


def _first(texts, pattern: re.Pattern, group: int) -> Field | None:
    for text, page, span, bbox in texts:
        m = pattern.search(text.replace(" ", "") if pattern is _DOI else text)
        if m:
            value = m.group(group).rstrip(".,;")
            return Field(value, page, span if pattern is not _DOI else None, bbox)
    return None


def _licence(texts) -> Field | None:
    for text, page, span, bbox in texts:
        m = _LICENCE.search(text)
        if not m:
            continue
        if m.group(1):
            value = f"CC {m.group(1).upper()} {m.group(2)}"
        else:
            version = re.search(r"\d\.\d", m.group(0) + text[m.end():m.end() + 12])
            value = "CC BY" + (f" {version.group(0)}" if version else "")
        return Field(value, page, None, bbox)
    return None


def _venue_and_year(meta: Metadata, furniture: list[tuple[str, tuple]], page_one) -> None:
    """Venue: a first-page running head or footer that names a journal or proceedings;
    year: the year that line prints, else a copyright year."""
    for text, bbox in furniture:
        if _VENUE.search(text) and not meta.venue and not _LICENCE.search(text):
            venue = re.split(r"\s(?:https?://|doi:|DOI)", text)[0]
            venue = re.split(r",\s*pages?\s\d", venue)[0]
            meta.venue = Field(" ".join(venue.split()), 1, None, bbox)
            year = re.search(r"(?<!\d)(19|20)\d\d(?!\d)", text)
            if year:
                meta.year = Field(int(year.group(0)), 1, None, bbox)
    if meta.year is None:
        for text, page, span, bbox in page_one:
            m = re.search(r"(?:©|\(c\)|copyright)\s*((?:19|20)\d\d)", text, re.I)
            if m:
                meta.year = Field(int(m.group(1)), page, None, bbox)
                break
