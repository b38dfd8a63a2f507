"""What ``kgkit ask`` answers: one record an agent can replay or audit.

The record keeps apart what was found (``evidence``: graph statements and text passages,
each labelled by its source and carrying its documents, pages and quotes), what was said
(``answer`` and the ``claims`` behind it, each citing evidence ids) and what was checked
(``checks``: the verifier's outcome per stated relation). ``route`` says how the question
was read, ``version`` which graph version answered, ``trace`` each step with its timing.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from kgkit.engine.accounting import answer_counts

# status: answered; no_seed (nothing in the question resolves, nothing in the text matches);
# insufficient_evidence (the draft stated what the evidence does not support, twice, or the
# evidence holds no answer); timeout (ask.deadline ran out: what was found by then is kept)
STATUSES = ("answered", "no_seed", "insufficient_evidence", "timeout")
KINDS = ("lookup", "relation", "multi_hop", "aggregate", "text")  # how a question is routed


@dataclass(frozen=True)
class Source:
    """Where an evidence item is stated: a document (its store name), a page and a quote."""

    document: str
    page: int | None
    quote: str | None


@dataclass
class EvidenceItem:
    """One statement of the graph (``source`` "graph") or one passage found by text (``text``).

    ``id`` is the store's id of the statement, so a citation can be looked up again;
    ``ends`` maps each role (``head``/``tail`` for a binary edge) to node names.
    """

    id: str
    source: str  # "graph" | "text"
    relation: str
    ends: dict[str, list[str]]
    sources: list[Source] = field(default_factory=list)

    @property
    def documents(self) -> list[str]:
        return sorted({s.document for s in self.sources})


@dataclass
class Claim:
    """One relation the answer states, with the evidence ids it cites."""

    head: str
    relation: str
    tail: str
    evidence: list[str]


@dataclass
class Check:
    """The verifier's outcome for one claim (or one answer element no claim supports)."""

    claim: int | None  # index into claims; None for an answer element
    supported: bool
    reason: str


@dataclass
class Route:
    kind: str  # one of KINDS
    source: str  # "rules" | "model" | "rules (model failed: ...)"
    mentions: list[str] = field(default_factory=list)
    seeds: list[dict[str, Any]] = field(default_factory=list)  # {"mention", "id", "name", "type", "score"}
    named: str | None = None  # the named query answering it, when one fits
    params: dict[str, str] = field(default_factory=dict)
    path: str = "full"  # "named" | "full" | "corpus" (an aggregate over the whole graph)
    operation: str | None = None  # an aggregate's: count, more, fewer, earliest, latest, list (kgkit.ask.aggregate)
    also: list[dict[str, str]] = field(default_factory=list)  # the named query's other bindings ("X and Y")
    combine: str | None = None  # how the bindings' answers join: "all" (intersection) or "any" (union)


@dataclass
class Step:
    step: str
    seconds: float
    detail: dict[str, Any] = field(default_factory=dict)


@dataclass
class AskRecord:
    question: str
    status: str
    tenant: str
    version: int
    route: Route
    answer: list[str] = field(default_factory=list)  # node names, document names, or a count
    answer_type: str = "nodes"  # "nodes" | "documents" | "count"
    text: str = ""
    cites: dict[str, list[str]] = field(default_factory=dict)  # answer element -> the evidence ids it cites
    claims: list[Claim] = field(default_factory=list)
    evidence: list[EvidenceItem] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    verified: bool = False
    sent_back: bool = False  # the first draft failed verification and was sent back once
    reasoner: str = "offline"  # "offline" or the model's name
    aggregate: Any = None  # kgkit.ask.aggregate.Aggregate: what was counted or dated, citing what
    note: str | None = None
    trace: list[Step] = field(default_factory=list)
    # what became of the model's answers (route and reason requests), counted as an extraction
    # run's manifest counts them: kgkit.engine.accounting.ANSWER_COUNTS (all 0 offline)
    answers: dict[str, int] = field(default_factory=answer_counts)

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        for item, raw in zip(self.evidence, data["evidence"]):
            raw["documents"] = item.documents
        return data

    def cited(self) -> list[EvidenceItem]:
        """The evidence items a claim or an answer element cites, in evidence order."""
        ids = {e for c in self.claims for e in c.evidence} | {e for es in self.cites.values() for e in es}
        return [e for e in self.evidence if e.id in ids]
