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

import dataclasses
import re
from typing import Any, Mapping, Sequence

from kgkit.backends.base import SKILL_HINDSIGHT, SKILL_INDUCTION, PassRequest
from kgkit.backends.offline.handlers import register_handler
from kgkit.backends.offline.mentions import collapse, name_key
from kgkit.backends.offline.phrases import phrase_pattern, trigger_spans
from kgkit.backends.offline.names import ROLE_ALTERNATION, ROLES
from kgkit.backends.offline.entity_mentions import find_mentions
from kgkit.backends.offline.relations import FoundRelation, by_sentence, find_relations, rules_for
from kgkit.formats.model import EntityType, Patterns, RelationType
from kgkit.skills.cues import CLAUSE_END, NEAREST, cue_ends

MAX_WORDS = 3
_TOKEN = re.compile(r"[A-Za-z][A-Za-z'-]*|[^\sA-Za-z]")
# not cues on their own: dropped from the edges of a trigger, never an entity cue
_LEADING = frozenset("the a an who whom whose which that and or but 's s is was were are be been being has had have "
                     "also then".split())
_TRAILING = frozenset("the a an his her its their this that these those".split())
_NOT_CUES = frozenset("the a an and or but of to in on at by for from with as is was were are be been has had have "
                      "he she it they we i you his her its their this that these those who which when where while "
                      "than then there here not no s 's mr mrs ms dr".split())
# words that join two names in a list, not in a relation: no tight cue
_NOT_TIGHT = frozenset("and or but nor".split())
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


def _gap(sentence: str, head: str, tail: str) -> str | None:
    """The text between the first head and tail mentions (None when either is absent or they overlap)."""
    h, t = _mention(sentence, head), _mention(sentence, tail)
    if h is None or t is None:
        return None
    (_, a_end), (b_start, _) = sorted((h, t))
    return sentence[a_end:b_start] if a_end <= b_start else None


def tight_cue(gap: str) -> str | None:
    """A regex trigger for two names written next to each other: "Perugia in Umbria",
    "Chattanooga, Tenn." — the whole gap (a comma, at most two lowercase words) between a
    capitalised word and the next one. It holds the shape, not the names: it fires
    wherever two names are joined so, and vetting measures how often that is the relation."""
    tokens = re.findall(r"\S+", gap)
    if not tokens or len(tokens) > 3 or not gap[:1].isspace() and gap[:1] != "," or not gap[-1:].isspace():
        return None
    parts = []
    for tok in tokens:
        m = re.fullmatch(r"(,?)([a-z]+)?(,?)", tok)
        if m is None or not tok:
            return None
        parts += [x for x in m.groups() if x]
    if sum(1 for p in parts if p != ",") > 2 or any(p in _NOT_TIGHT for p in parts):
        return None
    body = r"\s*" + r"\s*".join(re.escape(p) if p == "," else r"(?<!\w)" + p + r"(?!\w)" for p in parts) + r"\s*"
    return r"(?<=\b(?-i:[A-Z])[\w'.-]*)" + body + r"(?=(?-i:[A-Z]))"


def juxtaposition_cue(capitals: bool) -> str:
    """A nearest-shaped regex trigger for two names with only blanks between them, the later
    one written in ``capitals`` when the evidence writes it so ("Lisbon GAZETA" in a
    source line; "Acme spokesman Lee" is not one: a word stands between). Only in the nearest
    shape (:func:`relations_with_skills`): a blank stands between every two capitalised
    words, and bound as a plain trigger it would join any two names around one. On the
    CoNLL04 tune half, as OrgBased_In: 7 right and 52 wrong relations plain, 6 and 11
    nearest, 6 and 0 nearest before a name in capitals."""
    later = r"(?-i:[A-Z][A-Z]+\b)" if capitals else r"(?-i:[A-Z])"
    return NEAREST + r"(?<=\b(?-i:[A-Z])[\w'.-]*)\s+(?=" + later + ")"


