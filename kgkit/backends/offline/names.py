"""Capitalised names in running text: people, organisations and places, typed by cues.

The weakest source of :mod:`.entities` (an overlapping pattern, literal, company or
defined term wins). Only the generic kinds the domain declares are produced.

A capitalised multi-word name is typed by cues in this order: an honorific or a title
inside or before the name ("Dr.", "Soviet Foreign Minister Eduard Shevardnadze") ->
person; an organisation word ("… University") -> organisation; a middle initial ("John F.
Kennedy") or a role noun before it ("comedian X", "said X") -> person; a place word ("Early
County", "Fort Hamilton", "Upper West Side"), a state after it (", Calif.") or "native(s)" /
"resident(s)" after it ("a Modesto native") -> location; a person cue after
it ("X, who", "X said", "X, 45,", "X, a spokesman", "X's wife", "X killed") -> person;
"in/at/from" before it -> location; otherwise a name of two or three name-shaped words is a
person by default — unless one of its words is also written in lower case in the text (then
it is a common noun: "Confidential Information"), it sits on a heading line, or the domain
declares contracting parties (in contracts, capitalised words are defined terms far more
often than people).

A lone capitalised word needs a cue: a title or role noun before it, or one that fits only
people after it (", who", "'s wife", "killed Kennedy") -> person; "in/at/near" before it,
", Tenn." or "native" after it -> location; a lone 2-5-letter acronym in running text ("the
FAA said") -> organisation. A wire story's source credit ("Oslo DAGBLADET in Norwegian 3 Jan
95") names an organisation. Lone words, acronyms and the two-or-three-word default are off in domains
with contracting parties.

A person's surname written alone elsewhere in the chunk ("Kennedy" after "John F.
Kennedy"), and the name with its title ("President John F. Kennedy"), are the person's
aliases in the answer, not further entities. (The engine builds a node's aliases from the
text itself and reads none from the answer — docs/design.md, "Pass answers" — so a node
gets them only where its merge does.)
"""
from __future__ import annotations

import re
from bisect import bisect_right
from itertools import accumulate

from kgkit.backends.offline.mentions import Mention, name_key
from kgkit.text.sentences import ABBREVIATIONS, is_heading

