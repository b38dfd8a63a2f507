"""Split chunk text into sentences with character offsets.

The offline backend's unit of evidence is the sentence: an entity's evidence is the
sentence it was found in, and a relation needs both ends and a trigger in one sentence.
The splitter is rule based and knows the abbreviations that break naive splitters on
contracts and papers ("Inc.", "Corp.", "No.", "e.g.", "et al.", "U.S.").
"""
from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass
from functools import lru_cache
from typing import Sequence

ABBREVIATIONS = frozenset(
    "inc corp co ltd llc l.l.c plc lp l.p n.v b.v s.a ag gmbh pty bros no nos art sec secs para "
    "mr mrs ms dr prof st jr sr vs v e.g i.e etc al fig figs eq eqs approx cf ca dept govt "
    "u.s u.k u.s.a jan feb mar apr jun jul aug sep sept oct nov dec mo yr yrs est viz ref refs "
    "vol pp ch ed eds".split()
)
# A sentence ends at . ! ? (optionally followed by quotes/brackets) before whitespace and an
# upper-case letter, digit, quote or bracket; or at a blank line.
_BOUNDARY = re.compile(r"(?<=[.!?])[\"'”’)\]]*\s+(?=[A-Z0-9\"“(\[])|\n\s*\n")
_WORD_BEFORE = re.compile(r"([A-Za-z][A-Za-z.]*)\.$")
_DOTTED = re.compile(r"(?:[a-z]\.)+[a-z]")  # "u.s.a", "e.g"
MAX_SENTENCE = 1200  # characters; longer runs (tables, unpunctuated lists) are cut at line ends
SPANS_KEPT = 1024  # chunks whose sentence offsets are kept (a few hundred bytes each, and the chunk's text)


@dataclass(frozen=True)
class Sentence:
    text: str
    start: int  # offset of the first character in the chunk text
    end: int


def _is_abbreviation(text: str, dot: int) -> bool:
    """Is the period at ``text[dot]`` part of an abbreviation or an initial ("J. Smith")?"""
    m = _WORD_BEFORE.search(text[max(0, dot - 12): dot + 1])
    if not m:
        return False
    word = m.group(1).lower()
    return word in ABBREVIATIONS or len(word) == 1 or bool(_DOTTED.fullmatch(word))


_SMALL = frozenset("a an and of the for to in on by with or de la du".split())


def is_heading(line: str) -> bool:
    """A short title-cased or upper-case line without closing punctuation ("7.1 Strong
    CYP3A4 Inhibitors", "SERVICES AGREEMENT", "May 04, 2017"): a heading, not part of the
    sentence on the next line."""
    line = line.strip()
    if not line or len(line) > 80 or line[-1] in ".,;:!?)-" or not any(c.isalpha() for c in line):
        return False
    words = [w for w in re.split(r"\s+", line) if w]
    return all(w[0].isupper() or w[0].isdigit() or w.lower() in _SMALL or not w[0].isalnum() for w in words)


# Words no heading ends with, and a word no heading holds: a line in a heading's shape that
# ends so, or says "shall", is a clause in capitals wrapped over lines ("THIS AGREEMENT SHALL
# BE GOVERNED BY THE LAWS OF" / "THE STATE OF NEW YORK"), not a heading.
_RUNS_ON = re.compile(r"\b(?i:of|the|and|or|by|to|in|on|with|for|an)[ \t]*$|\b(?i:shall)\b")


def runs_on(line: str) -> bool:
    """Whether a line reads on into the next, though it has a heading's shape."""
    return _RUNS_ON.search(line) is not None


def _heading_cuts(text: str) -> list[tuple[int, int]]:
    """(end of a heading line, start of the next line) where a heading precedes a line
    that starts a sentence. Lines are found with ``str.find`` (a regex walking every
    character of a line cost more than the rest of the splitting)."""
    cuts = []
    line_start = 0
    newline = text.find("\n")
    while newline >= 0:
        nxt = text[newline + 1:newline + 2]
        line = text[line_start:newline + 1]
        if nxt and (nxt.isupper() or nxt.isdigit()) and is_heading(line) and not runs_on(line):
            cuts.append((newline, newline + 1))
        line_start = newline + 1
        newline = text.find("\n", line_start)
    return cuts


def _cut_long(text: str, start: int, end: int) -> list[tuple[int, int]]:
    if end - start <= MAX_SENTENCE:
        return [(start, end)]
    pieces, s = [], start
    for m in re.finditer(r"\n", text[start:end]):
        cut = start + m.end()
        if cut - s >= 80:
            pieces.append((s, cut))
            s = cut
    pieces.append((s, end))
    return pieces


def split_sentences(text: str) -> list[Sentence]:
    """Sentences of ``text`` in order; ``text[s.start:s.end] == s.text`` (stripped of edge space)."""
    return [Sentence(text[s:e], s, e) for s, e in _sentence_spans(text)]


def sentence_at(sentences: Sequence[Sentence], offset: int) -> Sentence | None:
    """The sentence of ``sentences`` (in order, as :func:`split_sentences` gives them) that
    holds the character at ``offset``, found by bisection; None between sentences."""
    k = bisect_right(sentences, offset, key=lambda s: s.start) - 1
    return sentences[k] if k >= 0 and offset < sentences[k].end else None


@lru_cache(maxsize=SPANS_KEPT)
def _sentence_spans(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each sentence of ``text``. Kept for the last chunks seen: the entity
    rules, the relation rules and the upgrade rules each split the same chunk, the relation
    pass after the entity pass of every chunk of the document."""
    spans: list[tuple[int, int]] = []
    start = 0
    heads = _heading_cuts(text)
    boundaries = sorted([(m.start(), m.end(), m) for m in _BOUNDARY.finditer(text)] + [(a, b, None) for a, b in heads],
                        key=lambda x: x[0])
    for b_start, b_end, m in boundaries:
        if b_start < start:
            continue
        if m is None:
            spans.append((start, b_start))
            start = b_end
            continue
        dot = m.start() - 1
        while dot >= 0 and text[dot] in "\"'”’)]":
            dot -= 1
        blank_line = m.group(0).count("\n") >= 2
        if not blank_line and dot >= 0 and text[dot] == "." and _is_abbreviation(text, dot):
            continue
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    out: list[tuple[int, int]] = []
    for s, e in spans:
        for s2, e2 in _cut_long(text, s, e):
            raw = text[s2:e2]
            lead = len(raw) - len(raw.lstrip())
            trail = len(raw.rstrip())
            if trail > lead:
                out.append((s2 + lead, s2 + trail))
    return tuple(out)