def relation_candidates(edge: Mapping[str, Any], sentence: str, typed: bool = False) -> list[dict[str, Any]]:
    """The trigger between the mentions, then the shorter cues inside it, then a tight cue.

    A trigger read off one sentence ("processing plant in") rarely recurs; the words next
    to the later mention ("plant in", "in") often do. Each is a candidate, the whole
    trigger first: vetting refuses those that fire in too few training documents or too
    imprecisely, and a shorter cue is kept only where it adds what the longer one did not.
    With ``typed`` (``skills.typed_cues``) each one-word cue is followed by its *typed* form (:func:`typed_cue`). Last, when the names are written next to each other, a *tight cue*
    (:func:`tight_cue`): the shape "Name in Name", "Name, Name"; or, with only blanks between
    them, a *juxtaposition cue* (:func:`juxtaposition_cue`).
    """
    head, tail, rel = edge.get("head_type") or "entity", edge.get("tail_type") or "entity", edge["relation"]
    emit = f"emit {rel}({head}, {tail})."
    found = []
    gap = _gap(sentence, edge["head"], edge["tail"])
    tight = tight_cue(gap) if gap is not None else None
    if tight is not None and gap is not None:  # a tight cue only for a gap
        joint = " ".join(gap.split()) or ","
        found.append(_cue(rel, [tight], f"Two names written next to each other, joined only by \"{joint}\" "
                                         f"(a {head} and a {tail}): {emit}",
                          f"[{head}]{'' if joint.startswith(',') else ' '}{joint} [{tail}]"))
    elif gap and not gap.strip():
        spans = (_mention(sentence, edge["head"]), _mention(sentence, edge["tail"]))
        later = max(s for s in spans if s is not None)  # a gap: both are mentioned
        word = sentence[later[0]:later[1]].split()[0]
        capitals = len(word) > 1 and word.isupper()
        found.append(_cue(rel, [juxtaposition_cue(capitals)],
                          f"A {head} and a {tail} side by side, nothing between them (as in a dateline"
                          f"{', the second in capitals' if capitals else ''}): {emit}",
                          f"[{head}] [{tail}]"))
    words = between_words(sentence, edge["head"], edge["tail"])
    phrases = [" ".join(words[i:]) for i in range(len(words))]
    phrases = [p for p in dict.fromkeys(phrases) if p.split()[0] not in _LEADING]
    out = []
    for phrase in phrases:  # instruction and example from the pattern alone: no name, no gold passage
        example = f"[{head}] {phrase} [{tail}]"
        nearest_to = f"\"{phrase}\" between a {head} and a {tail} that are the names nearest to it, in one clause"
        out.append(_cue(rel, [], f"{head} … \"{phrase}\" … {tail} in one sentence: {emit}", example, phrases=[phrase]))
        if typed and " " not in phrase:
            out.append(_cue(rel, [typed_cue(phrase, head, tail)], f"{nearest_to} (only those types): {emit}", example))
    if any(w in ROLES for w in words):
        out.append(role_candidate(edge))
    return out + found


def _cue(rel: str, regex: list[str], instruction: str, example: str, phrases: Sequence[str] = ()) -> dict[str, Any]:
    """A relation skill candidate: its pattern, and an instruction and example written from it."""
    return {"kind": "relation", "target": rel, "pattern": {"phrases": list(phrases), "regex": regex},
            "instruction": instruction, "example": example}


def role_cue() -> str:
    """Any role noun the offline rules know (spokesman, chief, leader, correspondent, …) as a
    nearest-shaped relation cue: "the Acme spokesman Lee Smith" binds Acme and Lee Smith."""
    return NEAREST + r"(?<!\w)(?:" + ROLE_ALTERNATION + r")(?!\w)"


def role_candidate(edge: Mapping[str, Any]) -> dict[str, Any]:
    """A trigger that is a role noun, generalised to the class (:func:`role_cue`): one document's
    "spokesman" rarely recurs, a role noun between an organisation and a person often does."""
    head, tail, rel = edge.get("head_type") or "entity", edge.get("tail_type") or "entity", edge["relation"]
    return _cue(rel, [role_cue()], f"A role noun (spokesman, chief, leader, correspondent, …) between a {head} and "
                                   f"a {tail} that are the names nearest to it, in one clause: emit {rel}({head}, {tail}).",
                f"[{tail}] spokesman [{head}]")


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