_NAME_WORD = r"(?:[A-Z][a-z]+(?:[A-Z][a-z]+)?(?:-[A-Za-z][a-z]+)?|[A-Z]{2,}[a-z]*)"  # "McConnell", "Chung-hee"
# Each pattern that opens on a capital letter says so first, "(?=[A-Z])": re then tests one
# character at each place where it would step back for its lookbehind (a third less time).
_CAPS_NAME = re.compile(
    rf"(?=[A-Z])(?<![\w.&-])(?P<name>(?:[A-Z]\.[ \t]+(?=[A-Z][a-z]))?{_NAME_WORD}(?:[ \t]+(?:(?:of|the|de|van|von|for|and)[ \t]+)?"
    rf"(?:{_NAME_WORD}|[A-Z]\.)){{1,7}})(?![\w])"
)
# Regexes of the per-name checks, compiled once (re's cache lookup per call added up).
_NAME_WORD_RE = re.compile(_NAME_WORD)
_NAME_SHAPED = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?|[A-Z][a-z]?[A-Z][a-z]+|[A-Z]\.")
_INITIAL = re.compile(r"[A-Z]\.")
_ENUMERATED = re.compile(r"[.:]")
_SURNAME = re.compile(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?")
_CAPITAL_NEXT = re.compile(r"[ \t]+[A-Z]")
_CAPITAL_BEFORE = re.compile(r"[A-Z][\w.]*[ \t]+$")
_RUN_GOES_ON = re.compile(r"(?:['’]s)?[ \t]+(?:[A-Z]|of\b|and\b)")
_TOKEN = re.compile(r"[\w.&'’-]+")
_LOWER_WORD = re.compile(r"\b[a-z]+\b")
_HONORIFIC = re.compile(r"\b(?:Mr|Mrs|Ms|Dr|Prof|Sen|Rep|Gov|Gen|Lt|Col|Capt|Sgt|President|Senator|Governor|Judge|Justice|Chairman|Minister|Secretary|Ambassador|Pope|King|Queen|Prince|Sir|Lord|Rev)\.?\s+$")
ORG_WORDS = frozenset(
    "university institute association bank group agency ministry department council committee foundation "
    "corporation company airlines airline times news post press court commission army navy church hospital "
    "school college club union federation organization organisation party congress senate parliament "
    "administration board bureau service services laboratories laboratory systems technologies industries "
    "holdings partners fund trust exchange network journal society center centre office police embassy "
    "force forces guard orchestra opera team hotel theater theatre museum confederation authority league "
    "alliance assembly academy".split()
)
# Words that make a capitalised name an event: "the Boer War", "the Paris Exposition".
_EVENT_LAST = frozenset(
    "war wars revolution uprising rebellion crisis games olympics championship championships cup "
    "festival fair exposition exhibition expo".split()
)
# "Georgia Tech": a school in news. Not where the domain has contracting parties: there
# "Cool Tech" is the short name a contract gives a company, which its definition joins to it.
_SCHOOL_WORDS = frozenset({"tech"})


def _has_parties(kinds: dict[str, str]) -> bool:
    """The domain declares contracting parties apart from organisations (a contract domain):
    there capitalised words are defined terms and headings far more often than people."""
    return kinds.get("party", kinds.get("organization")) != kinds.get("organization")


# Words that make a capitalised name a place: "Early County", "Niagara Falls", "Fort Hamilton".
_PLACE_LAST = frozenset(
    "county city province state district island islands bay falls lake river sea ocean coast mountains mountain "
    "valley beach park street avenue square airport harbor harbour peninsula canyon desert gulf strait heights "
    "hills springs village township parish region side".split()
)
_PLACE_FIRST = frozenset("fort camp mount port cape lake san santa sao ciudad saint st".split())
# ", Calif." / ", S.C." after a name: a US-style place with its state
STATE_AFTER = re.compile(r"^,\s+(?!(?:Jr|Sr|Esq|Inc|Co|Corp|Ltd)\.)(?:[A-Z][a-z]{1,4}\.|[A-Z]\.[ ]?[A-Z]\.)")
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
    "detective|inspector|sheriff|inventor|designer|architect|philosopher|physicist|chemist|biologist|engineer|teacher|"
    "student|collector|veteran|resident|member|employee|worker|farmer|king|queen|prince|princess|"
    "emperor|dictator|clerk|chief|head|partner"
)
ROLES = frozenset(_ROLE_NOUNS.split("|"))


def by_first_letter(words: list[str]) -> str:
    """``words`` as a regex alternation grouped under their first character
    (``a(?:ctor|ctress)|s(?:inger)``), each group keeping the words' order: at any place only
    one group can match, so it matches as the flat ``actor|actress|singer`` does, without
    trying every word at every character (3-4x faster on the role nouns)."""
    groups: dict[str, list[str]] = {}
    for w in words:
        groups.setdefault(w[0], []).append(re.escape(w[1:]))
    return "|".join(f"{re.escape(first)}(?:{'|'.join(rests)})" for first, rests in groups.items())


ROLE_ALTERNATION = by_first_letter(_ROLE_NOUNS.split("|"))
# Role and title words: a "person" named by these alone ("Chief Executive Officer") is a role.
ROLE_WORDS = ROLES | frozenset("officer executive counsel general vice title name sales marketing operations "
                                "financial technical senior managing".split())
