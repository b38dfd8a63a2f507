"""Page breaks inside a sentence: where a document's layout cuts a clause in two.

A document converted from pages carries its page furniture into the text: a page number,
a running header or footer ("Source: ...", "CONFIDENTIAL TREATMENT REQUESTED"), blank
lines. Where a page ends in the middle of a sentence, that furniture sits between the two
halves of the sentence, and a reader that splits sentences at blank lines (as the
sentence splitter must: a blank line ends a heading or a list item) sees two fragments,
neither of which states the clause ("... shall be governed by" / "the laws of Ohio.").

:func:`page_breaks` finds those places; :func:`reading_text` blanks them out (the same
length, so every offset stays the document's) for rules that read sentences, and the
chunker does not end a chunk there. A break counts as inside a sentence when the line
before it does not end one (no closing punctuation, not a heading) and either the text
after it goes on in lower case, or furniture (a page number, a running line) stands
between: a paragraph that merely ends without a period, followed by a blank line and a
capital, is left a paragraph.
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
_ENDS_SENTENCE = re.compile(r"[.!?:;][\"'”’)\]]*[ \t]*$")
MAX_LINES = 12  # lines of furniture and blanks a page break may span
MAX_RUNNING = 80  # characters: a longer line is text, not a running header or footer


def _furniture(line: str, repeated: frozenset[str]) -> bool:
    """A page number, a source line, or a short line written more than once in the text (a
    running header or footer), its digits aside; see also :func:`_capitals`."""
    if _PAGE_NUMBER.fullmatch(line) or _SOURCE_LINE.fullmatch(line):
        return True
    return _running_key(line) in repeated


def _capitals(line: str) -> bool:
    """A short line in capitals ("CONFIDENTIAL TREATMENT REQUESTED"): furniture beside a page
    number or a source line, a heading anywhere else."""
    line = line.strip()
    return bool(line) and len(line) <= MAX_RUNNING and line.isupper()


def _running_key(line: str) -> str:
    return re.sub(r"\d+", "#", " ".join(line.split()))


def _repeated_lines(text: str) -> frozenset[str]:
    """Short lines, digits aside, that the text writes more than once."""
    seen: set[str] = set()
    again: set[str] = set()
    for line in text.split("\n"):
        if not line.strip() or len(line) > MAX_RUNNING:
            continue
        key = _running_key(line)
        (again if key in seen else seen).add(key)
    return frozenset(again)


def _ends_mid_sentence(line: str) -> bool:
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
        if not _ends_mid_sentence(line) or _furniture(line, repeated):
            continue
        j, furniture, capitals = i + 1, False, False
        while j < len(lines) and j - i <= MAX_LINES:
            between = lines[j][1]
            if _furniture(between, repeated):
                furniture = True
            elif _capitals(between):
                capitals = True
            elif between.strip():
                break
            j += 1
        if j == i + 1 or j >= len(lines) or j - i > MAX_LINES or (capitals and not furniture):
            continue  # no blank or running line between (a line break reads as a space), or no text after
        after_at, after = lines[j]
        if furniture or after.lstrip()[:1].islower():
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
