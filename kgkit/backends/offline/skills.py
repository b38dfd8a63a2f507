"""Offline answers to the skill passes: lexical trigger patterns read off the gold evidence.

For an edge the rollouts missed (hindsight) or found only sometimes (path induction) the
offline backend cannot reason; it does what a careful annotator would do first — look at
the evidence sentence and take the words *between* the head and tail mentions as the
trigger ("Smith, an employee of Acme" -> "an employee of"), keeping at most
:data:`MAX_WORDS` words nearest the later mention, where English puts the cue ("was born
in", "based in"). With no word between the mentions (an apposition such as "Chattanooga,
Tenn.") there is no lexical cue to learn and no candidate. When an end of the edge was
never extracted at all, the relation cannot come out whatever the trigger, so hindsight
proposes an entity skill for that name instead.

Registered with the offline backend's dispatch table on import. Both answer with the
skill-pass schema: ``{"skills": [{kind, target, pattern,
instruction, example}]}``. The offline backend's rollouts are identical, so in practice
only hindsight runs: edges are stable or missed, never unstable.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from kgkit.backends.base import SKILL_HINDSIGHT, SKILL_INDUCTION, PassRequest
from kgkit.backends.offline import register_handler
from kgkit.backends.offline.entities import collapse, name_key

MAX_WORDS = 3
_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*")


def _mention(sentence: str, name: str) -> tuple[int, int] | None:
    rx = re.compile(r"(?<!\w)" + r"\s+".join(re.escape(p) for p in name.split()) + r"(?!\w)", re.I)
    m = rx.search(sentence)
    return m.span() if m else None


def between_words(sentence: str, head: str, tail: str) -> list[str]:
    """Words strictly between the first head and tail mentions (at most MAX_WORDS, nearest the later)."""
    h, t = _mention(sentence, head), _mention(sentence, tail)
    if h is None or t is None:
        return []
    (_, a_end), (b_start, _) = sorted((h, t))
    if a_end > b_start:  # overlapping mentions
        return []
    return [w.lower() for w in _WORD.findall(sentence[a_end:b_start])][-MAX_WORDS:]


def relation_candidate(edge: Mapping[str, Any], sentence: str) -> dict[str, Any] | None:
    words = between_words(sentence, edge["head"], edge["tail"])
    if not words:
        return None
    phrase = " ".join(words)
    return {
        "kind": "relation",
        "target": edge["relation"],
        "pattern": {"phrases": [phrase], "regex": []},
        "instruction": (f"When the text says \"{edge['head']} … {phrase} … {edge['tail']}\" or the like, "
                        f"emit {edge['relation']}(head, tail)."),
        "example": collapse(sentence),
    }


def entity_candidate(name: str, type_name: str, sentence: str) -> dict[str, Any]:
    return {
        "kind": "entity",
        "target": type_name,
        "pattern": {"phrases": [collapse(name)], "regex": []},
        "instruction": f"\"{collapse(name)}\" names a {type_name}; extract it as one.",
        "example": collapse(sentence),
    }


def _answer(request: PassRequest, diagnose_entities: bool) -> dict[str, Any]:
    ctx = request.context
    edge = ctx["gold_edge"]
    sentence = ctx.get("evidence") or request.chunk.text
    skills: list[dict[str, Any]] = []
    cand = relation_candidate(edge, sentence)
    if cand is not None:
        skills.append(cand)
    if diagnose_entities:
        found = {name_key(n) for n in (ctx.get("predictions") or {}).get("entities", ())}
        for end in ("head", "tail"):
            if name_key(edge[end]) not in found and edge.get(end + "_type"):
                skills.append(entity_candidate(edge[end], edge[end + "_type"], sentence))
    return {"skills": skills}


def induce(request: PassRequest) -> dict[str, Any]:
    """Path induction for an unstable edge: the minimal trigger between its mentions."""
    return _answer(request, diagnose_entities=False)


def hindsight(request: PassRequest) -> dict[str, Any]:
    """Hindsight for a missed edge: an entity skill for an end never extracted, else a trigger."""
    return _answer(request, diagnose_entities=True)


register_handler(SKILL_INDUCTION, induce)
register_handler(SKILL_HINDSIGHT, hindsight)
