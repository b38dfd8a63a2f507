"""Find names in a text as a whole-word, case- and spacing-insensitive regex would, without
compiling one per name.

The offline backend and the evidence gate look for names with patterns of the form
``(?<!\\w)(?:name one|name two|…)(?!\\w)`` (``re.IGNORECASE``, each space of a name ``\\s+``).
A document with many distinct names compiles thousands of such patterns, each new
(Python's ``re`` compiles in Python, about 0.2 ms a pattern, and its cache holds 512), which
cost more than all the rest of an offline run. :func:`find_alternation` gives the same
matches as ``pattern.finditer`` from plain ``str.find`` on a folded copy of the text: case
folded, every whitespace run one space, optionally some characters mapped to the one a
pattern's character class stands for (a curly quote to ``'``).

It answers only where that folding is exactly what ``re.IGNORECASE`` does: every character
of the text and of the names is ASCII or has no case. Anywhere else (an "é", a Kelvin sign
that ``re`` matches to "k") it returns None and the caller compiles its regex as before.
"""
from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import OrderedDict
from typing import Sequence

# A whitespace run that is not one plain space: only these change when runs are collapsed.
# (``\s{2,}|[^\S ]`` written so that a plain space alone fails after one test: half the time.)
_ODD_SPACE = re.compile(r"\s(?:(?<=[^\S ])\s*|\s+)")
_FOLDED_KEPT = 64  # folded texts kept: a chunk's text is searched once per name it holds


def simple(text: str) -> bool:
    """Whether ``re.IGNORECASE`` compares every character of ``text`` as ``str.lower`` does,
    one character for one: ASCII, or characters without case."""
    return text.isascii() or all(c.isascii() or c.lower() == c == c.upper() for c in set(text))


_lowered_last: tuple[str, str | None] = ("", "")  # (text, lowered): a chunk meets each phrase set in turn


def lowered(text: str) -> str | None:
    """``text.lower()``, as long as ``text``, where that is how ``re.IGNORECASE`` compares
    its characters (:func:`simple`), else None. A case-sensitive pattern of lower-case
    phrases finds in it what the same pattern with ``re.IGNORECASE`` finds in ``text``, at
    the same offsets, and several times faster: ``re`` tests a plain literal at each place
    before trying the branch, and a case-folded literal only by trying it. The last text is
    kept (its entity and relation passes, and every pattern of each, ask in turn)."""
    global _lowered_last
    last = _lowered_last
    if last[0] is text:
        return last[1]
    low = text.lower() if simple(text) else None
    _lowered_last = (text, low)
    return low


def _is_word(c: str) -> bool:
    return c.isalnum() or c == "_"


class FoldedText:
    """``text`` folded for comparison (see the module), and the way back to its offsets."""

    def __init__(self, text: str, mapped: str | None = None):
        """``mapped``: ``text`` with some characters mapped to the one a pattern's class stands for."""
        self.text = text
        lowered = (text if mapped is None else mapped).lower()
        self.starts: list[int] = [0]  # folded offset where each piece between odd runs starts
        self.origins: list[int] = [0]  # ... and where that piece starts in ``text``
        parts: list[str] = []
        at = shift = 0
        for run in _ODD_SPACE.finditer(lowered):
            parts.append(lowered[at:run.start()])
            parts.append(" ")
            shift += run.end() - run.start() - 1
            at = run.end()
            self.starts.append(at - shift)
            self.origins.append(at)
        parts.append(lowered[at:])
        self.folded = "".join(parts)

    def origin(self, i: int) -> int:
        """The offset in ``text`` of folded character ``i`` (never one of a collapsed run's spaces)."""
        k = bisect_right(self.starts, i) - 1
        return self.origins[k] + i - self.starts[k]

    def occurrences(self, phrase: str) -> list[tuple[int, int]]:
        """Every span of ``text``, overlapping ones too, where the folded ``phrase`` (words
        joined by one space) stands between two non-word characters."""
        out = []
        text, folded, n = self.text, self.folded, len(phrase)
        starts, origins, pieces = self.starts, self.origins, len(self.starts)
        i = folded.find(phrase)
        while i >= 0:
            # origin(i) and origin(i + n - 1) + 1, the second bisection only where the
            # phrase reaches past the piece it begins in (a collapsed run inside it)
            k = bisect_right(starts, i) - 1
            start = origins[k] + i - starts[k]
            last = i + n - 1
            if k + 1 < pieces and starts[k + 1] <= last:
                k = bisect_right(starts, last) - 1
            end = origins[k] + last - starts[k] + 1
            if (start == 0 or not _is_word(text[start - 1])) and (end == len(text) or not _is_word(text[end])):
                out.append((start, end))
            i = folded.find(phrase, i + 1)
        return out


_folded: OrderedDict[tuple[str, int], tuple[dict[int, str] | None, FoldedText | None]] = OrderedDict()
_lock = threading.Lock()


def folded_text(text: str, table: dict[int, str] | None = None) -> FoldedText | None:
    """``text`` folded with ``table``, or None where folding is not what ``re.IGNORECASE``
    does; the last few are kept, since a chunk is searched for each of its names in turn."""
    key = (text, id(table))
    with _lock:  # two documents' merges may run at once (model runs overlap documents)
        hit = _folded.get(key)
        if hit is not None and hit[0] is table:  # the very table, not one born at a freed one's id
            _folded.move_to_end(key)
            return hit[1]
    mapped = text.translate(table) if table else text
    result = FoldedText(text, mapped) if simple(mapped) else None
    with _lock:
        _folded[key] = (table, result)
        if len(_folded) > _FOLDED_KEPT:
            _folded.popitem(last=False)
    return result


def find_alternation(text: str, phrases: Sequence[str], table: dict[int, str] | None = None
                     ) -> list[tuple[int, int, int]] | None:
    """``(start, end, index in phrases)`` of each match of
    ``re.compile(r"(?<!\\w)(?:" + "|".join(p1, p2, …) + r")(?!\\w)", re.I).finditer(text)``
    where each phrase is its words, escaped, joined by ``\\s+``; ``table`` maps text
    characters onto the one a phrase character stands for (a phrase's ``'`` matching
    ``'``, ``‘`` and ``’``: map both curly quotes to ``'``).

    The regex tries the phrases in order at the leftmost place any of them matches and goes
    on after the match; so does this. None when the folding cannot stand in for the regex
    (a character with case beyond ASCII, an empty phrase, a phrase character the table
    maps away): compile the pattern then.
    """
    folded = folded_text(text, table)
    if folded is None:
        return None
    if not all(simple(p) for p in phrases):
        return None
    words = [" ".join(p.split()).lower() for p in phrases]
    if not all(words):
        return None
    if table and any(w.translate(table) != w for w in words):
        return None
    first: dict[int, tuple[int, int]] = {}  # start -> (phrase index, end) of the first phrase matching there
    for k, w in enumerate(words):
        for start, end in folded.occurrences(w):
            if start not in first:
                first[start] = (k, end)
    out, at = [], 0
    for start in sorted(first):
        if start >= at:
            k, end = first[start]
            out.append((start, end, k))
            at = end
    return out