_TITLE_IN_NAME = frozenset(
    "president minister secretary senator governor mayor ambassador chairman general judge justice administrator "
    "director commissioner attorney chancellor premier leader spokesman spokeswoman representative "
    "congressman congresswoman sen rep gov gen dr mr mrs ms prof lt col capt sgt rev prime vice foreign "
    "democrat republican democratic professor".split()
)
_PERSON_BEFORE = re.compile(
    rf"(?:\b(?:{ROLE_ALTERNATION})s?,?|\b(?:said|says|told|according\s+to|killed|shot|assassinated|murdered|"
    r"stabbed|kidnapped|assassination\s+of|murder\s+of)|\b(?:his|her)\s+(?:\w+\s+)?(?:husband|wife|son|"
    r"daughter|father|mother|brother|sister|widow|friend))\s+$"
)
_PERSON_AFTER = re.compile(
    rf"^(?:,\s+(?:who|whose)\b|,\s+\d{{1,3}},|,\s+(?:a|an|the|his|her)\s+(?:[\w-]+\s+){{0,3}}?(?:{ROLE_ALTERNATION})\b"
    rf"|,\s+(?:former\s+|acting\s+|deputy\s+|vice\s+)?(?:{ROLE_ALTERNATION})\b|['’]s\s+(?:husband|wife|son|daughter|father|"
    r"mother|brother|sister|widow|family|lawyer|attorney)\b|\s+(?:said|says|told|testified|recalled|wrote|"
    r"died|was\s+born|killed|shot|assassinated|murdered|stabbed)\b)"
)
# Single words: only cues that fit a person and hardly anything else ("Exxon said" does not).
_PERSON_AFTER_STRONG = re.compile(
    r"^(?:,\s+(?:who|whose)\b|,\s+\d{1,3},|['’]s\s+(?:husband|wife|son|daughter|father|mother|brother|sister|"
    r"widow|assassination|assassin|killer|killing|murder|murderer|funeral|tenure|presidency)\b"
    r"|\s+(?:killed|assassinated|murdered|stabbed)\s+(?:[A-Z]|(?:his|her)\s)|\s+administration\b)"
)
_LOCATION_CUE = re.compile(r"\b(?:in|at|from|near|to|into|across|outside|throughout|(?:north|south|east|west)(?:east|west)?\s+of)"
                           r"\s+(?:the\s+)?$")
_SENTENCE_STOP = frozenset(
    "the a an this that these those it he she they we i in on at for by with from of and or but if when "
    "while as after before during whereas now therefore however section article exhibit schedule table figure "
    "notwithstanding subject each any all such no upon later yesterday today tomorrow meanwhile although though "
    "since because until also then still even instead thus hence so last next".split()
)


# An article, quantifier or possessive right before a capitalised run: people's names do
# not take one, so the run is a thing's name or a title-cased noun phrase.
_DETERMINED = re.compile(r"(?:\b(?:the|a|an|any|each|every|all|no|such|its|their|our|your|this|these|those)"
                         r"|['’]s)\s+$", re.I)


_ABBREVIATED_TITLE = re.compile(r"(?:Mr|Mrs|Ms|Dr|Prof|Sen|Rep|Gov|Gen|Lt|Col|Capt|Sgt|Rev)\.?")


def is_title_word(word: str) -> bool:
    """An abbreviated title ("Lt", "Sen."): a word before a name, never a name itself."""
    return bool(_ABBREVIATED_TITLE.fullmatch(word.strip()))


# A capitalised word that opens a sentence, not a name: "Yesterday Appeals Court Judge …".
_OPENING_WORDS = frozenset("today yesterday tomorrow meanwhile now later also".split())


def trim_org_edges(m: Mention, text: str) -> Mention:
    """An organisation found by a pattern loses a sentence's opening word ("Yesterday Appeals
    Court"), the person a title introduces before "of" ("Dr. Ana Lind of Avalon University"),
    and a title that begins the name of the person after it ("Bureau of Water
    Works Chairman Tomas R. Quell": the bureau, then its chairman)."""
    words = m.name.split()
    lead = 0
    while lead < len(words) - 1 and words[lead].lower() in _OPENING_WORDS:
        lead += 1
    if "of" in words[lead:-1] and _HONORIFIC.search(text[max(0, m.start - 20):m.start]):
        lead = words.index("of", lead) + 1  # "Dr. Ana Lind of Avalon University": her university
    tail = len(words)
    if _CAPITAL_NEXT.match(text[m.end:m.end + 2]):
        while tail - 1 > lead and _is_title(words[tail - 1]):
            tail -= 1
    if (lead, tail) == (0, len(words)):
        return m
    name = " ".join(words[lead:tail])
    start = m.start + text[m.start:m.end].find(words[lead])
    return Mention(name, m.type, start, start + len(name), m.priority, m.confidence, m.kind, list(m.aliases))


