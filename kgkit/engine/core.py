"""The core stage: one canonical skeleton per document, built once and shared by every view.

Pass 1 asks each chunk for typed entities; :func:`kgkit.canon.merge.merge_entities` merges the
mentions across chunks into V_doc. Pass 2 asks each chunk for strictly binary relations
among V_doc — the prompt lists the nodes its chunk mentions or names and a bounded set that
stands for the document (``limits.document_entities``: the opening chunk's, then the most
mentioned), so it does not grow with the document — and
keeps only those whose relation is declared (aliases normalised), whose ends are V_doc nodes
and whose types the relation allows. Every reject is counted by reason and written for review; nothing is dropped
without a trace. A domain that binds relations to kinds of section, or materialises some from
the layout (module E of ``scholarly``), asks each chunk only for the relations its section
allows (:meth:`Domain.for_section`), rejects the others an answer gives anyway
(``section_not_allowed``, ``structural_relation``) and tags each edge with its relation's kind.
"""
from __future__ import annotations

import heapq
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Iterable

from kgkit.canon.records import Mention
from kgkit import ids
from kgkit.backends.base import ENTITIES, RELATIONS, PassRequest
from kgkit.backends.contexts import EntitiesContext, RelationsContext
from kgkit.config.model import CanonConfig, LimitsConfig, ReviewConfig
from kgkit.documents.sections import headings_at
from kgkit.documents.types import Chunk, Document
from kgkit.formats.model import STRUCTURAL, Domain, RelationType
from kgkit.engine.document_node import document_resolver, mark_document_node

if TYPE_CHECKING:
    from kgkit.canon.result import CanonResult
    from kgkit.modes.base import Skeleton

REJECT_REASONS = ("unknown_head", "unknown_tail", "type_not_allowed", "unknown_relation")

_EVIDENCE = {"evidence": {"type": "string"}, "confidence": {"type": "number", "minimum": 0, "maximum": 1}}
ENTITIES_SCHEMA = {
    "type": "object",
    "required": ["entities"],
    "properties": {"entities": {"type": "array", "items": {
        "type": "object", "required": ["name", "type"],
        "properties": {"name": {"type": "string", "minLength": 1}, "type": {"type": "string"}, **_EVIDENCE},
    }}},
}
RELATIONS_SCHEMA = {
    "type": "object",
    "required": ["relations"],
    "properties": {"relations": {"type": "array", "items": {
        "type": "object", "required": ["head", "relation", "tail"],
        "properties": {"head": {"type": "string"}, "relation": {"type": "string"}, "tail": {"type": "string"},
                       **_EVIDENCE},
    }}},
}

# The answers to a stage's passes, in order (None: the pass failed, recorded by the runner);
# they may run at once (:meth:`kgkit.engine.passes.PassRunner.run_all`).
RunPasses = Callable[["list[PassRequest]"], "Iterable[dict[str, Any] | None]"]


@dataclass
class CoreSettings:
    """What the core passes and the merge read of the configuration (defaults: kgkit/config/model.py)."""

    fuzzy_threshold: float = CanonConfig.fuzzy_threshold
    legal_suffixes: bool = CanonConfig.legal_suffixes
    block_cap: int | None = CanonConfig.block_cap
    evidence_threshold: float = ReviewConfig.evidence_threshold
    confidence_threshold: float = ReviewConfig.confidence_threshold
    admit_unverified: bool = ReviewConfig.admit_unverified  # keep unverified items, marked
    prompts: dict[str, str] = field(default_factory=dict)  # stage -> template override
    document_entities: int = LimitsConfig.document_entities  # nodes in every relation prompt (document_level)
    skills: list[dict[str, Any]] = field(default_factory=list)


@dataclass
class CoreResult:
    skeleton: Skeleton
    review: list[dict[str, Any]]
    rejects: dict[str, int]  # by reason
    held: dict[str, dict[str, int]]  # stage -> reason -> items kept out of the graph
    merges: list[dict[str, Any]]


def entity_request(chunk: Chunk, domain: Domain, settings: CoreSettings, title: str | None) -> PassRequest:
    context: EntitiesContext = {"domain": domain, "skills": settings.skills, "title": title}
    return PassRequest(kind=ENTITIES, stage="entities", chunk=chunk, schema=ENTITIES_SCHEMA, context=context,
                       prompt=settings.prompts.get("entities", "entities.j2"))


