"""Aggregates over the whole graph, for a question that names no node.

"How many agreements are there?", "Which contract has the most parties?", "Which contracts
have no governing law?", "Which contract is the latest?": what is counted, grouped by and
related is read from the question's words matched to the domain's types and relations
(:mod:`kgkit.ask.vocabulary`), around the operation's words (:mod:`kgkit.ask.aggregate`):

* the **counted** type is the first type after "how many" / "most" (else the first type);
  the domain's ``document_type`` counts documents, another type the nodes of that type;
* a ranking's **group** is the type before "most" / "fewest" ("which contract has the most
  parties": per contract, its parties);
* the **relation** is the one the question names outside those two types' own words
  ("governs": GOVERNING_LAW), else the relations the domain declares between them;
* "no", "without", "lacks" make an **absence**: the documents of the whole graph that hold
  no statement of the relation.

Statements are read with ``match`` (up to ``ask.aggregate_evidence``: a cut is reported, and
a count from cut evidence is not a count); every element cites the statements that give it,
and the verifier counts again from them (:func:`kgkit.ask.verify.verify_aggregate`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from kgkit.ask import aggregate
from kgkit.ask.record import EvidenceItem
from kgkit.ask.vocabulary import Hit, Vocabulary

ABSENT = re.compile(r"\b(no|without|lacks?|lacking|missing|none)\b|\bnot\s+(?:have|has|state|name)\b", re.I)
THRESHOLD = re.compile(r"\b(?:more|fewer|less|greater)\s+than\b", re.I)  # "more than two": not a ranking
OP_WORDS = {"count": aggregate.COUNT, "more": aggregate.MORE, "fewer": aggregate.FEWER,
            "earliest": aggregate.EARLIEST, "latest": aggregate.LATEST}


@dataclass
class Plan:
    """What a whole-graph question asks: the record's ``aggregate`` is computed from it."""

    op: str  # count, more, fewer, earliest, latest, or list (the elements, for an absence)
    counted: str  # the type whose nodes (or, the document type, whose documents) are counted
    group: str | None  # a ranking's type, one group per node (per document for the document type)
    relations: list[str]  # the relations read ([]: any)
    absent: bool  # the elements of the whole graph with no statement of the relations

    def measure(self, vocab: Vocabulary) -> str:
        return "documents" if self.counted == vocab.document_type else "nodes"


def plan(question: str, operation: str | None, vocab: Vocabulary) -> Plan | None:
    """The plan of a question that names no node, or None when its words do not give one
    (a question of no operation, no type of the domain, or a threshold such as "more than two")."""
    absent = bool(ABSENT.search(question))
    op = operation or ("list" if absent else None)
    if op is None or (op in ("more", "fewer") and THRESHOLD.search(question)):
        return None
    hits = vocab.read(question)
    types = list(dict.fromkeys(h.term.name for h in hits if h.term.kind == "type"))
    if not types:
        return None
    at = OP_WORDS[op].search(question).start() if op in OP_WORDS else 0  # type: ignore[union-attr]
    after = [h for h in hits if h.term.kind == "type" and h.start >= at]
    before = [h for h in hits if h.term.kind == "type" and h.start < at]
    if op in ("more", "fewer"):
        group_hit = before[0] if before else None
        counted_hit = next((h for h in after if not group_hit or h.term.name != group_hit.term.name), None)
    else:
        group_hit, counted_hit = None, (after or before)[0]
    group = group_hit.term.name if group_hit else None
    relations = _relations(hits, [h for h in (group_hit, counted_hit) if h], vocab)
    counted = counted_hit.term.name if counted_hit else _other_end(relations, group, vocab)
    if counted is None or counted == group or (op in ("more", "fewer") and group is None):
        return None  # a ranking needs what it ranks ("which has more contracts?" ranks nothing)
    if not relations and (group or counted != vocab.document_type):
        relations = vocab.connecting(counted, group)  # what the domain declares between them (or at counted)
    result = Plan(op, counted, group, relations, absent)
    return result if _answerable(result, vocab) else None


def _relations(hits: list[Hit], types: list[Hit], vocab: Vocabulary) -> list[str]:
    """The relations the question names, outside the words of the types it counts or groups
    by ("the most parties" counts parties; it does not restrict them to HAS_PARTY)."""
    own = [(h.start, h.end) for h in types]
    named = {h.term.name for h in hits if h.term.kind == "relation" and not any(s <= h.start < e for s, e in own)}
    return sorted(r for r in named if any(vocab.role(r, h.term.name) for h in types))


def _other_end(relations: list[str], group: str | None, vocab: Vocabulary) -> str | None:
    """The type at a relation's other end from ``group`` (what a ranking counts, when the
    question names only the group: "which jurisdiction governs the most?")."""
    for r in relations:
        heads, tails = vocab.ends.get(r, ([], []))
        if group in heads and tails:
            return tails[0]
        if group in tails and heads:
            return heads[0]
    return None


def _answerable(p: Plan, vocab: Vocabulary) -> bool:
    """A plan the operators can answer: an absence, a date or a document count is over the
    domain's documents; a ranking needs a relation between its group and what it counts."""
    if (p.absent or p.op in aggregate.DATED) and p.counted != vocab.document_type:
        return False
    if p.absent and not p.relations:
        return False
    if p.group is not None:
        return bool(p.relations) and all(vocab.role(r, t) or t == vocab.document_type
                                         for r in p.relations for t in (p.group, p.counted))
    return p.counted == vocab.document_type or not p.relations or any(vocab.role(r, p.counted)
                                                                       for r in p.relations)


def patterns(p: Plan, vocab: Vocabulary) -> list[str]:
    """The match patterns that read the plan's statements."""
    if p.measure(vocab) == "documents":
        return [f"* -{'|'.join(p.relations)}-> *" if p.relations else f"{vocab.document_type} -*-> *"]
    out = []
    for role in ("tail", "head"):
        rels = [r for r in p.relations if vocab.role(r, p.counted) == role]
        if rels:
            out.append(f"* -{'|'.join(rels)}-> {p.counted}" if role == "tail" else f"{p.counted} -{'|'.join(rels)}-> *")
    return out


def groups(evidence: list[EvidenceItem], p: Plan, vocab: Vocabulary) -> dict[str, dict[str, list[str]]]:
    """Group -> counted element -> the statements giving it, from the statements read: the
    counted nodes at the end the domain declares their type at (or the documents), grouped by
    the group type's end (or by document; one group, ``answer``, without a ranking)."""
    out: dict[str, dict[str, list[str]]] = {}
    documents = p.measure(vocab) == "documents"
    for e in evidence:
        if e.source != "graph" or (p.relations and e.relation not in p.relations):
            continue
        role = None if documents else vocab.role(e.relation, p.counted)
        elements = e.documents if documents else e.ends.get(role or "", [])
        by = vocab.role(e.relation, p.group) if p.group and p.group != vocab.document_type else None
        keys = [aggregate.ANSWER] if p.group is None else e.documents if by is None else e.ends.get(by, [])
        for key in keys:
            for element in elements:
                if element != key:
                    out.setdefault(key, {}).setdefault(element, [])
                    if e.id not in out[key][element]:
                        out[key][element].append(e.id)
    return out


def first_per_document(items) -> dict[str, str]:
    """Document -> one statement id of it: what shows that a document of the whole graph is there."""
    seen: dict[str, str] = {}
    for item in items:
        for ev in item.evidence:
            seen.setdefault(ev.document, item.id)
    return seen
