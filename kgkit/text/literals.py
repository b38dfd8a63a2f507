"""Recognise and normalise literal values: dates, durations, money, percentages, quantities.

This is a public module: the offline backend finds literals with it, and the modes
(temporal, nary, event, diy) normalise the qualifier and role values an LLM returns with
the same functions, so a date reads ``2014-01-20`` whoever extracted it.

Normal forms (``Literal.value``):

* date — ISO 8601: ``YYYY-MM-DD``, or ``YYYY-MM`` / ``YYYY`` when the text gives no more;
* duration — ISO 8601 duration (``P6M``, ``P30D``, ``P1Y``, ``PT48H``, ``P2W``);
* money — ``{"amount": float, "currency": "USD"}`` (currency ``None`` when unstated);
* percent — a float (``12.5`` for "12.5%");
* quantity — ``{"amount": float, "unit": "mg"}``.

``Literal.name`` is a short canonical label used as an entity name: the ISO date, or
"6 months" / "successive 1 year" for durations (the wording contract analysts use).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Iterable

from kgkit.text.type_kinds import LITERAL_KINDS as KINDS

MONTHS = {
    "january": 1, "february": 2, "march": 3, "april": 4, "may": 5, "june": 6, "july": 7,
    "august": 8, "september": 9, "october": 10, "november": 11, "december": 12,
    "jan": 1, "feb": 2, "mar": 3, "apr": 4, "jun": 6, "jul": 7, "aug": 8, "sep": 9,
    "sept": 9, "oct": 10, "nov": 11, "dec": 12,
}
NUMBER_WORDS = {
    "one": 1, "two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "seven": 7, "eight": 8,
    "nine": 9, "ten": 10, "eleven": 11, "twelve": 12, "thirteen": 13, "fourteen": 14,
    "fifteen": 15, "sixteen": 16, "seventeen": 17, "eighteen": 18, "nineteen": 19,
    "twenty": 20, "thirty": 30, "forty": 40, "forty-five": 45, "fifty": 50, "sixty": 60,
    "seventy": 70, "eighty": 80, "ninety": 90, "hundred": 100, "one hundred": 100,
    "one hundred twenty": 120, "one hundred eighty": 180, "a": 1, "an": 1,
}
UNITS = {  # duration unit -> (ISO designator, label)
    "day": ("D", "day"), "business day": ("D", "business day"), "calendar day": ("D", "day"),
    "working day": ("D", "business day"), "week": ("W", "week"), "month": ("M", "month"),
    "year": ("Y", "year"), "hour": ("H", "hour"), "quarter": ("Q", "quarter"),
}
CURRENCY_SYMBOLS = {"$": "USD", "us$": "USD", "usd": "USD", "€": "EUR", "eur": "EUR", "£": "GBP",
                    "gbp": "GBP", "¥": "JPY", "jpy": "JPY", "cad": "CAD", "c$": "CAD", "rmb": "CNY",
                    "cny": "CNY", "chf": "CHF", "aud": "AUD", "a$": "AUD", "inr": "INR", "rs.": "INR"}
CURRENCY_WORDS = {"dollars": "USD", "dollar": "USD", "euros": "EUR", "euro": "EUR", "pounds": "GBP",
                  "yen": "JPY", "rupees": "INR", "yuan": "CNY", "francs": "CHF"}
SCALES = {"thousand": 1e3, "k": 1e3, "million": 1e6, "m": 1e6, "mm": 1e6, "mn": 1e6,
          "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12}
LITERALS_KEPT = 4096  # (text, kind) pairs whose finds are kept: a few kinds for each of the last ~1,000 chunks
QUANTITY_UNITS = ("mg/kg", "mg/m2", "mg/day", "mg/dl", "mmol/l", "µg", "μg", "mcg", "mg", "kg", "g",
                  "ml", "mL", "l", "nm", "nM", "µM", "μM", "mM", "iu", "IU", "units", "tablets",
                  "km", "m2", "sq ft", "square feet", "barrels", "tons", "tonnes", "MW", "GW", "kWh",
                  "shares", "employees")


@dataclass(frozen=True)
class Literal:
    """One literal found in text: ``text[start:end] == surface``."""

    kind: str
    surface: str
    start: int
    end: int
    value: Any
    name: str


_MONTH = r"(?P<mon>jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sept?(?:ember)?|oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
_DAY = r"(?P<day>[0-3]?\d)(?:\s*(?:st|nd|rd|th|t\s?h))?"
_YEAR = r"(?P<year>(?:1[6-9]|2[0-1])\d\d)"
_DATE_RES = [
    # the 26th day of May, 2017
    re.compile(rf"\b{_DAY}\s+day\s+of\s+{_MONTH},?\s+{_YEAR}\b", re.I),
    # January 20, 2014 / Nov  5,  1999 / July 11 , 2006
    re.compile(rf"\b{_MONTH}\s+{_DAY}\s*,?\s+{_YEAR}\b", re.I),
    # 20 January 2014 / 20th January, 2014
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b", re.I),
    # 2014-01-20
    re.compile(r"\b(?P<year>(?:19|20)\d\d)-(?P<month>[01]\d)-(?P<day>[0-3]\d)\b"),
    # 01/20/2014, 1/20/14 (US month-first, as in the contracts we read)
    re.compile(r"\b(?P<month>[01]?\d)/(?P<day>[0-3]?\d)/(?P<year>(?:19|20)?\d\d)\b"),
    # January 2014
    re.compile(rf"\b{_MONTH}\s+(?:of\s+)?{_YEAR}\b", re.I),
    # in 2019, since 1998 (a bare year needs a preposition to count as a date)
    re.compile(r"\b(?:in|since|until|by|from|during|through|of|fiscal|FY)\s(?P<year>(?:19|20)\d\d)\b(?![-/,.]?\d)"),
]

_BARE_YEAR = _DATE_RES[-1]
_TENS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
_ONES = ("one", "two", "three", "four", "five", "six", "seven", "eight", "nine")
# "twenty-four", "thirty one": tried before the single words, so a duration keeps its whole number word
_COMPOUND = rf"(?:{'|'.join(_TENS)})[\s-](?:{'|'.join(_ONES)})\b"
_NUM = rf"(?:\d+(?:\.\d+)?|{_COMPOUND}|" + "|".join(sorted((re.escape(w) for w in NUMBER_WORDS if w not in ("a", "an")), key=len, reverse=True)) + ")"
_UNIT = r"(?P<unit>business\s+days?|calendar\s+days?|working\s+days?|days?|weeks?|months?|years?|hours?|quarters?)"
_DURATION_RE = re.compile(
    r"(?P<succ>\bsuccessive\s+(?:(?:renewal\s+)?(?:terms?|periods?)\s+of\s+)?)?"
    rf"\b(?P<num>{_NUM})(?:\s*\((?P<digits>\d+)\))?[\s-]*{_UNIT}(?:['’]s?)?"
    r"(?P<tail>\s+(?:renewal\s+)?(?:periods?|terms?))?\b",
    re.I,
)
_MONEY_RE = re.compile(
    r"(?P<cur>US\$|C\$|A\$|\$|€|£|¥|\b(?:USD|EUR|GBP|JPY|CAD|CNY|RMB|CHF|AUD|INR)\b|\bRs\.)\s?"
    r"(?P<amt>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)"
    r"(?:\s*(?P<scale>thousand|million|billion|trillion|bn|mm|mn|[kmb])\b)?"
    r"|\b(?P<amt2>\d{1,3}(?:,\d{3})+(?:\.\d+)?|\d+(?:\.\d+)?)\s*(?P<scale2>thousand|million|billion|trillion)?\s*"
    r"(?P<cur2>dollars?|euros?|pounds|yen|rupees|yuan|francs)\b",
    re.I,
)
_PERCENT_RE = re.compile(r"(?P<num>\d+(?:\.\d+)?)\s*(?:%|per\s?cent\b|percent\b)|\b(?P<word>" + "|".join(
    w for w in NUMBER_WORDS if w not in ("a", "an")) + r")\s+(?:\(\d+\)\s*)?(?:percent|per\s?cent)\b", re.I)
_QUANTITY_RE = re.compile(
    r"\b(?P<amt>\d+(?:[.,]\d+)?)\s?(?P<unit>" + "|".join(re.escape(u) for u in sorted(QUANTITY_UNITS, key=len, reverse=True)) + r")(?![\w/])"
)


def _number(token: str) -> float | None:
    token = token.strip().lower().replace(",", "")
    if token in NUMBER_WORDS:
        return float(NUMBER_WORDS[token])
    tens, _, ones = re.sub(r"[\s-]+", " ", token).partition(" ")
    if tens in _TENS and ones in _ONES:  # twenty-four
        return float(NUMBER_WORDS[tens] + NUMBER_WORDS[ones])
    try:
        return float(token)
    except ValueError:
        return None


def _year(text: str) -> int:
    y = int(text)
    if y < 100:  # two-digit years: <= 30 -> 20xx (the CUAD convention), else 19xx
        y += 2000 if y <= 30 else 1900
    return y


def _iso_date(groups: dict[str, str | None]) -> str | None:
    year_text, mon, month_text, day_text = (groups.get(k) for k in ("year", "mon", "month", "day"))
    year = _year(year_text) if year_text else None
    if year is None:
        return None
    month = None
    if mon:
        month = MONTHS.get(mon.lower().rstrip("."))
    elif month_text:
        month = int(month_text)
    if month is None:
        return f"{year:04d}"
    if not 1 <= month <= 12:
        return None
    if not day_text:
        return f"{year:04d}-{month:02d}"
    day = int(day_text)
    if not 1 <= day <= 31:
        return None
    return f"{year:04d}-{month:02d}-{day:02d}"


def _fmt(n: float) -> str:
    return str(int(n)) if n == int(n) else f"{n:g}"


# "the Internal Revenue Code of 1986", "Securities Exchange Act of 1934": a year closing a
# capitalised title is part of that name, not a date of the document.
_TITLE_OF = re.compile(r"[A-Z][\w.&-]*\s+of\s+$")


def _find_dates(text: str) -> Iterable[Literal]:
    for rx in _DATE_RES:
        for m in rx.finditer(text):
            value = _iso_date(m.groupdict())
            if m.re is _BARE_YEAR and _TITLE_OF.search(text, max(0, m.start() - 60), m.start("year")):
                continue
            if value:
                start = m.start("year") if m.re is _BARE_YEAR else m.start()
                yield Literal("date", text[start:m.end()], start, m.end(), value, value)


def _find_durations(text: str) -> Iterable[Literal]:
    for m in _DURATION_RE.finditer(text):
        n = _number(m.group("digits") or m.group("num"))
        if n is None or n <= 0:
            continue
        unit_key = re.sub(r"\s+", " ", m.group("unit").lower()).rstrip("s")
        designator, label = UNITS[unit_key]
        if designator == "Q":
            designator, n_iso = "M", n * 3
        else:
            n_iso = n
        value = f"PT{_fmt(n_iso)}H" if designator == "H" else f"P{_fmt(n_iso)}{designator}"
        name = f"{_fmt(n)} {label}{'' if n == 1 else 's'}"
        start = m.start()
        if m.group("succ"):
            name = "successive " + name
        elif m.group(0)[0].isspace():
            start = m.start("num")
        # "one year" must not be read out of "one-year-old" etc.; "a"/"an" are not matched as numbers
        yield Literal("duration", text[start:m.end()], start, m.end(), value, name)


def _find_money(text: str) -> Iterable[Literal]:
    for m in _MONEY_RE.finditer(text):
        amt = m.group("amt") or m.group("amt2")
        scale = (m.group("scale") or m.group("scale2") or "").lower()
        cur_raw = (m.group("cur") or m.group("cur2") or "").lower()
        currency = CURRENCY_SYMBOLS.get(cur_raw) or CURRENCY_WORDS.get(cur_raw)
        amount = _number(amt)
        if amount is None:
            continue
        amount *= SCALES.get(scale, 1.0)
        surface = m.group(0).strip()
        yield Literal("money", surface, m.start(), m.start() + len(surface), {"amount": amount, "currency": currency},
                      re.sub(r"\s+", " ", surface))


def _find_percents(text: str) -> Iterable[Literal]:
    for m in _PERCENT_RE.finditer(text):
        n = _number(m.group("num") or m.group("word"))
        if n is not None:
            yield Literal("percent", m.group(0), m.start(), m.end(), n, f"{_fmt(n)}%")


def _find_quantities(text: str) -> Iterable[Literal]:
    for m in _QUANTITY_RE.finditer(text):
        amount = _number(m.group("amt"))
        if amount is not None:
            yield Literal("quantity", m.group(0), m.start(), m.end(), {"amount": amount, "unit": m.group("unit")},
                          m.group(0))


_FINDERS = {"date": _find_dates, "duration": _find_durations, "money": _find_money,
            "percent": _find_percents, "quantity": _find_quantities}


def find_literals(text: str, kinds: Iterable[str] = KINDS) -> list[Literal]:
    """Every literal of the given kinds in ``text``, longest first where two overlap.

    Overlaps are resolved across kinds too ("30 days" is a duration, never a quantity;
    "$5 million" is money, never a bare number), so each character belongs to at most
    one literal. Results are sorted by position.

    Each kind's finds in a text are kept for the last texts seen: the entity, relation and
    upgrade rules and the view modes ask for the same chunk's literals in turn, each pass
    after every chunk's previous one.
    """
    return _longest_first([lit for kind in kinds for lit in _kept(text, _known(kind))])


@lru_cache(maxsize=LITERALS_KEPT)
def _kept(text: str, kind: str) -> tuple[Literal, ...]:
    return tuple(_FINDERS[kind](text))


def _known(kind: str) -> str:
    if kind not in _FINDERS:
        raise ValueError(f"unknown literal kind {kind!r}; known: {', '.join(KINDS)}")
    return kind


def _longest_first(found: list[Literal]) -> list[Literal]:
    found.sort(key=lambda lit: (-(lit.end - lit.start), lit.start, KINDS.index(lit.kind)))
    taken: list[Literal] = []
    for lit in found:
        if all(lit.end <= t.start or lit.start >= t.end for t in taken):
            taken.append(lit)
    return sorted(taken, key=lambda lit: lit.start)


def _read_as(kind: str, text: str) -> list[Literal]:
    """``find_literals(text, (kind,))`` for a name or a value, not a chunk: not kept."""
    return _longest_first(list(_FINDERS[_known(kind)](text)))


def normalise(kind: str, text: str) -> Any:
    """The normal form of ``text`` read as a ``kind`` literal, or None when it is not one.

    ``normalise("date", "the 26th day of May, 2017") == "2017-05-26"``;
    ``normalise("duration", "sixty (60) days") == "P60D"``. Text and enum kinds return the
    whitespace-collapsed text.
    """
    if kind in ("text", "enum"):
        return re.sub(r"\s+", " ", text).strip() or None
    if kind == "date" and re.fullmatch(r"\s*(?:19|20)\d\d\s*", text):
        return text.strip()
    hits = _read_as(kind, text)
    return hits[0].value if hits else None


def recurring(surface: str) -> bool:
    """Whether a duration is written as recurring ("successive one (1) year terms"): it has
    the value of "one (1) year" but is another thing (a renewal period, not an initial term
    or a notice period), so the two are neither one node nor found where the other is written."""
    return surface.lstrip()[:11].lower() == "successive "


def literal_name(kind: str, text: str) -> str | None:
    """The canonical label of ``text`` as a ``kind`` literal ("6 months", "2014-01-20")."""
    hits = _read_as(kind, text)
    return hits[0].name if hits else None