def prompt_nodes(chunk: Chunk, skeleton: Skeleton, document: set[str]) -> list[dict[str, Any]]:
    """The nodes a relation pass on ``chunk`` is told about, in V_doc's order and as the
    prompt lists them (:meth:`Skeleton.prompt_rows`): those its chunk mentions or names
    (:meth:`Skeleton.part_for`) and the ``document`` ones (the parties, the agreement:
    :func:`document_level`), so tokens per call stay bounded however long the document is."""
    return skeleton.prompt_rows(skeleton.node_positions(chunk, document))


def document_level(nodes: list[dict[str, Any]], opening: str, n: int) -> set[str]:
    """Ids of ``n`` nodes that stand for the whole document: those its opening chunk names
    first (a contract's preamble names the agreement and its parties, a paper's its title
    and authors), then the most mentioned (ties: V_doc's order)."""
    named_first = {i for i, node in enumerate(nodes) for m in node.get("mentions", ()) if m.get("chunk") == opening}
    ranked = heapq.nsmallest(n, range(len(nodes)), key=lambda i: (
        i not in named_first, -len(nodes[i].get("mentions", ())), i))
    return {nodes[i]["id"] for i in ranked}


def relation_request(chunk: Chunk, domain: Domain, settings: CoreSettings, title: str | None,
                     entities: list[dict[str, Any]]) -> PassRequest:
    """The relation pass on ``chunk``, told of ``entities`` (:func:`prompt_nodes`)."""
    context: RelationsContext = {"domain": domain, "entities": entities, "skills": settings.skills, "title": title}
    return PassRequest(kind=RELATIONS, stage="relations", chunk=chunk, schema=RELATIONS_SCHEMA, context=context,
                       prompt=settings.prompts.get("relations", "relations.j2"))


def mentions_from(answer: dict[str, Any], doc: Document, chunk: Chunk, settings: CoreSettings, review: list,
                  held: dict[str, int] | None = None,
                  categories: frozenset[str] = frozenset()) -> tuple[list[Mention], list[Mention]]:
    """Pass-1 answer -> (mentions located in the chunk, the unverified ones among them).

    Types are checked by the merge.

    A mention's span is the name's own characters (:meth:`Locator.mention`); one whose
    evidence or name is not in the chunk is held back and never reaches the merge, so no
    node, view or later prompt carries it (unless ``admit_unverified``: then it is also in
    the second list, so its node can be marked). Keys beyond the pass schema's, such as
    the offline backend's ``aliases``, are not read: the merge finds aliases in the text
    itself (docs/design.md, "Pass answers").
    """
    from kgkit.modes.base import Locator  # with the first answers: start-up sends sooner

    locate = Locator(doc, chunk, "entities", settings.evidence_threshold, settings.confidence_threshold, review,
                     held, settings.admit_unverified, categories)
    mentions, unverified = [], []
    for raw in answer.get("entities", []):
        if not raw["name"].strip():  # no name at all: the merge rejects it as an invalid entity
            mentions.append(Mention(name=raw["name"], type=raw["type"], chunk_id=chunk.id))
            continue
        where, verified = locate.mention(raw, raw["name"], raw.get("evidence") or raw["name"])
        if where is None:
            continue
        mention = Mention(
            name=raw["name"], type=raw["type"], chunk_id=chunk.id,
            span=tuple(where["span"]) if where["span"] else None, page=where["page"], evidence=where["quote"],
            confidence=raw.get("confidence"),
        )
        mentions.append(mention)
        if not verified:
            unverified.append(mention)
    return mentions, unverified


def edges_from(answer: dict[str, Any], doc: Document, chunk: Chunk, domain: Domain, settings: CoreSettings,
               skeleton: Skeleton, review: list, rejects: dict[str, int],
               held: dict[str, int] | None = None, asked: Domain | None = None) -> list[dict[str, Any]]:
    """Pass-2 answer -> edges among V_doc; rejects counted by reason and kept for review,
    edges whose quote is not in the chunk held back (see :class:`Locator`). ``asked`` is the
    domain as the chunk's pass saw it (:func:`chunk_domain`): a relation it left out is
    rejected."""
    from kgkit.modes.base import Locator, resolve_ends  # with the first answers: start-up sends sooner

    locate = Locator(doc, chunk, "relations", settings.evidence_threshold, settings.confidence_threshold, review,
                     held, settings.admit_unverified)
    edges = []

    def reject(reason: str, raw: dict[str, Any], detail: str) -> None:
        rejects[reason] = rejects.get(reason, 0) + 1
        review.append({"stage": "relations", "chunk": chunk.id, "item": raw, "reason": f"{reason}: {detail}"})

    for raw in answer.get("relations", []):
        relation = domain.relation_type(raw["relation"])
        if relation is None:
            reject("unknown_relation", raw, f"{raw['relation']!r} is not a relation of {domain.name}")
            continue
        if asked is not None and asked is not domain and asked.relation_type(relation.name) is None:
            reason, why = _not_asked(relation)
            reject(reason, raw, f"{relation.name} {why}")
            continue
        head, tail, problem = resolve_ends(relation, raw, skeleton)
        if problem:
            reject(problem[0], raw, problem[1])
            continue
        assert head is not None and tail is not None  # no problem: both ends are nodes
        evidence, verified = locate(raw, raw.get("evidence"))
        if evidence is None:
            continue
        edges.append({"id": ids.edge_id(head, relation.name, tail), "head": head, "relation": relation.name,
                      "tail": tail, "evidence": evidence, "verified": verified,
                      "confidence": raw.get("confidence"), **({"kind": relation.kind} if relation.kind else {})})
    return edges


