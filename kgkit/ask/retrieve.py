"""Gathering evidence, and nothing else: seeds through ``find``, statements through the
operators under their limits, passages through typed search.

Everything here goes through :class:`kgkit.query.Query`'s public operators. One seed is
answered by its neighbourhood (one hop for a lookup, two for a multi-hop question, then
step by step from the frontier, one hop at a time, up to ``query.max_hops``); two or more
by the paths that connect them first; a question with no seed by full-text passages. Graph
statements and text passages are labelled apart (``source``).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kgkit.ask.record import EvidenceItem, Source
from kgkit.ask.route import parts

STEP_HOPS = 3  # beyond this many hops a walk goes one hop at a time from the frontier


@dataclass
class Seed:
    mention: str
    nodes: list  # kgkit.query.results.Node, every node tied at the best score

    @property
    def types(self) -> set[str]:
        return {n.type for n in self.nodes}

    @property
    def documents(self) -> set[str]:
        return {d for n in self.nodes for d in n.documents}


@dataclass
class Found:
    """What retrieval gathered: evidence items, node names by id (with aliases), what was cut."""

    evidence: list[EvidenceItem] = field(default_factory=list)
    names: dict[str, tuple[str, list[str]]] = field(default_factory=dict)  # node id -> (name, aliases)
    cut: int = 0
    partial: bool = False
    cuts: list[str] = field(default_factory=list)  # the limits that left something out, for a count

    def add_answer(self, answer, source: str = "graph", only: set[str] | None = None,
                   limit: str = "query.limit") -> None:
        """``limit``: the setting an operator's ``limit`` cut stands for, named in a cut."""
        for node in answer.nodes:
            self.names.setdefault(node.id, (node.name, list(node.aliases)))
        self.partial = self.partial or answer.partial
        self.cuts += [f"{limit if c.limit == 'limit' else 'query.' + c.limit} ({c.dropped} left out)"
                      for c in answer.cuts if c.limit != "documents"]  # a node's document list, not statements
        if answer.partial:
            self.cuts.append("query.timeout (the time budget ran out)")
        have = {e.id for e in self.evidence}
        for item in answer.items:
            if item.id in have or (only is not None and item.id not in only):
                continue
            have.add(item.id)
            self.evidence.append(self.item(item, source))

    def item(self, item, source: str) -> EvidenceItem:
        ends = {role: [self.names.get(n, (n, []))[0] for n in ids] for role, ids in item.ends.items()}
        return EvidenceItem(item.id, source, item.relation, ends,
                            [Source(ev.document, ev.page, ev.quote) for ev in item.evidence])

    def capped(self, limit: int) -> None:
        if len(self.evidence) > limit:
            self.cut += len(self.evidence) - limit
            self.cuts.append(f"ask.evidence ({len(self.evidence) - limit} left out)")
            del self.evidence[limit:]


def resolve(query, mention: str, min_score: float, types: list[str] | None = None) -> list[Seed]:
    """The nodes a mention names (those tied at the best score, if it reaches ``min_score``);
    a mention that resolves to nothing whole is tried by its parts ("A and B", "A, B")."""
    nodes = _best(query.find(mention, types=types).nodes, min_score)
    if nodes:
        return [Seed(mention, nodes)]
    seeds = []
    for part in parts(mention):
        nodes = _best(query.find(part, types=types).nodes, min_score)
        if nodes:
            seeds.append(Seed(part, nodes))
    return seeds


def _best(nodes, min_score: float) -> list:
    if not nodes or (nodes[0].score or 0) < min_score:
        return []
    top = nodes[0].score
    return [n for n in nodes if n.score == top]


def graph_evidence(query, seeds: list[Seed], kind: str, found: Found) -> list[str]:
    """Statements about the seeds: connecting paths first for two or more, else their
    neighbourhood. Returns what it did, for the trace."""
    ids = [s.nodes[0].id for s in seeds]
    done = []
    if len(ids) >= 2:
        for i, a in enumerate(ids):
            for b in ids[i + 1:]:
                answer = query.path(a, b, hops=min(STEP_HOPS, query.config.max_hops))
                found.add_answer(answer)
                done.append(f"path {a} {b}: {len(answer.paths)} paths")
    if len(ids) >= 2 and not found.evidence and kind == "multi_hop":
        done += step_by_step(query, seeds[:1], query.config.max_hops, found, query.config.fanout, set(ids[1:]))
    if not found.evidence:
        hops = 2 if kind == "multi_hop" else 1
        answer = query.neighbours(ids, hops=min(hops, query.config.max_hops))
        found.add_answer(answer, only=_touching(answer, set(ids)) if hops == 1 else None)
        done.append(f"neighbours {len(ids)} seeds, {hops} hops: {len(answer.items)} items")
    return done


