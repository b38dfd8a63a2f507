"""Find typed entity mentions in text from declared patterns and generic rules.

Sources, strongest first (an overlap keeps the stronger, then the longer):

1. the entity types' ``patterns`` in the domain or template YAML, and entity skills:
   regexes (case-insensitive; use ``(?-i:...)`` where case matters; a named group
   ``name`` gives the entity's name, otherwise the whole match) and phrases;
2. generic rules: literals (dates, durations, money, percentages, quantities — see
   :mod:`.literals`), company names with a legal suffix ("Acme Corp.", "CCA INDUSTRIES,
   INC." — typed as the party type when the domain has one), and defined terms as contracts write them (``ABC Corp. (the "Company")`` gives
   the party ABC Corp. with the alias "Company"; ``"Territory" means …`` a defined term);
3. capitalised multi-word names, weakest, typed by cues in this order: an honorific or a
   title inside or before the name ("Dr.", "Soviet Foreign Minister Eduard Shevardnadze")
   -> person; an organisation word ("… University") -> organisation; a middle initial
   ("John F. Kennedy") or a role noun before it ("comedian X", "said X") -> person; a place
   word ("Early County", "Fort Hamilton") or a state after it (", Calif.") -> location; a person cue after
   it ("X, who", "X said", "X, 45,", "X, a spokesman", "X's wife", "X killed") -> person;
   "in/at/from" before it -> location; otherwise a name of two or three name-shaped words
   is a person by default — unless one of its words is also written in lower case in the
   text (then it is a common noun: "Confidential Information"), it sits on a heading line,
   or the domain declares contracting parties (in contracts, capitalised words are defined
   terms far more often than people). A lone capitalised word needs a cue: a title or role
   noun before it, or one that fits only people after it (", who", "'s wife", "killed
   Kennedy") -> person; "in/at/near" before it or ", Tenn." after it -> location; a lone
   2-5-letter acronym in running text ("the FAA said") -> organisation. Lone words, acronyms
   and the two-or-three-word default are off in domains with contracting parties.

A person's surname written alone elsewhere in the chunk ("Kennedy" after "John F.
Kennedy"), and the name with its title ("President John F. Kennedy"), are the person's
aliases in the answer, not further entities. (The engine builds a node's aliases from the
text itself and reads none from the answer — docs/design.md, "Pass answers" — so a node
gets them only where its merge does.)

A generic rule only fires when the domain declares a type for it: a type whose name or
one of whose ``aliases`` is one of the keywords in :data:`GENERIC_KINDS` (for example
``Date`` for dates, or a type ``Party`` with alias ``party`` for contracting parties).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, Iterable, Mapping, Sequence

from kgkit.backends.offline.literals import KINDS as LITERAL_KINDS, find_literals
from kgkit.backends.offline.sentences import ABBREVIATIONS, Sentence, is_heading, split_sentences
from kgkit.model import EntityType, Patterns

GENERIC_KINDS: dict[str, frozenset[str]] = {
    "date": frozenset({"date", "time", "datetime"}),
    "duration": frozenset({"duration", "period", "timeperiod"}),
    "money": frozenset({"money", "monetaryamount", "amount", "moneyamount", "price"}),
    "percent": frozenset({"percent", "percentage"}),
    "quantity": frozenset({"quantity", "dose", "dosage", "measurement"}),
    "party": frozenset({"party", "contractingparty"}),
    "organization": frozenset({"organization", "organisation", "org", "company"}),
    "person": frozenset({"person", "per", "peop", "people"}),
    "location": frozenset({"location", "loc", "place", "gpe"}),
    "defined_term": frozenset({"definedterm", "defined_term", "term"}),
    "name": frozenset({"name", "other", "misc", "namedentity"}),
}

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
_NAME_WORD = r"(?:[A-Z][a-z]+(?:[A-Z][a-z]+)?(?:-[A-Za-z][a-z]+)?|[A-Z]{2,}[a-z]*)"  # "McConnell", "Chung-hee"
_CAPS_NAME = re.compile(
    rf"(?<![\w.&-])(?P<name>(?:[A-Z]\.[ \t]+(?=[A-Z][a-z]))?{_NAME_WORD}(?:[ \t]+(?:(?:of|the|de|van|von|for|and)[ \t]+)?"
    rf"(?:{_NAME_WORD}|[A-Z]\.)){{1,4}})(?![\w])"
)
_HONORIFIC = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|Sen|Rep|Gov|Gen|Lt|Col|Capt|Sgt|President|Senator|Governor|Judge|Justice|Chairman|Minister|Secretary|Ambassador|Pope|King|Queen|Prince|Sir|Lord|Rev)\.?\s+$")
_ORG_WORDS = frozenset(
    "university institute association bank group agency ministry department council committee foundation "
    "corporation company airlines airline times news post press court commission army navy church hospital "
    "school college club union federation organization organisation party congress senate parliament "
    "administration board bureau service services laboratories laboratory systems technologies industries "
    "holdings partners fund trust exchange network journal society center centre office police embassy "
    "force forces guard orchestra opera team".split()
)
# Words that make a capitalised name a place: "Early County", "Niagara Falls", "Fort Hamilton".
_PLACE_LAST = frozenset(
    "county city province state district island islands bay falls lake river sea ocean coast mountains mountain "
    "valley beach park street avenue square airport harbor harbour peninsula canyon desert gulf strait heights "
    "hills springs village township parish region".split()
)
_PLACE_FIRST = frozenset("fort camp mount port cape lake san santa sao ciudad saint st".split())
# ", Calif." / ", S.C." after a name: a US-style place with its state
_STATE_AFTER = re.compile(r"^,\s+(?!(?:Jr|Sr|Esq|Inc|Co|Corp|Ltd)\.)(?:[A-Z][a-z]{1,4}\.|[A-Z]\.[A-Z]\.)")
# Nouns that name what a person is or does: "comedian Tuvia Tzafir", "Bruno Pusterla, a top official".
_ROLE_NOUNS = (
    "actor|actress|singer|guitarist|soprano|tenor|comedian|writer|author|poet|painter|artist|sculptor|director|"
    "producer|journalist|reporter|correspondent|columnist|editor|photographer|spokesman|spokeswoman|spokesperson|"
    "lawyer|attorney|prosecutor|judge|doctor|physician|surgeon|nurse|professor|scientist|researcher|economist|"
    "analyst|historian|playwright|novelist|composer|conductor|musician|pianist|player|coach|pitcher|champion|"
    "astronaut|pilot|officer|soldier|sergeant|colonel|captain|lieutenant|commander|leader|chairman|chairwoman|"
    "president|premier|minister|secretary|senator|congressman|congresswoman|governor|mayor|ambassador|diplomat|"
    "envoy|official|aide|adviser|advisor|assistant|deputy|candidate|nominee|activist|dissident|rebel|gunman|"
    "assassin|killer|suspect|defendant|witness|victim|hostage|priest|bishop|cardinal|rabbi|reverend|preacher|"
    "husband|wife|son|daughter|father|mother|brother|sister|widow|widower|uncle|aunt|nephew|niece|cousin|"
    "businessman|businesswoman|executive|banker|investor|financier|founder|owner|manager|administrator|agent|"
    "detective|sheriff|inventor|designer|architect|philosopher|physicist|chemist|biologist|engineer|teacher|"
    "student|auctioneer|collector|veteran|resident|member|employee|worker|farmer|king|queen|prince|princess|"
    "emperor|dictator|shearer|clerk|chief|head|partner"
)
_ROLES = frozenset(_ROLE_NOUNS.split("|"))
_TITLE_IN_NAME = frozenset(
    "president minister secretary senator governor mayor ambassador chairman general judge justice administrator "
    "director commissioner attorney chancellor premier leader spokesman spokeswoman representative "
    "congressman congresswoman sen rep gov gen dr mr mrs ms prof lt col capt sgt rev prime vice foreign "
    "democrat republican democratic soprano academician professor".split()
)
_PERSON_BEFORE = re.compile(
    rf"(?:\b(?:{_ROLE_NOUNS})s?,?|\b(?:said|says|told|according\s+to|killed|shot|assassinated|murdered|"
    r"stabbed|kidnapped|assassination\s+of|murder\s+of)|\b(?:his|her)\s+(?:\w+\s+)?(?:husband|wife|son|"
    r"daughter|father|mother|brother|sister|widow|friend))\s+$"
)
_PERSON_AFTER = re.compile(
    rf"^(?:,\s+(?:who|whose)\b|,\s+\d{{1,3}},|,\s+(?:a|an|the|his|her)\s+(?:[\w-]+\s+){{0,3}}?(?:{_ROLE_NOUNS})\b"
    rf"|,\s+(?:former\s+|acting\s+|deputy\s+|vice\s+)?(?:{_ROLE_NOUNS})\b|['’]s\s+(?:husband|wife|son|daughter|father|"
    r"mother|brother|sister|widow|family|lawyer|attorney)\b|\s+(?:said|says|told|testified|recalled|wrote|"
    r"died|was\s+born|killed|shot|assassinated|murdered|stabbed)\b)"
)
# Single words: only cues that fit a person and hardly anything else ("Exxon said" does not).
_PERSON_AFTER_STRONG = re.compile(
    r"^(?:,\s+(?:who|whose)\b|,\s+\d{1,3},|['’]s\s+(?:husband|wife|son|daughter|father|mother|brother|sister|"
    r"widow)\b|\s+(?:killed|assassinated|murdered|stabbed)\s+(?:[A-Z]|(?:his|her)\s))"
)
_LOCATION_CUE = re.compile(r"\b(?:in|at|from|near|to|into|across|outside|throughout)\s+(?:the\s+)?$")
_SENTENCE_STOP = frozenset(
    "the a an this that these those it he she they we i in on at for by with from of and or but if when "
    "while as after before during whereas now therefore however section article exhibit schedule table figure "
    "notwithstanding subject each any all such no upon later yesterday today tomorrow meanwhile although though "
    "since because until also then still even instead thus hence so last next".split()
)
_WS = re.compile(r"\s+")


def collapse(text: str) -> str:
    """Whitespace collapsed and trimmed: the form names are compared and emitted in."""
    return _WS.sub(" ", text).strip()


def name_key(name: str) -> str:
    """How two names of one type are judged the same: case, spacing, trailing dots and commas ignored."""
    return collapse(name).lower().rstrip(".,;: ")


def _norm_key(word: str) -> str:
    return re.sub(r"[^a-z_]", "", word.lower()).replace("_", "")


def generic_type_map(entity_types: Sequence[EntityType]) -> dict[str, str]:
    """Which declared entity type receives each generic rule's finds (first declared wins)."""
    return dict(_generic_type_map(tuple(entity_types)))


