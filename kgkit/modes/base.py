"""What a mode receives from the engine and the helpers every upgrade mode shares.

The engine builds one :class:`Skeleton` per document (V_doc plus the binary edges among
it). Projection modes derive a view from it alone; upgrade modes get one pass per chunk
and turn the answer into items that refer to V_doc node IDs. The rules that make every
view auditable — each item carries chunk, span, page and a checked quote; an item whose
quote is not in the text is held back (review file only), one low in confidence or
naming an unknown node goes to the review file with its reason — live here once, so no
mode can forget them.
"""
from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable

from kgkit.text import evidence as evidence_check
from kgkit.backends.base import pass_validator, surely_conforms
from kgkit.modes.chunk_parts import ChunkParts
from kgkit.text.name_keys import canonical_key
from kgkit.text.place_adjectives import adjectives_of
from kgkit.documents.types import Chunk, Document
from kgkit.formats.model import LITERAL_TYPES, Domain, RelationType, Role, View
from kgkit.text.timex import normalise as normalise_literal


def _remembered(store: dict, key: Any, make: Callable[[], Any]) -> Any:
    """``store[key]``, made by ``make()`` the first time it is asked for (None is an answer too)."""
    try:
        return store[key]
    except KeyError:
        found = store[key] = make()
        return found


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

    def type_of(self, node_id: str) -> str:
        """The type of a node of this skeleton (an id ``lookup`` or ``meanings`` gave)."""
        return self._by_id[node_id]["type"]

    def lookup(self, name: str, types: tuple[str, ...] = ()) -> str | None:
        """The one node ``name`` means among the allowed ``types`` ("*" or none: any).

        Types disambiguate: a defined term that the merge also saw as a Location still
        names the Party when only a Party may stand there.
        """
        types = tuple(types)
        return _remembered(self._looked_up, (name, types), lambda: self._lookup(name, types))

    def _lookup(self, name: str, types: tuple[str, ...]) -> str | None:
        typed = [t for t in types if t != "*"]
        if not typed or len(typed) < len(types):
            found = self._resolve(name, None)
            if found:
                return found
            every = self.meanings(name)
            return every[0] if len(every) == 1 else None
        hits = {self._resolve(name, t) for t in typed} - {None}
        return hits.pop() if len(hits) == 1 else None

    def _resolve(self, name: str, type_: str | None) -> str | None:
        return _remembered(self._resolved, (name, type_), lambda: self.resolve(name, type_))

    def meanings(self, name: str) -> list[str]:
        """``candidates(name)``: every node id ``name`` may mean (read it, do not change it)."""
        return _remembered(self._meanings, name, lambda: self.candidates(name))

    def __post_init__(self) -> None:
        self._by_id = {n["id"]: n for n in self.nodes}
        # ``resolve`` and ``candidates`` answer from the finished merge, so each name is
        # resolved once per skeleton however many chunks, relation ends and views ask for
        # it (a fuzzy lookup screens every node name of its type)
        self._looked_up: dict[tuple[str, tuple[str, ...]], str | None] = {}
        self._resolved: dict[tuple[str, str | None], str | None] = {}
        self._meanings: dict[str, list[str]] = {}

    def _parts(self) -> ChunkParts:
        """The chunk indexes of the current nodes and edges (built again, and what was made
        from them forgotten, when either list changes)."""
        key = (id(self.nodes), len(self.nodes), id(self.edges), len(self.edges))
        if getattr(self, "_parts_key", None) != key:
            self._parts_index, self._parts_key = ChunkParts(self.nodes, self.edges), key
            self._rows: list[dict[str, Any]] | None = None
            self._chunk_parts: dict[tuple[str, str], tuple[list[dict[str, Any]], list[dict[str, Any]]]] = {}
        return self._parts_index

    def part_for(self, chunk: Chunk) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The chunk's share of the skeleton, in the shape prompts read: the nodes mentioned
        in it (or named in its text) and the edges among them — wherever their evidence
        was found, since a term's dates often sit in another part than its parties.

        Built once per chunk (every upgrade view asks for it): the lists are new, the
        rows in them shared, so read the rows, do not change them."""
        parts = self._parts()
        key = (chunk.id, chunk.text)
        found = self._chunk_parts.get(key)
        if found is None:
            nodes = self.prompt_rows(parts.node_positions(chunk.id, chunk.text, every_chunk=False))
            present = {n["id"] for n in nodes}
            edges = [
                {"id": e["id"], "head": self._by_id[e["head"]]["name"], "relation": e["relation"],
                 "tail": self._by_id[e["tail"]]["name"]}
                for e in map(self.edges.__getitem__, parts.edge_positions(chunk.id, present))
            ]
            found = self._chunk_parts[key] = (nodes, edges)
        return list(found[0]), list(found[1])

    def prompt_rows(self, positions: Iterable[int]) -> list[dict[str, Any]]:
        """The nodes at ``positions`` as prompts list them (id, name, type, aliases), each row
        made once per skeleton and shared by every prompt that lists its node: read it, do
        not change it."""
        self._parts()  # the rows of the current nodes
        if self._rows is None:
            self._rows = [{"id": n["id"], "name": n["name"], "type": n["type"], "aliases": list(n.get("aliases", ())),
                           **({"document": True} if n.get("document") else {})}
                          for n in self.nodes]
        rows = self._rows
        return [rows[i] for i in positions]

    def node_positions(self, chunk: Chunk, also: Iterable[str] = ()) -> list[int]:
        """Positions in ``nodes`` of the chunk's nodes (those :meth:`part_for` gives) and of
        the nodes whose id is in ``also``, in order."""
        return self._parts().node_positions(chunk.id, chunk.text, also)


class Locator:
    """Checks quotes against one chunk; the gate every item passes before it enters the graph.

    An item whose quote is not found in the chunk is held back: written to review with
    the reason, counted in ``held`` and not returned, so no view, node table or later
    prompt sees it — unless ``admit_unverified`` (config ``review.admit_unverified``)
    lets it in, marked unverified, with no span (a span is only ever where the text was
    found, never the whole chunk). A confidence under the threshold keeps the item and
    writes it to review.
    """

    def __init__(self, doc: Document, chunk: Chunk, stage: str, evidence_threshold: float,
                 confidence_threshold: float, review: list[dict[str, Any]], held: dict[str, int] | None = None,
                 admit_unverified: bool = False, categories: frozenset[str] = frozenset()):
        self.doc, self.chunk, self.stage, self.review = doc, chunk, stage, review
        self.categories = categories  # entity types named by category (EntityType.category)
        self.evidence_threshold, self.confidence_threshold = evidence_threshold, confidence_threshold
        self.held = held if held is not None else {}
        self.admit_unverified = admit_unverified

    def __call__(self, item: dict[str, Any], quote: str | None) -> tuple[dict[str, Any] | None, bool]:
        """``(evidence, verified)``; evidence is None when the item is held back."""
        chunk = self.chunk
        found = evidence_check.verify(quote, chunk.text, threshold=self.evidence_threshold)
        if not found.verified:
            why = f"unverified evidence: {found.reason or f'best match score {found.score:.0f}'}"
            if not self.admit_unverified:
                self.hold(item, "unverified_evidence", why)
                return None, False
            self._note(item, f"{why} (admitted by review.admit_unverified, marked verified: false)")
        confidence = item.get("confidence")
        if confidence is not None and confidence < self.confidence_threshold:
            self._note(item, f"low confidence ({confidence} < {self.confidence_threshold})")
        if not found.verified:
            return {"chunk": chunk.id, "span": None, "page": chunk.pages[0] if chunk.pages else None,
                    "quote": quote}, False
        span = found.span
        assert span is not None  # a verified quote has its span
        start, end = chunk.start + span[0], chunk.start + span[1]
        pages = self.doc.pages_for(start, end) or chunk.pages
        return {"chunk": chunk.id, "span": [start, end], "page": pages[0] if pages else None,
                "quote": quote}, True

    def mention(self, item: dict[str, Any], name: str, quote: str | None) -> tuple[dict[str, Any] | None, bool]:
        """Where an entity named ``name`` is, as ``(place, verified)``: the span is the name's own
        characters, inside the verified quote when it is there, else its first place in the
        chunk. A name not written in the chunk is held back like an unverified quote, except an
        entity of a category type (``EntityType.category``), whose place is its checked quote, and a
        value (an entity of a type named date, duration, money, quantity or percent) given
        normalised from a quote that checked out and shares a word with it ("5 years" for
        "five (5) years", "1998-07-01" for "7/1/98"): that one is kept, with no span; and a
        place named with what it lies in, both written in the checked quote ("Ontario, Canada"
        for "the Province of Ontario and the federal laws of Canada"), at the place's span, or a
        place named by its adjective in the checked quote ("England" for "governed by English
        law"), at the adjective's."""
        place, verified = self(item, quote)
        if place is None:
            return None, False
        chunk, at = self.chunk, None
        if place["span"] is not None:
            start, end = place["span"]
            at = [(start + s, start + e) for s, e in evidence_check.locate_mention(name, self.doc.text[start:end])]
        if not at:
            at = [(chunk.start + s, chunk.start + e) for s, e in evidence_check.locate_mention(name, chunk.text)]
        if not at and verified and place["span"] is not None:
            at = self._place_within(name, *place["span"]) or self._place_by_adjective(name, *place["span"])
        if not at and verified and item.get("type") in self.categories:
            return place, True  # "Anti-Assignment" stands where "may not assign" was found
        if not at:
            is_value = str(item.get("type", "")).casefold() in _VALUE_TYPES
            if verified and is_value and _shares_a_word(name, place["quote"]):
                return {**place, "span": None}, True  # a name normalised from its checked quote ("5 years")
            if not self.admit_unverified:
                self.hold(item, "name_not_in_text", f"{name!r} does not occur in the chunk")
                return None, False
            self._note(item, "name not in the chunk (admitted by review.admit_unverified, marked verified: false)")
            return {**place, "span": None}, False
        pages = self.doc.pages_for(*at[0]) or chunk.pages
        return {**place, "span": list(at[0]), "page": pages[0] if pages else None}, verified

    def _place_within(self, name: str, start: int, end: int) -> list[tuple[int, int]]:
        """Where "Ontario, Canada" stands in a checked quote that writes its two parts apart
        ("the laws of the Province of Ontario and the federal laws of Canada"): the place's
        own span, when the quote writes both the place and what it lies in; else nothing."""
        parts = [p.strip() for p in name.split(",")]
        if len(parts) != 2 or not all(parts):
            return []
        quote = self.doc.text[start:end]
        spans = [evidence_check.locate_mention(p, quote) for p in parts]
        if not all(spans):
            return []
        return [(start + s, start + e) for s, e in spans[0]]

    def _place_by_adjective(self, name: str, start: int, end: int) -> list[tuple[int, int]]:
        """Where "England" stands in a checked quote that names it by its adjective ("governed
        by English law"): the adjective's span; else nothing."""
        adjectives = adjectives_of(name)
        if not adjectives:
            return []
        spans = evidence_check.locate_mention(adjectives[0], self.doc.text[start:end], adjectives[1:])
        return [(start + s, start + e) for s, e in spans]

    def hold(self, item: Any, reason: str, detail: str) -> None:
        """Keep ``item`` out of the graph: counted by reason and written to review with why."""
        self.held[reason] = self.held.get(reason, 0) + 1
        self._note(item, f"held back ({reason}): {detail}")

    def _note(self, item: Any, reason: str) -> None:
        self.review.append({"stage": self.stage, "chunk": self.chunk.id, "item": item, "reason": reason})


_FILLER_WORDS = frozenset({"the", "of", "and", "an", "in", "on", "to", "for", "by", "or", "at", "with"})
_NUMBER_WORDS = {w: str(n) for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen sixteen "
    "seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": "30", "forty": "40", "fifty": "50", "sixty": "60", "seventy": "70",
                      "eighty": "80", "ninety": "90", "hundred": "100"})
