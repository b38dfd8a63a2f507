"""The model's answers folded into the baseline graph, trusting nothing in them.

A model may name a relation its own way, repeat an entity under another spelling, point
an edge at a node that does not exist, or leave fields out. So: relation names are
normalised through the aliases the ``knowledge_base`` domain declares (an unknown one becomes ``related``, with a
warning); entities are de-duplicated by their normalised name -- against each other and
against the articles' titles and aliases -- and every edge naming a duplicate is remapped
to the one node kept; an edge whose end is no node is dropped and counted; an edge a
wikilink already gives is dropped; defaults are filled (summary, tags, weight 0.5,
direction forward). The baseline is never changed: the merge only adds.
"""
from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass, field
from typing import Any

from kgkit.text.name_keys import canonical_key
from kgkit.wiki.baseline import ARTICLE, DOMAIN, Graph, edge, evidence

#: Weights of the implicit edges the model may add.
WEIGHTS = {"builds_on": 0.8, "contradicts": 0.9, "exemplifies": 0.7, "authored_by": 0.6, "cites": 0.7}
DEFAULT_WEIGHT = 0.5  # related, mentions, states -- and any edge whose weight is not given
ENTITY_TYPES = ("Concept", "Person", "Organization", "Tool")
CLAIM_ID = re.compile(r"^claim:([^:]+):(.*\w.*)$")  # claim:<article stem>:<slug>; the slug is re-slugged


@dataclass
class BatchAnswer:
    """One batch's answer (``data`` None when the batch failed) and the articles it covered."""

    batch: int
    articles: list[str]
    data: dict[str, Any] | None
    error: str | None = None


@dataclass
class MergeReport:
    batches: int = 0
    failed_batches: int = 0
    calls: int = 0
    new_entities: int = 0
    deduplicated_entities: int = 0  # answers naming an entity (or article) the graph already has
    new_claims: int = 0
    deduplicated_claims: int = 0
    new_edges: int = 0
    deduplicated_edges: int = 0
    remapped_edges: int = 0  # edge ends moved from a duplicate's name to the node kept
    aliases_normalised: int = 0
    unknown_relations: int = 0  # became "related"
    dropped_dangling: int = 0
    dropped_no_evidence: int = 0
    dropped_self: int = 0
    dropped_already_linked: int = 0
    dropped_claims: int = 0  # a claim id naming no article
    unverified: int = 0  # evidence not found in the articles: kept, held for review
    warnings: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {k: v for k, v in self.__dict__.items() if isinstance(v, int) and k not in ("batches", "calls",
                                                                                             "failed_batches")}

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def name_key(name: str) -> str:
    """Two spellings of one name get one key (case, accents, punctuation, "the", legal suffixes)."""
    return canonical_key(name) or unicodedata.normalize("NFKC", name).strip().lower()


def slug(text: str) -> str:
    flat = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode().lower()
    return re.sub(r"[^a-z0-9]+", "-", flat).strip("-")[:60] or "item"


def normalise_relation(raw: Any, report: MergeReport, domain: Any = None) -> str:
    """The domain's relation for a name or one of its aliases; anything else is ``related``."""
    from kgkit.catalog.load import load_domain

    domain = domain or load_domain(DOMAIN)
    written = str(raw or "").strip()
    name = re.sub(r"[\s\-]+", "_", written.lower())
    found = domain.relation_type(name)
    if found is not None:
        if found.name != name:
            report.aliases_normalised += 1
        return found.name
    report.unknown_relations += 1
    report.warnings.append(f"relation {written!r} is not one the knowledge_base domain declares; kept as 'related'")
    return "related"


