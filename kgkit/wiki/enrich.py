"""The model layer: batches of articles, asked only for what their links do not say.

Articles (templates aside) are grouped by the index section that lists them first (else
by folder), then cut
into batches of :data:`BATCH_MIN`-:data:`BATCH_MAX` articles, so one call sees notes about
one subject. Each request carries the existing node ids and the pairs already linked
(the model must neither invent ids nor repeat a wikilink) and the articles' text, each
fenced as untrusted data. A batch that fails -- provider error, an answer still invalid
after the re-ask -- is a warning: its articles keep their baseline nodes and edges.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from kgkit.config.model import Config
from kgkit.wiki.baseline import ARTICLE, DOMAIN, Graph, build_baseline, topic_id
from kgkit.wiki.merge import BatchAnswer, MergeReport, merge
from kgkit.wiki.vault import Vault

BATCH_MIN, BATCH_MAX = 10, 15
ARTICLE_CHARS = 6000  # of one article's text in a request; the rest is left out (and said so)
EXISTING_IDS_MAX = 500  # a larger vault's requests list the batch's neighbourhood, not every id
PROMPT = "wiki_enrich.j2"

_ITEM = {"type": "object"}
ANSWER_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "entities": {"type": "array", "items": _ITEM},
        "claims": {"type": "array", "items": _ITEM},
        "edges": {"type": "array", "items": _ITEM},
    },
    "required": ["entities", "claims", "edges"],
}


@dataclass
class Batch:
    number: int
    category: str
    articles: list[str]


@dataclass
class Enrichment:
    graph: Graph
    report: MergeReport
    usage: dict[str, Any] = field(default_factory=dict)
    model: dict[str, Any] = field(default_factory=dict)


def group_of(vault: Vault) -> dict[str, str]:
    """Each article's group: the first index section listing it, else its folder."""
    groups: dict[str, str] = {}
    for cat in vault.categories:
        for article in cat.articles:
            groups.setdefault(article, topic_id(cat))
    for note in vault.notes:
        groups.setdefault(note.id, posixpath.dirname(note.id) or "(vault root)")
    return groups


def make_batches(vault: Vault, texts: dict[str, tuple[str, str]] | None = None) -> list[Batch]:
    """Articles in batches of at most BATCH_MAX, one group after another in the order the
    index notes give (then folders by name); a batch closes at a group's end once it holds
    BATCH_MIN, and a last batch under BATCH_MIN joins the one before when they fit together."""
    texts = article_texts(vault) if texts is None else texts
    groups = group_of(vault)
    rank = {topic_id(c): i for i, c in enumerate(vault.categories)}
    order = sorted((n.id for n in vault.notes if n.scanned and not n.template and n.id in texts),
                   key=lambda i: (rank.get(groups[i], len(rank)), groups[i], i))
    chunks: list[list[str]] = []
    current: list[str] = []
    for i, article in enumerate(order):
        current.append(article)
        last = i + 1 == len(order)
        boundary = last or groups[order[i + 1]] != groups[article]
        if len(current) >= BATCH_MAX or (boundary and len(current) >= BATCH_MIN) or last:
            chunks.append(current)
            current = []
    if len(chunks) > 1 and len(chunks[-1]) < BATCH_MIN and len(chunks[-2]) + len(chunks[-1]) <= BATCH_MAX:
        chunks[-2:] = [chunks[-2] + chunks[-1]]
    return [Batch(n, groups[chunk[0]], chunk) for n, chunk in enumerate(chunks, 1)]


def article_texts(vault: Vault) -> dict[str, tuple[str, str]]:
    """Article id -> (path, text) of every scanned note (the vault was read with O_NOFOLLOW)."""
    from kgkit.wiki.vault import read_note

    texts = {}
    for note in vault.notes:
        if note.scanned and not note.template:
            try:
                texts[note.id] = (note.path, read_note(vault.root, note.path))
            except OSError:
                continue  # gone since the scan: not sent, and its evidence not looked up
    return texts


