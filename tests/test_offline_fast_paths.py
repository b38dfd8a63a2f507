"""The offline rules' shortcuts (issue 11, speed) answer exactly as the plain ways they replace.

Each test runs the shortcut and a reference written the slow way on random input built to
reach the edge cases (odd whitespace, headings, abbreviations, characters beyond ASCII).
"""
from __future__ import annotations

import random
import re
import sys

from kgkit.backends.offline import sentences
from kgkit.backends.offline.mentions import collapse
from kgkit.backends.offline.sentences import is_heading, sentence_at, split_sentences

# Every character ``\s`` matches, a few that look like spaces but are not, and text.
_WHITESPACE = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
_PIECES = ["Acme", "Corp.", "Inc.", "J.", "Smith", "said", "the", "U.S.", "Mr.", "e.g.", "ARTICLE IV", "7.1",
           "Section", "Heading Line", "é", "\u200b", "\u00ad", ".", "!", "?", "\"", "”", ")", ",", "x", "42"]


def _random_text(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out.append(rng.choice(_PIECES))
        out.append(rng.choice([" ", " ", " ", "  ", "\n", "\n\n", rng.choice(_WHITESPACE), ""]))
    return "".join(out)


def test_collapse_equals_the_regex_on_random_text():
    rng = random.Random(1)
    for _ in range(3000):
        text = _random_text(rng, rng.randint(0, 6))
        assert collapse(text) == re.sub(r"\s+", " ", text).strip()


def test_only_the_plain_space_is_both_whitespace_and_printable():
    # collapse's shortcut rests on this: a printable text's only whitespace is " "
    assert [c for c in _WHITESPACE if c.isprintable()] == [" "]
    assert all(re.fullmatch(r"\s", c) for c in _WHITESPACE)


def _heading_cuts_by_regex(text: str) -> list[tuple[int, int]]:
    """The line walk as it was written before (a regex per line)."""
    cuts = []
    for m in re.finditer(r"[^\n]*\n", text):
        nxt = text[m.end():m.end() + 1]
        if nxt and (nxt.isupper() or nxt.isdigit()) and is_heading(m.group(0)):
            cuts.append((m.end() - 1, m.end()))
    return cuts


def test_heading_cuts_equal_the_regex_walk():
    rng = random.Random(2)
    for _ in range(2000):
        text = _random_text(rng, rng.randint(0, 30))
        assert sentences._heading_cuts(text) == _heading_cuts_by_regex(text)


def test_sentences_are_kept_per_text_and_returned_afresh():
    text = "Acme Corp. hired J. Smith in Paris. He left.\n\nSECOND PART\nIt ended."
    first = split_sentences(text)
    first.append("not a sentence")  # a caller's changes do not reach the next caller
    again = split_sentences(text)
    assert [s.text for s in again] == ["Acme Corp. hired J. Smith in Paris.", "He left.", "SECOND PART", "It ended."]
    assert all(text[s.start:s.end] == s.text for s in again)


def test_sentence_at_equals_a_scan():
    rng = random.Random(3)
    for _ in range(500):
        text = _random_text(rng, rng.randint(0, 40))
        found = split_sentences(text)
        for offset in range(len(text) + 1):
            assert sentence_at(found, offset) == next((s for s in found if s.start <= offset < s.end), None)