def _touching(answer, ids: set[str]) -> set[str]:
    return {i.id for i in answer.items if any(n in ids for ns in i.ends.values() for n in ns)}


def step_by_step(query, seeds: list[Seed], hops: int, found: Found, fanout: int,
                 targets: frozenset[str] | set[str] = frozenset()) -> list[str]:
    """A walk past STEP_HOPS hops: one hop at a time from the frontier, the frontier capped
    at ``fanout`` nodes, so a long chain never asks for the whole graph at once; it stops
    when it reaches one of ``targets``."""
    frontier = [s.nodes[0].id for s in seeds]
    seen = set(frontier)
    done = []
    for step in range(1, min(hops, query.config.max_hops) + 1):
        answer = query.neighbours(frontier, hops=1)
        found.add_answer(answer)
        frontier = [n.id for n in answer.nodes if n.id not in seen][:fanout]
        seen.update(frontier)
        done.append(f"step {step}: {len(answer.items)} items, frontier {len(frontier)}")
        if not frontier or targets & seen:
            break
    return done


def text_evidence(query, question: str, found: Found, limit: int) -> str:
    """Passages that match the question's words, kept apart from graph statements."""
    answer = query.search(question, reduce="none", limit=limit)
    have = {e.id for e in found.evidence}
    added = 0
    for hit in answer.hits:
        if hit.id in have or not any(ev.quote for ev in hit.evidence):
            continue
        have.add(hit.id)
        relation = next((v.get("type") or v.get("kind") for v in hit.via if v.get("id") == hit.id), hit.kind)
        about = {"about": [hit.name]} if hit.kind != "edge" and hit.name != hit.id else {}
        found.evidence.append(EvidenceItem(hit.id, "text", str(relation or hit.kind), about,
                                           [Source(ev.document, ev.page, ev.quote) for ev in hit.evidence]))
        added += 1
    found.partial = found.partial or answer.partial
    return f"search: {added} passages"


def per_seed(query, seeds: list[Seed], found: Found) -> list[str]:
    """Each seed's own statements, both ways, for a count or a comparison per named thing: by
    ``match`` (every statement up to ``query.limit``, a cut reported), not by a walk (which keeps
    two statements a pair of nodes, enough to cite, not to count)."""
    done = []
    for seed in seeds:
        for node in seed.nodes:
            for pattern in ("*{id: $node} -*-> *", "* -*-> *{id: $node}"):
                answer = query.match(pattern, params={"node": node.id})
                found.add_answer(answer)
                done.append(f"{pattern} ({seed.mention!r}): {len(answer.items)} statements")
    return done


DATES = "0001..9999"  # every date a pattern's {in: ...} can hold


def date_evidence(query, elements: list[str], kind: str, found: Found, limit: int) -> list[str]:
    """The dated statements about each element, for earliest/latest: a document's statements
    whose tail is a date, or a node's."""
    ids = {name: node for node, (name, _) in found.names.items()}
    done = []
    for element in elements:
        if kind == "documents":
            answer = query.match(f'* -*-> *{{in: "{DATES}"}} where document $doc', params={"doc": element},
                                 limit=limit)
        elif element in ids:
            answer = query.match(f'*{{id: $node}} -*-> *{{in: "{DATES}"}}', params={"node": ids[element]},
                                 limit=limit)
        else:
            continue
        found.add_answer(answer)
        done.append(f"dates of {element!r}: {len(answer.items)} statements")
    return done


def whole_graph(query, plan, vocab, found: Found, limit: int) -> tuple[dict[str, list[str]], list[str]]:
    """The statements a question over the whole graph counts (kgkit.ask.corpus), each pattern
    read with ``match`` up to ``limit`` (``ask.aggregate_evidence``; a cut is kept for the
    count to refuse). The documents of the whole graph too, when the answer is over them and
    an absence or no relation asks for all of them: one statement each, which shows it is
    there. Returns those documents (document -> the statement id) and what it did."""
    from kgkit.ask import corpus

    done = []
    every = plan.measure(vocab) == "documents" and (plan.absent or not plan.relations)
    universe: dict[str, list[str]] = {}
    if every:
        answer = query.match(f"{vocab.document_type} -*-> *", limit=limit)
        first = corpus.first_per_document(answer.items)
        found.add_answer(answer, only=set(first.values()), limit="ask.aggregate_evidence")
        universe = {d: [i] for d, i in first.items()}
        done.append(f"documents: {len(universe)}")
    for pattern in corpus.patterns(plan, vocab) if plan.relations else []:
        answer = query.match(pattern, limit=limit)
        found.add_answer(answer, limit="ask.aggregate_evidence")
        done.append(f"{pattern}: {len(answer.items)} statements")
    return universe, done
