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
  whose trigger is attached to it (within a few characters).

Entities are found in the text by name and aliases (case- and spacing-insensitive), by
normalised value for literal types (a Date entity "January 20, 2014" is found as
"01/20/2014" too), by their type's label cues for categories (a ClauseType "Anti-Assignment"
where "may not assign" is written), and by a capitalised head noun after "this"/"the" ("this Agreement" is the
document's own node, and so is "the Agreement" where the document has one; "the University" the
only entity ending in University); "hereof" is the document's own node.
"""
from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field
from typing import Any, Collection, Iterator, Mapping, Sequence

from kgkit.guards import safe_regex
from kgkit.text.phrase_match import find_alternation
from kgkit.backends.offline.mentions import collapse, name_key
from kgkit.backends.offline.phrases import phrase_pattern, skill_patterns, trigger_spans
from kgkit.backends.offline.shapes import CLAUSE_LENGTH
from kgkit.text.literals import KINDS as LITERAL_KINDS, find_literals, normalise, recurring
from kgkit.text.type_kinds import literal_types
from kgkit.text.sentences import Sentence, sentence_at, split_sentences
from kgkit.formats.model import EntityType, Patterns, RelationType

ATTACHED = 30  # characters: a trigger this close to a tail binds it even when another is nearer
AFTER = 3  # characters: a trigger this close after the tail binds it ("2014's effective date")
OBJECT_AFTER = 5  # characters: a mention this close after a trigger is the trigger's own object
PAREN_AFTER = 60  # characters: the same, inside a parenthesis that opens right after the mention


_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True)
class EntityMention:
    name: str  # the V_doc entity's name
    type: str
    start: int
    end: int
    deictic: bool = False  # "this Agreement": the document's own entity


@dataclass(frozen=True)
class FoundRelation:
    head: str
    relation: str
    tail: str
    evidence: str
    confidence: float


Entity = Mapping[str, Any]


@dataclass
class _Surfaces:
    """V_doc's entities indexed for finding them in a chunk: by each written form (name,
    bare name, aliases; lower case), literal-typed ones by normalised value, and by the head
    noun that may stand for them ("the University", "this Agreement")."""

    owners: dict[str, list[Entity]] = field(default_factory=dict)
    by_value: dict[tuple[str, str, bool], Entity] = field(default_factory=dict)
    heads: dict[str, list[Entity]] = field(default_factory=dict)
    own_words: set[str] = field(default_factory=set)  # the head nouns that name the document's own node


def find_mentions(text: str, entities: Sequence[Entity], types: Sequence[EntityType]) -> list[EntityMention]:
    """Where each V_doc entity occurs in ``text``; overlapping mentions keep the longest
    (clause-like mentions and names do not hide each other, as in entity finding).

    Each way an entity is found is a stage: its written forms, its type's label cues, its
    normalised value (literals), a head noun standing for it, "hereof"."""
    surfaces = _surfaces(entities, types)
    found = _form_mentions(text, surfaces.owners)
    found += _label_mentions(text, entities, types)
    found += _value_mentions(text, surfaces.by_value)
    found += _head_noun_mentions(text, surfaces)
    found.extend(_here_words(text, entities))
    found.sort(key=lambda x: (-(x.end - x.start), x.start))
    return sorted(_outer_values(_longest(found), set(literal_types(types))), key=lambda x: (x.start, x.name))


def _outer_values(kept: list[EntityMention], values: set[str]) -> list[EntityMention]:
    """``kept`` (longest first) without a value inside a longer value of its type: "three (3)
    years" in "successive renewal terms of three (3) years" is that period, not one of its own."""
    if not values:
        return kept
    outer: list[EntityMention] = []
    out = []
    for x in kept:
        if x.type in values:
            if any(o.type == x.type and o.start <= x.start and x.end <= o.end and (o.start, o.end) != (x.start, x.end)
                   for o in outer):
                continue
            outer.append(x)
        out.append(x)
    return out


def _surfaces(entities: Sequence[Entity], types: Sequence[EntityType]) -> _Surfaces:
    """One pass over the entities, each index filled in their order."""
    literal_of = literal_types(types)
    out = _Surfaces()
    # the words that name a type's own document node after "this": its name and one-word aliases
    doc_heads = {t.name: tuple(dict.fromkeys([t.name.lower(), *(a.lower() for a in t.aliases if a.isalpha())]))
                 for t in types}
    for ent in entities:
        name = ent["name"]
        # "CO-BRANDING AGREEMENT (FORM)" is written without "(FORM)"
        bare = _PAREN_TAIL.sub("", name) if "(" in name else name
        aliases = ent.get("aliases")
        for form in dict.fromkeys([name, bare, *aliases]) if aliases else (name,) if bare == name else (name, bare):
            surface = collapse(form)
            if surface:  # its name_key, collapsed once
                owners = out.owners.setdefault(surface.lower().rstrip(".,;: "), [])
                if ent not in owners:
                    owners.append(ent)  # one surface may name several nodes (a Party and an Organization)
        kind = literal_of.get(ent["type"])
        value = normalise(kind, name) if kind else None
        if kind and value is not None:
            out.by_value[(kind, repr(value), recurring(name))] = ent
        words = bare.split()  # what collapse() leaves, split
        if ent.get("document"):  # "this Agreement" ("this Contract") is the document's own node, whatever its name
            for head in doc_heads.get(ent["type"], (ent["type"].lower(),)):
                out.heads.setdefault(head, []).insert(0, ent)
        elif len(words) > 1 and words[-1][:1].isupper():
            out.heads.setdefault(words[-1].lower(), []).append(ent)
    out.own_words = {w for e in entities if e.get("document") for w in doc_heads.get(e["type"], ())}
    return out


