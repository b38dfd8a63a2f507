"""Page breaks inside a sentence: where a document's layout cuts a clause in two.

A document converted from pages carries its page furniture into the text: a page number,
a running header or footer ("Source: ...", "CONFIDENTIAL TREATMENT REQUESTED"), blank
lines. Where a page ends in the middle of a sentence, that furniture sits between the two
halves of the sentence, and a reader that splits sentences at blank lines (as the
sentence splitter must: a blank line ends a heading or a list item) sees two fragments,
neither of which states the clause ("... shall be governed by" / "the laws of Ohio.").

:func:`page_breaks` finds those places; :func:`reading_text` blanks them out (the same
length, so every offset stays the document's) for rules that read sentences, and the
chunker does not end a chunk there. A break is inside a sentence when the line before it
ends none (no closing punctuation; not a heading, unless it ends in "of", "the", ...) and
what stands between is page furniture — blank lines, a page number, a "Source:" line, a
line the text writes more than once beside a blank line or a page number, one line in
capitals beside a page number where the sentence goes on — or only blank lines before text
that goes on in lower case. A paragraph that merely ends without a period, followed by a
blank line and a capital, is left a paragraph.
"""
from __future__ import annotations

import re
from functools import lru_cache

from kgkit.text.sentences import is_heading, runs_on

# A line that is only a page number: "12", "- 12 -", "Page 12", "Page 12 of 40", "12 of 40".
_PAGE_NUMBER = re.compile(r"[ \t]*(?:-[ \t]*)?(?:(?i:page)[ \t]+)?\d{1,4}(?:[ \t]*(?:(?i:of)|/)[ \t]*\d{1,4})?"
                          r"(?:[ \t]*-)?[ \t]*")
# A running line that names where the page came from: "Source: ACME CORP, 10-K, 3/1/2011".
_SOURCE_LINE = re.compile(r"[ \t]*(?i:source):[ \t]+\S.{0,160}")
_TRAILING_NUMBER = re.compile(r"[ \t]{2,}-?[ \t]*\d{1,4}[ \t]*-?[ \t]*$")
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"'”’)\]]*\s*$")
MAX_LINES = 12  # lines of furniture and blanks a page break may span
MAX_RUNNING = 80  # characters: a longer line is text, not a running header or footer


def _marker(line: str) -> bool:
    """A page number or a source line: what only a page break writes."""
    return bool(_PAGE_NUMBER.fullmatch(line) or _SOURCE_LINE.fullmatch(line))


def _running(line: str, repeated: frozenset[str]) -> bool:
    """A short line written more than once in the text, word for word, that ends no
    sentence: a running header or footer (a wrapped line's last words, "Agreement.", recur
    too, and are text; "ARTICLE 2" and "ARTICLE 3" are two headings)."""
    return _running_key(line) in repeated and not _ENDS_SENTENCE.search(line)


def _capitals(line: str) -> bool:
    """A short line in capitals ("CONFIDENTIAL TREATMENT REQUESTED"): furniture beside a page
    number or a source line where the sentence goes on in lower case, a heading anywhere else."""
    line = line.strip()
    return bool(line) and len(line) <= MAX_RUNNING and line.isupper() and not _ENDS_SENTENCE.search(line)


def _running_key(line: str) -> str:
    return " ".join(line.split())


def _repeated_lines(text: str) -> frozenset[str]:
    """Short lines that the text writes more than once."""
    seen: set[str] = set()
    again: set[str] = set()
    for line in text.split("\n"):
        if not line.strip() or len(line) > MAX_RUNNING:
            continue
        key = _running_key(line)
        (again if key in seen else seen).add(key)
    return frozenset(again)


def _ends_mid_sentence(line: str) -> bool:
    line = _TRAILING_NUMBER.sub("", line)  # "... of this Section.   -3-": the page's number, after the text
    if not line.strip() or _ENDS_SENTENCE.search(line):
        return False
    return not is_heading(line) or runs_on(line)


def page_breaks(text: str) -> tuple[tuple[int, int], ...]:
    """(start, end) of each page break inside a sentence: from the end of the last word
    before it to the first character of the text after it."""
    if "\n" not in text:
        return ()
    repeated = _repeated_lines(text)
    lines, at = [], 0
    for line in text.split("\n"):
        lines.append((at, line))
        at += len(line) + 1
    out: list[tuple[int, int]] = []
    for i, (at, line) in enumerate(lines):
        if not _ends_mid_sentence(line) or _marker(line) or _running(line, repeated):
            continue
        kinds: list[str] = []
        for _, between in lines[i + 1:i + 1 + MAX_LINES]:
            kind = ("blank" if not between.strip() else "marker" if _marker(between)
                    else "running" if _running(between, repeated) else "capitals" if _capitals(between) else None)
            if kind is None:
                break
            kinds.append(kind)
        j = i + 1 + len(kinds)
        if not kinds or j >= len(lines) or len(kinds) == MAX_LINES:
            continue  # no line between (a line break reads as a space), or no text after
        after_at, after = lines[j]
        # the sentence goes on: in lower case after the break, or from a line that ends in "of", "the", ...
        marked = "marker" in kinds
        lower = after.lstrip()[:1].islower() or (marked and runs_on(line))
        if "running" in kinds and not (marked or "blank" in kinds):
            continue  # a repeated line between two lines of text, and nothing of a page: text
        if "capitals" in kinds and not (marked and lower and kinds.count("capitals") == 1):
            continue  # a line in capitals is a heading unless a page's furniture and the sentence go on
        if marked or "running" in kinds or lower:
            out.append((at + len(line.rstrip()), after_at + len(after) - len(after.lstrip())))
    return tuple(out)


@lru_cache(maxsize=256)
def reading_text(text: str) -> str:
    """``text`` with every page break inside a sentence turned into spaces (same length)."""
    breaks = page_breaks(text)  # (a chunk's text: a whole document is not kept in the cache)
    if not breaks:
        return text
    parts, at = [], 0
    for start, end in breaks:
        parts += [text[at:start], " " * (end - start)]
        at = end
    parts.append(text[at:])
    return "".join(parts)
