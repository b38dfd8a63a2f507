"""Text helpers the scholarly readers share: name keys, years, sentences."""
from __future__ import annotations

import re
import unicodedata

YEAR = re.compile(r"(?<![\d/.])(?:19|20)\d\d(?![\d/])")
_ABBREV = re.compile(r"(?:\bet al|\be\.g|\bi\.e|\bcf|\bFig|\bFigs|\bEq|\bEqs|\bvs|\bNo|\bVol|\bpp|\bp|\bca|\bapprox|"
                     r"\bDr|\bProf|\bMr|\bMs|\bSec|\bTab|\bResp|\b[A-Z])\.$")


def fold(text: str) -> str:
    """A comparison key: NFKC, accents removed, dashes and quotes folded, case folded,
    whitespace and hyphens removed (how the gold's own checker compares printed strings)."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
    text = re.sub(r"[\u2010-\u2015\u2212-]", "", text)
    text = re.sub(r"[\u2018\u2019\u201a\u201b`´]", "'", text)
    text = re.sub(r"[\u201c\u201d\u201e]", '"', text)
    return re.sub(r"\s+", "", text).casefold()


def surname_key(name: str) -> str:
    return re.sub(r"[^a-z]", "", fold(name))


def sentences(text: str) -> list[tuple[int, int]]:
    """Sentence offsets in ``text``: a break after . ! or ? and a space before a capital,
    a bracket or a digit, except after abbreviations ("et al.", "e.g.", "Fig.") and initials."""
    out, start = [], 0
    for m in re.finditer(r"[.!?][\"”’)\]]*\s+(?=[A-Z\[(0-9“\"])", text):
        head = text[start:m.start() + 1]
        if _ABBREV.search(head.rstrip("\"”’)]")):
            continue
        out.append((start, m.start() + len(m.group(0).rstrip())))
        start = m.end()
    if start < len(text):
        out.append((start, len(text)))
    return out
