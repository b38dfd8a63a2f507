"""The baseline graph of a vault: what its authors already wrote down, at zero model calls.

Articles (one per note), topics (one per index or map-of-content section), sources (files
under ``raw/`` and every linked non-Markdown file); ``related`` edges from every link
that resolves, deduplicated by (source, target, relation) with every occurrence kept as
evidence; ``categorized_under`` edges from an article to the sections that list it; a
reading tour in the order the index notes give; a complexity mark per article from its
link density. Broken and ambiguous links make no edge: they are counted and reported.
"""
from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from kgkit import ids
from kgkit.wiki.vault import Category, Link, Vault

#: Edge weights of the baseline layer (the model layer's are in kgkit.wiki.merge).
RELATED = 0.7
CATEGORIZED_UNDER = 0.6

ARTICLE, TOPIC, SOURCE = "Article", "Topic", "Source"
DOMAIN = "knowledge_base"  # the domain of a vault's graph: its types, and the relations the merge keeps


@dataclass
class Graph:
    """Nodes and edges as the run folder stores them (``nodes.json``, ``views/wiki.json``)."""

    nodes: list[dict[str, Any]] = field(default_factory=list)
    edges: list[dict[str, Any]] = field(default_factory=list)
    tour: list[dict[str, Any]] = field(default_factory=list)

    def node_ids(self) -> set[str]:
        return {n["id"] for n in self.nodes}


def topic_id(category: Category) -> str:
    if category.kind == "property":
        return f"topic:category:{category.index or category.section}"
    return f"topic:{category.index}#{category.section}"


def source_id(path: str) -> str:
    return f"source:{path}"


def evidence(file: str, line: int, quote: str) -> dict[str, Any]:
    """Where a node or edge comes from: the note's path and line (``chunk`` and ``quote``
    are the fields the corpus graph stores; ``file`` and ``line`` say it plainly)."""
    return {"file": file, "line": line, "chunk": f"{file}:{line}", "page": None, "span": None, "quote": quote}


def edge(head: str, relation: str, tail: str, weight: float, ev: dict[str, Any],
         origin: str = "wiki") -> dict[str, Any]:
    return {"id": ids.edge_id(head, relation, tail), "head": head, "relation": relation, "tail": tail,
            "weight": weight, "direction": "forward", "origin": origin, "evidence": ev, "occurrences": 1,
            "verified": True, "confidence": 1.0 if origin == "wiki" else None}


def build_baseline(vault: Vault) -> Graph:
    """The deterministic graph of ``vault`` (see the module docstring)."""
    graph = Graph()
    degree = _degrees(vault.links)
    titles: dict[str, int] = {}
    for note in vault.notes:
        titles[note.title.lower()] = titles.get(note.title.lower(), 0) + 1
    for note in vault.notes:
        out_links, in_links = degree.get(note.id, (set(), set()))
        density = round(100 * len(out_links) / max(note.words, 1), 2) if note.scanned else 0.0
        graph.nodes.append({
            "id": note.id, "type": ARTICLE, "name": _display_name(note.id, note.title, titles),
            "title": note.title, "aliases": note.aliases, "tags": note.tags, "path": note.path,
            "title_source": note.title_source, "words": note.words,
            "links_out": len(out_links), "links_in": len(in_links), "link_density": density,
            "complexity": complexity(len(out_links) + len(in_links), density, note.words),
            "index": note.id in vault.index_notes, "template": note.template,
            "mentions": [{"chunk": f"{note.path}:1", "page": None, "span": None, "file": note.path, "line": 1}],
            "merged_from": [], "origin": "wiki",
        })
    for cat in vault.categories:
        where = vault.note(cat.index).path if cat.kind == "index_section" and cat.index else None
        graph.nodes.append({
            "id": topic_id(cat), "type": TOPIC, "name": cat.section, "aliases": [], "tags": [],
            "kind": cat.kind, "index": cat.index, "level": cat.level, "parent_sections": cat.parent_sections,
            "path": where, "line": cat.line if where else None,
            "mentions": [{"chunk": f"{where}:{cat.line}", "page": None, "span": None, "file": where,
                          "line": cat.line}] if where else [],
            "merged_from": [], "origin": "wiki",
        })
    for src in vault.sources:
        graph.nodes.append({
            "id": source_id(src.path), "type": SOURCE, "name": src.name, "aliases": [], "tags": [],
            "path": src.path, "bytes": src.bytes, "in_vault": src.bytes is not None, "linked_from": src.linked_from,
            "mentions": [], "merged_from": [], "origin": "wiki",
        })
    graph.edges = _link_edges(vault) + _category_edges(vault)
    graph.tour = reading_tour(vault)
    return graph


