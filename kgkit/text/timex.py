"""Time values as ISO 8601 and TimeML write them: the one place that parses and compares them.

Gold files, temporal qualifiers, event times and eval all read a time through :func:`parse`,
so a value that one of them accepts the others accept too. What parses:

* points of any precision: century ``19``, decade ``198``, year ``2013``, season ``2013-SU``
  (SP, SU, FA or AU, WI), quarter ``2013-Q1``, half ``2013-H2``, month ``2013-03``, week
  ``2013-W12``, weekend ``2013-W12-WE``, day ``2013-03-23`` / ``2013-W12-3`` / ``2013-082``
  (basic forms such as ``20130323`` too), part of day ``2013-03-23TMO`` (MO, MI, AF, EV, NI,
  DT), date-times ``2013-03-23T15``, ``T15:00``, ``T15:00:05.5``, with ``Z`` or an offset;
* durations ``P3Y``, ``P2W``, ``PT5M``, ``P1Y2M``, ``P1DT12H``, ``P0.5Y``; TimeML's ``X`` for
  an unknown count (``PXY``);
* intervals ``start/end``, ``start/duration``, ``duration/end``;
* TimeML's reference values ``PRESENT_REF``, ``PAST_REF``, ``FUTURE_REF``.

Each value has a canonical ``text`` (a day is always written as a calendar date, offsets as
``Z`` or ``±HH:MM``) and a ``precision``. Two points match (:func:`same`) when the finer one
lies within the coarser one: ``2013-03`` matches ``2013-03-23``, ``2013-W12`` matches
``2013-03-20`` (that day is in week 12), equal precisions must be equal. A week that straddles
a month or year boundary lies in neither. Date-times with an offset are compared in UTC;
those without one are taken to be in the same (unstated) zone as the other side. Durations
match when they are the same length: years fold into months (``P1Y`` = ``P12M``) and weeks
into days (``P2W`` = ``P14D``), but days and months stay apart (a month has no fixed number
of days). Intervals match when both ends do, whichever form each is written in. Reference
values match only themselves.

Parts of the day and seasons have no standard extent; the spans used here (northern
meteorological seasons, morning 05-12 h, afternoon 12-18 h, ...) are documented in
:data:`PARTS_OF_DAY` and :data:`SEASONS`.
"""
from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal, InvalidOperation
from typing import Any, Union

from kgkit.text.literals import normalise as normalise_literal

REFERENCES = ("PRESENT_REF", "PAST_REF", "FUTURE_REF")
PARTS_OF_DAY = {"MO": (5, 12), "MI": (11, 14), "AF": (12, 18), "EV": (17, 22), "NI": (21, 29), "DT": (6, 18)}
SEASONS = {"SP": (3, 3), "SU": (6, 3), "FA": (9, 3), "WI": (12, 3)}  # first month, number of months
EXAMPLES = "2013, 2013-03-23, 2013-W12, 2013-03-23T15:00, P3Y, 2013-01/2013-06, PRESENT_REF"


class TimexError(ValueError):
    """A text that is not an ISO 8601 / TimeML time value; the message says why."""


@dataclass(frozen=True)
class Point:
    """A stretch of time named at some precision: ``[start, end)`` in naive (UTC when an offset was given) time."""

    text: str
    precision: str
    start: datetime
    end: datetime


@dataclass(frozen=True)
class Duration:
    """A length of time: ``months`` (years folded in) and ``days`` (weeks folded in) and ``seconds``,
    kept apart because a month has no fixed number of days. ``None`` parts are TimeML's unknown ``X``."""

    text: str
    precision: str
    months: Decimal | None
    days: Decimal | None
    seconds: Decimal | None


@dataclass(frozen=True)
class Interval:
    """``start/end``, ``start/duration`` or ``duration/end``; both ends are resolved to points."""

    text: str
    start: Point
    end: Point

    @property
    def precision(self) -> str:
        return "interval"


@dataclass(frozen=True)
class Reference:
    """TimeML's PRESENT_REF, PAST_REF, FUTURE_REF: the document's now, before it, after it."""

    text: str

    @property
    def precision(self) -> str:
        return "reference"


Time = Union[Point, Duration, Interval, Reference]

_OFFSET = r"(?P<tz>Z|[+-]\d{2}(?::?\d{2})?)?"
_CLOCK = re.compile(r"(?P<h>\d{2})(?::?(?P<m>\d{2})(?::?(?P<s>\d{2}(?:[.,]\d+)?))?)?" + _OFFSET + r"$")
_NUMBER = r"(\d+(?:[.,]\d+)?|X)"
_DURATION = re.compile(rf"P(?!$)(?:{_NUMBER}Y)?(?:{_NUMBER}M)?(?:{_NUMBER}W)?(?:{_NUMBER}D)?"
                       rf"(?:T(?=[\dX])(?:{_NUMBER}H)?(?:{_NUMBER}M)?(?:{_NUMBER}S)?)?$")
