"""What the text says a name also is: defined terms after it, titles before a person, a place's region, page furniture; which declared type a label means."""
from __future__ import annotations

import re
from collections import Counter


from kgkit.canon.records import Mention
from kgkit.formats.model import Domain
from kgkit.text.evidence import locate_mention
from kgkit.text.name_keys import fold_tokens, split_trade_name, squash
from kgkit.text.place_adjectives import adjectives_of


#: A line seen this many times in one document is page furniture (a running header or footer).
FURNITURE_REPEATS = 3


def _base_name(surface: str) -> str:
    """The display form of a surface: squashed, without a trade-name clause."""
    return split_trade_name(squash(surface))[0]


def _rule_reason(a: str, b: str) -> str:
    """Which normalisation level first makes surfaces ``a`` and ``b`` equal."""
    if squash(a) == squash(b):
        return "exact"
    if split_trade_name(a)[1] or split_trade_name(b)[1]:
        return "declared-alias"
    if fold_tokens(a) == fold_tokens(b):
        return "case/punctuation"
    return "legal-suffix"


def entity_type_name(domain: Domain | None, label: str) -> str | None:
    """The domain's declared entity type a label means, or None if it declares no such type.

    Matches type names and their ``aliases`` case-insensitively ("per", "PERSON" ->
    "Person"). With no domain every non-empty label is its own type.
    """
    label = (label or "").strip()
    if not label:
        return None
    if domain is None:
        return label
    return _type_table(domain).get(label.casefold())


_TYPE_TABLES: dict[int, tuple[Domain, tuple, dict[str, str]]] = {}  # id(domain) -> (domain, its types, table)


def _type_table(domain: Domain) -> dict[str, str]:
    """Folded type name or alias -> the declared type it names (the first type that declares
    it wins, as a scan in declaration order would find), made once per domain: every mention
    and every relation end asks."""
    entry = _TYPE_TABLES.get(id(domain))
    if entry is None or entry[0] is not domain or entry[1] is not domain.entity_types:
        table: dict[str, str] = {}
        for t in domain.entity_types:
            for label in (t.name, *t.aliases):
                table.setdefault(label.casefold(), t.name)
        if len(_TYPE_TABLES) > 64:  # domains are few; a long-lived process building many keeps a bounded table
            _TYPE_TABLES.clear()
        entry = _TYPE_TABLES[id(domain)] = (domain, domain.entity_types, table)
    return entry[2]


# A parenthesised definition right after a name, as contracts write them:
#   CCA Industries, Inc. ("Company")
#   Emerson HealthCare, LLC, a Pennsylvania limited liability company ("Contractor")
#   Cool Technologies Inc., a Nevada corporation (hereinafter referred to as "COOL TECH")
#   Solutions Media, Inc., dba SpinRecords.com a Delaware Corporation, with offices at
#     ... ("SpinRecords.com" or "Client")
# The appositive may not run past ", and" / ", or" / ";", where the next party starts.
_APPOSITIVE = r"""(?:,?\s*(?:an?|the)\s+(?:(?!,\s*(?:and|or)\s)[^()"\u201c\u201d;]){0,160}?)?"""


_QUOTED = r"""["\u201c][^"\u201c\u201d()]{1,60}["\u201d]"""


_TRADE_CLAUSE = r"(?:,?\s*(?:d\.?/?b\.?/?a\.?|doing\s+business\s+as|a\.?/?k\.?/?a\.?)\s+[^\s,()]+)?"


_DEFINED_TERMS = re.compile(
    r"[.]?" + _TRADE_CLAUSE + r"\s*" + _APPOSITIVE + r"\s*\(\s*(?:(?:hereinafter|herein|collectively)\b[^\"\u201c\u201d()]{0,40}?)?"
    r"(?:the\s+)?(" + _QUOTED + r"(?:\s*(?:,|or|,\s*or)\s*(?:the\s+)?" + _QUOTED + r")*)\s*\)",
    re.IGNORECASE,
)


_DEFINITION_REACH = 300  # characters after a name that its definition may take


_QUOTED_TEXT = re.compile(r"""["\u201c]([^"\u201c\u201d()]{1,60})["\u201d]""")


def defined_terms_after(text: str, end: int) -> list[str]:
    """The terms a contract defines for the name ending at ``text[end]``, if any.

    Only a parenthesised, quoted term list directly after the name (optionally after an
    appositive such as ", a Delaware corporation with offices at ...") counts, so a
    definition that belongs to the next party in a list is not picked up.
    """
    stop = min(len(text), end + _DEFINITION_REACH)
    if text.find("(", end, stop) < 0:  # every definition has its "(": skip the regex's slow failure
        return []
    m = _DEFINED_TERMS.match(text, end, stop)
    return [squash(t) for t in _QUOTED_TEXT.findall(m.group(1))] if m else []


