"""What a mode receives from the engine and the helpers every upgrade mode shares.

The engine builds one :class:`Skeleton` per document (V_doc plus the binary edges among
it). Projection modes derive a view from it alone; upgrade modes get one pass per chunk
and turn the answer into items that refer to V_doc node IDs. The rules that make every
view auditable — each item carries chunk, span, page and a checked quote; anything
unverified, low in confidence or naming an unknown node goes to the review file with its
reason — live here once, so no mode can forget them.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import jsonschema

from kgkit import evidence as evidence_check
from kgkit.name_keys import canonical_key
from kgkit.documents.types import Chunk, Document
from kgkit.schema.model import LITERAL_TYPES, Domain, RelationType, Role, View
from kgkit.timex import normalise as normalise_literal


@dataclass
class Skeleton:
    """The core result for one document: V_doc and the binary edges among it."""

    doc_id: str
    nodes: list[dict[str, Any]]  # rows of nodes.json
    edges: list[dict[str, Any]]  # {"id","head","relation","tail","evidence","verified","confidence"}
    resolve: Callable[[str, str | None], str | None]  # name (and type) -> node id in V_doc, if unique
    candidates: Callable[[str], list[str]]  # every node id a name may mean, any type
    legal_suffixes: bool = True  # the merge's setting, which node ids depend on (kgkit.ids.node_id)

    def node(self, node_id: str) -> dict[str, Any] | None:
        return self._by_id.get(node_id)

    def lookup(self, name: str, types: tuple[str, ...] = ()) -> str | None:
        """The one node ``name`` means among the allowed ``types`` ("*" or none: any).

        Types disambiguate: a defined term that the merge also saw as a Location still
        names the Party when only a Party may stand there.
        """
        typed = [t for t in types if t != "*"]
        if not typed or len(typed) < len(types):
            found = self.resolve(name, None)
            if found:
                return found
            every = self.candidates(name)
            return every[0] if len(every) == 1 else None
        hits = {self.resolve(name, t) for t in typed} - {None}
        return hits.pop() if len(hits) == 1 else None

    def __post_init__(self) -> None:
        self._by_id = {n["id"]: n for n in self.nodes}

    def part_for(self, chunk: Chunk) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The chunk's share of the skeleton, in the shape prompts read: the nodes mentioned
        in it (or named in its text) and the edges among them — wherever their evidence
        was found, since a term's dates often sit in another part than its parties."""
        text = chunk.text.lower()
        nodes = [
            {"id": n["id"], "name": n["name"], "type": n["type"], "aliases": list(n.get("aliases", ()))}
            for n in self.nodes
            if any(m["chunk"] == chunk.id for m in n.get("mentions", ()))
            or any(s.lower() in text for s in [n["name"], *n.get("aliases", ())] if s)
        ]
        present = {n["id"] for n in nodes}
        edges = [
            {"id": e["id"], "head": self._by_id[e["head"]]["name"], "relation": e["relation"],
             "tail": self._by_id[e["tail"]]["name"]}
            for e in self.edges
            if e["evidence"]["chunk"] == chunk.id or (e["head"] in present and e["tail"] in present)
        ]
        return nodes, edges


class Locator:
    """Checks quotes against one chunk. An unverified quote or a confidence under the
    threshold keeps the item but writes it to review with the reason; an item without a
    located quote gets the whole chunk as its span, so provenance is never missing."""

    def __init__(self, doc: Document, chunk: Chunk, stage: str, evidence_threshold: float,
                 confidence_threshold: float, review: list[dict[str, Any]]):
        self.doc, self.chunk, self.stage, self.review = doc, chunk, stage, review
        self.evidence_threshold, self.confidence_threshold = evidence_threshold, confidence_threshold

    def __call__(self, item: dict[str, Any], quote: str | None) -> tuple[dict[str, Any], bool]:
        chunk = self.chunk
        found = evidence_check.verify(quote, chunk.text, threshold=self.evidence_threshold)
        if not found.verified:
            self._note(item, f"unverified evidence: {found.reason or f'best match score {found.score:.0f}'}")
        span = found.span if found.verified else None
        start, end = (chunk.start + span[0], chunk.start + span[1]) if span else (chunk.start, chunk.end)
        confidence = item.get("confidence")
        if confidence is not None and confidence < self.confidence_threshold:
            self._note(item, f"low confidence ({confidence} < {self.confidence_threshold})")
        pages = self.doc.pages_for(start, end) or chunk.pages
        return {"chunk": chunk.id, "span": [start, end], "page": pages[0] if pages else None,
                "quote": quote}, found.verified

    def _note(self, item: dict[str, Any], reason: str) -> None:
        self.review.append({"stage": self.stage, "chunk": self.chunk.id, "item": item, "reason": reason})