def _is_title(word: str) -> bool:
    """A title or role word written before a name ("Chairman", "Inspector", "Gov.")."""
    low = word.lower().rstrip(".")
    return word[:1].isupper() and (low in _TITLE_IN_NAME or low in ROLES)


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
    if not 2 <= len(words) <= 3 or _has_parties(kinds):
        return False
    if not all(_NAME_SHAPED.fullmatch(w) for w in words):
        return False
    if any(w.lower() in lower or w.lower() in _TITLE_IN_NAME for w in words) or words[-1].endswith("."):
        return False
    if text[max(0, start - 1):start] in ("\"", "“", "'", "‘"):
        return False  # a quoted title: "War Is Hell"
    if _DETERMINED.search(text, max(0, start - 20), start):
        return False  # "the Internal Revenue", "any Government Sales", "COOL TECH's Mobile Generation"
    if _INITIAL.fullmatch(words[0]) and _ENUMERATED.match(text[start + len(" ".join(words)):][:1]):
        return False  # an enumerated heading: "A. Entire Agreement:"
    return not _line_is_heading(text, start)


def _middle_initial(words: list[str]) -> bool:
    """Given name, middle initial, surname: "John F. Kennedy" (and "David K. Heap CEO")."""
    return len(words) >= 3 and bool(_INITIAL.fullmatch(words[1])) and all(
        _NAME_WORD_RE.fullmatch(w) and not w.isupper() for w in (words[0], words[2]))


def _name_kind(words: list[str], text: str, start: int, end: int, lower: frozenset[str], kinds: dict[str, str]) -> str:
    before = text[max(0, start - 40):start]
    after = text[end:end + 60]
    if _HONORIFIC.search(before[-20:]):
        return "person"
    single = len(words) == 1
    if not single and words[-1].lower() in _EVENT_LAST:
        return "name"  # "the Civil War", "the World Fair": an event, not a place or a person
    placed = not single and not any(w.isupper() for w in words) and bool(STATE_AFTER.search(after))
    head = next((words[:i] for i, w in enumerate(words) if w in ("of", "for")), words)
    if words[-1].lower() in ORG_WORDS or words[0].lower() in ORG_WORDS or head[-1].lower() in ORG_WORDS or (
            words[-1].lower() in _SCHOOL_WORDS and not single and not _has_parties(kinds)):
        # "Lark Center, Minn.": a place with its state, whatever its last word
        return "location" if placed else "organization"
    if _middle_initial(words) or _PERSON_BEFORE.search(before):
        return "person"  # "John F. Kennedy", "singer Bob Boyd of Chattanooga"
    if placed or not single and not any(w.isupper() for w in words) and (
            words[-1].lower() in _PLACE_LAST or words[0].lower().rstrip(".") in _PLACE_FIRST
            or _NATIVE_AFTER.search(after)):
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


def name_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    """Capitalised runs and cued lone words, as mentions of the declared person,
    organisation, location or catch-all name type (priority 1: every other source wins)."""
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
        # a title, or a role noun capitalised before a name ("Soprano Judy Kaye", "Comedian Tuvia Tzafir")
        titled = [i for i, w in enumerate(words[:-1])
                  if (w.lower().rstrip(".") in _TITLE_IN_NAME or w.lower() in ROLES) and w[1:2].islower()]
        rest = words[titled[-1] + 1:] if titled else []
        titled_person = bool(titled) and "person" in targets and not (
            words[-1].lower() in ORG_WORDS or words[-1].lower() in _TITLE_IN_NAME
            or not all(_INITIAL.fullmatch(w) or _NAME_WORD_RE.fullmatch(w) and not w.isupper()
                       and w.lower() not in ROLES for w in rest))
        if titled_person:
            out += _organisation_before_title(words[:titled[0]], m, text, kinds)
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


