"""Fitting a question to one of the domain's named queries, and binding its parameters.

A named query fits when every parameter binds from the question and its relations' words
("GOVERNING_LAW": governing, law) appear in the question outside the names it mentions:

* ``Type{name: $p}``: the seed whose node has that type (by ``find``);
* ``Type{in: $p}``: a year (``year`` parameters) or an ISO date in the question;
* ``where document $p``: the one document every identifying mention points to (an
  agreement's title, its parties, its date). A mention of the type the query selects
  does not identify (the question asks for it, so it does not name it).

The best fit uses most of the question (relation words matched plus parameters bound,
less mentions left unused); a tie, or no fit, leaves the question to the full path.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgkit.query.named import NamedQuery

EDGE = re.compile(r"-([A-Z*][A-Z0-9_|*]*)->|<-([A-Z*][A-Z0-9_|*]*)-")
WORD = re.compile(r"[A-Za-z]+")
SHORT = {"has", "is", "of", "in", "to", "by", "the"}


@dataclass
class Fit:
    query: NamedQuery
    params: dict[str, str]
    score: int
    used: set[str]  # mentions the binding used
    answer: list[str] = field(default_factory=list)  # the named query's answer, once run
    also: list[dict[str, str]] = field(default_factory=list)  # the same query bound to the other names
    combine: str = "any"  # how the bindings' answers join: "all" (both ... and) or "any" (either ... or)
    values: list[list[str]] = field(default_factory=list)  # per binding, the names it binds (for the verifier)


def relations(pattern: str) -> list[str]:
    return [r for m in EDGE.finditer(pattern) for r in (m.group(1) or m.group(2)).split("|") if r != "*"]


def node_types(pattern: str) -> list[str]:
    """The node types of a pattern's positions, in order (the ``select`` of a named query)."""
    head = pattern.split(" where ")[0]
    types = []
    for part in EDGE.split(head)[::3]:
        found = re.match(r"\s*([\w*]+)", part or "")
        if found:
            types.append(found.group(1))
    return types


def stems(words) -> set[str]:
    return {w.casefold()[:4] for w in words if len(w) > 2 and w.casefold() not in SHORT}


def cue_stems(question: str, spans: list[tuple[int, int]]) -> set[str]:
    """The question's words outside its mentions, as four-letter stems."""
    outside = "".join(c if not any(s <= i < e for s, e in spans) else " " for i, c in enumerate(question))
    return stems(WORD.findall(outside))


def param_roles(query) -> dict[str, tuple[str, str | None]]:
    """Each parameter's role in the pattern: ("name"|"in", node type) or ("document", None)."""
    roles = {}
    for name, _ in query.params:
        p = re.escape("$" + name)
        if m := re.search(r"([\w*]+)\{[^}]*\bname:\s*" + p + r"\b", query.pattern):
            roles[name] = ("name", m.group(1))
        elif m := re.search(r"([\w*]+)\{[^}]*\bin:\s*" + p + r"\b", query.pattern):
            roles[name] = ("in", m.group(1))
        elif re.search(r"\bwhere\b.*\bdocument\s+" + p + r"\b", query.pattern):
            roles[name] = ("document", None)
    return roles


def fit(queries: dict, question: str, reading, seeds: list, documents_of_date) -> Fit | None:
    """The one named query the question asks, with its parameters; None when none fits or two
    different ones tie (two queries of the same pattern bound alike are one answer)."""
    cues = cue_stems(question, reading.spans)
    fits = [f for q in queries.values() if (f := _bind(q, cues, reading, seeds, documents_of_date))]
    if not fits:
        return None
    fits.sort(key=lambda f: -f.score)
    tied = [f for f in fits[1:] if f.score == fits[0].score]
    if any((f.query.pattern, f.params) != (fits[0].query.pattern, fits[0].params) for f in tied):
        return None
    return fits[0]


def words(query) -> set[str]:
    """The stems a named query is asked with: its relations' words and its own name's
    ("signed_by": signed), so a domain can declare another wording of the same pattern."""
    return stems(w for r in relations(query.pattern) + [query.name] for w in r.split("_"))


def _bind(query, cues: set[str], reading, seeds: list, documents_of_date) -> Fit | None:
    matched = len(cues & words(query))
    roles = param_roles(query)
    if not matched or len(roles) != len(query.params):
        return None
    types = node_types(query.pattern)
    selected = types[query.select] if query.returns == "nodes" and query.select < len(types) else None
    params, used = {}, set()
    for name, kind in query.params:
        role, node_type = roles[name]
        value = None
        if role == "name":
            seed = next((s for s in seeds if node_type in s.types and s.mention not in used), None)
            if seed:
                value = next(n.name for n in seed.nodes if n.type == node_type)
                used.add(seed.mention)
        elif role == "in":
            value = (reading.years or [None])[0] if kind == "year" else (reading.dates or reading.years or [None])[0]
        else:
            value, ids = _document(seeds, reading, selected, used, documents_of_date)
            used |= ids
        if value is None:
            return None
        params[name] = value
    unused = sum(1 for s in seeds if s.mention not in used) + (len(reading.years) if not any(
        roles[n][0] == "in" for n in roles) else 0)
    return Fit(query, params, matched + len(params) - unused, used)


def _document(seeds, reading, selected, used, documents_of_date) -> tuple[str | None, set[str]]:
    """The one document the identifying mentions all point to, and the mentions used."""
    sets, ids = [], set()
    for s in seeds:
        if s.mention in used or (selected and selected in s.types):
            continue
        sets.append(s.documents)
        ids.add(s.mention)
    for date in reading.dates:
        docs = documents_of_date(date)
        if docs:
            sets.append(docs)
    if not sets:
        return None, set()
    common = set.intersection(*sets)
    if len(common) != 1:
        # the mentions disagree: the document most of them point to, if only one is most
        counts: dict[str, int] = {}
        for docs in sets:
            for d in docs:
                counts[d] = counts.get(d, 0) + 1
        best = max(counts.values())
        top = [d for d, c in counts.items() if c == best]
        if len(top) != 1 or best < 2:
            return None, set()
        common = set(top)
    return next(iter(common)), ids


def alternatives(fit: Fit, seeds: list) -> list[dict[str, str]]:
    """The same query bound to each other seed that fits a ``Type{name: $p}`` parameter ("the
    law of Texas or California": California too; "X and Y both sign": Y too)."""
    roles = param_roles(fit.query)
    out = []
    for name, (role, node_type) in roles.items():
        if role != "name":
            continue
        for seed in seeds:
            if seed.mention in fit.used or node_type not in seed.types:
                continue
            value = next(n.name for n in seed.nodes if n.type == node_type)
            if value != fit.params[name]:
                out.append({**fit.params, name: value})
                fit.used.add(seed.mention)
    return out


ANY = re.compile(r"\b(or|either|any)\b", re.I)


def combination(question: str, mentions: list[str]) -> str:
    """How two or more names of one parameter join: "any" (the union: "X or Y", "either")
    when the words between them (or "either" anywhere) say so, else "all" (the intersection:
    "both X and Y", "X and Y", "X, Y")."""
    found = sorted(p for m in mentions if (p := question.find(m)) >= 0)
    between = question[found[0]:found[-1]] if len(found) >= 2 else question
    for m in mentions:
        between = between.replace(m, " ")
    if ANY.search(between) or re.search(r"\beither\b", question, re.I):
        return "any"
    return "all"
