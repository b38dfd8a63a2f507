"""Check that an evidence quote a backend gave is really in the chunk, and where.

LLMs paraphrase, re-space and re-case what they quote, so an exact ``str.find`` rejects
good evidence and a bare fuzzy score accepts made-up evidence. :func:`verify` tries the
strict readings first and falls back to the best-aligned fuzzy window, and always
returns a span in the chunk's own offsets so the quote can be shown in context.
"""
from __future__ import annotations

import re
import string
from dataclasses import dataclass

from rapidfuzz import fuzz

from kgkit.text.phrase_match import find_alternation

_ELLIPSIS = re.compile(r"\s*(?:\.\s?\.\s?\.|\u2026|<omitted>)\s*")
_QUOTES = str.maketrans(
    {
        "\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "`": "'",
        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u00ab": '"', "\u00bb": '"',
        "\u2010": "-", "\u2011": "-", "\u2012": "-", "\u2013": "-", "\u2014": "-", "\u2212": "-",
        "\u00a0": " ",
    }
)


@dataclass(frozen=True)
class Evidence:
    """Where a quote was found in a chunk.

    ``span`` is ``(start, end)`` in CHUNK offsets (add ``chunk.start`` for document
    offsets), None when the quote was not found. ``method`` is "exact", "normalised"
    (whitespace, case, quote marks, dashes) or "fuzzy"; ``reason`` says why an
    unverified quote failed.
    """

    span: tuple[int, int] | None
    score: float
    verified: bool
    method: str | None = None
    reason: str | None = None

    def __iter__(self):
        """Unpacks as ``span, score, verified = verify(...)``, the three a caller usually needs."""
        return iter((self.span, self.score, self.verified))


def _normalise(text: str) -> tuple[str, list[int]]:
    """Case-fold, unify quotes and dashes, collapse whitespace; map each char back.

    Returns the normalised text and, for each of its characters, the offset in ``text``
    of the character it came from (casefold may turn one character into two).
    """
    out: list[str] = []
    where: list[int] = []
    pending_space = False
    for i, ch in enumerate(text.translate(_QUOTES)):
        if ch.isspace():
            pending_space = bool(out)
            continue
        if pending_space:
            out.append(" ")
            where.append(i - 1)
            pending_space = False
        for c in ch.casefold():
            out.append(c)
            where.append(i)
    return "".join(out), where


def _back(where: list[int], start: int, end: int) -> tuple[int, int]:
    """Normalised [start, end) -> original [start, end)."""
    return where[start], where[end - 1] + 1


def _align(quote: str, text: str) -> tuple[float, int, int]:
    """Best window of ``text`` for ``quote``: rapidfuzz's alignment, edges then tightened.

    ``partial_ratio_alignment`` finds the right region but its window has the quote's
    length, so an inserted or dropped character leaves the edges off by a few; trying
    nearby edges (a few characters each way) recovers the window that matches best.
    """
    aligned = fuzz.partial_ratio_alignment(quote, text)
    assert aligned is not None  # None only under a score_cutoff, which is not given
    best = (aligned.score, aligned.dest_start, max(aligned.dest_end, aligned.dest_start + 1))
    slack = min(10, max(2, len(quote) // 10))
    s0, e0 = best[1], best[2]
    for start in range(max(0, s0 - slack), min(len(text), s0 + slack) + 1):
        for end in range(max(start + 1, e0 - slack), min(len(text), e0 + slack) + 1):
            score = fuzz.ratio(quote, text[start:end])
            if score > best[0] or (score == best[0] and end - start > best[2] - best[1]):
                best = (score, start, end)
    return best


def verify(quote: str | None, chunk_text: str, *, threshold: float = 85.0) -> Evidence:
    """Locate ``quote`` in ``chunk_text``: exact, then normalised, then fuzzy.

    A quote with omissions marked "...", "\u2026" or "<omitted>" verifies when each part
    does; its span runs from the first part found to the last.

    The fuzzy step aligns the quote to its best window (rapidfuzz
    ``partial_ratio_alignment``) and verifies it when the score reaches ``threshold``
    (config ``review.evidence_threshold``). A quote longer than the whole chunk is scored
    against the whole chunk, so a chunk contained in a padded quote does not pass.
    """
    if quote is None or not str(quote).strip():
        return Evidence(None, 0.0, False, None, "no evidence quote given")
    quote = str(quote)
    at = chunk_text.find(quote)
    if at >= 0:
        return Evidence((at, at + len(quote)), 100.0, True, "exact")
    nq, _ = _normalise(quote)
    nt, where = _normalise(chunk_text)
    if not nt:
        return Evidence(None, 0.0, False, None, "chunk has no text")
    at = nt.find(nq)
    if at >= 0:
        return Evidence(_back(where, at, at + len(nq)), 100.0, True, "normalised")
    parts = [p for p in _ELLIPSIS.split(quote) if p.strip()]
    if len(parts) > 1:
        return _verify_elided(parts, chunk_text, threshold)
    if len(nq) > len(nt):
        score = fuzz.ratio(nq, nt)
        span = (where[0], where[-1] + 1)
    else:
        score, start, end = _align(nq, nt)
        span = _back(where, start, end)
    if score >= threshold:
        return Evidence(span, score, True, "fuzzy")
    return Evidence(None, score, False, None,
                    f"quote not found in chunk (best match {score:.1f} < {threshold:g})")


def _verify_elided(parts: list[str], chunk_text: str, threshold: float) -> Evidence:
    """A quote with omissions ("A ... B"): every part must be found.

    Parts may come in any order (contract excerpts stitch a clause to a definition
    written pages earlier); the span covers all of them.
    """
    found = [verify(p, chunk_text, threshold=threshold) for p in parts]
    score = min(e.score for e in found)
    if all(e.verified for e in found):
        spans = [e.span for e in found if e.span is not None]  # a verified quote has its span
        span = (min(s[0] for s in spans), max(s[1] for s in spans))
        return Evidence(span, score, True, "fuzzy" if any(e.method == "fuzzy" for e in found) else "normalised")
    return Evidence(None, score, False, None,
                    f"part of a quote with omissions not found in chunk (weakest part {score:.1f} < {threshold:g})")


# What each character class of :func:`_surface_pattern` stands for, as one character.
_QUOTE_CLASSES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"',
                                **{chr(c): "-" for c in range(0x2010, 0x2015)}})


def _surface_pattern(surface: str) -> str:
    """A regex for a name: any run of whitespace between words, either quote style."""
    parts = []
    for word in surface.translate(_QUOTES).split():
        parts.append("".join(
            "['\u2018\u2019]" if c == "'" else '["\u201c\u201d]' if c == '"' else "[-\u2010-\u2014]" if c == "-"
            else re.escape(c)
            for c in word
        ))
    return r"\s+".join(parts)


def locate_mention(name: str, text: str, aliases: tuple[str, ...] | list[str] = ()) -> list[tuple[int, int]]:
    """Every place ``name`` or one of its ``aliases`` occurs in ``text``, as sorted spans.

    Case-insensitive, whole words only ("Apple" is not found in "Pineapple"), tolerant
    of line breaks and quote styles. Where two surfaces overlap, the longer one wins, so
    "Acme Corp." is one span, not "Acme" plus a stray suffix. Offsets are into ``text``:
    pass the document text for document offsets.
    """
    if text == name and name and not aliases and name.isascii() and "`" not in name and " ".join(name.split()) == name:
        return [(0, len(name))]  # the quote is the name as written (an entity's usual evidence): what the rest finds
    surfaces = sorted({s.strip() for s in (name, *aliases) if s and s.strip()}, key=lambda s: (-len(s), s))
    if not surfaces or not text:
        return []
    if len(surfaces) == 1 and surfaces[0].isascii() and text.isascii() and not _ODD_SPACE.search(text):
        return _plain_spans(" ".join(surfaces[0].translate(_QUOTES).split()).lower(), text)
    found = find_alternation(text, [s.translate(_QUOTES) for s in surfaces], _QUOTE_CLASSES)
    if found is not None:  # the pattern below, without compiling one per name
        return [(start, end) for start, end, _ in found]
    pattern = re.compile(
        r"(?<!\w)(?:" + "|".join(_surface_pattern(s) for s in surfaces) + r")(?!\w)", re.IGNORECASE
    )
    return [(m.start(), m.end()) for m in pattern.finditer(text)]


# Whitespace other than single blanks: where a name's "\s+" could match more than one blank.
_ODD_SPACE = re.compile(r"\s{2,}|[^\S ]")
_ASCII_WORD = frozenset(string.ascii_letters + string.digits + "_")  # what "\w" matches in ASCII text


def _plain_spans(phrase: str, text: str) -> list[tuple[int, int]]:
    """:func:`locate_mention`'s spans of one name in the usual case, from ``str.find``: an
    ASCII name (``phrase``: its words lower case, one blank apart) in ASCII text whose
    spaces are single blanks, where the pattern's case folding is ``str.lower`` and each
    ``\\s+`` one blank. Leftmost first, whole words, each match after the last, as the
    pattern's ``finditer``; a quote of a sentence is searched for each name it holds."""
    lowered, n, out = text.lower(), len(phrase), []
    at = lowered.find(phrase)
    while at >= 0:
        end = at + n
        if (at == 0 or text[at - 1] not in _ASCII_WORD) and (end == len(text) or text[end] not in _ASCII_WORD):
            out.append((at, end))
            at = lowered.find(phrase, end)
        else:
            at = lowered.find(phrase, at + 1)
    return out
