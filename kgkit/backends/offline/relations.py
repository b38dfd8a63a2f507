"""Binary relations among known entities: sentence co-occurrence plus a declared trigger.

A relation type (or a relation skill) yields ``(head, relation, tail)`` in a sentence when
both ends are V_doc entities of types the relation allows and one of its triggers is in
the sentence. Which pairs and which relations:

* a trigger *between* the two mentions binds them; so does a trigger just after the tail
  or inside a parenthesis right after it (``January 21, 2005 (the "Effective Date")``); otherwise the pair only counts when
  it is the sentence's single candidate pair for that relation and its tail is no value (a
  sentence names dates and periods for many purposes: "during the term of this Agreement and
  for six months after" states no term);
* a trigger inside a longer trigger of another relation does not count ("renew" inside
  "intent not to renew");
* each tail mention takes the nearest head with a binding trigger; among relations with
  the same end types, a tail keeps the relation whose trigger is nearest to it, plus any
  whose trigger is attached to it (within a few characters);
* a trigger regex may mark, with a group named ``document``, words that state the relation
  of the document itself ("All disputes **shall be governed by** the laws of Ohio"): in a
  sentence that names no entity of the relation's head types, those words stand for the
  document's own node (``"document": true``), for that relation only.

Entities are found in the text by :mod:`kgkit.backends.offline.entity_mentions`.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any, Iterator, Mapping, Sequence

from kgkit.backends.offline.entity_mentions import EntityMention, find_mentions
from kgkit.guards import safe_regex
from kgkit.backends.offline.phrases import skill_patterns, trigger_spans
from kgkit.text.type_kinds import literal_types
from kgkit.text.sentences import Sentence, sentence_at, split_sentences
from kgkit.formats.model import EntityType, Patterns, RelationType

ATTACHED = 30  # characters: a trigger this close to a tail binds it even when another is nearer
AFTER = 3  # characters: a trigger this close after the tail binds it ("2014's effective date")
OBJECT_AFTER = 5  # characters: a mention this close after a trigger is the trigger's own object
PAREN_AFTER = 60  # characters: the same, inside a parenthesis that opens right after the mention


@dataclass(frozen=True)
class FoundRelation:
    head: str
    relation: str
    tail: str
    evidence: str
    confidence: float


@dataclass(frozen=True)
class _Rule:
    relation: str
    head: tuple[str, ...]
    tail: tuple[str, ...]
    triggers: Patterns
    symmetric: bool
    confidence: float

    def allows(self, h: str, t: str) -> bool:
        ok = ("*" in self.head or h in self.head) and ("*" in self.tail or t in self.tail)
        return ok or (self.symmetric and ("*" in self.head or t in self.head) and ("*" in self.tail or h in self.tail))


def rules_for(relation_types: Sequence[RelationType], skills: Sequence[Mapping[str, Any]] = ()) -> list[_Rule]:
    """Declared relation types plus relation skills, each as a trigger rule."""
    rules = [_Rule(r.name, r.head, r.tail, r.triggers, r.symmetric, 0.8) for r in relation_types if r.triggers]
    by_name = {r.name.lower(): r for r in relation_types}
    for r in relation_types:
        for a in r.aliases:
            by_name.setdefault(a.lower(), r)
    for sk in skills:
        if sk.get("kind") != "relation":
            continue
        rt = by_name.get(str(sk.get("target", "")).lower())
        trig = skill_patterns(sk)
        if rt is not None and trig:
            rules.append(_Rule(rt.name, rt.head, rt.tail, trig, rt.symmetric, 0.7))
    return rules


def _just_after(text: str, end: int, trigger_start: int) -> bool:
    """A trigger right after a mention, or inside the parenthesis that follows it
    (``May 26, 2017 (hereinafter referred to as the effective date …``)."""
    gap = text[end:trigger_start]
    if trigger_start < end:
        return False
    if len(gap) <= AFTER:
        return True
    return len(gap) <= PAREN_AFTER and gap.lstrip(" ,").startswith("(") and ")" not in gap


def _cue_gap(trigger: tuple[int, int], t: EntityMention, text: str) -> int:
    """How far a binding trigger is from the tail: one in the parenthesis right after it
    (``May 26, 2017 (hereinafter referred to as the effective date …``) is attached to it,
    however long the parenthesis."""
    if t.end <= trigger[0] and _just_after(text, t.end, trigger[0]):
        return min(trigger[0] - t.end, AFTER)
    return abs(_gap(trigger, t))


def _object_follows(trigger: tuple[int, int], tail: EntityMention, in_sent: Sequence[EntityMention]) -> bool:
    """Whether another mention of the tail's type follows the trigger at once: then the
    trigger is that one's ("dated June 1, **effective as of** July 1"), not the tail's before it."""
    return any(m.type == tail.type and m.name != tail.name and 0 <= m.start - trigger[1] <= OBJECT_AFTER
               for m in in_sent)


def _cues_another(trigger: tuple[int, int], tail: EntityMention, text: str, in_sent: Sequence[EntityMention]) -> bool:
    """Whether the trigger is attached to another mention of the tail's type, right after it
    or in its parenthesis ("May 4 ... May 26, 2017 (the effective date of the Agreement)")."""
    return any(m.type == tail.type and m.name != tail.name and tail.end <= m.start and m.end <= trigger[0]
               and _just_after(text, m.end, trigger[0]) for m in in_sent)


def _inside(span: tuple[int, int], m: EntityMention) -> bool:
    return m.start <= span[0] and span[1] <= m.end


def _cues_for(spans: list[tuple[int, int]], tail: EntityMention, in_sent: Sequence[EntityMention]
              ) -> list[tuple[int, int]]:
    """The trigger spans that may cue ``tail``: not one inside another mention of the tail's
    type, which is that one's name ("shall begin on the Effective Date and continue until
    December 31")."""
    return [sp for sp in spans if not any(m.type == tail.type and m.name != tail.name and _inside(sp, m)
                                          for m in in_sent)]


def _binding(spans: list[tuple[int, int]], h: EntityMention, t: EntityMention, text: str,
             in_sent: Sequence[EntityMention], value: bool = False) -> list[tuple[int, int]]:
    """The trigger spans that bind head ``h`` to tail ``t``: one between them (for a
    ``value`` tail, unless the trigger's own value follows it or it is attached to another
    value after the tail: in "May 4 ... this Agreement is entered into as of May 26" the cue
    is May 26's, where "between A and B" lists two names); one just after the tail (unless the trigger's own object follows it); one
    inside the tail, which carries its own cue ("successive renewal terms of three years")."""
    lo, hi = sorted((h, t), key=lambda x: x.start)
    binding = [sp for sp in spans if lo.end <= sp[0] and sp[1] <= hi.start
               and not (value and (_object_follows(sp, t, in_sent) or _cues_another(sp, t, text, in_sent)))]
    if hi is t:
        binding += [sp for sp in spans if _just_after(text, t.end, sp[0]) and not _object_follows(sp, t, in_sent)]
        binding += [sp for sp in spans if _inside(sp, t)]
    return binding


def _heads(in_sent: list[EntityMention], names_of: dict[str, set[str]], pairs: set[tuple[str, str]]
           ) -> list[EntityMention]:
    """The mentions of ``in_sent`` that some mention of another name may follow as tail
    (``(head type, tail type)`` in ``pairs``; ``names_of``: the names of each type there), in
    order. Per head type, the names its tails may have: where that is one name, the mention
    of that very name is the one without a tail, so no mention is compared with every other."""
    lone_tail: dict[str, str | None] = {}
    for a in names_of:
        tails = {n for b, names in names_of.items() if (a, b) in pairs for n in names}
        if tails:
            lone_tail[a] = next(iter(tails)) if len(tails) == 1 else None
    return [m for m in in_sent if m.type in lone_tail and m.name != lone_tail[m.type]]


def _gap(trigger: tuple[int, int], m: EntityMention) -> int:
    return m.start - trigger[1] if trigger[1] <= m.start else trigger[0] - m.end


def by_sentence(text: str, mentions: Sequence[EntityMention]) -> Iterator[tuple[Any, list[EntityMention]]]:
    """Each sentence of ``text`` with the ``mentions`` inside it, found by bisection
    (``mentions`` in order of start, as :func:`find_mentions` returns them)."""
    starts = [m.start for m in mentions]
    for sent in split_sentences(text):
        yield sent, [m for m in mentions[bisect_left(starts, sent.start):bisect_right(starts, sent.end)]
                     if m.end <= sent.end]


def find_relations(
    text: str,
    entities: Sequence[Mapping[str, Any]],
    types: Sequence[EntityType],
    relation_types: Sequence[RelationType],
    skills: Sequence[Mapping[str, Any]] = (),
) -> list[FoundRelation]:
    """Relations among ``entities`` (V_doc node dicts) stated in ``text``; deterministic order."""
    rules = rules_for(relation_types, skills)
    mentions = find_mentions(text, entities, types)
    values = set(literal_types(types))  # a value ends a relation only where a trigger binds it
    document_words = _document_words(rules, text, entities)
    out: dict[tuple[str, str, str], FoundRelation] = {}
    for sent, in_sent in by_sentence(text, mentions):
        own = _standing_for_document(rules, document_words, sent, in_sent)
        if len(in_sent) < 2 and not own:
            continue
        triggers = _sentence_triggers(rules, text, sent)
        best = _nearest_heads(rules, triggers, in_sent, text, values, own)
        _keep_relations(best, sent.text, out)
    _categories_of_self(text, mentions, types, rules, out)
    return list(out.values())


Best = dict[tuple[EntityMention, str], tuple[int, EntityMention, _Rule]]  # (tail, relation) -> (gap, head, rule)
DOCUMENT_GROUP = "document"  # a trigger regex's group marking words that stand for the document itself


def _document_words(rules: list[_Rule], text: str, entities: Sequence[Mapping[str, Any]]
                    ) -> dict[int, list[EntityMention]]:
    """Per rule (by index), the places its trigger regexes' group ``document`` marks, each a
    mention of the document's own node: none where no entity is marked as the document's or
    its type may not head the rule."""
    own = next((e for e in entities if e.get("document")), None)
    out: dict[int, list[EntityMention]] = {}
    if own is None:
        return out
    for i, rule in enumerate(rules):
        if not ("*" in rule.head or own["type"] in rule.head):
            continue
        for rx in rule.triggers.regex:
            if f"(?P<{DOCUMENT_GROUP}>" not in rx:
                continue
            out.setdefault(i, []).extend(
                EntityMention(own["name"], own["type"], *m.span(DOCUMENT_GROUP)) for m in safe_regex.finditer(rx, text)
                if m.group(DOCUMENT_GROUP) is not None and m.end(DOCUMENT_GROUP) > m.start(DOCUMENT_GROUP))
    return out


def _standing_for_document(rules: list[_Rule], words: dict[int, list[EntityMention]], sent: Sentence,
                           in_sent: Sequence[EntityMention]) -> dict[int, list[EntityMention]]:
    """The document words of each rule inside ``sent``, where the sentence names no entity
    of the rule's head types (one it names is the head a trigger binds, as ever) and does not
    write a head type's name ("The Escrow Agreement shall be governed by ...", of an
    agreement the finder does not know, is not the document's)."""
    out: dict[int, list[EntityMention]] = {}
    for i, found in words.items():
        head = rules[i].head
        if any("*" in head or m.type in head for m in in_sent) or any(
                re.search(rf"\b{re.escape(h)}\b", sent.text, re.I) for h in head):
            continue
        inside = [m for m in found if sent.start <= m.start and m.end <= sent.end]
        if inside:
            out[i] = inside
    return out


def _sentence_triggers(rules: list[_Rule], text: str, sent: Sentence) -> dict[int, list[tuple[int, int]]]:
    """Each rule's trigger spans in the sentence, by rule index; a trigger inside a longer
    trigger of another relation is shadowed."""
    triggers = {i: trigger_spans(rule.triggers, text, sent) for i, rule in enumerate(rules)}
    all_spans = [(s, e, i) for i, spans in triggers.items() for s, e in spans]
    for i in triggers:
        triggers[i] = [(s, e) for s, e in triggers[i]
                       if not any(j != i and rules[j].relation != rules[i].relation and s2 <= s and e <= e2
                                  and (e2 - s2) > (e - s) for s2, e2, j in all_spans)]
    return triggers


def _nearest_heads(rules: list[_Rule], triggers: dict[int, list[tuple[int, int]]], sentence: list[EntityMention],
                   text: str, values: set[str], own: Mapping[int, list[EntityMention]]) -> Best:
    """For each tail mention and relation, the head its nearest binding trigger joins it to
    (or the only head the types allow, at gap 10,000: a weaker reading, never for a tail of
    one of the ``values`` types). ``own``: per rule, the words standing for the document there."""
    best: Best = {}
    for i, rule in enumerate(rules):
        spans = triggers[i]
        if not spans:
            continue
        in_sent = sorted([*sentence, *own[i]], key=lambda m: (m.start, m.name)) if i in own else sentence
        names_of: dict[str, set[str]] = {}  # the sentence's types, each with the names mentioned
        for m in in_sent:
            names_of.setdefault(m.type, set()).add(m.name)
        pairs = {(a, b) for a in names_of for b in names_of if rule.allows(a, b)}  # rule.allows, looked up
        heads = _heads(in_sent, names_of, pairs)
        for t in in_sent:
            cands = [h for h in heads if h.name != t.name and (h.type, t.type) in pairs]
            spans = _cues_for(triggers[i], t, in_sent)
            for h in cands:
                binding = _binding(spans, h, t, text, in_sent, t.type in values)
                if binding and h.start > t.start and not rule.symmetric and (t.type, h.type) in pairs:
                    continue  # both orders type-check: read the one the sentence states, head first
                if binding:
                    gap = min(0 if _inside(sp, t) else _cue_gap(sp, t, text) for sp in binding)
                elif t.type not in values and len({c.name for c in cands}) == 1 and len({x.name for x in in_sent if any(
                        (c.type, x.type) in pairs for c in cands)}) == 1:
                    gap = 10_000
                else:
                    continue
                key = (t, rule.relation)
                dist = abs(h.start - t.start)
                prev = best.get(key)
                if prev is None or (gap, dist) < (prev[0], abs(prev[1].start - t.start)):
                    best[key] = (gap, h, rule)
    return best


def _keep_relations(best: Best, evidence: str, out: dict[tuple[str, str, str], FoundRelation]) -> None:
    """Same tail, same end-type signature: keep the nearest trigger, plus attached ones; into
    ``out``, the more confident of two findings of one relation kept."""
    for (t, relation), (gap, h, rule) in sorted(best.items(), key=lambda kv: (kv[0][0].start, kv[0][1])):
        rivals = [g for (t2, r2), (g, h2, rule2) in best.items()
                  if t2 == t and r2 != relation and rule2.head == rule.head and rule2.tail == rule.tail]
        if rivals and gap > min(rivals) and (gap > ATTACHED or min(rivals) == 0):
            continue  # a farther trigger yields, attached or not, to one at the tail itself
        head, tail = h.name, t.name
        conf = rule.confidence if gap < 10_000 else rule.confidence - 0.3
        if rule.symmetric and tail < head:
            head, tail = tail, head
        key3 = (head, relation, tail)
        if key3 not in out or out[key3].confidence < conf:
            out[key3] = FoundRelation(head, relation, tail, evidence, round(conf, 2))


def _categories_of_self(text: str, mentions: list[EntityMention], types: Sequence[EntityType], rules: list[_Rule],
                        out: dict[tuple[str, str, str], FoundRelation]) -> None:
    """A category found in a chunk (a clause type, by its type's label cues) belongs to the
    entity the chunk calls "this Agreement", though the sentence stating it may not name it.

    Only relations whose tail types are all category types take this reading, with a
    lower confidence than a relation stated in one sentence.
    """
    category_types = {t.name for t in types if t.patterns.labels}
    selves = [m for m in mentions if m.deictic]
    if not category_types or not selves:
        return
    sentences = split_sentences(text)
    for rule in rules:
        if "*" in rule.tail or not set(rule.tail) <= category_types:
            continue
        self_ = next((m for m in selves if rule.allows(m.type, rule.tail[0])), None)
        if self_ is None:
            continue
        for t in mentions:
            key3 = (self_.name, rule.relation, t.name)
            if t.type in rule.tail and key3 not in out:
                found_in = sentence_at(sentences, t.start)
                evidence = found_in.text if found_in else text[t.start:t.end]
                out[key3] = FoundRelation(self_.name, rule.relation, t.name, evidence, round(rule.confidence - 0.3, 2))

