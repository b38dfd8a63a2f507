"""Aggregate and comparison questions, computed from the evidence and nothing else.

The operation is read from the question's words outside the names it mentions:

* ``count`` ("how many", "number of"): the elements a list answer holds, or, for a named
  thing, the documents or nodes its statements reach;
* ``more`` / ``fewer`` ("which has more ..., A or B", "most", "fewest"): the same count for
  each of two or more named things, and the one (or those tied) with the most or fewest;
* ``earliest`` / ``latest`` ("earliest", "oldest", "latest", "most recent"): the elements
  whose dated statement is earliest or latest (a date node's name read as ISO 8601).

What is counted follows the question: statements of the relations whose words it uses
("parties": HAS_PARTY), or all of them; documents when it speaks of contracts, agreements
or documents, else the nodes at the statements' other ends. Every counted element and every
date cites the statements that give it, so the verifier can count again
(:func:`kgkit.ask.verify.verify_aggregate`). A count from evidence that a limit cut is not a
count: the answer then degrades to ``insufficient_evidence`` and says which limit cut it.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from kgkit.ask.bind import cue_stems, stems
from kgkit.ask.record import EvidenceItem
from kgkit.text import timex

COUNT = re.compile(r"\b(how many|number of|count)\b", re.I)
EARLIEST = re.compile(r"\b(earliest|oldest|first)\b", re.I)
LATEST = re.compile(r"\b(latest|newest|most recent|last)\b", re.I)
MORE = re.compile(r"\b(more|most|greater|larger|higher|bigger)\b", re.I)
FEWER = re.compile(r"\b(fewer|fewest|less|least|smaller|lower)\b", re.I)
DOCUMENT_WORDS = re.compile(r"\b(contracts?|agreements?|documents?|files?|filings?|papers?)\b", re.I)
OPERATIONS = ("count", "more", "fewer", "earliest", "latest", "list")  # list: an absence's elements
DATED = ("earliest", "latest")
ANSWER = "answer"  # the group of a list answer (a named query's, or the full path's)


@dataclass
class Aggregate:
    """What was computed, over what, citing what: the record's ``aggregate``."""

    op: str  # one of OPERATIONS
    measure: str  # "documents" | "nodes": what an element is
    relations: list[str] = field(default_factory=list)  # the relations counted ([]: every relation)
    groups: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # group -> element -> evidence ids
    dates: dict[str, dict[str, str]] = field(default_factory=dict)  # element -> {"date", "evidence"}
    value: Any = None  # count: int per group; earliest/latest: the ISO date
    result: list[str] = field(default_factory=list)  # the answer: a count, or the winning groups/elements
    complete: bool = True  # no limit left evidence out (else the answer is insufficient_evidence)
    without: dict[str, list[str]] | None = None  # an absence: the elements that do have the relations, citing them
    grouped: str = "named"  # a ranking's groups: the named things, or "documents" / "nodes" of the whole graph


def outside(question: str, spans: list[tuple[int, int]]) -> str:
    """The question with its mentions blanked, so a name's words ("First National") do not count."""
    return "".join(c if not any(s <= i < e for s, e in spans) else " " for i, c in enumerate(question))


def operation(question: str, spans: list[tuple[int, int]]) -> str | None:
    text = outside(question, spans)
    if COUNT.search(text):
        return "count"
    if LATEST.search(text):
        return "latest"
    if EARLIEST.search(text):
        return "earliest"
    if FEWER.search(text):
        return "fewer"
    if MORE.search(text):
        return "more"
    return None


def measure(question: str, spans: list[tuple[int, int]]) -> str:
    return "documents" if DOCUMENT_WORDS.search(outside(question, spans)) else "nodes"


def cue_relations(question: str, spans: list[tuple[int, int]], relations: set[str]) -> list[str]:
    """The relations whose words the question uses outside its names ("parties": HAS_PARTY)."""
    cues = cue_stems(question, spans)
    return sorted(r for r in relations if cues & stems(r.split("_")))


def _touches(item: EvidenceItem, names: set[str]) -> bool:
    return any(n in names for ns in item.ends.values() for n in ns)


def seed_groups(evidence: list[EvidenceItem], seeds: dict[str, set[str]], kind: str,
                relations: list[str]) -> dict[str, dict[str, list[str]]]:
    """Per seed (its graph name -> the names of its nodes), the elements its statements of
    ``relations`` (all, when empty) reach: their documents, or the nodes at their other ends."""
    groups: dict[str, dict[str, list[str]]] = {}
    for label, names in seeds.items():
        elements: dict[str, list[str]] = {}
        for e in evidence:
            if e.source != "graph" or not _touches(e, names) or (relations and e.relation not in relations):
                continue
            reached = e.documents if kind == "documents" else [
                n for ns in e.ends.values() for n in ns if n not in names]
            for value in reached:
                elements.setdefault(value, [])
                if e.id not in elements[value]:
                    elements[value].append(e.id)
        groups[label] = elements
    return groups