# entity types whose names are values a backend may give normalised ("2017-05-04" for "May 4, 2017")
_VALUE_TYPES = frozenset(t for t in LITERAL_TYPES if t not in ("text", "enum"))


def _value_words(text: str) -> set[str]:
    """The words of a value as a comparison sees them: numbers as digits without leading
    zeros (a four-digit year also as its last two), number words as digits, no plural -s."""
    out = set()
    for w in re.findall(r"[^\W_]+", text.casefold()):
        if w.isdigit():
            out.add(str(int(w)))
            if len(w) == 4:
                out.add(str(int(w[-2:])))
        elif w in _NUMBER_WORDS:
            out.add(_NUMBER_WORDS[w])
        elif len(w) > 1 and w not in _FILLER_WORDS:
            out.add(w[:-1] if len(w) > 3 and w.endswith("s") else w)
    return out


def _shares_a_word(name: str, quote: str | None) -> bool:
    """Whether a value ``name`` and its ``quote`` have a word in common, as :func:`_value_words` reads them."""
    return bool(quote) and bool(_value_words(name) & _value_words(quote or ""))


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
    held: dict[str, int] = field(default_factory=dict)  # items kept out of the view, by reason
    admit_unverified: bool = False
    extra_nodes: dict[str, dict[str, Any]] = field(default_factory=dict)  # diy entities by id

    def reject(self, reason: str, item: Any, detail: str) -> None:
        """Count a rejected item by reason and keep it, with why, for review."""
        self.rejects[reason] = self.rejects.get(reason, 0) + 1
        self.review.append({"stage": self.view.name, "chunk": self.chunk.id, "item": item,
                            "reason": f"{reason}: {detail}"})

    def resolve(self, name: str, types: tuple[str, ...] = ()) -> str | None:
        """A V_doc (or this view's own) node id for ``name``, honouring allowed types."""
        found = self.skeleton.lookup(name, types)
        if found or not self.extra_nodes:
            return found
        key = canonical_key(name, legal_suffixes=self.skeleton.legal_suffixes)  # as the view's node ids were made
        for node_id, node in self.extra_nodes.items():
            if (not types or "*" in types or node["type"] in types) and \
                    canonical_key(node["name"], legal_suffixes=self.skeleton.legal_suffixes) == key:
                return node_id
        return None

    def locator(self) -> Locator:
        return Locator(self.doc, self.chunk, self.view.name, self.evidence_threshold, self.confidence_threshold,
                       self.review, self.held, self.admit_unverified)

    def locate(self, item: dict[str, Any]) -> tuple[dict[str, Any] | None, bool]:
        """Where the item's evidence is in the chunk, and whether the quote checked out;
        evidence None: the item is held back (see :class:`Locator`)."""
        return self.locator()(item, item.get("evidence"))

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
    return {"literal": text, "type": kind, "value": normalised(kind, text)}


