"""In-text citation markers of every common style, linked to reference entries.

Styles: numeric (``[12]``, ``[3–5]``, ``[2, 7, 9]``), parenthetical author-year
(``(Smith et al., 2020; Lee, 2019a)``, ``(e.g., Smith 2020)``) and narrative
(``Smith and Lee (2019a)``, ``Smith et al. [4]``). A marker is linked to the entries
its numbers name, or to the entry whose first author and year (letter included) match.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgkit.documents.layout.model import CAPTION, PARAGRAPH, Block
from kgkit.scholarly.references import Reference, surname
from kgkit.scholarly.text import fold, sentences, surname_key

_NUMERIC = re.compile(r"\[(\d{1,4}(?:\s*[-–—,;]\s*\d{1,4})*)\]")
_PAREN = re.compile(r"\(([^()]{0,400}?(?:19|20)\d\d[a-z]?(?:,\s*p+\.\s*\d+(?:[-–]\d+)?)?)\)")
_NAME = r"[A-Z\u00c0-\u024f][\w'’´\-]*(?:\s(?:van|von|de|der|den|da|di|del|la|le)\s[A-Z][\w'’\-]*)?"
_NARRATIVE = re.compile(
    rf"(?P<names>{_NAME}(?:\s(?:and|&)\s{_NAME}|\set\sal\.?)?)(?:'s|’s)?\s\((?P<years>(?:19|20)\d\d[a-z]?"
    rf"(?:,\s*(?:19|20)\d\d[a-z]?)*)\)")
_PART = re.compile(rf"(?P<names>{_NAME}(?:,?\s(?:and|&)\s{_NAME}|\set\sal\.?|(?:,\s{_NAME})+,?\s(?:and|&)\s{_NAME})?)"
                   r",?\s(?P<years>(?:19|20)\d\d[a-z]?(?:,\s*(?:19|20)\d\d[a-z]?)*)")


@dataclass
class Citation:
    marker: str
    sentence: str
    refs: list[str]  # keys of the linked entries
    section: str | None
    section_path: list[str]
    page: int
    span: tuple[int, int]  # of the marker in the shown text
    sentence_span: tuple[int, int]
    unresolved: list[str] = field(default_factory=list)  # what the marker names that no entry matches

    def as_dict(self) -> dict:
        return {"marker": self.marker, "sentence": self.sentence, "refs": self.refs, "section": self.section,
                "page": self.page, "span": list(self.span), "sentence_span": list(self.sentence_span),
                "unresolved": self.unresolved}


class ReferenceIndex:
    """Entries by number and by (first-author surname, year) for linking markers."""

    def __init__(self, refs: list[Reference]):
        self.by_number = {r.number: r for r in refs if r.number is not None}
        self.by_author_year: dict[tuple[str, str], list[Reference]] = {}
        for r in refs:
            if r.first_author_surname and r.year:
                self.by_author_year.setdefault((surname_key(r.first_author_surname), r.year.lower()), []).append(r)
        self.numeric = bool(self.by_number) and len(self.by_number) >= len(refs) / 2

    def author_year(self, names: str, year: str) -> Reference | None:
        first = re.split(r",|\sand\s|\s&\s|\set\sal", names)[0].strip()
        key = surname_key(surname(first) if " " in first and not re.search(r"\s(van|von|de|der)\s", first) else first)
        found = self.by_author_year.get((key, year.lower()))
        if not found and year[-1].isalpha():
            found = self.by_author_year.get((key, year[:-1]))
        if not found and year[-1].isdigit():  # the entry's letter was inferred; the marker printed none
            found = [r for (k, y), rs in self.by_author_year.items() if k == key and y[:4] == year for r in rs]
        if not found:
            return None
        if len(found) > 1:  # "Smith and Lee" vs "Smith et al.": prefer the entry whose author count fits
            etal = "et al" in names
            two = bool(re.search(r"\sand\s|\s&\s", names)) and not etal
            fits = [r for r in found if (len(r.authors) > 2) == etal and (len(r.authors) == 2) == two]
            found = fits or found
        return found[0]


def expand_numbers(inner: str) -> list[int]:
    out: list[int] = []
    for part in re.split(r"[,;]", inner):
        bounds = [int(x) for x in re.findall(r"\d+", part)]
        if len(bounds) == 2 and re.search(r"[-–—]", part) and 0 <= bounds[1] - bounds[0] <= 200:
            out.extend(range(bounds[0], bounds[1] + 1))
        else:
            out.extend(bounds)
    return out


def find_citations(blocks: list[Block], refs: list[Reference]) -> list[Citation]:
    """Every citation marker in the body's paragraphs and captions, sentence by sentence."""
    index = ReferenceIndex(refs)
    found: list[Citation] = []
    in_refs = False
    for b in blocks:
        if b.kind == "heading":
            in_refs = bool(re.match(r"^(references|bibliography)$", b.text.strip(), re.I))
        if in_refs or b.kind not in (PARAGRAPH, CAPTION):
            continue
        for s0, s1 in sentences(b.text):
            sentence = b.text[s0:s1]
            for m0, m1, marker, keys, missing in _markers(sentence, index):
                found.append(Citation(marker=marker, sentence=sentence.strip(), refs=keys, section=b.section,
                                      section_path=list(b.section_path or []), page=b.page,
                                      span=(b.start + s0 + m0, b.start + s0 + m1),
                                      sentence_span=(b.start + s0, b.start + s1), unresolved=missing))
    return found


def _markers(sentence: str, index: ReferenceIndex):
    taken: list[tuple[int, int]] = []

    def free(a: int, b: int) -> bool:
        return all(b <= x or a >= y for x, y in taken)

    for m in _NUMERIC.finditer(sentence):
        numbers = expand_numbers(m.group(1))
        if index.by_number and not any(n in index.by_number for n in numbers):
            continue
        keys = [f"[{n}]" for n in numbers if n in index.by_number]
        taken.append(m.span())
        yield m.start(), m.end(), m.group(0), keys, [f"[{n}]" for n in numbers if n not in index.by_number]
    for m in _PAREN.finditer(sentence):
        keys = []
        missing: list[str] = []
        for part in re.split(r";", m.group(1)):
            part = re.sub(r"^\s*(?:e\.g\.,?|i\.e\.,?|see(?:\salso)?|cf\.|for\s(?:example|instance|a\sreview)[,:]?)\s*",
                          "", part.strip(), flags=re.I)
            pm = _PART.search(part)
            if not pm:
                continue
            for year in re.split(r",\s*", pm.group("years")):
                ref = index.author_year(pm.group("names"), year)
                (keys if ref else missing).append(ref.key if ref else f"{pm.group('names')}, {year}")
        if keys or missing:
            taken.append(m.span())
            yield m.start(), m.end(), m.group(0), keys, missing
    for m in _NARRATIVE.finditer(sentence):
        if not free(*m.span()):
            continue
        keys, missing = [], []
        for year in re.split(r",\s*", m.group("years")):
            ref = index.author_year(m.group("names"), year)
            (keys if ref else missing).append(ref.key if ref else f"{m.group('names')}, {year}")
        if keys:  # a capitalised word before a year in brackets is a marker only when it names an entry
            taken.append(m.span())
            yield m.start(), m.end(), m.group(0), keys, missing


def marker_key(marker: str) -> str:
    return fold(marker)