def _display_name(note_id: str, title: str, titles: dict[str, int]) -> str:
    """The title; with the folder added when another note of the vault has the same title,
    so the corpus graph (which resolves nodes by type and name) keeps them apart."""
    if titles[title.lower()] == 1:
        return title
    return f"{title} ({posixpath.dirname(note_id) or 'vault root'})"


#: A note needs this many words before its link density says anything (a stub of ten
#: words and one link is not dense reading).
DENSITY_MIN_WORDS = 100


def complexity(degree: int, density: float, words: int) -> str:
    """``high`` for a hub (10+ distinct linked notes, in or out) or a dense note (3+
    outgoing links per 100 words), ``medium`` from 4 linked notes or 1 link per 100 words,
    else ``low``. Density counts only from :data:`DENSITY_MIN_WORDS` words."""
    dense = density if words >= DENSITY_MIN_WORDS else 0.0
    if degree >= 10 or dense >= 3:
        return "high"
    if degree >= 4 or dense >= 1:
        return "medium"
    return "low"


def _degrees(links: list[Link]) -> dict[str, tuple[set[str], set[str]]]:
    out: dict[str, tuple[set[str], set[str]]] = {}
    for link in links:
        if link.status == "resolved" and link.target and link.target != link.source:
            out.setdefault(link.source, (set(), set()))[0].add(link.target)
            out.setdefault(link.target, (set(), set()))[1].add(link.source)
    return out


def _link_edges(vault: Vault) -> list[dict[str, Any]]:
    """One ``related`` edge per (source, target): notes and linked files alike; the first
    occurrence is the evidence, ``occurrences`` counts them all."""
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    for link in vault.links:
        if link.status == "resolved" and link.target and link.target != link.source:
            tail = link.target
        elif link.status in ("attachment", "missing_file") and link.attachment:
            tail = source_id(link.attachment)
        else:
            continue  # broken, ambiguous, self: reported, never an edge
        key = (link.source, tail)
        if key in edges:
            edges[key]["occurrences"] += 1
        else:
            edges[key] = edge(link.source, "related", tail, RELATED, evidence(link.file, link.line, link.written))
    return list(edges.values())


def _category_edges(vault: Vault) -> list[dict[str, Any]]:
    """An article to each section listing it (evidence: the listing link's file and line);
    a sub-section to its parent section."""
    edges: dict[tuple[str, str], dict[str, Any]] = {}
    topics = {(c.index, c.section): c for c in vault.categories if c.kind == "index_section"}
    for cat in vault.categories:
        for article in cat.articles:
            file, line = cat.evidence[article]
            edges.setdefault((article, topic_id(cat)), edge(article, "categorized_under", topic_id(cat),
                                                            CATEGORIZED_UNDER, evidence(file, line, cat.section)))
        parent = topics.get((cat.index, cat.parent_sections[-1])) if cat.parent_sections else None
        if parent is not None and cat.index is not None:  # an index section's index is its note
            path = vault.note(cat.index).path
            edges.setdefault((topic_id(cat), topic_id(parent)), edge(topic_id(cat), "categorized_under",
                                                                     topic_id(parent), CATEGORIZED_UNDER,
                                                                     evidence(path, cat.line, cat.section)))
    return list(edges.values())


def reading_tour(vault: Vault) -> list[dict[str, Any]]:
    """The sections of the index notes in the order they are written -- the vault's root
    ``index`` first, then the others by path, then the property categories -- each with its
    articles; an article comes once, where the tour first reaches it."""
    order = sorted(vault.index_notes, key=lambda i: (i != "index", posixpath.dirname(i).count("/"), i))
    seen: set[str] = set()
    tour: list[dict[str, Any]] = []
    groups = [[c for c in vault.categories if c.kind == "index_section" and c.index == index] for index in order]
    groups.append([c for c in vault.categories if c.kind == "property"])  # property categories last
    for group in groups:
        for cat in group:
            fresh = [a for a in cat.articles if a not in seen]
            seen.update(fresh)
            if fresh:
                tour.append({"step": len(tour) + 1, "topic": topic_id(cat), "section": cat.section, "articles": fresh})
    return tour


def link_cycles(vault: Vault, limit: int = 5) -> tuple[int, list[list[str]]]:
    """(how many notes sit on a cycle of links, up to ``limit`` example cycles): Tarjan's
    strongly connected components, iteratively, so a long chain cannot overflow the stack."""
    graph: dict[str, set[str]] = {}
    for link in vault.links:
        if link.status == "resolved" and link.target and link.target != link.source:
            graph.setdefault(link.source, set()).add(link.target)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    components: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    components.append(sorted(component))
    components.sort(key=lambda c: (len(c), c))
    return sum(len(c) for c in components), components[:limit]