def _form_mentions(text: str, surface_owner: dict[str, list[Entity]]) -> list[EntityMention]:
    """Each written form found whole-word, case-insensitively: one scan per granularity, so
    a clause does not swallow the names in it."""
    found: list[EntityMention] = []
    tiers = ([f for f in surface_owner if len(f) >= CLAUSE_LENGTH], [f for f in surface_owner if len(f) < CLAUSE_LENGTH])
    for tier in tiers:
        if not tier:
            continue
        forms = sorted(tier, key=lambda f: (-len(f), f))
        spans = find_alternation(text, forms)  # the regex below, without compiling one per chunk
        if spans is None:
            rx = re.compile(r"(?<![\w])(?:" + "|".join(phrase_pattern(f) for f in forms) + r")(?![\w])", re.I)
            spans = [(m.start(), m.end(), -1) for m in rx.finditer(text)]
        for start, end, _ in spans:
            for ent in surface_owner.get(name_key(text[start:end]), ()):
                found.append(EntityMention(ent["name"], ent["type"], start, end))
    return found


def _label_mentions(text: str, entities: Sequence[Entity], types: Sequence[EntityType]) -> list[EntityMention]:
    """Category entities ("Anti-Assignment") by their type's label cues."""
    found: list[EntityMention] = []
    for t in types:
        for label, regexes in t.patterns.labels:
            ent = next((e for e in entities if e["type"] == t.name and name_key(e["name"]) == name_key(label)), None)
            if ent is not None:
                for rx in regexes:
                    found.extend(EntityMention(ent["name"], ent["type"], *m.span()) for m in safe_regex.finditer(rx, text))
    return found


def _value_mentions(text: str, by_value: dict[tuple[str, str, bool], Entity]) -> list[EntityMention]:
    """Literal-typed entities by normalised value ("May 26, 2017" for "26th day of May, 2017")."""
    found: list[EntityMention] = []
    if by_value:
        for lit in find_literals(text, sorted({k for k, _, _ in by_value}, key=LITERAL_KINDS.index)):
            ent = by_value.get((lit.kind, repr(lit.value), recurring(lit.surface)))
            if ent is not None:
                found.append(EntityMention(ent["name"], ent["type"], lit.start, lit.end))
    return found


def _head_noun_mentions(text: str, surfaces: _Surfaces) -> list[EntityMention]:
    """"this Agreement", "the University": a capitalised head noun standing for an entity."""
    found: list[EntityMention] = []
    heads = surfaces.heads
    for start, end, article, head in _head_nouns(text, heads):
        deictic = article.lower() == "this"  # "this agreement" is the document's own, whatever the case
        if not (head[:1].isupper() or deictic) or (name_key(head) in surfaces.owners and not deictic):
            continue
        # "the Agreement", capitalised, is the document's word for itself too: another
        # agreement is called by its name ("the Distribution Agreement")
        own = deictic or head.lower() in surfaces.own_words
        # an entity of the type the head noun names first ("this Agreement" is an
        # Agreement, not a place whose name ends in "Agreement")
        cands = sorted(heads[head.lower()], key=lambda e: (not (own and e.get("document")),
                                                             e["type"].lower() != head.lower()))
        if len(cands) == 1 or deictic or (own and cands[0].get("document")):
            found.append(EntityMention(cands[0]["name"], cands[0]["type"], start, end, deictic))
    return found


# "hereof": a document's word for itself, as "this Agreement" is ("The validity hereof
# shall be governed by the laws of Oregon"). Not "hereunder" or "hereto": "notices
# hereunder" and "the parties hereto" name those who receive notices, not the parties.
_HERE = re.compile(r"\bhereof\b", re.I)


def _here_words(text: str, entities: Sequence[Mapping[str, Any]]) -> list[EntityMention]:
    """Mentions of the document's own node (``"document": true``) where the text says
    "hereof"; none where no entity is marked as the document's. Not deictic: a clause
    type found near "hereof" is no more the document's than one found anywhere."""
    own = next((e for e in entities if e.get("document")), None)
    if own is None:
        return []
    return [EntityMention(own["name"], own["type"], m.start(), m.end()) for m in _HERE.finditer(text)]


