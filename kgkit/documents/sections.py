"""The headings a place in a document sits under: its section and the sections above it.

A relation pass is told which relations a chunk's section allows (a domain's
``section_kinds``, :meth:`kgkit.formats.model.Domain.for_section`), so it needs the section
of each chunk; chunks never span two sections (``Document.boundaries``), so a chunk's
first character says. A PDF read for its layout has its blocks' own heading paths; a
Markdown document has its ATX headings, nested by their ``#`` count; an HTML or Word
document read with ``layout`` has the first line at each section start. A document read
as plain text has no sections: every place is under none.
"""
from __future__ import annotations

import bisect
import re
from typing import Callable

from kgkit.documents.types import Document

_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)[ \t#]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")

Headings = Callable[[int], tuple[str, ...]]


def headings_at(doc: Document) -> Headings:
    """A function from a character offset of ``doc.text`` to the headings above it,
    outermost first (empty before the first heading, or in a document without any)."""
    starts: list[int] = []
    paths: list[tuple[str, ...]] = []
    if doc.layout is not None:
        for block in doc.layout.blocks:
            starts.append(block.start)
            paths.append(tuple(block.section_path or ()))
    elif doc.media_type == "text/markdown" and doc.boundaries:
        starts, paths = _markdown(doc.text)
    else:
        for start in doc.boundaries:
            starts.append(start)
            paths.append((doc.text[start:].split("\n", 1)[0].strip(),))

    def under(offset: int) -> tuple[str, ...]:
        i = bisect.bisect_right(starts, offset) - 1
        return paths[i] if i >= 0 else ()
    return under


def _markdown(text: str) -> tuple[list[int], list[tuple[str, ...]]]:
    starts: list[int] = []
    paths: list[tuple[str, ...]] = []
    stack: list[tuple[int, str]] = []
    fenced = False
    for m in re.finditer(r"^[^\n]*", text, re.MULTILINE):
        line = m.group(0)
        if _FENCE.match(line):
            fenced = not fenced
            continue
        heading = None if fenced else _ATX.match(line)
        if heading:
            level = len(heading.group(1))
            stack = [(lvl, name) for lvl, name in stack if lvl < level] + [(level, heading.group(2).strip())]
            starts.append(m.start())
            paths.append(tuple(name for _, name in stack))
    return starts, paths