# A title right before a person's name, optionally after the place or body it belongs to:
# "President", "Gov.", "Texas Gov.", "Chicago Mayor", "Superior Court Judge".
_TITLE = (r"(?:Vice\s+President|President|Prime\s+Minister|Minister|Governor|Gov\.|Senator|Sen\.|Rep\.|"
          r"Representative|General|Gen\.|Dr\.|Mr\.|Mrs\.|Ms\.|Judge|Justice|Mayor|Rev\.|Reverend|Chairman|"
          r"Secretary|Ambassador|King|Queen|Prince|Princess|Pope|Lt\.|Col\.|Capt\.|Sgt\.|Sir)")


_TITLE_BEFORE = re.compile(r"(?<![\w.])((?:(?!(?:The|A|An|Former|Then|Late)\b)[A-Z][a-z]+\s+){0,3}" + _TITLE + r")\s+$")


# The words a title ends with: the text before a titled name, spaces aside, ends with one.
_TITLE_ENDS = tuple({alternative.replace("\\.", ".").split("\\s+")[-1]
                     for alternative in _TITLE[3:-1].split("|")})


def titled_names(mention: Mention, text: str | None) -> list[str]:
    """The mention's name with the title the text writes right before it, if any."""
    if text is None or mention.span is None:
        return []
    start = mention.span[0]
    # the pattern ends in a title and spaces: where the text before the name does not, it cannot match
    if start <= 0 or not text[start - 1].isspace() or not text[max(0, start - 60):start].rstrip().endswith(_TITLE_ENDS):
        return []
    m = _TITLE_BEFORE.search(text, max(0, start - 60), start)
    return [squash(f"{m.group(1)} {mention.name}")] if m else []


# "Memphis, Tenn.", "Waterville, N. Y.", "Milan, Ohio": a place, a comma, its state or country.
_PLACE_WITH_REGION = re.compile(r"(?P<place>[A-Z][\w.'’ -]*?[\w.]),\s+[A-Z][\w.]*(?:\s+[A-Z][\w.]*)?")


def place_of_region(name: str) -> list[str]:
    """A place named with its region ("Memphis, Tenn.") is also called by its own name."""
    m = _PLACE_WITH_REGION.fullmatch(name)
    return [m.group("place")] if m else []


def part_written(mention: Mention, surface: str, text: str | None) -> list[str]:
    """A place named with what it lies in, whose span writes only the place ("Ontario,
    Canada" read from "the Province of Ontario and the federal laws of Canada"), is also
    called by the part written there; a place whose span writes its adjective ("England"
    read from "English law"), by that adjective."""
    if text is None or mention.span is None:
        return []
    written = text[mention.span[0]:mention.span[1]].strip()
    if not written or written == surface:
        return []
    return [written] if surface.startswith(written + ",") or written in adjectives_of(surface) else []


def _defined_terms(mention: Mention, text: str | None) -> list[str]:
    """Defined terms following the mention's name, in the document text or its evidence.

    The mention's span may cover the name itself or the whole evidence quote, so when
    nothing follows the span the name is also looked for inside it.
    """
    def places():
        # a definition needs its "(": where none follows, the name is not looked for
        if text is not None and mention.span is not None:
            start, end = mention.span
            yield text, end
            if end - start > len(mention.name) and "(" in text[start:end + _DEFINITION_REACH]:
                yield from ((text, start + e) for _, e in locate_mention(mention.name, text[start:end]))
        if mention.evidence and "(" in mention.evidence:
            yield from ((mention.evidence, e) for _, e in locate_mention(mention.name, mention.evidence))

    for where, end in places():
        terms = defined_terms_after(where, end)
        if terms:
            return terms
    return []


def furniture_lines(text: str | None) -> dict[int, str]:
    """Start offset -> line, for the lines of ``text`` that recur :data:`FURNITURE_REPEATS`
    or more times (stripped, at least 8 characters): running headers and footers."""
    if not text:
        return {}
    counts: Counter = Counter()
    lines: list[tuple[int, str]] = []
    at = 0
    for raw in text.split("\n"):
        line = raw.strip()
        if len(line) >= 8:
            counts[line] += 1
            lines.append((at, raw))
        at += len(raw) + 1
    return {start: raw for start, raw in lines if counts[raw.strip()] >= FURNITURE_REPEATS}


def _on_furniture(m: Mention, text: str | None, furniture: dict[int, str]) -> bool:
    """Whether the mention sits on a running header/footer line that says more than its name."""
    if not furniture or m.span is None or text is None:
        return False
    line_start = text.rfind("\n", 0, m.span[0]) + 1
    line = furniture.get(line_start)
    return line is not None and m.span[1] <= line_start + len(line) and squash(line) != squash(m.name)