def _organisation_before_title(words: list[str], m: re.Match[str], text: str, kinds: dict[str, str]) -> list[Mention]:
    """The organisation that a title-led person run opens with: "Fisheries and Ocean Services"
    in "Fisheries and Ocean Services Inspector Ana P. Dorr" (an organisation word
    first or last), where the person's employer is named."""
    if "organization" not in kinds or not words or not (
            words[-1].lower() in ORG_WORDS or words[0].lower() in ORG_WORDS):
        return []
    name = " ".join(words)
    at = m.group("name").find(name)
    if at < 0 or len(words) < 2 or any(w.isupper() for w in words):
        return []
    start = m.start("name") + at
    return [Mention(name, kinds["organization"], start, start + len(name), 1, 0.5, "organization")]


_SINGLE = re.compile(rf"(?=[A-Z])(?<![\w.&'’-]){_NAME_WORD}(?![\w&-]|['’](?!s\b)|\.\w)")  # "Marlow's" too
_CALENDAR = frozenset(
    "january february march april may june july august september october november december monday tuesday "
    "wednesday thursday friday saturday sunday christmas easter".split()
)
_NOT_SINGLE_NAMES = _CALENDAR | _SENTENCE_STOP | ABBREVIATIONS  # lone words never read as names
_LANGUAGE = re.compile(r"(?:ish|ese|ian|ean|ic)$|^(?:French|Dutch|Greek|Thai)$")  # "in English", "in Arabic"
_SINGLE_PLACE_CUE = re.compile(r"\b(?:in|at|from|near|outside|throughout|across|(?:north|south|east|west)(?:east|west)?\s+of)\s+$")
# "a Fresno native", "Leeds residents": a place named by who comes from or lives in it.
_NATIVE_AFTER = re.compile(r"^[ \t]+(?:natives?|residents?)\b")


def _single_mentions(text: str, kinds: dict[str, str], lower: frozenset[str]) -> list[Mention]:
    """Lone capitalised words with a cue: a person ("comedian Tzafir", "Reagan's wife") or a
    place ("in Perugia", "Chattanooga, Tenn."). Words written in lower case elsewhere in the
    text, calendar words and words beside other capitalised words (runs, read as names
    above) are skipped. Not where the domain declares contracting parties: contracts
    capitalise defined terms ("Licensee, who…", "in Territory")."""
    if _has_parties(kinds):
        return []
    out = []
    for m in _SINGLE.finditer(text):
        word = m.group(0)
        if word.lower() in lower or word.lower() in _NOT_SINGLE_NAMES:
            continue
        before, after = text[max(0, m.start() - 40):m.start()], text[m.end():m.end() + 60]
        if _CAPITAL_BEFORE.search(before) or _RUN_GOES_ON.match(after):
            continue  # part of a longer capitalised run, or of a name with a possessive ("Ford's Theater")
        if "person" in kinds and (_PERSON_BEFORE.search(before) or _PERSON_AFTER_STRONG.search(after)):
            kind = "person"
        elif "location" in kinds and not _LANGUAGE.search(word) and (
                _SINGLE_PLACE_CUE.search(before) or STATE_AFTER.search(after) or _NATIVE_AFTER.search(after)):
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


def add_title_aliases(text: str, mentions: list[Mention], person_type: str | None) -> None:
    """A person written after a title is also called by it ("President Kennedy", "Ms. Toth")."""
    for m in mentions:
        if m.type != person_type:
            continue
        t = _HONORIFIC.search(text[max(0, m.start - 20):m.start])
        if t:
            title = t.group(0).strip()
            m.aliases.append(f"{title} {m.name}")


_ACRONYM = re.compile(r"(?=[A-Z])(?<![\w.&'’-])[A-Z]{2,5}(?![\w.&'’-]|\.\w)")
# All-capital words that are not organisations: units, eras, diseases, roles, time zones.
_NOT_ORG_ACRONYMS = frozenset(
    "tv ceo cfo coo cto aids hiv dna rna gmt est edt pst pdt cst am pm ok id usd ad bc ii iii iv vi vii viii ix xi "
    "mph kg km mm cm ft lb lbs oz pc gnp gdp vat iq ufo uk usa us ussr faq".split()
)