@dataclass
class Scope:
    """Everything normalising one chunk's answer needs, and where its findings go."""

    doc: Document
    chunk: Chunk
    domain: Domain
    view: View
    skeleton: Skeleton
    evidence_threshold: float
    confidence_threshold: float
    review: list[dict[str, Any]] = field(default_factory=list)
    rejects: dict[str, int] = field(default_factory=dict)
    extra_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # diy entities by id

    def reject(self, reason: str, item: Any, detail: str) -> None:
        """Count a rejected item by reason and keep it, with why, for review."""
        self.rejects[reason] = self.rejects.get(reason, 0) + 1
        self.review.append({"stage": self.view.name, "chunk": self.chunk.id, "item": item,
                            "reason": f"{reason}: {detail}"})

    def resolve(self, name: str, types: tuple[str, ...] = ()) -> str | None:
        """A V_doc (or this view's own) node id for ``name``, honouring allowed types."""
        found = self.skeleton.lookup(name, types)
        if found:
            return found
        key = canonical_key(name, legal_suffixes=self.skeleton.legal_suffixes)  # as the view's node ids were made
        for node_id, node in self.extra_nodes.items():
            if (not types or "*" in types or node["type"] in types) and \
                    canonical_key(node["name"], legal_suffixes=self.skeleton.legal_suffixes) == key:
                return node_id
        return None

    def locate(self, item: dict[str, Any]) -> tuple[dict[str, Any], bool]:
        """Where the item's evidence is in the chunk, and whether the quote checked out."""
        return Locator(self.doc, self.chunk, self.view.name, self.evidence_threshold,
                       self.confidence_threshold, self.review)(item, item.get("evidence"))

    def filler(self, value: Any, role: Role | None) -> dict[str, Any] | None:
        """One role value: a node reference when it names a node the role admits, else a
        literal when the role takes one; None when it is neither (caller rejects)."""
        if isinstance(value, dict) and "literal" in value:
            text, kind = str(value["literal"]), value.get("type") or (role.literal if role else None) or "text"
            return literal(text, kind)
        text = str(value)
        node_id = self.resolve(text, role.types if role and role.types else ())
        if node_id:
            return {"node": node_id}
        if role is not None and role.literal:
            return literal(text, role.literal)
        return None


def literal(text: str, kind: str) -> dict[str, Any]:
    """A literal filler: original text kept, ``value`` normalised (ISO 8601 for dates)."""
    kind = kind if kind in LITERAL_TYPES else "text"
    return {"literal": text, "type": kind, "value": normalise_literal(kind, text)}


_validators: dict[int, Any] = {}  # one compiled validator per view schema, not per chunk


def validate_answer(data: Any, schema: dict[str, Any] | None) -> str | None:
    """Why ``data`` breaks the pass schema (a view's output schema, or a core pass's), or None when it conforms."""
    if schema is None:
        return None
    validator = _validators.get(id(schema))
    if validator is None or validator.schema is not schema:
        validator = _validators[id(schema)] = jsonschema.Draft202012Validator(schema)
    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path)
    return f"answer does not match the pass schema at {where or '(top)'}: {error.message}"


def fill_roles(raw: dict[str, Any], role_of: Callable[[str], Role | None], scope: Scope,
               item: dict[str, Any], declared: bool = True) -> dict[str, Any] | None:
    """Turn ``{role: name-or-literal or [..]}`` into references; None (item rejected and
    counted) when a role is undeclared or a value names no node the role admits."""
    filled: dict[str, Any] = {}
    for role_name, value in raw.items():
        if value is None or value == []:  # "not stated": the role is simply absent
            continue
        role = role_of(role_name)
        if role is None and declared:
            scope.reject("unknown_role", item, f"role {role_name!r} is not declared")
            return None
        values = value if isinstance(value, list) else [value]
        out = []
        for v in values:
            f = scope.filler(v, role)
            if f is None:
                scope.reject("unknown_node", item, f"{role_name} = {v!r} names no node of the document")
                return None
            out.append(f)
        filled[role_name] = out if isinstance(value, list) else out[0]
    return filled


def resolve_ends(relation: RelationType, raw: dict[str, Any],
                 skeleton: Skeleton) -> tuple[str, str, None] | tuple[None, None, tuple[str, str]]:
    """Head and tail node ids of a binary relation item, or the reject reason and why.

    Returns ``(head, tail, None)`` or ``(None, None, (reason, detail))`` with reason
    ``unknown_head`` / ``unknown_tail`` (no node of that name) or ``type_not_allowed``
    (the name is known, but not as a type the relation admits at that end). The ends of
    a symmetric relation come back in id order, so a statement has one edge (and one id)
    whichever way it was read.
    """
    ends = relation.head + relation.tail if relation.symmetric else None
    head = skeleton.lookup(raw["head"], ends or relation.head)
    tail = skeleton.lookup(raw["tail"], ends or relation.tail)
    if head is None and not skeleton.candidates(raw["head"]):
        return None, None, ("unknown_head", f"{raw['head']!r} is not an entity of the document")
    if tail is None and not skeleton.candidates(raw["tail"]):
        return None, None, ("unknown_tail", f"{raw['tail']!r} is not an entity of the document")
    if head is None or tail is None or not relation.allows(skeleton.node(head)["type"], skeleton.node(tail)["type"]):
        def kind(name: str, found: str | None) -> str:
            if found:
                return skeleton.node(found)["type"]
            return "/".join(sorted({skeleton.node(c)["type"] for c in skeleton.candidates(name)}))

        return None, None, ("type_not_allowed",
                            f"{relation.name} does not allow {kind(raw['head'], head)} -> {kind(raw['tail'], tail)}")
    if relation.symmetric and tail < head:
        head, tail = tail, head
    return head, tail, None