def _not_asked(relation: RelationType) -> tuple[str, str]:
    """Why a pass was not asked for ``relation``: the reason code and what it means."""
    if relation.kind == STRUCTURAL:
        return "structural_relation", "is materialised from the layout, not read from text"
    return "section_not_allowed", f"is read only in sections of kind {', '.join(relation.sections)}"


def chunk_domain(domain: Domain, doc: Document) -> Callable[[Chunk], Domain]:
    """The domain each chunk's relation pass sees: for a domain with relations bound to
    sections or materialised from the layout, only those the chunk's section allows
    (:meth:`Domain.for_section`); else the domain itself."""
    if not domain.scoped:
        return lambda chunk: domain
    headings = headings_at(doc)
    return lambda chunk: domain.for_section(domain.kinds_of(headings(chunk.start)))


def _better(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether edge ``a`` is better supported than ``b`` (verified first, then confidence)."""
    conf = lambda e: e["confidence"] if e["confidence"] is not None else 1.0  # noqa: E731
    return (a["verified"], conf(a)) > (b["verified"], conf(b))


@dataclass
class _Tally:
    """What the core's stages keep for review as they go: items, rejects by reason, held items."""

    review: list[dict[str, Any]] = field(default_factory=list)
    rejects: dict[str, int] = field(default_factory=lambda: {reason: 0 for reason in REJECT_REASONS})
    held: dict[str, dict[str, int]] = field(default_factory=lambda: {"entities": {}, "relations": {}})

    def checked(self, answer: dict[str, Any] | None, stage: str, schema: dict[str, Any],
                chunk: Chunk) -> dict[str, Any] | None:
        """The answer if it has the pass's shape; else None, counted and kept for review."""
        from kgkit.modes.base import validate_answer

        problem = None if answer is None else validate_answer(answer, schema)
        if problem:
            self.rejects["invalid_answer"] = self.rejects.get("invalid_answer", 0) + 1
            self.review.append({"stage": stage, "chunk": chunk.id, "item": answer,
                                "reason": f"invalid_answer: {problem}"})
            return None
        return answer


Progress = Callable[[str, int, int], None]


def run_core(doc: Document, chunks: list[Chunk], domain: Domain, run_passes: RunPasses,
             settings: CoreSettings, progress: Progress | None = None,
             skip: Callable[[str, int], None] | None = None) -> CoreResult:
    """Pass 1 on every chunk, merge into V_doc, pass 2 on every chunk: the skeleton.

    With no entity in V_doc there is nothing a relation could join, so pass 2 is not sent:
    ``skip("relations", n)`` counts it instead. Each stage is its own function, in the order
    the review file lists what they keep: pass 1's, the merge's, pass 2's."""
    tally = _Tally()
    mentions, unverified = _entity_pass(doc, chunks, domain, run_passes, settings, progress, tally)
    from kgkit.canon.merge import merge_entities  # imported once pass 1 is in: the first request goes out sooner

    merged = merge_entities(mentions, domain, threshold=settings.fuzzy_threshold,
                                  legal_suffixes=settings.legal_suffixes, text=doc.text, block_cap=settings.block_cap)
    _review_merge(merged, tally)
    skeleton, own = _skeleton(doc, chunks, domain, settings, merged, unverified)
    if not skeleton.nodes and skip:
        skip("relations", len(chunks))
    edges = _relation_pass(doc, chunks, domain, run_passes, settings, progress, tally, skeleton, own)
    merges = [m.to_dict() for m in merged.merges]
    skeleton.edges = list(edges.values())
    return CoreResult(skeleton=skeleton, review=tally.review, rejects=tally.rejects, held=tally.held, merges=merges)


def _entity_pass(doc: Document, chunks: list[Chunk], domain: Domain, run_passes: RunPasses, settings: CoreSettings,
                 progress: Progress | None, tally: _Tally) -> tuple[list[Mention], set[Mention]]:
    """Pass 1: every chunk's mentions, and those whose evidence was not found in the chunk."""
    mentions: list[Mention] = []
    unverified: set[Mention] = set()
    categories = frozenset(t.name for t in domain.entity_types if t.category)
    answers = run_passes([entity_request(chunk, domain, settings, doc.title) for chunk in chunks])
    for i, (chunk, answer) in enumerate(zip(chunks, answers)):
        answer = tally.checked(answer, "entities", ENTITIES_SCHEMA, chunk)
        if answer is not None:
            found, doubtful = mentions_from(answer, doc, chunk, settings, tally.review, tally.held["entities"],
                                            categories)
            mentions += found
            unverified.update(doubtful)
        if progress:
            progress("entities", i + 1, len(chunks))
    return mentions, unverified


def _review_merge(merged: CanonResult, tally: _Tally) -> None:
    """The merge's rejected mentions and ambiguous aliases, counted and kept for review."""
    for rejection in merged.rejected:
        m, code = rejection.mention, rejection.code
        tally.rejects[code] = tally.rejects.get(code, 0) + 1
        tally.review.append({"stage": "entities", "chunk": m.chunk_id, "item": {"name": m.name, "type": m.type},
                             "reason": f"{code}: {rejection.reason}"})
    for ambiguity in merged.ambiguous:
        tally.review.append({"stage": "entities", "chunk": None,
                             "item": {"alias": ambiguity.alias, "type": ambiguity.type,
                                      "claimants": list(ambiguity.claimants)},
                             "reason": "ambiguous alias: claimed by more than one entity, so it merged nothing"})


def _skeleton(doc: Document, chunks: list[Chunk], domain: Domain, settings: CoreSettings, merged: CanonResult,
              unverified: set[Mention]) -> tuple[Skeleton, dict[str, Any] | None]:
    """V_doc's nodes (unverified where no mention of a node was), the document's own node,
    and the resolver pass 2 names its ends with; no edges yet."""
    nodes = [{**node.to_dict(), "origin": "core",
              **({"verified": False} if all(m in unverified for m in node.mentions) else {})}
             for node in merged.nodes]

    own = mark_document_node(nodes, domain, doc, chunks[0].end if chunks else 0, settings.legal_suffixes)

    def by_name(name: str, type_: str | None) -> str | None:
        found = merged.resolve(name, type_)
        return found.id if found else None

    resolve = document_resolver(by_name, own, settings.legal_suffixes)
    from kgkit.modes.base import Skeleton

    skeleton = Skeleton(doc_id=doc.id, nodes=nodes, edges=[], resolve=resolve,
                        candidates=lambda name: [n.id for n in merged.resolve_all(name)],
                        legal_suffixes=settings.legal_suffixes)
    return skeleton, own


def _relation_pass(doc: Document, chunks: list[Chunk], domain: Domain, run_passes: RunPasses, settings: CoreSettings,
                   progress: Progress | None, tally: _Tally, skeleton: Skeleton,
                   own: dict[str, Any] | None) -> dict[str, dict[str, Any]]:
    """Pass 2 (not sent when V_doc is empty): edges by id, the better supported kept of two
    answers for one edge."""
    edges: dict[str, dict[str, Any]] = {}
    nodes = skeleton.nodes
    document = document_level(nodes, chunks[0].id if chunks else "", settings.document_entities)
    if own is not None:
        document.add(own["id"])
    seen_by = chunk_domain(domain, doc)
    asked = [seen_by(chunk) for chunk in chunks]
    answers = run_passes([relation_request(chunk, seen, settings, doc.title, prompt_nodes(chunk, skeleton, document))
                          for chunk, seen in zip(chunks, asked)]) if nodes else ()
    for i, (chunk, answer) in enumerate(zip(chunks, answers)):
        answer = tally.checked(answer, "relations", RELATIONS_SCHEMA, chunk)
        if answer is not None:
            for edge in edges_from(answer, doc, chunk, domain, settings, skeleton, tally.review, tally.rejects,
                                   tally.held["relations"], asked[i]):
                if edge["id"] not in edges or _better(edge, edges[edge["id"]]):
                    edges[edge["id"]] = edge
        if progress:
            progress("relations", i + 1, len(chunks))
    return edges