@lru_cache(maxsize=256)
def _generic_type_map(entity_types: tuple[EntityType, ...]) -> dict[str, str]:
    out: dict[str, str] = {}
    for kind, words in GENERIC_KINDS.items():
        keys = {_norm_key(w) for w in words}
        for t in entity_types:
            if _norm_key(t.name) in keys or any(_norm_key(a) in keys for a in t.aliases):
                out[kind] = t.name
                break
    if "party" not in out and "organization" in out:
        out["party"] = out["organization"]
    return out


def literal_types(entity_types: Sequence[EntityType]) -> dict[str, str]:
    """Declared entity type -> the literal kind ("date", "money", …) whose finds it receives."""
    kinds = generic_type_map(entity_types)
    return {kinds[k]: k for k in LITERAL_KINDS if k in kinds}


@lru_cache(maxsize=4096)
def compile_regex(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I | re.M)


def phrase_pattern(phrase: str) -> str:
    """``phrase`` as a regex body that takes any run of whitespace between its words."""
    return r"\s+".join(re.escape(p) for p in phrase.split())


@lru_cache(maxsize=4096)
def compile_phrases(phrases: tuple[str, ...]) -> re.Pattern[str]:
    """Phrases as one word-bounded, case-insensitive, whitespace-tolerant regex (longest first)."""
    bodies = [phrase_pattern(p) for p in sorted(set(phrases), key=lambda p: (-len(p), p)) if p.strip()]
    return re.compile(rf"(?<![\w])(?:{'|'.join(bodies)})(?![\w])", re.I)


