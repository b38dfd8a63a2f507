"""Offline answers to the skill passes: lexical patterns read off the gold evidence sentence.

For an edge the rollouts missed (hindsight) or found only sometimes (path induction) the
offline backend cannot reason; it does what a careful annotator would do first — look at
the evidence sentence and take the words *between* the head and tail mentions as the
trigger, normalised so that it can fire in another document (:func:`between_words`):
only the lowercase words next to the later mention, back to a comma or a capitalised
word (a name is never part of a trigger), without a leading article, relative pronoun or
auxiliary, or a trailing article — "Oswald, who killed Kennedy" gives "killed";
"Smith, an employee of the Acme" gives "employee of". With no cue word between the
mentions (an apposition such as "Chattanooga, Tenn.") there is no candidate.

When an end of the edge was never extracted, or only with another type, the relation
cannot come out whatever the trigger, so hindsight also proposes entity skills for that end's type: a *type cue* —
the lowercase word just before the mention ("assassin Lee Harvey Oswald") or just after
it ("Reagan said"), as a regex that takes the capitalised name next to that word, kept
only if it gives back exactly this name on its own sentence — and, last, the name itself
(which the loop files in the domain's gazetteer, not as a skill). Path induction does the
same for an end that some rollouts found and others lost. Instructions and examples are
written from the pattern and the types alone: never a name or the gold sentence.

Registered with the offline backend's dispatch table on import. Both answer with the
skill-pass schema: ``{"skills": [{kind, target, pattern, instruction, example}]}``.
Offline rollouts differ only at temperature > 0 (the simulation of sampling in
:mod:`kgkit.backends.offline.sampling`); at temperature 0 every edge is stable or missed.
"""
from __future__ import annotations

import re
from typing import Any, Mapping

from kgkit.backends.base import SKILL_HINDSIGHT, SKILL_INDUCTION, PassRequest
from kgkit.backends.offline import register_handler
from kgkit.backends.offline.entities import collapse, name_key, phrase_pattern

MAX_WORDS = 3
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]")
# not cues on their own: dropped from the edges of a trigger, never an entity cue
_LEADING = frozenset("the a an who whom whose which that and or but 's s is was were are be been being has had have "
                     "also then".split())
_TRAILING = frozenset("the a an his her its their this that these those".split())
_NOT_CUES = frozenset("the a an and or but of to in on at by for from with as is was were are be been has had have "
                      "he she it they we i you his her its their this that these those who which when where while "
                      "than then there here not no s 's mr mrs ms dr".split())
# a capitalised name of up to five words, as the generic offline rules see one
NAME_RX = r"(?-i:[A-Z][A-Za-z'.-]*(?:\s+(?:[A-Z][A-Za-z'.-]*|de|van|von|der|la|bin|al)){0,4})"


def _mention(sentence: str, name: str) -> tuple[int, int] | None:
    rx = re.compile(r"(?<!\w)" + phrase_pattern(name) + r"(?!\w)", re.I)
    m = rx.search(sentence)
    return m.span() if m else None


def between_words(sentence: str, head: str, tail: str) -> list[str]:
    """The normalised trigger between the first head and tail mentions (see the module doc)."""
    h, t = _mention(sentence, head), _mention(sentence, tail)
    if h is None or t is None:
        return []
    (_, a_end), (b_start, _) = sorted((h, t))
    if a_end > b_start:  # overlapping mentions
        return []
    words: list[str] = []
    for token in reversed(_TOKEN.findall(sentence[a_end:b_start])):
        if not token[0].isalpha() or token[0].isupper() or len(words) == MAX_WORDS:
            break  # punctuation, a digit or a capitalised word ends the cue
        words.insert(0, token.lower())
    while words and words[0] in _LEADING:
        words.pop(0)
    while words and words[-1] in _TRAILING:
        words.pop()
    return words