_DAY_FORMS = re.compile(r"\d{4}-\d{2}-\d{2}|\d{8}|\d{4}-W\d{2}-\d|\d{4}W\d{3}|\d{4}-\d{3}|\d{7}")


def parse(text: str) -> Time:
    """``text`` as a time value, or :class:`TimexError` saying why it is not one."""
    if not isinstance(text, str):
        raise TimexError(f"{text!r} is not a time value: expected a string such as {EXAMPLES}")
    value = text.strip().upper()
    if value in REFERENCES:
        return Reference(value)
    try:
        if "/" in value:
            return _interval(value)
        if value.startswith("P"):
            return _duration(value)
        return _point(value)
    except TimexError as exc:
        raise TimexError(f"{text!r} is not a time value: {exc}") from None


def parse_or_none(text: Any) -> Time | None:
    """:func:`parse`, or None for anything that is not a time value (None included)."""
    if text is None:
        return None
    try:
        return parse(text)
    except TimexError:
        return None


def same(a: Time, b: Time) -> bool:
    """Whether two values name the same time at the coarser precision of the two (see the module doc)."""
    if isinstance(a, Point) and isinstance(b, Point):
        return (a.start <= b.start and b.end <= a.end) or (b.start <= a.start and a.end <= b.end)
    if isinstance(a, Duration) and isinstance(b, Duration):
        if None in (a.months, a.days, a.seconds, b.months, b.days, b.seconds):
            return a.text == b.text
        return (a.months, a.days, a.seconds) == (b.months, b.days, b.seconds)
    if isinstance(a, Interval) and isinstance(b, Interval):
        return same(a.start, b.start) and same(a.end, b.end)
    return isinstance(a, Reference) and isinstance(b, Reference) and a.text == b.text


def matches(a: Any, b: Any) -> bool:
    """:func:`same` for two written values; a side that is not a time value (free text, None)
    matches only the same text, whitespace and case aside."""
    ta, tb = parse_or_none(a), parse_or_none(b)
    if ta is not None and tb is not None:
        return same(ta, tb)
    if ta is not None or tb is not None:
        return False
    return _folded(a) == _folded(b)


def _folded(text: Any) -> str | None:
    return None if text is None else " ".join(str(text).split()).casefold()


def normalise(kind: str, text: str) -> Any:
    """The normal form of a literal of ``kind`` written as ``text``: for ``date`` and
    ``duration``, a value written as ISO 8601 / TimeML keeps its canonical form, and a phrase
    ("March 23, 2013", "sixty (60) days", "successive 1 year") is read by the literal finder of
    :mod:`kgkit.text.literals`; other kinds go to that finder directly."""
    if kind in ("date", "duration"):
        wanted = (Duration,) if kind == "duration" else (Point, Interval, Reference)
        for candidate in (text, normalise_literal(kind, text)):
            value = parse_or_none(candidate)
            if isinstance(value, wanted):
                return value.text
        return None
    return normalise_literal(kind, text)


def duration_from_phrase(text: str) -> str | None:
    """An English duration phrase ("60 days", "three (3) months", "successive 1 year") or an
    ISO duration as a canonical ISO duration ("P60D", "P3M", "P1Y"); None when it is neither."""
    value = normalise("duration", text)
    return value if isinstance(parse_or_none(value), Duration) else None


# --------------------------------------------------------------------------- points


