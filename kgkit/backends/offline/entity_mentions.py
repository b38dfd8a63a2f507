"""Where a document's known entities (V_doc) are mentioned in a chunk: the mentions the
relation finder and the upgrade views pair up.

Entities are found in the text by name and aliases (case- and spacing-insensitive), by
normalised value for literal types (a Date entity "January 20, 2014" is found as
"01/20/2014" too), by their type's label cues for categories (a ClauseType "Anti-Assignment"
where "may not assign" is written), and by a capitalised head noun after "this"/"the" ("this Agreement" is the
document's own node, and so is "the Agreement" where the document has one; "the University" the
only entity ending in University); "hereof" is the document's own node.
"""
from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import dataclass, field
from typing import Any, Collection, Iterator, Mapping, Sequence

from kgkit.guards import safe_regex
from kgkit.text.phrase_match import find_alternation
from kgkit.backends.offline.mentions import collapse, name_key
from kgkit.backends.offline.phrases import phrase_pattern
from kgkit.backends.offline.shapes import CLAUSE_LENGTH
from kgkit.text.literals import KINDS as LITERAL_KINDS, find_literals, normalise, recurring
from kgkit.text.type_kinds import literal_types
from kgkit.formats.model import EntityType

_PAREN_TAIL = re.compile(r"\s*\([^()]*\)\s*$")


@dataclass(frozen=True)
class EntityMention:
    name: str  # the V_doc entity's name
    type: str
    start: int
    end: int
    deictic: bool = False  # "this Agreement": the document's own entity


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
    found = _this_named_is_own(text, found, entities)
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


_THIS_BEFORE = re.compile(r"\bthis\s+$", re.I)


def _this_named_is_own(text: str, found: list[EntityMention], entities: Sequence[Mapping[str, Any]]
                       ) -> list[EntityMention]:
    """A name of the document's type written after "this" is the document itself, whatever
    its title: "This Endorsement Agreement shall be governed by ..." in a contract titled
    "Promotion and Endorsement Agreement" (a contract calls another agreement "the" one)."""
    own = next((e for e in entities if e.get("document")), None)
    if own is None:
        return found
    return [EntityMention(own["name"], own["type"], m.start, m.end, True)
            if m.type == own["type"] and m.name != own["name"] and _THIS_BEFORE.search(text, max(0, m.start - 8), m.start)
            else m for m in found]


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


def _longest_pairwise(found: list[EntityMention]) -> list[EntityMention]:
    """:func:`_longest` by testing each mention against every one kept before it."""
    kept: list[EntityMention] = []
    for x in found:
        long = x.end - x.start >= CLAUSE_LENGTH
        if all(x.end <= k.start or x.start >= k.end or (x.start, x.end) == (k.start, k.end)
               or long != (k.end - k.start >= CLAUSE_LENGTH) for k in kept):
            kept.append(x)
    return kept