def title_candidates(name: str, type_name: str, sentence: str, found: set[str]) -> list[dict[str, Any]]:
    """An entity skill for a naming convention: the gold name begins with a capitalised title
    the rules leave out ("President X" where only "X" was extracted), so the skill takes the
    title word and the capitalised name after it as one name. Only when a found name is
    exactly the gold name without its leading word — an abbreviation ("Gen.") or before a
    name of two words or more, so a first name before a surname is not taken for a
    title — and the regex gives back the gold name on its own sentence; the title is a word of the language, not a name (vetting
    refuses a title that spells a training name)."""
    words = collapse(name).split()
    if len(words) < 2 or name_key(" ".join(words[1:])) not in found or not re.fullmatch(r"[A-Z][A-Za-z]*\.?", words[0]):
        return []
    if not words[0].endswith(".") and len(words) < 3:  # "Ida Brandt" where "Brandt" was found: a first name
        return []
    title = words[0]
    rx = r"(?<![\w.])(?P<name>(?-i:" + re.escape(title) + r")\s+" + NAME_RX + ")"
    if not any(collapse(m.group("name")) == collapse(name) for m in re.finditer(rx, sentence, re.I)):
        return []
    return [{
        "kind": "entity",
        "target": type_name,
        "pattern": {"phrases": [], "regex": [rx]},
        "instruction": f"When \"{title}\" is written before a capitalised name, the {type_name} is named with it: "
                       f"extract \"{title} …\" as one {type_name}.",
        "example": f"[{title} {type_name}]",
    }]


def entity_candidate(name: str, type_name: str) -> dict[str, Any]:
    """The name itself: the loop files it in the domain's gazetteer, never as a skill."""
    return {"kind": "entity", "target": type_name, "pattern": {"phrases": [collapse(name)], "regex": []},
            "instruction": f"A {type_name} name seen in training.", "example": ""}


def nearest_cue(phrase: str) -> str:
    """``phrase`` as a relation cue regex that carries the *nearest* shape (:func:`relations_with_skills`)."""
    return NEAREST + r"(?<!\w)" + phrase_pattern(phrase) + r"(?!\w)"


def typed_cue(phrase: str, head: str, tail: str) -> str:
    """``phrase`` as a nearest-shaped cue that binds only a ``head`` and a ``tail`` of the types of
    the edge it was learned from: "in" between two places is Located_In, between a company and
    a place it is not, though the relation allows an organisation as its head too."""
    return NEAREST + f"(?#ends:{head}>{tail})" + r"(?<!\w)" + phrase_pattern(phrase) + r"(?!\w)"


def nearest_pair(text: str, in_sent: Sequence[Any], start: int, end: int) -> tuple[Any, Any] | None:
    """The mentions nearest to a cue at ``text[start:end]``, one on each side, when no clause
    punctuation stands between either and the cue (``in_sent``: a sentence's mentions, in order)."""
    left = next((m for m in reversed(in_sent) if m.end <= start), None)
    right = next((m for m in in_sent if m.start >= end), None)
    if left is None or right is None or left.name == right.name \
            or CLAUSE_END.search(text[left.end:start]) or CLAUSE_END.search(text[end:right.start]):
        return None
    return left, right


def _partition(regexes: Sequence[str]) -> tuple[list[str], list[str]]:
    """(plain regexes, nearest-shaped ones)."""
    return [r for r in regexes if not r.startswith(NEAREST)], [r for r in regexes if r.startswith(NEAREST)]


def split_shaped(patterns: Patterns) -> tuple[Patterns, Patterns]:
    """A cue's plain patterns and its nearest-shaped regexes, apart."""
    plain, near = _partition(patterns.regex)
    return Patterns(tuple(plain), patterns.phrases), Patterns(tuple(near))