def pattern_matches(patterns: Patterns, text: str) -> Iterable[tuple[int, int]]:
    """Spans matched by a Patterns object; a regex group ``name`` narrows the span."""
    for rx in patterns.regex:
        for m in compile_regex(rx).finditer(text):
            if "name" in m.re.groupindex and m.group("name") is not None:
                s, e = m.span("name")
            else:
                s, e = m.span()
            if e > s:
                yield s, e
    if patterns.phrases:
        for m in compile_phrases(tuple(patterns.phrases)).finditer(text):
            yield m.span()


def trigger_spans(patterns: Patterns, text: str, sent: Sentence) -> list[tuple[int, int]]:
    """Spans of ``text`` within the sentence ``sent`` matched by ``patterns``, in order."""
    hits = []
    for rx in patterns.regex:
        hits += [m.span() for m in compile_regex(rx).finditer(text, sent.start, sent.end)]
    if patterns.phrases:
        hits += [m.span() for m in compile_phrases(tuple(patterns.phrases)).finditer(text, sent.start, sent.end)]
    return sorted(hits)


def skill_patterns(skill: Mapping[str, Any]) -> Patterns:
    """The cues of a learned skill (its ``pattern`` mapping) as a :class:`Patterns`."""
    pattern = skill.get("pattern") or {}
    return Patterns(regex=tuple(pattern.get("regex", ())), phrases=tuple(pattern.get("phrases", ())))