def normalised(kind: str, text: str) -> Any:
    """:func:`kgkit.text.timex.normalise`, read once per kind and text (the same dates and amounts
    fill roles and qualifiers in every view); a mapping value (an amount and its currency)
    comes as a copy of its own."""
    value = _normalised(kind, text)
    return dict(value) if isinstance(value, dict) else value


@functools.lru_cache(maxsize=4096)
def _normalised(kind: str, text: str) -> Any:
    return normalise_literal(kind, text)


def validate_answer(data: Any, schema: dict[str, Any] | None) -> str | None:
    """Why ``data`` breaks the pass schema (a view's output schema, or a core pass's), or None when it conforms."""
    if schema is None:
        return None
    if surely_conforms(data, schema):
        return None
    import jsonschema  # only for an answer the compiled check refused or could not judge

    validator = pass_validator(schema)
    if validator.is_valid(data):  # the usual case: cheaper than ranking an empty list of errors
        return None
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
    if head is None and not skeleton.meanings(raw["head"]):
        return None, None, ("unknown_head", f"{raw['head']!r} is not an entity of the document")
    if tail is None and not skeleton.meanings(raw["tail"]):
        return None, None, ("unknown_tail", f"{raw['tail']!r} is not an entity of the document")
    if head is None or tail is None or not relation.allows(skeleton.type_of(head), skeleton.type_of(tail)):
        def kind(name: str, found: str | None) -> str:
            if found:
                return skeleton.type_of(found)
            return "/".join(sorted({skeleton.type_of(c) for c in skeleton.meanings(name)}))

        return None, None, ("type_not_allowed",
                            f"{relation.name} does not allow {kind(raw['head'], head)} -> {kind(raw['tail'], tail)}")
    if relation.symmetric and tail < head:
        head, tail = tail, head
    return head, tail, None