def _shaped_skills(skills: Sequence[Mapping[str, Any]]) -> tuple[list[Mapping[str, Any]], list[dict[str, Any]]]:
    """Each relation skill's nearest-shaped regexes apart from the rest of its pattern."""
    plain: list[Mapping[str, Any]] = []
    shaped: list[dict[str, Any]] = []
    for sk in skills:
        pattern = sk.get("pattern") or {}
        rest, near = _partition(pattern.get("regex", ()))
        if sk.get("kind") != "relation" or not near:
            plain.append(sk)
            continue
        plain.append({**sk, "pattern": {**pattern, "regex": rest}})
        groups: dict[tuple[str, str] | None, list[str]] = {}
        for r in near:
            groups.setdefault(cue_ends(r), []).append(r)
        for ends, these in groups.items():
            shaped.append({**sk, "pattern": {"phrases": [], "regex": these}, "ends": ends})
    return plain, shaped


def relations_with_skills(text: str, entities: Sequence[Mapping[str, Any]], types: Sequence[EntityType],
                          relation_types: Sequence[RelationType], skills: Sequence[Mapping[str, Any]] = ()
                          ) -> list[FoundRelation]:
    """Relations by the base rules (declared triggers and plain relation skills bound as
    :func:`~kgkit.backends.offline.relations.find_relations` binds a trigger), plus those of
    *nearest-shaped* relation cues (a regex beginning ``(?#nearest)``, :func:`nearest_cue`).

    A shaped cue binds only the two names nearest to it, one on each side, in one clause (no
    comma, semicolon, colon, bracket or quote between either name and the cue), and only
    when their types are ends the relation allows: "the Acme plant in Dayton" binds Acme and
    Dayton, "Acme's Lee said in Dayton" binds nothing for a relation of an Org and a place (Lee is
    nearer). The base rules let a trigger anywhere between two names bind the nearest head
    to each tail, which is how a frequent word ("in") learned as a cue goes wrong: on the
    CoNLL04 tune half "in" as Located_In adds 8 right and 47 wrong relations bound so, 7
    and 12 bound nearest. Such a cue is proposed in both forms, the plain one first; the
    loop's checks decide which, if either, is kept.
    """
    plain, shaped = _shaped_skills(skills)
    found = find_relations(text, entities, types, relation_types, plain)
    bare = [dataclasses.replace(r, triggers=Patterns()) for r in relation_types]
    rules = []
    for sk in shaped:  # a typed cue binds only the ends it was learned with
        for rule in rules_for(bare, [sk]):
            ends = sk["ends"]
            rules.append(dataclasses.replace(rule, head=(ends[0],), tail=(ends[1],)) if ends else rule)
    if not rules:
        return found
    have = {(r.head, r.relation, r.tail) for r in found}
    mentions = find_mentions(text, entities, types)
    for sent, in_sent in by_sentence(text, mentions):
        if len(in_sent) < 2:
            continue
        for rule in rules:
            for s, e in trigger_spans(rule.triggers, text, sent):
                pair = nearest_pair(text, in_sent, s, e)
                if pair is None:
                    continue
                left, right = pair
                if rule.allows(left.type, right.type):
                    head, tail = left.name, right.name
                elif rule.allows(right.type, left.type):
                    head, tail = right.name, left.name
                else:
                    continue
                if rule.symmetric and tail < head:
                    head, tail = tail, head
                if (head, rule.relation, tail) not in have:
                    have.add((head, rule.relation, tail))
                    found.append(FoundRelation(head, rule.relation, tail, sent.text, rule.confidence))
    return found


def _answer(request: PassRequest, unsteady_only: bool) -> dict[str, Any]:
    ctx = request.context
    edge = ctx["gold_edge"]
    sentence = ctx.get("evidence") or request.chunk.text
    skills: list[dict[str, Any]] = []
    rt = ctx["domain"].relation_type(edge["relation"]) if ctx.get("domain") is not None else None
    # skills.typed_cues, for a relation that allows other end types than this edge's: typed cues too
    narrow = bool(ctx.get("typed_cues") and rt is not None and edge.get("head_type") and edge.get("tail_type")
                  and any("*" in ends or len(ends) > 1 for ends in (rt.head, rt.tail)))
    skills.extend(relation_candidates(edge, sentence, typed=narrow))
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
            skills.extend(title_candidates(edge[end], edge[end + "_type"], sentence, set(found)))
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