class _Merger:
    def __init__(self, graph: Graph, texts: dict[str, tuple[str, str]], report: MergeReport):
        from kgkit.catalog.load import load_domain

        self.domain = load_domain(DOMAIN)
        self.graph = graph
        self.texts = texts  # article id -> (path, text): where evidence is looked for
        self.report = report
        self.by_id = {n["id"]: n for n in graph.nodes}
        self.by_id_lower = {i.lower(): i for i in self.by_id}
        self.by_key: dict[str, str] = {}  # name key -> node id (articles' titles and aliases, entities)
        for n in graph.nodes:
            if n["type"] == ARTICLE:
                for name in [n.get("title", n["name"]), n["name"], *n.get("aliases", [])]:
                    self.by_key.setdefault(name_key(name), n["id"])
        self.stems: dict[str, list[str]] = {}
        for n in graph.nodes:
            if n["type"] == ARTICLE:
                self.stems.setdefault(n["id"].rsplit("/", 1)[-1].lower(), []).append(n["id"])
        self.edges = {(e["head"], e["relation"], e["tail"]): e for e in graph.edges}
        self.linked = {frozenset((e["head"], e["tail"])) for e in graph.edges if e["relation"] == "related"}

    # -- nodes -------------------------------------------------------------------------
    def entity(self, raw: Any, batch: list[str]) -> None:
        if not isinstance(raw, dict) or not str(raw.get("name") or "").strip():
            self.report.dropped_dangling += 1
            return
        name = " ".join(str(raw["name"]).split())
        key = name_key(name)
        found = self.by_key.get(key)
        articles = [a for a in (self.resolve_article(x) for x in _strings(raw.get("articles"))) if a] or []
        if found is not None:
            self.report.deduplicated_entities += 1
            node = self.by_id[found]
            if node["type"] != ARTICLE:
                node["aliases"] = sorted(set(node["aliases"]) | ({name} - {node["name"]}))
                node["tags"] = sorted(set(node["tags"]) | set(_strings(raw.get("tags"))))
                node.setdefault("articles", [])
                node["articles"] = sorted(set(node["articles"]) | set(articles))
        else:
            etype = str(raw.get("type") or "Concept")
            if etype not in ENTITY_TYPES:
                self.report.warnings.append(f"entity {name!r}: type {etype!r} is not one of "
                                            f"{', '.join(ENTITY_TYPES)}; kept as Concept")
                etype = "Concept"
            node = {"id": f"entity:{slug(key)}", "type": etype, "name": name, "aliases": [],
                    "summary": str(raw.get("summary") or ""), "tags": sorted(set(_strings(raw.get("tags")))),
                    "articles": sorted(set(articles)), "mentions": [], "merged_from": [], "origin": "model"}
            while node["id"] in self.by_id:
                node["id"] += "-2"
            self.add_node(node, key)
            self.report.new_entities += 1
            found = node["id"]
        quote = str(raw.get("evidence") or "")
        for article in articles:
            if article != found:  # an entity that is the article itself mentions nothing new
                self.add_edge(article, "mentions", found, quote, batch, weight=None, count=False)

    def claim(self, raw: Any, batch: list[str]) -> None:
        if not isinstance(raw, dict):
            self.report.dropped_claims += 1
            return
        text = " ".join(str(raw.get("text") or "").split())
        m = CLAIM_ID.match(str(raw.get("id") or "").strip())
        article = self.article_for_stem(m.group(1), batch) if m else None
        if m is None or article is None or not text:
            self.report.dropped_claims += 1
            self.report.warnings.append(f"claim {str(raw.get('id'))!r}: its id names no article of the batch "
                                        "(claim:<article-stem>:<slug>); dropped")
            return
        claim_id = f"claim:{article.rsplit('/', 1)[-1]}:{slug(m.group(2))}"
        if claim_id in self.by_id:
            self.report.deduplicated_claims += 1
            return
        self.add_node({"id": claim_id, "type": "Claim", "name": text, "aliases": [], "summary": text, "tags": [],
                       "article": article, "mentions": [], "merged_from": [], "origin": "model"}, None)
        self.report.new_claims += 1
        self.add_edge(article, "states", claim_id, str(raw.get("evidence") or ""), batch, weight=None, count=False)

    def add_node(self, node: dict[str, Any], key: str | None) -> None:
        self.graph.nodes.append(node)
        self.by_id[node["id"]] = node
        self.by_id_lower[node["id"].lower()] = node["id"]
        if key:
            self.by_key[key] = node["id"]

    # -- ends ----------------------------------------------------------------------------
    def resolve_article(self, ref: str) -> str | None:
        hit = self.by_id_lower.get(ref.strip().lower())
        return hit if hit and self.by_id[hit]["type"] == ARTICLE else None

    def article_for_stem(self, stem: str, batch: list[str]) -> str | None:
        matches = self.stems.get(stem.lower(), [])
        in_batch = [a for a in matches if a in batch]
        chosen = in_batch or matches
        return chosen[0] if len(chosen) == 1 else None

    def end(self, ref: Any) -> tuple[str | None, bool]:
        """(node id, remapped): an id as given, else a node by its normalised name."""
        text = " ".join(str(ref or "").split())
        if not text:
            return None, False
        hit = self.by_id.get(text) and text or self.by_id_lower.get(text.lower())
        if hit:
            return hit, False
        by_name = self.by_key.get(name_key(text))
        return by_name, by_name is not None

    # -- edges ---------------------------------------------------------------------------
    def edge(self, raw: Any, batch: list[str]) -> None:
        if not isinstance(raw, dict):
            self.report.dropped_dangling += 1
            return
        relation = normalise_relation(raw.get("type") or raw.get("relation"), self.report, self.domain)
        head, moved_h = self.end(raw.get("source") or raw.get("head"))
        tail, moved_t = self.end(raw.get("target") or raw.get("tail"))
        if str(raw.get("direction") or "forward").lower() == "backward":
            head, tail = tail, head
        if head is None or tail is None:
            self.report.dropped_dangling += 1
            return
        if head == tail:
            self.report.dropped_self += 1
            return
        if relation == "related" and frozenset((head, tail)) in self.linked:
            self.report.dropped_already_linked += 1
            return
        quote = " ".join(str(raw.get("evidence") or "").split())
        if not quote:
            self.report.dropped_no_evidence += 1
            return
        if moved_h or moved_t:
            self.report.remapped_edges += 1
        self.add_edge(head, relation, tail, quote, batch, weight=raw.get("weight"))

    def add_edge(self, head: str, relation: str, tail: str, quote: str, batch: list[str], *,
                 weight: Any, count: bool = True) -> None:
        key = (head, relation, tail)
        if key in self.edges:
            if count:
                self.report.deduplicated_edges += 1
            return
        if relation in WEIGHTS:
            w = WEIGHTS[relation]
        elif isinstance(weight, (int, float)) and not isinstance(weight, bool) and 0 <= weight <= 1:
            w = float(weight)
        else:
            w = DEFAULT_WEIGHT
        where = self.locate(quote, [head, tail, *batch])
        ev = evidence(where[0], where[1], quote) if where else {**evidence("", 0, quote), "file": None, "line": None,
                                                                 "chunk": None}
        item = edge(head, relation, tail, w, ev, origin="model")
        item["verified"] = where is not None
        item["confidence"] = None
        if where is None:
            self.report.unverified += 1
        self.graph.edges.append(item)
        self.edges[key] = item
        if relation == "related":
            self.linked.add(frozenset((head, tail)))
        if count:
            self.report.new_edges += 1

    def locate(self, quote: str, candidates: list[str]) -> tuple[str, int] | None:
        """(file, line) of the first article among ``candidates`` whose text holds ``quote``
        (whitespace and case aside)."""
        words = quote.split()
        if not words:
            return None
        pattern = re.compile(r"\s+".join(re.escape(w) for w in words), re.I)
        for node_id in dict.fromkeys(candidates):
            node = self.by_id.get(node_id)
            article = node.get("article") if node and node["type"] == "Claim" else node_id
            if article not in self.texts:
                continue
            path, text = self.texts[article]
            found = pattern.search(text)
            if found:
                return path, text.count("\n", 0, found.start()) + 1
        return None


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value] if value.strip() else []
    if isinstance(value, list):
        return [str(v) for v in value if isinstance(v, (str, int, float)) and str(v).strip()]
    return []


def merge(graph: Graph, answers: list[BatchAnswer], texts: dict[str, tuple[str, str]],
          report: MergeReport | None = None) -> MergeReport:
    """Fold ``answers`` into ``graph`` in place (adding only); returns the figures.

    ``texts`` maps an article id to (its path, its text), where edge evidence is checked.
    A failed batch (``data`` None) is a warning; the graph keeps everything else.
    """
    report = report or MergeReport()
    merger = _Merger(graph, texts, report)
    for answer in answers:
        report.batches += 1
        if answer.data is None:
            report.failed_batches += 1
            report.warnings.append(f"model batch {answer.batch} ({len(answer.articles)} articles) failed: "
                                   f"{answer.error or 'no answer'}; the baseline graph stands without it")
            continue
        data = answer.data if isinstance(answer.data, dict) else {}
        for raw in _list(data.get("entities")):
            merger.entity(raw, answer.articles)
        for raw in _list(data.get("claims")):
            merger.claim(raw, answer.articles)
        for raw in _list(data.get("edges")):
            merger.edge(raw, answer.articles)
    return report


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []
