"""The skill cue language that retrieval, the offline backend and the loop all read.

A relation cue regex may begin with :data:`NEAREST` (a regex comment, so any regex engine
ignores it): the cue binds only the two names nearest to it, within its clause; a typed
cue adds ``(?#ends:Head>Tail)``, the end types it is narrowed to.
"""
from __future__ import annotations

import re

from kgkit.guards import safe_regex

NEAREST = "(?#nearest)"  # a regex comment: the cue binds only the two names nearest to it (see relations_with_skills)


CLAUSE_END = re.compile(r"[,;:()\[\]\"]")  # punctuation that ends a clause: the nearest names must not be cut off by it


_ENDS = re.compile(re.escape(NEAREST) + r"\(\?#ends:([^>)]+)>([^)]+)\)")


def cue_ends(regex: str) -> tuple[str, str] | None:
    """The (head type, tail type) a nearest-shaped cue is narrowed to (:func:`typed_cue`), or None."""
    m = _ENDS.match(regex)
    return (m.group(1), m.group(2)) if m else None


_CAPITAL = re.compile(r"(?<![\w'])[A-Z]")


def shaped_match_in(regex: str, text: str) -> bool:
    """Whether a nearest-shaped cue matches ``text`` where it could bind: with a capitalised word
    among the three words on each side of the match, inside its clause (no clause punctuation
    between), as a name nearest to it would stand. Retrieval asks this instead of a bare match: such a cue ("in",
    a role noun, a blank) matches almost any text, and would take a document's few skill
    places where it cannot fire."""
    for m in safe_regex.finditer(regex, text):
        before = " ".join(CLAUSE_END.split(text[max(0, m.start() - 80):m.start()])[-1].split()[-3:])
        after = " ".join(CLAUSE_END.split(text[m.end():m.end() + 80])[0].split()[:3])
        if _CAPITAL.search(before) and _CAPITAL.search(after):
            return True
    return False
