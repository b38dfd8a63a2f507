"""O6 novelty: how much of a new text the graph already holds.

The text's k nearest graph neighbourhoods are found through the full-text index (the
entities whose names or quotes it shares words with, each with the names of its
neighbours and its quotes); each is scored by lexical overlap with the text (the share of
the text's words the neighbourhood holds), and the lexical novelty is one minus the best
overlap. That is the whole answer offline. Given a :class:`kgkit.query.rubric.Rubric` (a
model is configured), the same neighbourhoods and the text are also graded by the model on
four aspects (problem, mechanism, training, target domain); the answer's ``novelty`` is
then the rubric's, and ``report["rubric"]`` holds each aspect's score, grade, closest
neighbourhood and reason. A model that fails leaves the lexical answer, and the note says why.
"""
from __future__ import annotations

from typing import Any

from kgkit.query import text
from kgkit.query.reader import Reader
from kgkit.query.results import Answer, Evidence

RUBRIC = ("problem", "mechanism", "training", "target domain")


def novelty(reader: Reader, passage: str, *, k: int = 5, rubric=None) -> Answer:
    answer = Answer("novelty", reader.tenant, reader.version, {"text": passage[:500], "k": k}, limits={"k": k})
    words = set(text.words(passage))
    seeds = _seeds(reader, passage, k)
    scored = []
    for entity in seeds:
        hood = _neighbourhood(reader, entity)
        overlap = len(words & hood["words"]) / len(words) if words else 0.0
        scored.append((overlap, entity, hood))
    scored.sort(key=lambda s: (-s[0], s[1]))
    top = scored[:k]
    answer.cut("k", len(scored) - k)
    answer.nodes = [reader.node(e, score=round(o, 4), evidence=h["evidence"][:2]) for o, e, h in top]
    best = top[0][0] if top else 0.0
    lexical = round(1.0 - best, 4)
    answer.report = {"novelty": lexical, "lexical_novelty": lexical, "overlap": round(best, 4), "method": "lexical",
                     "rubric": None, "words": len(words)}
    answer.partial = reader.budget.ran_out
    if rubric is None:
        answer.note = ("lexical overlap only: the rubric (" + ", ".join(RUBRIC) + ") needs an LLM "
                       "(llm.model), which this answer did not use")
        return answer
    hoods = [{"entity": e, "name": n.name, "type": n.type, "neighbours": h["neighbours"],
              "quotes": [ev.quote for ev in h["evidence"] if ev.quote]} for (_, e, h), n in zip(top, answer.nodes)]
    graded, why = rubric.grade(passage, hoods)
    if graded is None:
        answer.note = f"lexical overlap only: the rubric model failed ({why})"
        return answer
    answer.report.update(novelty=graded["novelty"], method="rubric", rubric=graded)
    answer.note = f"graded by {graded['model']} on {', '.join(RUBRIC)} against {len(hoods)} neighbourhoods"
    return answer


def _seeds(reader: Reader, passage: str, k: int) -> list[str]:
    """The entities the text's best full-text hits are about (names, or the ends of quoted statements)."""
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
    return seeds


def _neighbourhood(reader: Reader, entity: str) -> dict[str, Any]:
    """The words of an entity, its one-hop neighbours' names and its statements' quotes."""
    stored = reader.incident([entity])
    names = reader.entities({entity} | {e for s in stored for _, e in s.fillers})
    found: set[str] = set()
    for info in names.values():
        found |= set(text.words(" ".join([info["name"], *info["aliases"]])))
    quotes: list[Evidence] = [ev for evs in reader.evidence({s.key for s in stored[:50]}).values()
                              for ev in evs if ev.quote]
    for ev in quotes:
        found |= set(text.words(ev.quote or ""))
    neighbours = sorted(info["name"] for e, info in names.items() if e != entity)
    return {"words": found, "evidence": quotes, "neighbours": neighbours}