def relation_candidate(edge: Mapping[str, Any], sentence: str) -> dict[str, Any] | None:
    words = between_words(sentence, edge["head"], edge["tail"])
    if not words:
        return None
    phrase = " ".join(words)
    head, tail = edge.get("head_type") or "entity", edge.get("tail_type") or "entity"
    return {  # instruction and example from the pattern alone: no name, no gold passage
        "kind": "relation",
        "target": edge["relation"],
        "pattern": {"phrases": [phrase], "regex": []},
        "instruction": f"{head} … \"{phrase}\" … {tail} in one sentence: emit {edge['relation']}({head}, {tail}).",
        "example": f"[{head}] {phrase} [{tail}]",
    }


def cue_candidates(name: str, type_name: str, sentence: str) -> list[dict[str, Any]]:
    """Entity skills from the lowercase word just before or after the mention: type cues
    that find other names of this type, each checked to give back ``name`` on ``sentence``."""
    span = _mention(sentence, name)
    if span is None:
        return []
    before = re.search(r"(?<![\w'-])([a-z][a-z'-]+)\s+$", sentence[:span[0]])
    after = re.match(r",?\s+([a-z][a-z'-]+)(?![\w'-])", sentence[span[1]:])
    found = []
    for cue, regex in ((before, r"\b{cue}\s+(?P<name>{name})"), (after, r"(?P<name>{name}),?\s+{cue}\b")):
        if cue is None or cue.group(1) in _NOT_CUES or len(cue.group(1)) < 3:
            continue
        rx = regex.format(cue=re.escape(cue.group(1)), name=NAME_RX)
        if not any(collapse(m.group("name")) == collapse(name) for m in re.finditer(rx, sentence, re.I)):
            continue  # the cue does not give back this very name: it would teach the wrong span
        where = "before" if cue is before else "after"
        found.append({
            "kind": "entity",
            "target": type_name,
            "pattern": {"phrases": [], "regex": [rx]},
            "instruction": f"A capitalised name right {where} \"{cue.group(1)}\" is a {type_name}; "
                           "extract it as one.",
            "example": f"{cue.group(1)} [{type_name}]" if cue is before else f"[{type_name}] {cue.group(1)}",
        })
    return found


def entity_candidate(name: str, type_name: str) -> dict[str, Any]:
    """The name itself: the loop files it in the domain's gazetteer, never as a skill."""
    return {"kind": "entity", "target": type_name, "pattern": {"phrases": [collapse(name)], "regex": []},
            "instruction": f"A {type_name} name seen in training.", "example": ""}


def _answer(request: PassRequest, unsteady_only: bool) -> dict[str, Any]:
    ctx = request.context
    edge = ctx["gold_edge"]
    sentence = ctx.get("evidence") or request.chunk.text
    skills: list[dict[str, Any]] = []
    cand = relation_candidate(edge, sentence)
    if cand is not None:
        skills.append(cand)
    predictions = ctx.get("predictions") or {}
    typed = predictions.get("types")  # name -> types extracted; absent: names only
    found: dict[str, set[str]] = {}
    for n in predictions.get("entities", ()):
        found.setdefault(name_key(n), set()).update(typed.get(n, ()) if typed is not None else {"*"})
    unsteady = {name_key(n) for n in predictions.get("unsteady", ())}  # found in some rollouts, not all
    for end in ("head", "tail"):
        got = found.get(name_key(edge[end]), set())
        missed = not ({"*", edge.get(end + "_type")} & got)  # never found, or only with another type
        if edge.get(end + "_type") and (name_key(edge[end]) in unsteady if unsteady_only else missed):
            skills.extend(cue_candidates(edge[end], edge[end + "_type"], sentence))
            skills.append(entity_candidate(edge[end], edge[end + "_type"]))
    return {"skills": skills}


def induce(request: PassRequest) -> dict[str, Any]:
    """Path induction for an unstable edge: the minimal trigger between its mentions, and
    type cues for an end that some rollouts lost."""
    return _answer(request, unsteady_only=True)


def hindsight(request: PassRequest) -> dict[str, Any]:
    """Hindsight for a missed edge: an entity skill for an end never extracted, else a trigger."""
    return _answer(request, unsteady_only=False)


register_handler(SKILL_INDUCTION, induce)
register_handler(SKILL_HINDSIGHT, hindsight)