def _point(value: str) -> Point:
    if m := re.fullmatch(r"([\dW-]+)T(.*)", value):
        day, clock = _day(m[1]), m[2]
        if clock in PARTS_OF_DAY:
            first, last = PARTS_OF_DAY[clock]
            return Point(f"{day.text}T{clock}", "part_of_day", _plus(day.start, timedelta(hours=first)),
                         _plus(day.start, timedelta(hours=last)))
        return _clock(day, clock)
    if _DAY_FORMS.fullmatch(value):
        return _day(value)
    if m := re.fullmatch(r"(\d{4})-?W(\d{2})(-?WE)?", value):
        year, week = int(m[1]), int(m[2])
        monday = _guard(lambda: date.fromisocalendar(year, week, 1), f"there is no week {week} in {year}")
        if m[3]:
            saturday = _guard(lambda: _at(monday) + timedelta(days=5), "that weekend is past the calendar's end")
            return Point(f"{year:04d}-W{week:02d}-WE", "weekend", saturday, _plus(saturday, timedelta(days=2)))
        return Point(f"{year:04d}-W{week:02d}", "week", _at(monday), _plus(_at(monday), timedelta(days=7)))
    if m := re.fullmatch(r"(\d{4})-(\d{2})", value):
        year, month = int(m[1]), int(m[2])
        start = _guard(lambda: datetime(year, month, 1), f"month {month} is out of range")
        return Point(f"{year:04d}-{month:02d}", "month", start, _months_later(start, 1))
    if m := re.fullmatch(r"(\d{4})-(SP|SU|FA|AU|WI)", value):
        season = "FA" if m[2] == "AU" else m[2]
        first, length = SEASONS[season]
        start = _guard(lambda: datetime(int(m[1]), first, 1), "year out of range")
        return Point(f"{m[1]}-{season}", "season", start, _months_later(start, length))
    if m := re.fullmatch(r"(\d{4})-([QH])([1-4])", value):
        length = 3 if m[2] == "Q" else 6
        if int(m[3]) > 12 // length:
            raise TimexError(f"there is no {m[2]}{m[3]} in a year")
        start = _guard(lambda: datetime(int(m[1]), 1 + (int(m[3]) - 1) * length, 1), "year out of range")
        return Point(f"{m[1]}-{m[2]}{m[3]}", "quarter" if m[2] == "Q" else "half", start, _months_later(start, length))
    if re.fullmatch(r"\d{2,4}", value):
        width = 10 ** (4 - len(value))  # year, decade (198 = the 1980s), century (19 = 1900-1999)
        first = int(value) * width
        start = _guard(lambda: datetime(first, 1, 1), f"year {first} is out of range")
        end = _guard(lambda: datetime(first + width, 1, 1), "") if first + width <= 9999 else datetime.max
        return Point(value, {1: "year", 10: "decade", 100: "century"}[width], start, end)
    raise TimexError(f"not ISO 8601 or TimeML (expected a value such as {EXAMPLES})")


def _day(value: str) -> Point:
    if re.fullmatch(r"\d{4}-?\d{3}", value):
        year, ordinal = int(value[:4]), int(value[-3:])
        first = _guard(lambda: date(year, 1, 1), f"year {year} is out of range")
        if not 1 <= ordinal <= (date(year, 12, 31) - first).days + 1:
            raise TimexError(f"day {ordinal} is not a day of {year}")
        day = first + timedelta(days=ordinal - 1)
    elif _DAY_FORMS.fullmatch(value):
        day = _guard(lambda: date.fromisoformat(value), "no such day")
    else:
        raise TimexError(f"{value!r} is not a day (expected YYYY-MM-DD, YYYY-Www-D or YYYY-DDD)")
    return Point(day.isoformat(), "day", _at(day), _plus(_at(day), timedelta(days=1)))


def _clock(day: Point, clock: str) -> Point:
    m = _CLOCK.fullmatch(clock)
    if not m:
        raise TimexError(f"{clock!r} is not a time of day (expected HH, HH:MM or HH:MM:SS, then Z or an offset)")
    seconds = m["s"].replace(",", ".") if m["s"] else None
    text = f"{m['h']}" + (f":{m['m']}" if m["m"] else "") + (f":{seconds}" if seconds else "")
    offset = _offset(m["tz"]) if m["tz"] else None
    iso = f"{day.text}T{m['h']}:{m['m'] or '00'}:{seconds or '00'}"
    moment = _guard(lambda: datetime.fromisoformat(iso), "no such time of day")
    precision, step = ("second", timedelta(seconds=1)) if seconds else (
        ("minute", timedelta(minutes=1)) if m["m"] else ("hour", timedelta(hours=1)))
    if seconds and "." in seconds:
        step = max(timedelta(microseconds=1), timedelta(seconds=10 ** -len(seconds.split(".")[1])))
    zone = ""
    if offset is not None:
        moment = _guard(lambda: moment.replace(tzinfo=offset).astimezone(timezone.utc).replace(tzinfo=None),
                        "in UTC that moment is out of the calendar's range")
        zone = "Z" if offset.utcoffset(None) == timedelta(0) else _zone_text(offset)
    return Point(f"{day.text}T{text}{zone}", precision, moment, _plus(moment, step))


def _offset(text: str) -> timezone:
    if text == "Z":
        return timezone.utc
    hours, minutes = int(text[1:3]), int(text[-2:]) if len(text) > 3 else 0
    if hours > 23 or minutes > 59:
        raise TimexError(f"offset {text} is out of range")
    delta = timedelta(hours=hours, minutes=minutes)
    return timezone(-delta if text[0] == "-" else delta)


