"""Answering from the evidence, and only from it.

Offline the answer is composed deterministically: a named query's answer, each element
citing the statements of the rows that give it; otherwise the statements about the seeds,
each a claim citing itself, and the nodes they reach (or, for a text question, the
documents of the passages found). With a model, the reason role gets the question and the
evidence list (both fenced as untrusted data), may use only relations in that list, at
temperature at most 0.1, and answers JSON naming the evidence ids each element and claim
uses (:data:`ANSWER_SCHEMA`). The verifier's reasons go back to it once.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field

from kgkit.ask.record import Claim, EvidenceItem

PROMPT = "ask_reason.j2"
MAX_TEMPERATURE = 0.1
ANSWER_SCHEMA = {
    "type": "object", "additionalProperties": False, "required": ["answer", "claims", "text"],
    "properties": {
        "text": {"type": "string"},
        "answer": {"type": "array", "maxItems": 200, "items": {
            "type": "object", "additionalProperties": False, "required": ["value", "evidence"],
            "properties": {"value": {"type": "string"},
                           "evidence": {"type": "array", "items": {"type": "string"}}}}},
        "claims": {"type": "array", "maxItems": 200, "items": {
            "type": "object", "additionalProperties": False, "required": ["head", "relation", "tail", "evidence"],
            "properties": {"head": {"type": "string"}, "relation": {"type": "string"},
                           "tail": {"type": "string"},
                           "evidence": {"type": "array", "items": {"type": "string"}}}}},
    },
}


@dataclass
class Draft:
    answer: list[tuple[str, list[str]]] = field(default_factory=list)  # element -> evidence ids
    claims: list[Claim] = field(default_factory=list)
    text: str = ""
    answer_type: str = "nodes"


def _claim_of(item: EvidenceItem, seeds: frozenset[str] | set[str] = frozenset(),
              named: set[str] | None = None) -> Claim | None:
    """The relation an item states: head to tail for a binary edge; for an n-ary one, between
    two of its named fillers (seeds first), which is what it states about them."""
    if set(item.ends) == {"head", "tail"}:
        if item.ends["head"] and item.ends["tail"]:
            return Claim(item.ends["head"][0], item.relation, item.ends["tail"][0], [item.id])
        return None
    fillers = list(dict.fromkeys(n for ns in item.ends.values() for n in ns if named is None or n in named))
    fillers.sort(key=lambda n: n not in seeds)
    return Claim(fillers[0], item.relation, fillers[1], [item.id]) if len(fillers) >= 2 else None


def from_named(answer_values: list[str], answer_type: str, rows: list[list[str]], evidence: list[EvidenceItem]) -> Draft:
    """A named query's answer: each element cites the statements of the rows that yield it."""
    by_id = {e.id: e for e in evidence}
    claims: list[Claim] = []
    cites: dict[str, list[str]] = {}
    for items in rows:
        row = [by_id[i] for i in items if i in by_id]
        for item in row:
            claim = _claim_of(item)
            if claim and not any((c.head, c.relation, c.tail) == (claim.head, claim.relation, claim.tail)
                                 and c.evidence == claim.evidence for c in claims):
                claims.append(claim)
        for value in answer_values:
            if any(value in e.documents or any(value in ns for ns in e.ends.values()) for e in row):
                cites.setdefault(value, []).extend(e.id for e in row if e.id not in cites.get(value, []))
    answer = [(v, cites.get(v, [])) for v in answer_values]
    noun = "documents" if answer_type == "documents" else "answers"
    return Draft(answer, claims, f"{len(answer)} {noun}: {', '.join(answer_values)}" if answer else "", answer_type)


def from_statements(evidence: list[EvidenceItem], seeds: set[str], kind: str, named: set[str]) -> Draft:
    """The statements about the seeds as claims; the answer is what they reach (for a
    question relating seeds, every node on the way, the seeds included; for a text question,
    the documents of the passages)."""
    graph = [e for e in evidence if e.source == "graph"]
    if kind == "text" or not graph:
        docs: dict[str, list[str]] = {}
        for e in evidence:
            for d in e.documents:
                docs.setdefault(d, []).append(e.id)
        answer = list(docs.items())
        return Draft(answer, [], f"passages from {len(answer)} documents" if answer else "", "documents")
    claims = [c for c in (_claim_of(e, seeds, named) for e in graph) if c]
    reached: dict[str, list[str]] = {}
    for c in claims:
        for end in (c.head, c.tail):
            if kind == "relation" or end not in seeds:
                reached.setdefault(end, []).extend(x for x in c.evidence if x not in reached.get(end, []))
    answer = list(reached.items())
    lines = [f"{c.head} -{c.relation}-> {c.tail}" for c in claims]
    return Draft(answer, claims, "; ".join(lines), "nodes")


def evidence_listing(evidence: list[EvidenceItem]) -> str:
    """The evidence as one JSON line per item: the text the prompt fences as untrusted."""
    lines = []
    for e in evidence:
        lines.append(json.dumps({"id": e.id, "source": e.source, "relation": e.relation, "ends": e.ends,
                                 "documents": e.documents,
                                 "quotes": [s.quote for s in e.sources if s.quote][:2]}, ensure_ascii=False))
    return "\n".join(lines)


def from_model(data: dict) -> Draft:
    answer = [(a["value"], list(a.get("evidence") or [])) for a in data.get("answer") or []]
    claims = [Claim(c["head"], c["relation"], c["tail"], list(c.get("evidence") or [])) for c in data.get("claims") or []]
    return Draft(answer, claims, data.get("text") or "", "nodes")
