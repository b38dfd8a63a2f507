"""The reference list: printed entries split apart and parsed into cited works.

Entries are found from the printed lines, not from the joined text: a numbered list
starts an entry at each next number (``[4]``, ``4.``, ``4 ``), an author-year list at
each line set flush left where the continuation lines hang indented, or (with no hanging
indent) at a line that opens with a surname after a line that closed a sentence. Fields
come from the common styles: ACL/APA (authors, year, title), Vancouver (``Surname AB:
Title. Journal Year``), IEEE (quoted titles) and Nature (``Surname, A. & Surname, B.
Title. Journal (Year)``)."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from kgkit.documents.layout.blocks import join_lines
from kgkit.documents.layout.model import HEADING, PARAGRAPH, TABLE_ROW, Block, Line
from kgkit.scholarly.text import YEAR, fold

_REFERENCES = re.compile(r"^(references|bibliography|literature cited|works cited|references and notes)$", re.I)
_NUMBER = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})\.(?=\s|[A-Z])|(\d{1,4})\s(?=[A-Z]))\s*")
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>]+)", re.I)
_ARXIV = re.compile(r"arXiv[:\s]*(\d{4}\.\d{4,5})(?:v\d+)?", re.I)
_QUOTED = re.compile(r"[“\"]([^”\"]{8,400}?)[,.]?[”\"]")
_APA_AUTHOR = re.compile(r"^(?:[A-Z][\w'’\-]+(?:\s[A-Z][\w'’\-]+)*,\s(?:[A-Z]\.\s?-?)+,?\s*(?:&\s*|and\s)?)+(?:et\sal\.\s)?")
# Three lower-case words in a row: a title, not an author list.
_PROSE = re.compile(r"(?:^|\s)[^\W\d_A-Z][\w'’\-]*\s[^\W\d_A-Z][\w'’\-]*\s[^\W\d_A-Z][\w'’\-]*(?:\s|$)")
_PARTICLES = {"van", "von", "de", "der", "den", "da", "dos", "du", "la", "le", "di", "del", "al", "el", "bin"}
_WATERMARK = re.compile(r"^(view publication stats|downloaded from .*)$", re.I)
MAX_ENTRIES = 5000  # beyond this a "list" is not a reference list; the rest is reported, not parsed


@dataclass
class Reference:
    key: str  # "[12]", or the paper's own author-year marker: "Smith et al., 2020"
    raw: str
    page: int
    title: str | None = None
    year: str | None = None  # with a printed disambiguating letter: "2012b"
    authors: list[str] = field(default_factory=list)
    first_author_surname: str | None = None
    venue: str | None = None
    doi: str | None = None
    arxiv_id: str | None = None
    number: int | None = None

    def as_dict(self) -> dict:
        return {"key": self.key, "raw": self.raw, "page": self.page, "title": self.title,
                "year": int(self.year[:4]) if self.year else None, "year_label": self.year,
                "authors": self.authors, "first_author_surname": self.first_author_surname,
                "venue": self.venue, "doi": self.doi, "arxiv_id": self.arxiv_id}


def reference_lines(blocks: list[Block]) -> list[Line]:
    """The printed lines under the References heading, up to the next top-level heading;
    floats (captions, equations, tables) left out, unless the whole list is set as a table."""
    lines = _lines_under_references(blocks, (PARAGRAPH,))
    return lines or _lines_under_references(blocks, (PARAGRAPH, TABLE_ROW))


def _lines_under_references(blocks: list[Block], kinds: tuple[str, ...]) -> list[Line]:
    lines: list[Line] = []
    inside = False
    for b in blocks:
        if b.kind == HEADING:
            if _REFERENCES.match(b.text.strip()):
                inside = True
                continue
            if inside and (b.level or 1) <= 1:
                break
            if inside:
                continue
        elif inside and b.kind in kinds:
            lines.extend(line for line in b.lines if not _WATERMARK.match(line.text.strip()))
    return lines


def split_entries(lines: list[Line]) -> list[tuple[str, int, int | None]]:
    """``(text, page, printed number)`` per entry."""
    if not lines:
        return []
    numbered = _numbered_style(lines)
    entries: list[list] = []  # [text, page, number]
    expected = 1
    lefts = _column_lefts(lines)
    offsets = Counter(round(line.bbox[0] - lefts[(line.page, line.column)]) for line in lines)
    hang_at = next((x for x, _ in offsets.most_common() if x > 3), None)
    hang = any(abs(line.bbox[0] - lefts[(line.page, line.column)]) > 0.8 * line.size for line in lines)
    for i, line in enumerate(lines):
        text = line.text.strip()
        if _numeric_row(text):  # a table's figures set after the list, not part of an entry
            continue
        if numbered:
            m = _NUMBER.match(text)
            n = int(next(g for g in m.groups() if g)) if m else None
            if m and n is not None and (n == expected or (entries and n == expected + 1)):
                entries.append([text[m.end():], line.page, n])
                expected = n + 1
                continue
        else:
            left = lefts[(line.page, line.column)]
            flush = line.bbox[0] - left < 0.5 * line.size
            prev = lines[i - 1].text.strip() if i else ""
            starts = flush if hang else (not prev or re.search(r"[.)]$", prev)) and bool(
                re.match(r"[A-Z\u00c0-\u024f][\w'’\-]+,?\s", text))
            if starts or not entries:
                entries.append([text, line.page, None])
                continue
            if hang and hang_at is not None and abs(line.bbox[0] - left - hang_at) > 0.6 * line.size + 1:
                continue  # neither an entry's first line nor its hanging continuation: a float's text
        if entries:
            entries[-1][0] = join_lines(entries[-1][0], text)
    return [(t.strip(), p, n) for t, p, n in entries[:MAX_ENTRIES]
            if t.strip() and (numbered or (re.match(r"[^\W\d_]", t.strip()) and YEAR.search(t)))]


def _numeric_row(text: str) -> bool:
    numbers = re.findall(r"(?<!\S)[-–]?\d+(?:[.,]\d+)?%?(?!\S)", text)
    return len(numbers) >= 4 and not re.search(r"[^\W\d_]{3}", text)


def _numbered_style(lines: list[Line]) -> bool:
    firsts = [_NUMBER.match(line.text.strip()) for line in lines[:6]]
    return sum(1 for m in firsts if m) >= 2 or bool(firsts and firsts[0] and firsts[0].group(1))


def _column_lefts(lines: list[Line]) -> dict[tuple[int, int], float]:
    lefts: dict[tuple[int, int], float] = {}
    for line in lines:
        key = (line.page, line.column)
        lefts[key] = min(lefts.get(key, line.bbox[0]), line.bbox[0])
    return lefts


def parse_reference(text: str, page: int, number: int | None) -> Reference:
    ref = Reference(key=f"[{number}]" if number is not None else "", raw=text, page=page, number=number)
    doi = _DOI.search(text)
    ref.doi = doi.group(1).rstrip(".,;)") if doi else None
    arxiv = _ARXIV.search(text)
    ref.arxiv_id = arxiv.group(1) if arxiv else None
    authors_part, rest, year = _split_authors(text)
    ref.year = year
    ref.authors = _names(authors_part)
    ref.first_author_surname = surname(ref.authors[0]) if ref.authors else None
    ref.title = _title(rest, text)
    if not ref.key:
        ref.key = author_year_key([surname(a) for a in ref.authors], ref.year)
    return ref


def _split_authors(text: str) -> tuple[str, str, str | None]:
    """The author segment, the text after it and the year, by the first style that fits."""
    years = re.findall(r"(?<![\d/.])((?:19|20)\d\d[a-z]?)(?![\d/])", text)
    nature = _APA_AUTHOR.match(text)
    if nature and nature.end() < len(text) and not re.match(r"\s*\(?(?:19|20)\d\d", text[nature.end():]):
        return nature.group(0).strip(), text[nature.end():], years[-1] if years else None  # Surname, I. & Surname, I. Title
    acl = re.match(r"^(?P<a>.{2,600}?)\.?\s\(?(?P<y>(?:19|20)\d\d[a-z]?)\)?[.,:]\s*(?P<r>.*)$", text)
    if acl and not re.search(r"[:“\"]", acl.group("a")) and len(acl.group("a").split()) <= 80 and \
            not _PROSE.search(acl.group("a")):
        return acl.group("a"), acl.group("r"), acl.group("y")
    year = years[-1] if years else None
    quoted = _QUOTED.search(text)
    if quoted:
        return text[:quoted.start()].rstrip(" ,"), text[quoted.start():], year
    vancouver = re.match(r"^(?P<a>(?:[^:;]{2,60}?,\s)*[^:;]{2,60}?(?:\set\sal\.?)?):\s(?P<r>.*)$", text)
    if vancouver:
        return vancouver.group("a"), vancouver.group("r"), year
    apa = _APA_AUTHOR.match(text)
    if apa:
        return apa.group(0).strip(), text[apa.end():], year
    head, _, tail = text.partition(". ")
    return head, tail, year


def _names(part: str) -> list[str]:
    part = re.sub(r"\bet\.?\sal\.?", "", part).strip(" ,")
    part = re.sub(r"(?<![A-Z])\.$", "", part)  # a closing full stop, not an initial's
    if not part:
        return []
    if re.match(r"^[A-Z][\w'’\-]+(?:\s[A-Z][\w'’\-]+)*,\s(?:[A-Z]\.\s?-?)+", part):  # Surname, I. (APA / Nature)
        found = re.findall(r"([A-Z][\w'’\- ]*?),\s((?:[A-Z]\.\s?-?)+)", part)
        return [f"{s.strip()}, {g.strip()}" for s, g in found]
    pieces = [p.strip() for p in re.split(r",\s*(?:and\s|&\s)?|\sand\s|\s&\s", part) if p.strip()]
    return [p for p in pieces if re.search(r"[^\W\d_]{2,}", p)][:100]


def surname(name: str) -> str:
    """The family name of a printed author: "J. F. Allen", "Allen, J. F.", "Allen JF",
    "Jacob Devlin", "van der Berg, J." -> the surname."""
    name = name.strip()
    if "," in name:
        return name.split(",")[0].strip()
    tokens = name.replace(".", ". ").split()
    if len(tokens) >= 2 and re.fullmatch(r"[A-Z]{1,3}", tokens[-1]):  # Vancouver: Surname INITIALS
        return " ".join(tokens[:-1])
    keep = [tokens[-1]] if tokens else [name]
    for t in reversed(tokens[:-1]):
        if t.lower() in _PARTICLES:
            keep.insert(0, t)
        else:
            break
    return " ".join(keep)


def _title(rest: str, text: str) -> str | None:
    quoted = _QUOTED.search(rest)
    if quoted:
        return quoted.group(1).strip(" ,.")
    rest = rest.strip()
    # The title ends at the first sentence end that is not an initial ("J.").
    m = re.match(r"^(.{4,400}?)(?<!\s[A-Z])(?<!^[A-Z])([.?!])(?:\s|$)", rest)
    title = (m.group(1) + ("?" if m.group(2) == "?" else "")) if m else rest
    return title.strip(" ,.") or None


def author_year_key(surnames: list[str], year: str | None) -> str:
    """The marker an author-year paper prints for an entry: "Allen, 1983",
    "Derczynski and Gaizauskas, 2010", "UzZaman et al., 2012b"."""
    if not surnames:
        return f"Anon., {year or 'n.d.'}"
    if len(surnames) == 1:
        who = surnames[0]
    elif len(surnames) == 2:
        who = f"{surnames[0]} and {surnames[1]}"
    else:
        who = f"{surnames[0]} et al."
    return f"{who}, {year or 'n.d.'}"


def read_references(blocks: list[Block]) -> list[Reference]:
    refs = [parse_reference(t, p, n) for t, p, n in split_entries(reference_lines(blocks))]
    _disambiguate(refs)
    return refs


def _disambiguate(refs: list[Reference]) -> None:
    """Two author-year entries with one key get the letters the paper would print (a, b)."""
    groups: dict[str, list[Reference]] = {}
    for r in refs:
        if r.number is None:
            groups.setdefault(fold(r.key), []).append(r)
    for same in groups.values():
        if len(same) > 1 and all(r.year and r.year[-1].isdigit() for r in same):
            for letter, r in zip("abcdefghijklmnopqrstuvwxyz", same):
                r.year = f"{r.year}{letter}"
                r.key += letter