def _zone_text(zone: timezone) -> str:
    total = int(zone.utcoffset(None).total_seconds()) // 60
    sign, total = ("-" if total < 0 else "+"), abs(total)
    return f"{sign}{total // 60:02d}:{total % 60:02d}"


def _at(day: date) -> datetime:
    return datetime(day.year, day.month, day.day)


def _plus(moment: datetime, delta: timedelta) -> datetime:
    """The end of a stretch of time, which for the calendar's last one is its last moment."""
    try:
        return moment + delta
    except OverflowError:
        return datetime.max


def _months_later(start: datetime, months: int) -> datetime:
    """``start`` plus whole calendar months, the day kept (clamped to the month's last day)."""
    total = start.month - 1 + months
    year, month = start.year + total // 12, total % 12 + 1
    if year > 9999:
        return datetime.max  # the end of 9999-12: the calendar's last moment
    if year < 1:
        raise TimexError("the result is before the calendar's first year")
    return start.replace(year=year, month=month, day=min(start.day, calendar.monthrange(year, month)[1]))


def _guard(make, message: str):
    try:
        return make()
    except (ValueError, OverflowError) as exc:
        raise TimexError(message or str(exc)) from None


# --------------------------------------------------------------------------- durations and intervals


def _duration(value: str) -> Duration:
    m = _DURATION.fullmatch(value)
    if not m:
        raise TimexError("not an ISO 8601 duration (expected e.g. P3Y, P2W, PT5M, P1Y2M, P1DT12H)")
    units = ("Y", "M", "W", "D", "H", "TM", "S")
    parts = dict(zip(units, m.groups()))
    if "X" in (v for v in parts.values() if v):
        text = value.replace(",", ".")
        return Duration(text, _smallest(parts), None, None, None)
    n = {u: _decimal(v) for u, v in parts.items()}
    written = [u for u in units if parts[u] is not None]
    if any(n[u] != n[u].to_integral_value() for u in written[:-1]):
        raise TimexError("only the smallest unit may have a fraction")
    text = "P" + "".join(f"{_num(n[u])}{u}" for u in ("Y", "M", "W", "D") if parts[u] is not None)
    clock = "".join(f"{_num(n[u])}{u[-1]}" for u in ("H", "TM", "S") if parts[u] is not None)
    text += f"T{clock}" if clock else ""
    return Duration(text, _smallest(parts), 12 * n["Y"] + n["M"], 7 * n["W"] + n["D"],
                    3600 * n["H"] + 60 * n["TM"] + n["S"])


def _smallest(parts: dict[str, str | None]) -> str:
    names = {"Y": "year", "M": "month", "W": "week", "D": "day", "H": "hour", "TM": "minute", "S": "second"}
    return [names[u] for u, v in parts.items() if v is not None][-1]


def _decimal(text: str | None) -> Decimal:
    try:
        return Decimal(text.replace(",", ".")) if text else Decimal(0)
    except InvalidOperation:
        raise TimexError(f"{text!r} is not a number") from None


def _num(n: Decimal) -> str:
    return format(n.normalize(), "f") if n else "0"


def _interval(value: str) -> Interval:
    first, _, second = value.partition("/")
    if "/" in second or not first or not second:
        raise TimexError("an interval is start/end, start/duration or duration/end")
    if first.startswith("P") and second.startswith("P"):
        raise TimexError("an interval needs at least one end that is not a duration")
    if second.startswith("P"):
        start = _point(first)
        end = _shift(start, _duration(second), +1)
        return Interval(f"{start.text}/{_duration(second).text}", start, end)
    end = _point(second)
    if first.startswith("P"):
        return Interval(f"{_duration(first).text}/{end.text}", _shift(end, _duration(first), -1), end)
    start = _point(first)
    if end.end < start.start:
        raise TimexError(f"the interval ends ({end.text}) before it starts ({start.text})")
    return Interval(f"{start.text}/{end.text}", start, end)


def _shift(point: Point, length: Duration, sign: int) -> Point:
    """``point`` moved by ``length`` (forwards or back), keeping its precision."""
    if length.months is None or length.days is None or length.seconds is None:  # an X duration has none
        raise TimexError("an interval cannot be placed with an unknown (X) duration")
    if length.months != length.months.to_integral_value():
        raise TimexError("an interval cannot be placed with a fractional number of months")
    delta = timedelta(days=float(length.days), seconds=float(length.seconds))
    try:
        start = _months_later(point.start, sign * int(length.months)) + sign * delta
        end = _months_later(point.end, sign * int(length.months)) + sign * delta
    except OverflowError:
        raise TimexError("the interval runs out of the calendar's range") from None
    return Point(f"{point.text}{'+' if sign > 0 else '-'}{length.text}", point.precision, start, end)