@dataclass
class Mention:
    """One candidate entity mention in the chunk text."""

    name: str
    type: str
    start: int
    end: int
    priority: int
    confidence: float
    kind: str = ""  # generic kind that produced it ("organization", "date", …), "" for patterns
    aliases: list[str] = field(default_factory=list)


def _pattern_mentions(text: str, types: Sequence[EntityType], skills: Sequence[dict]) -> list[Mention]:
    found: list[Mention] = []
    for t in types:
        for s, e in pattern_matches(t.patterns, text):
            found.append(Mention(collapse(text[s:e]), t.name, s, e, 3, 0.8))
    declared = {t.name for t in types}
    for sk in skills:
        if sk.get("kind") != "entity" or sk.get("target") not in declared:
            continue
        for s, e in pattern_matches(skill_patterns(sk), text):
            found.append(Mention(collapse(text[s:e]), sk["target"], s, e, 3, 0.7))
    return found


def _literal_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    wanted = [k for k in LITERAL_KINDS if k in kinds]
    if not wanted:
        return []
    return [Mention(lit.name, kinds[lit.kind], lit.start, lit.end, 2, 0.9, lit.kind)
            for lit in find_literals(text, wanted)]


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
        if not re.search(r"[A-Za-z]", name.split()[0]) or re.search(r"\b(?:a|an)\s+$", before, re.I):
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


def _lower_words(text: str) -> frozenset[str]:
    """Words the text writes in lower case: common nouns, which a capitalised name containing
    one ("Confidential Information", "Strategic Alliance Agreement") is unlikely to be a person."""
    return frozenset(re.findall(r"(?<![\w.])[a-z][a-z-]+\b", text))


def _line_is_heading(text: str, start: int) -> bool:
    line_start = text.rfind("\n", 0, start) + 1
    line_end = text.find("\n", start)
    return is_heading(text[line_start:line_end if line_end >= 0 else len(text)])


