"""O6 novelty: how much of a new text the graph already holds.

The text's k nearest graph neighbourhoods are found through the full-text index (the
entities whose names or quotes it shares words with, each with the names of its
neighbours and its quotes); each is scored by lexical overlap with the text (the share of
the text's words the neighbourhood holds), and novelty is one minus the best overlap.
This is the offline measure; an LLM rubric (problem, mechanism, training, target domain)
needs a configured model and is not part of this answer, which says so.
"""
from __future__ import annotations

from kgkit.query import text
from kgkit.query.reader import Reader
from kgkit.query.results import Answer, Evidence

RUBRIC = ("problem", "mechanism", "training", "target domain")


def novelty(reader: Reader, passage: str, *, k: int = 5) -> Answer:
    answer = Answer("novelty", reader.tenant, reader.version, {"text": passage[:500], "k": k}, limits={"k": k})
    words = set(text.words(passage))
    seeds: list[str] = []
    for hit in sorted(text.hits(reader, passage, depth=200), key=lambda h: -h.score):  # names and quotes
        entity = hit.ref if hit.kind == "entity" else None
        if entity is None:
            canon = reader.entity_of([hit.ref])
            entity = canon.get(hit.ref)
            if entity is None:
                entity = next((e for s in reader.items({(hit.doc, hit.view, hit.ref)}) for _, e in s.fillers), None)
        if entity and entity not in seeds:
            seeds.append(entity)
        if len(seeds) >= k * 3:
            break
    scored = []
    for entity in seeds:
        hood_words, quotes = _neighbourhood(reader, entity)
        overlap = len(words & hood_words) / len(words) if words else 0.0
        scored.append((overlap, entity, quotes))
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[:k]
    answer.cut("k", len(scored) - k)
    answer.nodes = [reader.node(e, score=round(o, 4), evidence=q[:2]) for o, e, q in top]
    best = top[0][0] if top else 0.0
    answer.report = {"novelty": round(1.0 - best, 4), "overlap": round(best, 4), "method": "lexical",
                     "rubric": None, "words": len(words)}
    answer.note = ("lexical overlap only: the rubric (" + ", ".join(RUBRIC) + ") needs an LLM, "
                   "which this answer did not use")
    answer.partial = reader.budget.ran_out
    return answer


def _neighbourhood(reader: Reader, entity: str) -> tuple[set[str], list[Evidence]]:
    """The words of an entity, its one-hop neighbours' names and its statements' quotes."""
    stored = reader.incident([entity])
    names = reader.entities({entity} | {e for s in stored for _, e in s.fillers})
    found: set[str] = set()
    for info in names.values():
        found |= set(text.words(" ".join([info["name"], *info["aliases"]])))
    quotes = [ev for evs in reader.evidence({s.key for s in stored[:50]}).values() for ev in evs if ev.quote]
    for ev in quotes:
        found |= set(text.words(ev.quote))
    return found, quotes
