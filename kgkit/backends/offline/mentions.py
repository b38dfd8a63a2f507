"""A candidate entity mention, and the form names are compared and emitted in.

Its own module because both sources of mentions use it: :mod:`.entities` (patterns,
literals, companies, defined terms, and the merge) imports :mod:`.names` (capitalised
names), so names cannot import these from entities without a cycle.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

_WS = re.compile(r"\s+")


def collapse(text: str) -> str:
    """Whitespace collapsed and trimmed: the form names are compared and emitted in.

    Most names have no whitespace but single plain spaces, and then only the trim applies:
    every other character ``\\s`` matches is not printable, so one C-level check skips the
    regex (a name is collapsed many times per chunk)."""
    if "  " not in text and text.isprintable():
        return text.strip()
    return _WS.sub(" ", text).strip()


def name_key(name: str) -> str:
    """How two names of one type are judged the same: case, spacing, trailing dots and commas ignored."""
    return collapse(name).lower().rstrip(".,;: ")


@dataclass
class Mention:
    """One candidate entity mention in the chunk text."""

    name: str
    type: str
    start: int
    end: int
    priority: int
    confidence: float
    kind: str = ""  # generic kind that produced it ("organization", "date", …), "" for patterns
    aliases: list[str] = field(default_factory=list)