def existing_ids(graph: Graph, members: set[str]) -> list[str]:
    """The node ids a batch's request lists: every id (articles first) while the graph has at
    most EXISTING_IDS_MAX; beyond that the batch's articles, the nodes they link or are
    linked from, then the other ids in order, up to EXISTING_IDS_MAX -- a prompt of ten
    thousand ids would cost more than the batch's text."""
    ordered = [n["id"] for n in graph.nodes if n["type"] == ARTICLE] + \
              [n["id"] for n in graph.nodes if n["type"] != ARTICLE]
    if len(ordered) <= EXISTING_IDS_MAX:
        return ordered
    near = set(members)
    for e in graph.edges:
        if e["head"] in members or e["tail"] in members:
            near.update((e["head"], e["tail"]))
    first = [i for i in ordered if i in near]
    rest = [i for i in ordered if i not in near]
    return (first + rest)[:max(EXISTING_IDS_MAX, len(first))]


def request_for(batch: Batch, vault: Vault, graph: Graph, texts: dict[str, tuple[str, str]], doc_id: str):
    from kgkit.backends.base import PassRequest
    from kgkit.documents.types import Chunk
    from kgkit.catalog.load import load_domain

    groups = group_of(vault)
    articles = []
    for article in batch.articles:
        text = texts[article][1]
        if len(text) > ARTICLE_CHARS:
            text = text[:ARTICLE_CHARS] + "\n[... the rest of this article is left out ...]"
        articles.append({"id": article, "category": groups[article], "text": text})
    members = set(batch.articles)
    linked = sorted({(e["head"], e["tail"]) for e in graph.edges
                     if e["relation"] == "related" and (e["head"] in members or e["tail"] in members)})
    existing = existing_ids(graph, members)
    joined = "\n\n".join(a["text"] for a in articles)
    chunk = Chunk(id=f"wiki_batch_{batch.number}", doc_id=doc_id, index=batch.number - 1, text=joined,
                  start=0, end=len(joined))
    return PassRequest(kind="wiki_enrich", stage="wiki", chunk=chunk, schema=ANSWER_SCHEMA,
                       context={"domain": load_domain(DOMAIN), "articles": articles,
                                "existing_ids": existing, "linked": linked}, prompt=PROMPT)


def enrich_vault(vault: Vault, config: Config, graph: Graph | None = None, *, doc_id: str = "d_wiki",
                 backend: Any = None) -> Enrichment:
    """Run the model layer over ``vault`` and merge its answers into ``graph`` (the baseline
    when not given). Needs ``llm.model`` in ``config``; without one there is nothing to ask."""
    from kgkit.errors import ProviderConfigError, ProviderError

    if backend is None:
        if not config.llm.model:
            raise ValueError("the wiki model layer needs llm.model (the baseline needs no model)")
        from kgkit.backends.factory import create_backend

        backend = create_backend(config, "core")
    graph = graph or build_baseline(vault)
    texts = article_texts(vault)
    answers: list[BatchAnswer] = []
    usage: dict[str, Any] = {"calls": 0, "requests": 0, "tokens_in": 0, "tokens_out": 0, "cost": 0.0, "failed": []}
    for batch in make_batches(vault, texts):
        request = request_for(batch, vault, graph, texts, doc_id)
        usage["calls"] += 1
        try:
            result = backend.run(request)
        except ProviderConfigError:
            raise  # no key, a rejected key, an unknown model: every batch would fail alike (exit 2)
        except ProviderError as exc:  # the provider failed on this batch: this batch only
            usage["requests"] += getattr(exc, "requests", 0) or 0
            answers.append(BatchAnswer(batch.number, batch.articles, None, str(exc)))
            continue
        usage["requests"] += result.requests
        usage["tokens_in"] += result.usage.tokens_in
        usage["tokens_out"] += result.usage.tokens_out
        if result.usage.cost is not None:
            usage["cost"] += result.usage.cost
        answers.append(BatchAnswer(batch.number, batch.articles, result.data if result.ok else None, result.error))
    report = merge(graph, answers, texts)
    report.calls = usage["calls"]
    return Enrichment(graph, report, usage, {"core": backend.describe(), "upgrades": backend.describe()})
