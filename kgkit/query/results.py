"""What every query operator answers: typed dataclasses, serialised to the published JSON
Schema ``query`` (kgkit/schemas/query.schema.json; ``kgkit schema query`` prints it).

Every answer says where it was asked (tenant, graph version), what was asked, which
limits it applied and what each one cut, and whether the time budget ran out
(``partial``); every item it uses carries its evidence (document, page, quote), so a
consumer can cite without another query.
"""
from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class Evidence:
    document: str  # the document's name in the store (its run folder's name)
    document_id: str  # d_ id
    page: int | None
    quote: str | None
    chunk: str | None
    view: str


@dataclass
class Node:
    id: str
    type: str
    name: str
    aliases: list[str]
    documents: list[str]  # d_ ids
    degree: int  # visible statements that name it
    score: float | None = None  # find / search: how well it matched
    hops: int | None = None  # neighbours / lineage / path: distance from the nearest seed
    matched: str | None = None  # find: "key", "alias", "fuzzy" or "text"
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class Item:
    """An edge, hyperedge, event or temporal edge at entity level (ids as in a snapshot)."""

    id: str
    kind: str
    relation: str  # an event's type
    ends: dict[str, list[str]]  # role (head/tail for binary kinds) -> entity ids
    confidence: float | None
    views: list[str]
    evidence: list[Evidence] = field(default_factory=list)
    times: dict[str, dict[str, Any]] = field(default_factory=dict)  # qualifier -> {"text", "lo", "hi"}
    properties: dict[str, Any] = field(default_factory=dict)  # an edge's stored properties (CITES: intent, strength)


@dataclass(frozen=True)
class Cut:
    """One limit that left something out: which, where (a node id for a fan-out cap), how much."""

    limit: str
    dropped: int
    at: str | None = None


@dataclass
class Row:
    """One match of a pattern: a node per node position, an item per edge position."""

    nodes: list[str]
    items: list[str]
    documents: list[str]  # d_ ids of the documents that state the whole match (every item of it)


@dataclass
class Hit:
    """One search result after owner reduction: the owner and its best-ranked evidence."""

    id: str
    kind: str  # document, entity, hyperedge, event, ...
    name: str
    score: float
    via: list[dict[str, Any]]  # the children that ranked it: {"id", "kind", "type", "name", "rank", "list"}
    evidence: list[Evidence] = field(default_factory=list)


@dataclass
class Answer:
    operator: str
    tenant: str
    version: int
    query: dict[str, Any]
    limits: dict[str, Any]
    cuts: list[Cut] = field(default_factory=list)
    partial: bool = False
    nodes: list[Node] = field(default_factory=list)
    items: list[Item] = field(default_factory=list)
    paths: list[list[str]] = field(default_factory=list)  # node ids, seed first
    rows: list[Row] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    report: dict[str, Any] = field(default_factory=dict)  # gaps counts, novelty scores, ...
    note: str | None = None  # what the answer cannot say (an operator waiting for data, ...)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    def cut(self, limit: str, dropped: int, at: str | None = None) -> None:
        if dropped > 0:
            self.cuts.append(Cut(limit, dropped, at))
