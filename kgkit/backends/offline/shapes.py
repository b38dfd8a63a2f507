"""Which finds have the shape of an entity name, and which of overlapping finds is kept.

A find is not a name when it reads as a clause (a clause word in lower case, or any in an
all-caps run), runs across a sentence end, is a heading after a section number, is a
document title typed as a person or place, or is a person named only by role words. A
pattern find cut off mid-phrase loses its dangling words. Of overlapping finds, the
stronger, then the longer, is kept, within each granularity (clause-long finds apart from
names).
"""
from __future__ import annotations

import re
from bisect import bisect_left

from kgkit.backends.offline.mentions import Mention
from kgkit.backends.offline.names import ORG_WORDS, ROLE_WORDS, is_title_word
from kgkit.text.literals import KINDS as LITERAL_KINDS
from kgkit.text.sentences import ABBREVIATIONS

_LETTERS = re.compile(r"[A-Za-z]+")
_HEADING_END = re.compile(r"[ \t]*(?:\.|:|\n|$)")


CLAUSE_LENGTH = 40  # characters: longer finds are clause-like (a claim, an obligation) and may contain names

# Words that make a run of text a clause, never a name: modal and auxiliary verbs, negation,
# relative pronouns, determiners of a clause. A closed grammatical class, not a list of
# any document's words: "IF ANY REMEDY IN THIS AGREEMENT", "MONTH PERIOD SHALL BE LIMITED",
# "PARTY AGAINST WHOM" are boilerplate, whichever contract they come from.
CLAUSE_WORDS = frozenset(
    "if shall will may must should would can could be is are was were been not whom which who whose that "
    "such any each every than against hereby hereunder herein hereof thereof therein upon unless whether "
    "hereto this these those".split()
)
# Words a fragment does not end on ("perform the", "reimburse i", "pay to"): articles,
# prepositions, conjunctions.
_DANGLING = frozenset("the a an of to and or in for with by on at from as its their his her".split())
# Nouns that name a document, one of its parts or a scheme it sets up: "Stock Purchase
# Agreement" is never a person, "the Non-Disclosure Agreement" never a place.
DOCUMENT_NOUNS = frozenset(
    "agreement agreements contract act code plan policy amendment exhibit schedule annex appendix section "
    "article clause addendum statute regulation rules order program programme".split()
)


def _clause_shaped(name: str) -> bool:
    """A clause word written in lower case, or any clause word in an all-caps run."""
    words = _LETTERS.findall(name)
    shouted = bool(words) and all(w.isupper() for w in words if len(w) > 1)
    return any((w.islower() or shouted) and w.lower() in CLAUSE_WORDS for w in words)


def trim_fragment(m: Mention, text: str) -> Mention:
    """A pattern find cut off mid-phrase loses its dangling words (its first word always stays)."""
    words = m.name.split()
    while len(words) > 1 and (words[-1].lower() in _DANGLING or (len(words[-1]) == 1 and words[-1].islower())):
        words.pop()
    name = " ".join(words)
    if name == m.name:
        return m
    end = m.start + text[m.start:m.end].find(words[-1]) + len(words[-1])
    return Mention(name, m.type, m.start, end, m.priority, m.confidence, m.kind, list(m.aliases))


# A section number opening a line: "6.02 ", "Section 5. ", "ARTICLE IV "
_SECTION_NUMBER = re.compile(r"(?:^|\n)[ \t]*(?:(?:Section|SECTION|Article|ARTICLE)[ \t]+)?(?:\d+(?:\.\d+)*|[IVX]+)\.?[ \t]+$")


def is_heading(m: Mention, text: str) -> bool:
    """A run-in or stand-alone heading: the words after a section number up to a full stop
    or the line's end ("6.02 Representations and Warranties Company. As of …")."""
    lo = max(0, m.start - 40)
    if lo and text.find("\n", lo, m.start) < 0:
        return False  # the number opens a line: its "^" is the text's start, its "\n" in reach
    if not _SECTION_NUMBER.search(text, lo, m.start):
        return False
    return bool(_HEADING_END.match(text[m.end:m.end + 3]))


# A word of four letters or more, a full stop, a capitalised word: a sentence ends inside.
_SENTENCE_END_INSIDE = re.compile(r"\b([A-Za-z][a-z]{3,})\.\s+(?=[A-Z])")


def well_formed(m: Mention, kinds: dict[str, str]) -> bool:
    """Whether a find has the shape of an entity name: not a clause, not a document title
    typed as a person or place, not a person named only by role words ("Chief Executive Officer")."""
    if m.kind in LITERAL_KINDS or m.kind == "label":
        return True
    if len(m.name) < CLAUSE_LENGTH and _clause_shaped(m.name):
        return False
    if "." in m.name and any(w.lower() not in ABBREVIATIONS for w in _SENTENCE_END_INSIDE.findall(m.name)):
        return False  # "South Carolina. Jesse Jackson" runs across a sentence end
    words = [w.lower().strip(".,") for w in m.name.split()]
    if m.type in (kinds.get("person"), kinds.get("location")) and words[-1] in DOCUMENT_NOUNS:
        return False
    if m.type == kinds.get("person") and (all(w in ROLE_WORDS for w in words) or words[-1] in ORG_WORDS
                                          or (len(words) == 1 and is_title_word(m.name))):
        return False  # "Chief Executive Officer" is a role, "Ambassador Hotel" a hotel, "Lt." a title
    return True


_NAME_JOINERS = frozenset("of and for the de du la on in &".split())


def clause_long(m: Mention) -> bool:
    """A find of clause length, unless it is a long name: every word capitalised or a joiner
    ("International Committee of the Avalon Relief Fund" hides the names inside it)."""
    return m.end - m.start >= CLAUSE_LENGTH and not all(
        w[:1].isupper() or w in _NAME_JOINERS for w in m.name.split())


def resolve_overlaps(mentions: list[Mention]) -> list[Mention]:
    """Keep the stronger, then the longer, of overlapping mentions, within each granularity:
    a clause-like find ("we propose a Transformer model for …") does not hide the names
    inside it, and names do not hide it."""
    ordered = sorted(mentions, key=lambda m: (-m.priority, -(m.end - m.start), m.start, m.type, m.name))
    kept: list[Mention] = []
    if any(m.end <= m.start for m in ordered):  # an empty span: the pairwise test (never seen)
        for m in ordered:
            if all(m.end <= k.start or m.start >= k.end or clause_long(m) != clause_long(k) for k in kept):
                kept.append(m)
        return sorted(kept, key=lambda m: (m.start, m.end))
    # Kept spans of one granularity never overlap, so in start order their ends rise too:
    # a span overlaps one of them exactly when the last to start before its end reaches past its start.
    spans: dict[bool, tuple[list[int], list[int]]] = {False: ([], []), True: ([], [])}
    for m in ordered:
        starts, ends = spans[clause_long(m)]
        i = bisect_left(starts, m.end)
        if i and ends[i - 1] > m.start:
            continue
        starts.insert(i, m.start)
        ends.insert(i, m.end)
        kept.append(m)
    return sorted(kept, key=lambda m: (m.start, m.end))