def _longest(found: list[EntityMention]) -> list[EntityMention]:
    """Of ``found`` (longest first), those that overlap no mention kept before them, unless
    on the very same span or of the other granularity (clause-long or not)."""
    if any(x.end <= x.start for x in found):  # an empty span: the pairwise test
        return _longest_pairwise(found)
    kept: list[EntityMention] = []
    # Kept spans of one granularity are disjoint, but for repeats of one span: in start order
    # their ends rise, so the last to start before x ends (x's own span aside) is the one to test.
    spans: dict[bool, tuple[list[int], list[int]]] = {False: ([], []), True: ([], [])}
    for x in found:
        starts, ends = spans[x.end - x.start >= CLAUSE_LENGTH]
        i = j = bisect_left(starts, x.end)
        while j and starts[j - 1] == x.start and ends[j - 1] == x.end:
            j -= 1
        if j and ends[j - 1] > x.start:
            continue
        starts.insert(i, x.start)
        ends.insert(i, x.end)
        kept.append(x)
    return kept


_ARTICLE = re.compile(r"\b(this|the)\s+", re.I)
_WORD_EDGE = re.compile(r"\b")


def _head_nouns(text: str, heads: Collection[str]) -> Iterator[tuple[int, int, str, str]]:
    """(start, end, article, head noun) of each match of
    ``re.compile(r"\\b(this|the)\\s+(" + "|".join(map(re.escape, sorted(heads))) + r")\\b", re.I).finditer(text)``,
    without compiling that regex for every chunk (its entities differ from chunk to chunk).

    After each "this"/"the" and its spaces the alternation takes the first head in sorted
    order written there (any case) and ending at a word edge; heads have no spaces, so the
    spaces are never given back, and no other match can begin inside the article or its
    spaces. Heads beyond ASCII, where ``re`` folds case its own way, go to the regex."""
    ordered = sorted(heads)
    if not ordered:
        return
    if not all(h.isascii() for h in ordered):
        rx = re.compile(r"\b(this|the)\s+(" + "|".join(re.escape(h) for h in ordered) + r")\b", re.I)
        yield from ((m.start(), m.end(), m.group(1), m.group(2)) for m in rx.finditer(text))
        return
    wanted = set(ordered)
    lengths = sorted({len(h) for h in ordered})
    at = 0
    while (m := _ARTICLE.search(text, at)) is not None:
        at = m.end()
        written = []
        for n in lengths:
            word = text[at:at + n]
            if len(word) < n:
                break
            if word.isascii():
                fits = [word.lower()] if word.lower() in wanted else []
            else:  # "ſ" or the Kelvin sign, which re matches to an ASCII letter
                fits = [h for h in ordered if len(h) == n and re.fullmatch(re.escape(h), word, re.I)]
            if fits and _WORD_EDGE.match(text, at + n):
                written.append((min(fits), n))
        if written:
            _, n = min(written)
            yield m.start(), at + n, m.group(1), text[at:at + n]
            at += n


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


def _longest_pairwise(found: list[EntityMention]) -> list[EntityMention]:
    """:func:`_longest` by testing each mention against every one kept before it."""
    kept: list[EntityMention] = []
    for x in found:
        long = x.end - x.start >= CLAUSE_LENGTH
        if all(x.end <= k.start or x.start >= k.end or (x.start, x.end) == (k.start, k.end)
               or long != (k.end - k.start >= CLAUSE_LENGTH) for k in kept):
            kept.append(x)
    return kept


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
    out: dict[tuple[str, str, str], FoundRelation] = {}
    for sent, in_sent in by_sentence(text, mentions):
        if len(in_sent) < 2:
            continue
        triggers = _sentence_triggers(rules, text, sent)
        best = _nearest_heads(rules, triggers, in_sent, text, values)
        _keep_relations(best, sent.text, out)
    _categories_of_self(text, mentions, types, rules, out)
    return list(out.values())


Best = dict[tuple[EntityMention, str], tuple[int, EntityMention, _Rule]]  # (tail, relation) -> (gap, head, rule)


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


def _nearest_heads(rules: list[_Rule], triggers: dict[int, list[tuple[int, int]]], in_sent: list[EntityMention],
                   text: str, values: set[str]) -> Best:
    """For each tail mention and relation, the head its nearest binding trigger joins it to
    (or the only head the types allow, at gap 10,000: a weaker reading, never for a tail of
    one of the ``values`` types)."""
    best: Best = {}
    names_of: dict[str, set[str]] = {}  # the sentence's types, each with the names mentioned
    for m in in_sent:
        names_of.setdefault(m.type, set()).add(m.name)
    for i, rule in enumerate(rules):
        spans = triggers[i]
        if not spans:
            continue
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

