"""Reading a question: the names it mentions and the kind of question it is.

Offline, rules: a mention is a quoted phrase, an ISO date, a year, or a run of capitalised
words (joined by "of", "and", "&", commas...: "People's Republic of China", "ARCA U.S.
TREASURY FUND and ARCA CAPITAL MANAGEMENT, LLC"); retrieval later tries a run whole and
then its parts. The kind follows from cue words and how many names the question holds.
With a model configured, the route role is asked for the kind and the mentions; its
mentions are added to the rules' (a lower-case name the rules cannot see), and when it
fails the rules answer alone, which the route says.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from kgkit.ask.aggregate import operation
from kgkit.ask.record import KINDS

CONNECTORS = {"of", "and", "&", "de", "du", "la", "del", "von", "van", "for", "the", "on", "in", "und", "y"}
QUESTION_WORDS = {"which", "what", "who", "whom", "whose", "when", "where", "why", "how", "is", "are", "was",
                  "were", "does", "do", "did", "has", "have", "list", "show", "name", "find", "give", "tell",
                  "can", "could", "i", "a", "an", "the", "in", "of", "and", "or"}
ISO_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
YEAR = re.compile(r"(?<![\d-])(1[89]\d{2}|20\d{2})(?![\d-])")
QUOTED = re.compile(r"[\"“”]([^\"“”]{2,200})[\"“”]")
AGGREGATE = re.compile(r"\b(how many|number of|count|most|least|more than|fewer than|compare|comparison|"
                       r"average|total|both)\b", re.I)
MULTI_HOP = re.compile(r"\b(through|via|indirectly|chain|connected to .* through|of the \w+ of)\b", re.I)
RELATION = re.compile(r"\b(between|related|relationship|connect(?:ed|s)?|link(?:ed|s)?)\b", re.I)


@dataclass
class Reading:
    """What the rules (and the model, when asked) read in a question."""

    kind: str
    mentions: list[str]
    years: list[str]
    dates: list[str]
    spans: list[tuple[int, int]]  # where the mentions are, so cue words inside a name do not count
    operation: str | None = None  # count, more, fewer, earliest, latest (kgkit.ask.aggregate)


def read(question: str) -> Reading:
    mentions, spans = [], []
    for m in QUOTED.finditer(question):
        mentions.append(m.group(1).strip())
        spans.append(m.span())
    for start, end in _capital_runs(question):
        if not any(s <= start < e for s, e in spans):
            mentions.append(question[start:end])
            spans.append((start, end))
    dates = ISO_DATE.findall(question)
    for m in ISO_DATE.finditer(question):
        spans.append(m.span())
    years = [m.group(1) for m in YEAR.finditer(question) if not any(s <= m.start() < e for s, e in spans)]
    op = operation(question, spans)
    return Reading("aggregate" if op else classify(question, mentions), mentions, years, dates, spans, op)


def classify(question: str, mentions: list[str]) -> str:
    if AGGREGATE.search(question):
        return "aggregate"
    if MULTI_HOP.search(question):
        return "multi_hop"
    if len(mentions) >= 2 or (mentions and RELATION.search(question)):
        return "relation"
    return "lookup" if mentions else "text"


def _capital_runs(text: str) -> list[tuple[int, int]]:
    """Runs of capitalised tokens, joined across connectors that sit between two of them."""
    tokens = [(m.start(), m.end(), m.group()) for m in re.finditer(r"\S+", text)]
    runs: list[list[tuple[int, int, str]]] = []
    current: list[tuple[int, int, str]] = []
    pending: list[tuple[int, int, str]] = []
    for i, (start, end, token) in enumerate(tokens):
        word = token.strip("?!.;:()[]'\"“”,")
        if _capital(token) and not (i == 0 and word.casefold() in QUESTION_WORDS):
            current += pending + [(start, end, token)]
            pending = []
            if token.endswith(("?", "!", ";", ":")):  # a sentence or clause ends inside no name
                runs.append(current)
                current = []
        elif current and word.casefold() in CONNECTORS and not current[-1][2].endswith((";", ":", "?")):
            pending.append((start, end, token))
        else:
            if current:
                runs.append(current)
            current, pending = [], []
    if current:
        runs.append(current)
    out = []
    for run in runs:
        start, end = run[0][0], run[-1][1]
        while end > start and text[end - 1] in "?!;:,'\"“”":
            end -= 1
        if text[start:end].endswith(("'s", "’s")):  # a possessive: "Acme Corp.'s contracts" names Acme Corp.
            end -= 2
        if end > start and not (len(run) == 1 and run[0][2].strip("?,.").casefold() in QUESTION_WORDS):
            out.append((start, end))
    return out


def _capital(token: str) -> bool:
    first = next((c for c in token if c.isalnum()), "")
    bare = token.strip("?,.;:")
    return (bool(first) and (first.isupper() or first.isdigit())
            and not ISO_DATE.fullmatch(bare) and not YEAR.fullmatch(bare))


def parts(mention: str) -> list[str]:
    """A mention's parts, for when it does not resolve whole: split at " and " and commas."""
    pieces = [p.strip(" ,") for p in re.split(r"\s+(?:and|&)\s+|,\s+(?=[A-Z0-9])(?!(?:Inc|Ltd|LLC|L\.L\.C|Corp|Co|"
                                               r"S\.A|N\.V|GmbH|AG|PLC|LP|L\.P|LTD|INC|CORP)\b)", mention)]
    pieces = [p for p in pieces if p and p != mention]
    if mention.casefold().startswith("the "):
        pieces.insert(0, mention[4:])
    return pieces


ROUTE_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["kind", "mentions"],
    "properties": {"kind": {"type": "string", "enum": list(KINDS)},
                   "mentions": {"type": "array", "items": {"type": "string"}, "maxItems": 12}},
}


def merge_model(rules: Reading, data: dict) -> Reading:
    """The model's reading over the rules': its kind, the rules' mentions plus its own."""
    known = {m.casefold() for m in rules.mentions}
    extra = [m.strip() for m in data.get("mentions") or [] if m.strip() and m.strip().casefold() not in known]
    return Reading(data.get("kind") or rules.kind, rules.mentions + extra, rules.years, rules.dates, rules.spans,
                   rules.operation)
