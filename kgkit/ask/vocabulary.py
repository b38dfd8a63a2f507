"""The words a domain gives its types and relations, for a question that names no node.

"Which contract has the most parties?" names nothing in the graph: what it counts is read
from its words, matched to the domain's declared entity types and relation types — each
one's name ("HAS_PARTY": has party; "DefinedTerm": defined term) and its declared aliases
(Agreement: contract, document; GOVERNING_LAW: governed by, choice of law) — as four-letter
stems in sequence (:func:`kgkit.ask.bind.stems`), so "contracts" reads as Agreement and
"governs" as GOVERNING_LAW. Nothing here is English written for a question: a domain that
declares other words is read by those.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache

from kgkit.ask.bind import WORD, stems

CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


@dataclass(frozen=True)
class Term:
    kind: str  # "type" | "relation"
    name: str  # the declared type or relation
    stems: tuple[str, ...]


@dataclass(frozen=True)
class Hit:
    term: Term
    start: int  # where in the question (characters)
    end: int


@dataclass
class Vocabulary:
    terms: list[Term] = field(default_factory=list)
    ends: dict[str, tuple[list[str], list[str]]] = field(default_factory=dict)  # relation -> (heads, tails)
    document_type: str | None = None

    def read(self, question: str) -> list[Hit]:
        """The terms the question holds, in order; at one place the longest term wins, and a
        type and a relation may share a place ("parties": Party and HAS_PARTY)."""
        words = [(m.start(), m.end(), s) for m in WORD.finditer(question) for s in stems([m.group()])]
        hits: list[Hit] = []
        for kind in ("type", "relation"):
            taken: set[int] = set()
            terms = sorted((t for t in self.terms if t.kind == kind), key=lambda t: -len(t.stems))
            for term in terms:
                n = len(term.stems)
                for i in range(len(words) - n + 1):
                    if tuple(w[2] for w in words[i:i + n]) == term.stems and not taken & set(range(i, i + n)):
                        taken |= set(range(i, i + n))
                        hits.append(Hit(term, words[i][0], words[i + n - 1][1]))
        return sorted(hits, key=lambda h: (h.start, h.term.kind))

    def role(self, relation: str, type_: str) -> str | None:
        """Which end of ``relation`` a node of ``type_`` is declared at ("head", "tail"), or None."""
        heads, tails = self.ends.get(relation, ([], []))
        return "tail" if type_ in tails else "head" if type_ in heads else None

    def connecting(self, a: str, b: str | None) -> list[str]:
        """The relations declared between types ``a`` and ``b`` (either way); with ``b`` None,
        those with ``a`` at an end."""
        out = []
        for relation, (heads, tails) in self.ends.items():
            if b is None and (a in heads or a in tails):
                out.append(relation)
            elif b is not None and ((a in heads and b in tails) or (b in heads and a in tails)):
                out.append(relation)
        return sorted(out)


def _phrase(text: str) -> tuple[str, ...]:
    return tuple(s for w in WORD.findall(CAMEL.sub(" ", text).replace("_", " ")) for s in stems([w]))


def of_merged(merged: dict) -> Vocabulary:
    """The vocabulary of a resolved domain (``resolve_domain(...).merged``)."""
    vocab = Vocabulary(document_type=merged.get("document_type"))
    for kind, key in (("type", "entity_types"), ("relation", "relation_types")):
        for spec in merged.get(key) or []:
            if not isinstance(spec, dict) or not isinstance(spec.get("name"), str):
                continue
            for phrase in dict.fromkeys(_phrase(w) for w in [spec["name"], *(spec.get("aliases") or [])]):
                if phrase:
                    vocab.terms.append(Term(kind, spec["name"], phrase))
            if kind == "relation":
                vocab.ends[spec["name"]] = (list(spec.get("head") or []), list(spec.get("tail") or []))
    return vocab


@lru_cache(maxsize=16)
def of_domain(domain_ref: str) -> Vocabulary:
    """The vocabulary of a domain (name or path), read once per process."""
    from kgkit.catalog.validation import resolve_domain
    from kgkit.formats.search_path import find

    return of_merged(resolve_domain(find("domains", domain_ref)).merged)