def _person_default(words: list[str], text: str, start: int, lower: frozenset[str], kinds: dict[str, str]) -> bool:
    """A name of two or three name-shaped words with no other cue: a person, unless it looks
    like a common-noun phrase, a heading, or the domain is about contracting parties."""
    if not 2 <= len(words) <= 3 or kinds.get("party", kinds.get("organization")) != kinds.get("organization"):
        return False
    if not all(re.fullmatch(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?|[A-Z][a-z]?[A-Z][a-z]+|[A-Z]\.", w) for w in words):
        return False
    if any(w.lower() in lower or w.lower() in _TITLE_IN_NAME for w in words) or words[-1].endswith("."):
        return False
    if text[max(0, start - 1):start] in ("\"", "“", "'", "‘"):
        return False  # a quoted title: "War Is Hell"
    if re.fullmatch(r"[A-Z]\.", words[0]) and re.match(r"[.:]", text[start + len(" ".join(words)):][:1]):
        return False  # an enumerated heading: "A. Entire Agreement:"
    return not _line_is_heading(text, start)


def _middle_initial(words: list[str]) -> bool:
    """Given name, middle initial, surname: "John F. Kennedy" (and "David K. Heap CEO")."""
    return len(words) >= 3 and bool(re.fullmatch(r"[A-Z]\.", words[1])) and all(
        re.fullmatch(_NAME_WORD, w) and not w.isupper() for w in (words[0], words[2]))


def _name_kind(words: list[str], text: str, start: int, end: int, lower: frozenset[str], kinds: dict[str, str]) -> str:
    before = text[max(0, start - 40):start]
    after = text[end:end + 60]
    if _HONORIFIC.search(before[-20:]):
        return "person"
    if words[-1].lower() in _ORG_WORDS or words[0].lower() in _ORG_WORDS:
        return "organization"
    single = len(words) == 1
    if _middle_initial(words) or _PERSON_BEFORE.search(before):
        return "person"  # "John F. Kennedy", "singer Bob Boyd of Chattanooga"
    if not single and not any(w.isupper() for w in words) and (
            words[-1].lower() in _PLACE_LAST or words[0].lower().rstrip(".") in _PLACE_FIRST
            or _STATE_AFTER.search(after)):
        return "location"
    if single and words[0].lower() in lower:
        return "name"  # a common word capitalised at a sentence start ("Officials said")
    if (_PERSON_AFTER_STRONG if single else _PERSON_AFTER).search(after):
        return "person"
    if _LOCATION_CUE.search(before[-20:]) and not any(w in ("and", "of", "for", "the") for w in words):
        return "location"
    if _person_default(words, text, start, lower, kinds):
        return "person"
    return "name"


def _name_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    targets = {k for k in ("person", "organization", "location", "name") if k in kinds}
    if not targets:
        return []
    lower = _lower_words(text)
    out = []
    for m in _CAPS_NAME.finditer(text):
        words = m.group("name").split()
        while words and words[0].lower() in _SENTENCE_STOP:
            words = words[1:]
        # "Soviet Foreign Minister Eduard Shevardnadze": the name follows the title
        titled = [i for i, w in enumerate(words[:-1]) if w.lower().rstrip(".") in _TITLE_IN_NAME and w[1:2].islower()]
        rest = words[titled[-1] + 1:] if titled else []
        titled_person = bool(titled) and "person" in targets and not (
            words[-1].lower() in _ORG_WORDS or words[-1].lower() in _TITLE_IN_NAME
            or not all(re.fullmatch(rf"{_NAME_WORD}|[A-Z]\.", w) and not w.isupper() and w.lower() not in _ROLES
                       for w in rest))
        if titled_person:
            words = rest
        if not words:
            continue
        if words[0].isupper() and all(w.isupper() for w in words) and len(words) > 3:
            continue  # shouted headings
        name = " ".join(words)
        start = m.start("name") + m.group("name").rfind(name) if titled_person else \
            m.end() - len(m.group("name")) + m.group("name").find(words[0])
        end = start + len(name)
        kind = "person" if titled_person else _name_kind(words, text, start, end, lower, kinds)
        if len(words) == 1 and kind != "person":
            continue
        if kind not in targets:
            if "name" not in targets:
                continue
            kind = "name"
        if kind == "person" and len(words) > 3 and _middle_initial(words):
            name = " ".join(words[:3])  # "David K. Heap Chief Executive Officer": the name, not the title
        parts = _person_parts(name, start) if kind == "person" else [(name, start)]
        for part, s in parts:
            out.append(Mention(part, kinds[kind], s, s + len(part), 1, 0.5 if kind != "name" else 0.4, kind))
    return out + _single_mentions(text, kinds, lower)


_SINGLE = re.compile(rf"(?<![\w.&'’-]){_NAME_WORD}(?![\w&'’-]|\.\w)")
_CALENDAR = frozenset(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday christmas easter".split()
)
_LANGUAGE = re.compile(r"(?:ish|ese|ian|ean|ic)$|^(?:French|Dutch|Greek|Thai)$")  # "in English", "in Arabic"
_SINGLE_PLACE_CUE = re.compile(r"\b(?:in|at|near|outside|throughout|across)\s+$")


def _single_mentions(text: str, kinds: dict[str, str], lower: frozenset[str]) -> list[Mention]:
    """Lone capitalised words with a cue: a person ("comedian Tzafir", "Reagan's wife") or a
    place ("in Perugia", "Chattanooga, Tenn."). Words written in lower case elsewhere in the
    text, calendar words and words beside other capitalised words (runs, read as names
    above) are skipped. Not where the domain declares contracting parties: contracts
    capitalise defined terms ("Licensee, who…", "in Territory")."""
    if kinds.get("party", kinds.get("organization")) != kinds.get("organization"):
        return []
    out = []
    for m in _SINGLE.finditer(text):
        word = m.group(0)
        if word.lower() in lower or word.lower() in _CALENDAR | _SENTENCE_STOP | ABBREVIATIONS:
            continue
        before, after = text[max(0, m.start() - 40):m.start()], text[m.end():m.end() + 60]
        if re.search(r"[A-Z][\w.]*[ \t]+$", before) or re.match(r"[ \t]+(?:[A-Z]|of\b|and\b)", after):
            continue  # part of a longer capitalised run
        if "person" in kinds and (_PERSON_BEFORE.search(before) or _PERSON_AFTER_STRONG.search(after)):
            kind = "person"
        elif "location" in kinds and not _LANGUAGE.search(word) and (
                _SINGLE_PLACE_CUE.search(before) or _STATE_AFTER.search(after)):
            kind = "location"
        else:
            continue
        out.append(Mention(word, kinds[kind], m.start(), m.end(), 1, 0.5, kind))
    return out


def _person_parts(name: str, start: int) -> list[tuple[str, int]]:
    """People in a person-cued run: "Nils Bemer and Tomas Nilsen" is two, "Baruch Arensberg
    of Tel Aviv" is the one before "of"."""
    parts, offset = [], 0
    for piece in re.split(r"( (?:and|of|for|the|de|van|von) )", name):
        if piece.startswith(" "):
            if piece.strip() != "and":
                break
        elif piece:
            parts.append((piece, start + offset))
        offset += len(piece)
    return parts or [(name, start)]


def _title_aliases(text: str, mentions: list[Mention], person_type: str | None) -> None:
    """A person written after a title is also called by it ("President Kennedy", "Ms. Toth")."""
    for m in mentions:
        if m.type != person_type:
            continue
        t = _HONORIFIC.search(text[max(0, m.start - 20):m.start])
        if t:
            title = t.group(0).strip()
            m.aliases.append(f"{title} {m.name}")


_ACRONYM = re.compile(r"(?<![\w.&'’-])[A-Z]{2,5}(?![\w.&'’-]|\.\w)")
# All-capital words that are not organisations: units, eras, diseases, roles, time zones.
_NOT_ORG_ACRONYMS = frozenset(
    "tv ceo cfo coo cto aids hiv dna rna gmt est edt pst pdt cst am pm ok id usd ad bc ii iii iv vi vii viii ix xi "
    "mph kg km mm cm ft lb lbs oz pc gnp gdp vat iq ufo uk usa us ussr faq".split()
)


def _acronym_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    """A lone all-capital word of 2-5 letters in running text ("the FAA said", "GE
    spokesman") names an organisation. Not where the domain declares contracting parties
    (contracts capitalise defined terms and headings), and not among other capitalised
    words (a heading, a dateline, a shouted clause)."""
    org = kinds.get("organization")
    if not org or kinds.get("party", org) != org:
        return []
    out = []
    for m in _ACRONYM.finditer(text):
        word = m.group(0)
        before, after = text[max(0, m.start() - 30):m.start()], text[m.end():m.end() + 30]
        neighbours = re.findall(r"[\w.&'’-]+", before)[-1:] + re.findall(r"[\w.&'’-]+", after)[:1]
        if word.lower() in _NOT_ORG_ACRONYMS or any(w.isupper() and len(w) > 1 for w in neighbours):
            continue
        if not re.search(r"\b[a-z]+\b", text[max(0, m.start() - 30):m.start()] + text[m.end():m.end() + 30]):
            continue
        out.append(Mention(word, org, m.start(), m.end(), 1, 0.5, "organization"))
    return out


def _surname_aliases(text: str, mentions: list[Mention], person_type: str | None) -> None:
    """Give a person the surname it is later called by ("Kennedy" after "John F. Kennedy"),
    when that word stands alone elsewhere in the text and no other person shares it."""
    if not person_type:
        return
    persons = [m for m in mentions if m.type == person_type and len(m.name.split()) > 1]
    by_surname: dict[str, set[str]] = {}
    for m in persons:
        by_surname.setdefault(m.name.split()[-1], set()).add(name_key(m.name))
    for m in persons:
        surname = m.name.split()[-1]
        if len(by_surname[surname]) > 1 or not re.fullmatch(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?", surname):
            continue
        for hit in re.finditer(rf"(?<![\w.-]){re.escape(surname)}(?![\w-])", text):
            covered = any(o.start <= hit.start() and hit.end() <= o.end for o in mentions)
            if not covered and not re.match(r"[ \t]+[A-Z]", text[hit.end():hit.end() + 2]):
                m.aliases.append(surname)
                break


CLAUSE_LENGTH = 40  # characters: longer finds are clause-like (a claim, an obligation) and may contain names


def _resolve_overlaps(mentions: list[Mention]) -> list[Mention]:
    """Keep the stronger, then the longer, of overlapping mentions, within each granularity:
    a clause-like find ("we propose a Transformer model for …") does not hide the names
    inside it, and names do not hide it."""
    ordered = sorted(mentions, key=lambda m: (-m.priority, -(m.end - m.start), m.start, m.type, m.name))
    kept: list[Mention] = []
    for m in ordered:
        long = m.end - m.start >= CLAUSE_LENGTH
        if all(m.end <= k.start or m.start >= k.end or long != (k.end - k.start >= CLAUSE_LENGTH) for k in kept):
            kept.append(m)
    return sorted(kept, key=lambda m: (m.start, m.end))


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
            terms = [collapse(t) for t in (d.group("term"), d.group("term2")) if t]
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
    """Entities in ``text`` of the given types, merged by (name, type), in order of first mention."""
    kinds = generic_type_map(types)
    mentions = _resolve_overlaps(
        _pattern_mentions(text, types, skills) + _literal_mentions(text, kinds)
        + _org_mentions(text, kinds) + _name_mentions(text, kinds) + _acronym_mentions(text, kinds)
    )
    sentences = split_sentences(text)
    mentions = _attach_definitions(text, sentences, mentions, kinds)
    _surname_aliases(text, mentions, kinds.get("person"))
    _title_aliases(text, mentions, kinds.get("person"))
    # A name that is some entity's defined alias is that entity, not a new one.
    alias_of = {name_key(a): m for m in mentions for a in m.aliases}
    merged: dict[tuple[str, str], FoundEntity] = {}
    order: list[tuple[str, str]] = []
    for m in sorted(mentions, key=lambda m: (m.start, m.end)):
        if not m.name or not m.type:
            continue
        owner = alias_of.get(name_key(m.name))
        if owner is not None and owner is not m and m.priority < 3:
            continue
        key = (name_key(m.name), m.type)
        sent = next((s for s in sentences if s.start <= m.start < s.end), None)
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
    # "CO-BRANDING AGREEMENT (FORM)" and "CO-BRANDING AGREEMENT" in one chunk are one entity.
    for key in list(order):
        base = re.match(r"^(.*\S)\s*\([^()]*\)$", merged[key].name) if key in merged else None
        short = (name_key(base.group(1)), key[1]) if base else None
        if short and short in merged and short != key:
            full, part = merged[key], merged.pop(short)
            merged[key] = FoundEntity(full.name, full.type, full.evidence, max(full.confidence, part.confidence),
                                      tuple(dict.fromkeys(full.aliases + (part.name,) + part.aliases)),
                                      full.start, full.end)
            order.remove(short)
    # A party found anywhere in the chunk makes its other organisation mentions the party too.
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
    return [merged[k] for k in order if k in merged]