def date_of(name: str) -> str | None:
    """A node name read as a date ("January 9, 2020": ``2020-01-09``; an interval: its start), or None."""
    value = timex.parse_or_none(timex.normalise("date", name) or "")
    if isinstance(value, timex.Interval):
        value = value.start
    return value.text if isinstance(value, timex.Point) else None


def dated(evidence: list[EvidenceItem], elements: list[str], kind: str, cues: list[str],
          op: str) -> dict[str, dict[str, str]]:
    """Each element's date: among the dated statements that name it (as their document, or as
    an end), those of the question's relations if it names any, else those of a ``*DATE*``
    relation if there are, else all; the earliest of them (``earliest``) or the latest."""
    out = {}
    for element in elements:
        candidates = []
        for e in evidence:
            if e.source != "graph" or not (element in e.documents if kind == "documents"
                                           else _touches(e, {element})):
                continue
            for n in (n for ns in e.ends.values() for n in ns if n != element):
                when = date_of(n)
                if when:
                    candidates.append((when, e))
        for keep in (lambda e: e.relation in cues, lambda e: "DATE" in e.relation.upper(), lambda e: True):
            chosen = [(w, e) for w, e in candidates if keep(e)]
            if chosen:
                when, item = (min if op == "earliest" else max)(chosen, key=lambda c: (c[0], c[1].id))
                out[element] = {"date": when, "evidence": item.id}
                break
    return out


def winners(values: dict[str, Any], op: str) -> list[str]:
    """The keys at the best value (the most, fewest, earliest or latest); ties all win."""
    if not values:
        return []
    best = (min if op in ("fewer", "earliest") else max)(values.values())
    return sorted(k for k, v in values.items() if v == best)


def compute(agg: Aggregate) -> Aggregate:
    """``agg.value`` and ``agg.result`` from its groups (and dates): deterministic, so the
    verifier computes the same from the cited evidence."""
    if agg.op == "count":
        agg.value = {g: len(elements) for g, elements in agg.groups.items()}
        agg.result = ([str(n) for n in agg.value.values()] if len(agg.groups) == 1
                      else [f"{g}: {n}" for g, n in agg.value.items()])
    elif agg.op in ("more", "fewer"):
        agg.value = {g: len(elements) for g, elements in agg.groups.items()}
        agg.result = winners(agg.value, agg.op)
    elif agg.op == "list":
        elements = agg.groups.get(ANSWER, {})
        agg.value, agg.result = len(elements), sorted(elements)
    else:
        dates = {element: d["date"] for element, d in agg.dates.items()}
        agg.result = winners(dates, agg.op)
        agg.value = dates[agg.result[0]] if agg.result else None
    return agg


def cites(agg: Aggregate) -> dict[str, list[str]]:
    """Each answer element's evidence: everything the computation used, since "A has more
    than B" or "the earliest" rests on the others' statements as much as on its own; a count
    of one named thing among several, that thing's."""
    having = [i for es in (agg.without or {}).values() for i in es]  # an absence rests on all the others
    everything = [i for g in agg.groups.values() for es in g.values() for i in es]
    everything = [d["evidence"] for d in agg.dates.values()] + everything + having
    out: dict[str, list[str]] = {}
    for value in agg.result:
        if agg.op == "count" and len(agg.groups) > 1:
            group = value.rsplit(": ", 1)[0]
            ids = [i for es in agg.groups.get(group, {}).values() for i in es]
        elif agg.op == "list":
            ids = agg.groups.get(ANSWER, {}).get(value, []) + having
        else:
            ids = everything
        out[value] = list(dict.fromkeys(ids))
    return out


def _many(n: int, measure: str) -> str:
    noun = "document" if measure == "documents" else "node"
    return f"{n} {noun}{'' if n == 1 else 's'}"


def text(agg: Aggregate) -> str:
    over = f" ({', '.join(agg.relations)})" if agg.relations else ""
    if agg.without is not None:
        over = f" with no {' or '.join(agg.relations)} statement"
    if agg.op == "list":
        return f"{_many(agg.value, agg.measure)}{over}: {', '.join(agg.result)}" if agg.result else (
            f"every {agg.measure[:-1]} has a {' or '.join(agg.relations)} statement")
    if agg.op == "count":
        return "; ".join(_many(n, agg.measure) + over + ("" if g == ANSWER else f" for {g}")
                         for g, n in agg.value.items())
    if agg.op in ("more", "fewer"):
        counts = ", ".join(f"{g} {n}" for g, n in sorted(agg.value.items(), key=lambda c: (-c[1], c[0])))
        what = "documents" if agg.measure == "documents" else "nodes"
        return f"{' and '.join(agg.result)}: the {'most' if agg.op == 'more' else 'fewest'} {what}{over} ({counts})"
    return (f"{' and '.join(agg.result)}: the {agg.op}, dated {agg.value}" if agg.result
            else "no dated statement about them")
