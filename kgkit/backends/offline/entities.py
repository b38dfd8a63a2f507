"""Find typed entity mentions in text from declared patterns and generic rules.

Sources, strongest first (an overlap keeps the stronger, then the longer):

1. the entity types' ``patterns`` in the domain or template YAML, and entity skills:
   regexes (case-insensitive; use ``(?-i:...)`` where case matters; a named group
   ``name`` gives the entity's name, otherwise the whole match) and phrases;
2. generic rules: literals (dates, durations, money, percentages, quantities — see
   :mod:`.literals`), company names with a legal suffix ("Acme Corp.", "CCA INDUSTRIES,
   INC." — typed as the party type when the domain has one), and defined terms as contracts write them (``ABC Corp. (the "Company")`` gives
   the party ABC Corp. with the alias "Company"; ``"Territory" means …`` a defined term);
3. capitalised names, weakest: people, organisations and places typed by cues (an
   honorific, a role noun, "X, who", "in X", a place word, …), lone cued words and
   acronyms, and the person's surname and titled name as aliases — the rules live in
   :mod:`.names`.

A listed place followed by a title-case word begins a longer name ("Tennessee Tech") and is
not a place alone; a place written with its state ("Memphis, Tenn.") is one location.
Which finds have a name's shape, and which of overlapping finds is kept, is
:mod:`.shapes`; the patterns and phrases are found by :mod:`.phrases`.

A generic rule only fires when the domain declares a type for it: a type whose name or
one of whose ``aliases`` is one of the keywords in :data:`kgkit.text.type_kinds.GENERIC_KINDS` (for example
``Date`` for dates, or a type ``Party`` with alias ``party`` for contracting parties).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Iterator, Sequence

from kgkit.guards import safe_regex
from kgkit.text.literals import KINDS as LITERAL_KINDS, find_literals
from kgkit.text.place_adjectives import place_of
from kgkit.backends.offline.mentions import Mention, collapse, name_key
from kgkit.backends.offline.party_names import clean_party_name, names_a_person
from kgkit.backends.offline.names import (STATE_AFTER, acronym_mentions, add_surname_aliases, add_title_aliases,
                                         name_mentions, source_credit_mentions, trim_org_edges)
from kgkit.backends.offline.phrases import pattern_matches, phrase_spans, skill_patterns
from kgkit.backends.offline.shapes import CLAUSE_LENGTH, is_heading, resolve_overlaps, trim_fragment, well_formed
from kgkit.text.sentences import Sentence, sentence_at, split_sentences
from kgkit.formats.model import EntityType
from kgkit.text.type_kinds import generic_type_map

_ABBREV_SUFFIX = (
    r"(?:Inc|INC|Corp|CORP|Co|CO|Ltd|LTD|Pty\.?\s+Ltd|L\.L\.C|N\.V|B\.V|S\.A|L\.P)(?![A-Za-z-])\.{0,2}"
    r"|(?:LLC|LLP|LP|PLC|plc|GmbH|AG|SE|SpA|S\.p\.A\.|AB|ASA|Oyj|KK)\b"
)
_WORD_SUFFIX = r"(?:Incorporated|INCORPORATED|Corporation|CORPORATION|Company|COMPANY|Limited|LIMITED)\b"
# "Acme, Inc." takes a comma before an abbreviation; "Acme Company" never does ("the Period, Company …")
LEGAL_SUFFIX = rf"(?:,?[ \t]+(?:{_ABBREV_SUFFIX})|[ \t]+{_WORD_SUFFIX})"
_CAP_WORD = r"(?:[A-Z][A-Za-z0-9&'’\-]*(?:\.[A-Za-z]{2,4})?|[A-Z]\.(?:[A-Z]\.)*|&)"
_CONNECT = r"(?:of|and|&|for|de|du|la|the)"
ORG_RE = re.compile(
    rf"(?<![\w.])(?P<name>{_CAP_WORD}(?:[ \t]+(?:{_CAP_WORD}|{_CONNECT}(?=[ \t]+[A-Z]))){{0,6}}{LEGAL_SUFFIX})"
)
_LEADING_STOP = re.compile(r"^(?:(?:The|THE|This|THIS|By|BY|And|AND|Between|BETWEEN|Among|AMONG|WHEREAS|Whereas|With|WITH|For|FOR|Of|OF|To|TO)[ \t]+)+")
_DEFINITION = re.compile(
    r"\(\s*(?:(?:collectively|together|each|individually|jointly)\b[^\"“”()]{0,30}?)?"
    r"(?:(?:hereinafter|hereafter|herein)\s+(?:(?:referred\s+to|defined)\s+as\s+|called\s+)?)?"
    r"(?:(?:as\s+)?(?:the|this|a|an)\s+)?[\"“](?P<term>[^\"”()]{1,60}?)[\"”]"
    r"(?:\s*(?:or|and|,)\s*(?:the\s+)?[\"“](?P<term2>[^\"”()]{1,60}?)[\"”])?[^()]{0,40}?\)",
    re.I,
)
_MEANS = re.compile(r"[\"“](?P<term>[A-Z][^\"”]{0,60}?)[\"”]\s+(?:shall\s+(?:mean|have\s+the\s+meaning)|means|has\s+the\s+meaning|refers\s+to|is\s+defined)")
_LETTER = re.compile(r"[A-Za-z]")
_INDEFINITE_BEFORE = re.compile(r"\b(?:a|an)\s+$", re.I)
_COMMA_BEFORE = re.compile(r",[ \t]*$")


def _pattern_mentions(text: str, types: Sequence[EntityType], skills: Sequence[dict]) -> list[Mention]:
    found: list[Mention] = []
    for t in types:
        found.extend(_regex_mentions(t, text))
        if t.patterns.phrases:
            found.extend(Mention(collapse(text[s:e]), t.name, s, e, 3, 0.8)
                         for s, e in phrase_spans(tuple(t.patterns.phrases), text))
        for label, regexes in t.patterns.labels:
            for rx in regexes:
                found.extend(Mention(label, t.name, m.start(), m.end(), 3, 0.7, "label") for m in safe_regex.finditer(rx, text))
    declared = {t.name for t in types}
    for sk in skills:
        if sk.get("kind") != "entity" or sk.get("target") not in declared:
            continue
        for s, e in pattern_matches(skill_patterns(sk), text):
            found.append(Mention(collapse(text[s:e]), sk["target"], s, e, 3, 0.7))
    return found


def _regex_mentions(t: EntityType, text: str) -> Iterator[Mention]:
    """A type's regex finds, named by the group ``name`` (else the whole match). A group
    ``within`` names the place the name lies in, written apart ("the laws of the Province
    of Ontario and the federal laws of Canada"): the entity is "Ontario, Canada", and
    "Ontario" written alone is an alias of it. A group ``adjective`` names a place by its
    adjective ("governed by English law"): the entity is the place ("England", with the
    adjective as an alias), and nothing where the adjective names no listed place."""
    for rx in t.patterns.regex:
        for m in safe_regex.finditer(rx, text):
            if "adjective" in m.re.groupindex and m.group("adjective") is not None:
                place = place_of(m.group("adjective"))
                if place is not None:
                    start, end = m.span("adjective")
                    yield Mention(place, t.name, start, end, 3, 0.8, aliases=[m.group("adjective")])
                continue
            named = "name" in m.re.groupindex and m.group("name") is not None
            s, e = m.span("name") if named else m.span()
            if e <= s:
                continue
            name = collapse(text[s:e])
            within = m.group("within") if "within" in m.re.groupindex else None
            if within:
                yield Mention(f"{name}, {collapse(within)}", t.name, s, e, 3, 0.8, aliases=[name])
            else:
                yield Mention(name, t.name, s, e, 3, 0.8)


def _lies_in(m: Mention, owner: Mention) -> bool:
    """"Alberta" found beside "Alberta, Canada" (a ``within`` find): the same place."""
    return m.type == owner.type and name_key(owner.name).startswith(name_key(m.name) + ", ")


_AGE_AFTER = re.compile(r"-?(?:years?|months?|weeks?|days?)?-old\b")


def _literal_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    wanted = [k for k in LITERAL_KINDS if k in kinds]
    if not wanted:
        return []
    # Named as written ("26th day of May, 2017"): the merge computes the normalised value.
    # "a 72-year-old deputy" states an age, not a length of time.
    return [Mention(collapse(lit.surface), kinds[lit.kind], lit.start, lit.end, 2, 0.9, lit.kind)
            for lit in find_literals(text, wanted)
            if not (lit.kind == "duration" and _AGE_AFTER.match(text, lit.end))]


def _org_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    if "organization" not in kinds and "party" not in kinds:
        return []
    out = []
    for m in ORG_RE.finditer(text):
        raw = m.group("name")
        lead = _LEADING_STOP.match(raw)
        offset = lead.end() if lead else 0
        name = raw[offset:]
        s = m.start("name") + offset
        before = text[max(0, s - 8):s]
        if not _LETTER.search(name.split()[0]) or _INDEFINITE_BEFORE.search(before):
            continue  # "a Delaware Corporation" describes a party, it does not name one
        if len(name.split()) < 2 and "," not in name:
            continue
        name = collapse(name).rstrip(",")
        if name.endswith(".."):
            name = name[:-1]
        # Where the domain has contracting parties, a company name is read as one: in a
        # contract it almost always is, and typing one name two ways would split its node.
        out.append(Mention(name, kinds.get("party", kinds.get("organization", "")), s, s + len(raw) - offset, 2, 0.8,
                           "company"))
    return out


def _attach_definitions(text: str, sentences: list[Sentence], mentions: list[Mention], kinds: dict[str, str]) -> list[Mention]:
    """Give parenthesised defined terms to the entity they define; the rest become defined terms.

    The defined term goes to, in order: a preceding mention in the sentence whose head noun
    it repeats (``Services Agreement (this "Agreement")``); the nearest preceding
    organisation with no other definition between (``ABC Corp., a Delaware corporation
    (the "Company")``), which makes it a contracting party; the mention just before it
    (``January 20, 2014 (the "Effective Date")``).
    """
    extra: list[Mention] = []
    for sent in sentences:
        in_sent = [m for m in mentions if sent.start <= m.start and m.end <= sent.end]
        last_def_end = sent.start
        for d in _DEFINITION.finditer(text, sent.start, sent.end):
            terms = [c for c in (collapse(t) for t in (d.group("term"), d.group("term2")) if t) if c]
            if not terms:  # a blank placeholder such as ("\u202f\u202f") defines nothing
                continue
            before = [m for m in in_sent if m.end <= d.start()]
            target = None
            head = terms[0].split()[-1].lower()
            for m in reversed(before):
                if m.name.split()[-1].lower() == head and m.name.lower() != terms[0].lower():
                    target = m
                    break
            if target is None:
                orgs = [m for m in before if m.kind == "company" and m.start >= last_def_end
                        and d.start() - m.end <= 300]
                if orgs:
                    target = orgs[-1]
                    if "party" in kinds:
                        target.type = kinds["party"]
                        target.kind = "party"
                        target.confidence = 0.9
            if target is None and before and d.start() - before[-1].end <= 40 and before[-1].start >= last_def_end:
                target = before[-1]
            if target is not None:
                target.aliases.extend(t for t in terms if t.lower() != target.name.lower())
            elif "defined_term" in kinds:
                for t, g in zip(terms, ("term", "term2")):
                    if d.group(g):
                        extra.append(Mention(t, kinds["defined_term"], d.start(g), d.end(g), 2, 0.7, "defined_term"))
            last_def_end = d.end()
    if "defined_term" in kinds:
        for d in _MEANS.finditer(text):
            extra.append(Mention(collapse(d.group("term")), kinds["defined_term"], d.start("term"), d.end("term"), 2, 0.8,
                                 "defined_term"))
    return mentions + extra


# A title-case word right after a place, on its line: the place begins a longer name
# ("Texas Theater", "Baltimore Orioles", "Tennessee Tech", "Texas Gov. John Connally").
_NAME_GOES_ON = re.compile(r"[ \t]+[A-Z][a-z]")


def _begins_longer_name(m: Mention, text: str, kinds: dict[str, str]) -> bool:
    """A listed place ("Texas") followed by a title-case word names something else: the
    longer capitalised run, typed by its own cues, is the entity. An abbreviation ("N.Y.")
    may end its sentence and an all-caps place opens a dateline ("LISBON GAZETA"), so
    neither counts."""
    return (m.type == kinds.get("location") and not m.kind and not m.name.endswith(".")
            and not m.name.isupper() and bool(_NAME_GOES_ON.match(text, m.end)))


# ", " between a place and the state or country it lies in; a list goes on after the second
# place ("Pakistan, Bangladesh, Sri Lanka") or joins it with "and"/"or".
_PLACE_COMMA = re.compile(r",[ \t]+")
_LIST_GOES_ON = re.compile(r"[ \t]*(?:,[ \t]*[A-Z]|(?:and|or)\b)")


def _join_place_with_region(text: str, mentions: list[Mention], kinds: dict[str, str]) -> list[Mention]:
    """"Memphis, Tenn." is one place as news writes it: the city with its state. The pair
    becomes one location named as written (the merge gives it the city's own name as an
    alias, :func:`kgkit.canon.names.place_of_region`); a state found as a place of its own stays
    one too (it is mentioned, and a reader may name the city alone). The second part is a found place or a state abbreviation ("Tupelo, Miss.",
    "Waterville, N. Y."). Not inside a list of places ("Pakistan, Bangladesh, Sri Lanka")."""
    loc = kinds.get("location")
    if not loc:
        return mentions
    out = list(mentions)
    for i, a in enumerate(mentions):
        if a.type != loc or _COMMA_BEFORE.search(text[max(0, a.start - 3):a.start]):
            continue
        b = mentions[i + 1] if i + 1 < len(mentions) else None
        if b is not None and b.type == loc and _PLACE_COMMA.fullmatch(text, a.end, b.start):
            end = b.end
        else:
            abbrev = STATE_AFTER.match(text[a.end:a.end + 16])
            if abbrev is None:
                continue
            end = a.end + abbrev.end()
        if _LIST_GOES_ON.match(text, end):
            continue
        out[i] = Mention(collapse(text[a.start:end]), loc, a.start, end, a.priority, a.confidence, a.kind,
                         list(a.aliases))
    return out


# a brand name that starts in lower case ("mPhase", "eBay") right before a company name's words
_BRAND_BEFORE = re.compile(r"(?<![\w.&-])[a-z]{1,3}[A-Z][\w&-]*[ \t]+$")


def _party_names(text: str, mentions: list[Mention], kinds: dict[str, str]) -> list[Mention]:
    """Party mentions the generic rules found (a domain's own patterns are the author's
    word) cut to the name they end with, or dropped when they name no one
    (kgkit.backends.offline.party_names), and cued persons that are role or form words
    dropped; a company name after a brand written in lower case
    first ("mPhase Technologies Inc.") takes the brand back."""
    party = kinds.get("party")
    if not party or party == kinds.get("organization"):  # no contracting parties: news, papers
        return mentions
    person = kinds.get("person")
    out = []
    for m in mentions:
        if person and m.type == person and m.kind and not names_a_person(m.name):
            continue  # in a contract, "Provider" or "Date" after a cue names no one
        if m.type != party or not m.kind or m.kind in LITERAL_KINDS or collapse(text[m.start:m.end]) != m.name:
            out.append(m)
            continue
        start = m.start
        brand = _BRAND_BEFORE.search(text, max(0, start - 40), start)
        if brand is not None:
            start = brand.start()
        written = collapse(text[start:m.end])
        cut = clean_party_name(written)
        if cut is None:
            continue
        kept = written[cut[0]:cut[1]]
        if kept == m.name:
            out.append(m)
            continue
        found = re.compile(r"\s+".join(map(re.escape, kept.split()))).search(text, start, m.end)
        if found is None:
            out.append(m)
            continue
        out.append(Mention(kept, m.type, found.start(), found.end(), m.priority, m.confidence, m.kind,
                           list(m.aliases)))
    return out


@dataclass(frozen=True)
class FoundEntity:
    name: str
    type: str
    evidence: str
    confidence: float
    aliases: tuple[str, ...]
    start: int
    end: int


def find_entities(text: str, types: Sequence[EntityType], skills: Sequence[dict] = ()) -> list[FoundEntity]:
    """Entities in ``text`` of the given types, merged by (name, type), in order of first mention.

    Stages: every source's finds, kept where they have a name's shape and win their overlaps
    (:func:`_mentions`); merged by name and type, aliases absorbed (:func:`_merge_mentions`);
    a name with a parenthesised tail folded into the bare one (:func:`_fold_parenthesised`);
    an organisation that is also a party made the party (:func:`_parties_absorb_organisations`)."""
    kinds = generic_type_map(types)
    sentences = split_sentences(text)
    mentions = _mentions(text, types, skills, kinds, sentences)
    merged, order = _merge_mentions(text, mentions, sentences)
    _fold_parenthesised(merged, order)
    _parties_absorb_organisations(merged, order, kinds)
    return [merged[k] for k in order if k in merged]


def _mentions(text: str, types: Sequence[EntityType], skills: Sequence[dict], kinds: dict[str, str],
              sentences: list[Sentence]) -> list[Mention]:
    """Every source's finds that have a name's shape, overlaps resolved, places joined with
    their region, party names cut, definitions and surname and title aliases attached."""
    patterned = [trim_fragment(m, text) for m in _pattern_mentions(text, types, skills)]
    patterned = [trim_org_edges(m, text) if m.type == kinds.get("organization") else m for m in patterned]
    candidates = patterned + _literal_mentions(text, kinds) \
        + _org_mentions(text, kinds) + acronym_mentions(text, kinds) + source_credit_mentions(text, kinds) \
        + [m for m in name_mentions(text, kinds) if m.end - m.start < CLAUSE_LENGTH]  # a name is not clause-long
    mentions = resolve_overlaps([m for m in candidates if well_formed(m, kinds) and not _begins_longer_name(m, text, kinds)
                                  and (m.kind in LITERAL_KINDS or m.kind == "label" or not is_heading(m, text))])
    mentions = _join_place_with_region(text, mentions, kinds)
    mentions = _party_names(text, mentions, kinds)
    mentions = _attach_definitions(text, sentences, mentions, kinds)
    add_surname_aliases(text, mentions, kinds.get("person"))
    add_title_aliases(text, mentions, kinds.get("person"))
    return mentions


EntityKey = tuple[str, str]  # (name key, type)


def _merge_mentions(text: str, mentions: list[Mention],
                    sentences: list[Sentence]) -> tuple[dict[EntityKey, FoundEntity], list[EntityKey]]:
    """Mentions merged by (name key, type), in order of first mention; the first mention's
    name, sentence and span kept, the highest confidence and every alias."""
    # A name that is some entity's defined alias is that entity, not a new one.
    alias_of = {name_key(a): m for m in mentions for a in m.aliases}
    merged: dict[EntityKey, FoundEntity] = {}
    order: list[EntityKey] = []
    for m in sorted(mentions, key=lambda m: (m.start, m.end)):
        if not m.name or not m.type:
            continue
        owner = alias_of.get(name_key(m.name))
        if owner is not None and owner is not m and (m.priority < 3 or _lies_in(m, owner)):
            continue
        key = (name_key(m.name), m.type)
        sent = sentence_at(sentences, m.start)
        evidence = sent.text if sent else text[m.start:m.end]
        prev = merged.get(key)
        if prev is None:
            order.append(key)
            merged[key] = FoundEntity(m.name, m.type, evidence, m.confidence, tuple(dict.fromkeys(m.aliases)),
                                      m.start, m.end)
        else:
            aliases = tuple(dict.fromkeys(prev.aliases + tuple(m.aliases)))
            merged[key] = FoundEntity(prev.name, prev.type, prev.evidence, max(prev.confidence, m.confidence), aliases,
                                      prev.start, prev.end)
    return merged, order


def _fold_parenthesised(merged: dict[EntityKey, FoundEntity], order: list[EntityKey]) -> None:
    """"CO-BRANDING AGREEMENT (FORM)" and "CO-BRANDING AGREEMENT" in one chunk are one entity."""
    for key in list(order):
        base = re.match(r"^(.*\S)\s*\([^()]*\)$", merged[key].name) if key in merged else None
        short = (name_key(base.group(1)), key[1]) if base else None
        if short and short in merged and short != key:
            full, part = merged[key], merged.pop(short)
            merged[key] = FoundEntity(full.name, full.type, full.evidence, max(full.confidence, part.confidence),
                                      tuple(dict.fromkeys(full.aliases + (part.name,) + part.aliases)),
                                      full.start, full.end)
            order.remove(short)


def _parties_absorb_organisations(merged: dict[EntityKey, FoundEntity], order: list[EntityKey],
                                  kinds: dict[str, str]) -> None:
    """A party found anywhere in the chunk makes its other organisation mentions the party too."""
    party_type = kinds.get("party")
    org_type = kinds.get("organization")
    if party_type and org_type and party_type != org_type:
        for key in list(order):
            name, typ = key
            if typ == org_type and (name, party_type) in merged:
                p = merged[(name, party_type)]
                o = merged.pop(key)
                merged[(name, party_type)] = FoundEntity(p.name, p.type, p.evidence, p.confidence,
                                                         tuple(dict.fromkeys(p.aliases + o.aliases)), p.start, p.end)
                order.remove(key)