def acronym_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    """A lone all-capital word of 2-5 letters in running text ("the FAA said", "GE
    spokesman") names an organisation. Not where the domain declares contracting parties
    (contracts capitalise defined terms and headings), and not among other capitalised
    words (a heading, a dateline, a shouted clause)."""
    org = kinds.get("organization")
    if not org or _has_parties(kinds):
        return []
    out = []
    for m in _ACRONYM.finditer(text):
        word = m.group(0)
        before, after = text[max(0, m.start() - 30):m.start()], text[m.end():m.end() + 30]
        neighbours = _TOKEN.findall(before)[-1:] + _TOKEN.findall(after)[:1]
        if word.lower() in _NOT_ORG_ACRONYMS or any(w.isupper() and len(w) > 1 for w in neighbours):
            continue
        if not _LOWER_WORD.search(text[max(0, m.start() - 30):m.start()] + text[m.end():m.end() + 30]):
            continue
        out.append(Mention(word, org, m.start(), m.end(), 1, 0.5, "organization"))
    return out


# A wire service's source credit: the publication or broadcaster in capitals, then the
# language and the date it appeared ("Oslo DAGBLADET in Norwegian 3 Jan 95 p 4").
_SOURCE_CREDIT = re.compile(
    r"(?<![\w&'’-])(?P<name>[A-Z][A-Z&'’-]+(?:[ ][A-Z][A-Za-z&'’-]+){0,3})[ ]+in[ ]+[A-Z][a-z]+[ ]+"
    r"\d{1,2}[ ]+[A-Z][a-z]{2,8}\.?[ ]+\d{2,4}\b")
# What every credit holds from its last space before "in" on: a search for it starts on the
# literal " in" (a fast scan), and most texts have none, so the credit's own search is spared.
_CREDIT_TAIL = re.compile(r" in[ ]+[A-Z][a-z]+[ ]+\d{1,2}[ ]+[A-Z][a-z]{2,8}\.?[ ]+\d{2,4}\b")


def source_credit_mentions(text: str, kinds: dict[str, str]) -> list[Mention]:
    """The publication a wire story credits as its source is an organisation: a name in
    capitals followed by "in <language> <day> <month> <year>"."""
    org = kinds.get("organization")
    if not org or _has_parties(kinds) or not _CREDIT_TAIL.search(text):
        return []
    return [Mention(m.group("name"), org, m.start("name"), m.end("name"), 3, 0.7, "organization")
            for m in _SOURCE_CREDIT.finditer(text)]


def add_surname_aliases(text: str, mentions: list[Mention], person_type: str | None) -> None:
    """Give a person the surname it is later called by ("Kennedy" after "John F. Kennedy"),
    when that word stands alone elsewhere in the text and no other person shares it."""
    if not person_type:
        return
    persons = [m for m in mentions if m.type == person_type and len(m.name.split()) > 1]
    by_surname: dict[str, set[str]] = {}
    for m in persons:
        by_surname.setdefault(m.name.split()[-1], set()).add(name_key(m.name))
    # Whether a span lies inside a mention: the furthest end among the mentions starting at
    # or before it reaches its end (one bisection instead of a scan of every mention).
    spans = sorted((o.start, o.end) for o in mentions)
    starts = [s for s, _ in spans]
    reach = list(accumulate((e for _, e in spans), max))
    for m in persons:
        surname = m.name.split()[-1]
        if len(by_surname[surname]) > 1 or not _SURNAME.fullmatch(surname):
            continue
        for start, end in _standalone(text, surname):
            before = bisect_right(starts, start)
            covered = before > 0 and reach[before - 1] >= end
            if not covered and not _CAPITAL_NEXT.match(text[end:end + 2]):
                m.aliases.append(surname)
                break


def _standalone(text: str, word: str):
    """Spans of ``re.finditer(r"(?<![\\w.-])WORD(?![\\w-])", text)`` by ``str.find``: a
    regex compiled per surname cost more than the rest of the rule on a text of many names."""
    at = text.find(word)
    while at >= 0:
        end = at + len(word)
        before, after = text[at - 1:at], text[end:end + 1]
        if not (before and (before.isalnum() or before in "_.-")) and not (after and (after.isalnum() or after in "_-")):
            yield at, end
            at = text.find(word, end)
        else:
            at = text.find(word, at + 1)
