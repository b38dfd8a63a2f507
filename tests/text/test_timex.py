"""kgkit.text.timex: ISO 8601 / TimeML time values parsed, written canonically and compared at the
coarser precision of the two."""
from __future__ import annotations

from datetime import date, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from kgkit.text import timex
from kgkit.modes.temporal import qualify
from kgkit.formats.model import Qualifier


@pytest.mark.parametrize("text, canonical, precision", [
    ("2013", "2013", "year"),
    ("2013-03", "2013-03", "month"),
    ("2013-03-23", "2013-03-23", "day"),
    ("20130323", "2013-03-23", "day"),
    ("2013-W12", "2013-W12", "week"),
    ("2013w12", "2013-W12", "week"),
    ("2013-W12-3", "2013-03-20", "day"),
    ("2013-W12-WE", "2013-W12-WE", "weekend"),
    ("2013-082", "2013-03-23", "day"),
    ("2013-SU", "2013-SU", "season"),
    ("2013-AU", "2013-FA", "season"),
    ("2013-Q2", "2013-Q2", "quarter"),
    ("2013-H1", "2013-H1", "half"),
    ("198", "198", "decade"),
    ("19", "19", "century"),
    ("2013-03-23TMO", "2013-03-23TMO", "part_of_day"),
    ("2013-03-23T15", "2013-03-23T15", "hour"),
    ("2013-03-23T15:00", "2013-03-23T15:00", "minute"),
    ("2013-03-23T15:00:05", "2013-03-23T15:00:05", "second"),
    ("2013-03-23T15:00:05,5Z", "2013-03-23T15:00:05.5Z", "second"),
    ("2013-03-23T15:00+0200", "2013-03-23T15:00+02:00", "minute"),
    ("2013-03-23T15:00+00:00", "2013-03-23T15:00Z", "minute"),
    ("P3Y", "P3Y", "year"),
    ("P2W", "P2W", "week"),
    ("PT5M", "PT5M", "minute"),
    ("P1Y2M", "P1Y2M", "month"),
    ("P01DT12H", "P1DT12H", "hour"),
    ("P0,5Y", "P0.5Y", "year"),
    ("PXY", "PXY", "year"),
    ("2013-01/2013-06", "2013-01/2013-06", "interval"),
    ("2013-03-01/P1M", "2013-03-01/P1M", "interval"),
    ("P1M/2013-04-01", "P1M/2013-04-01", "interval"),
    (" present_ref ", "PRESENT_REF", "reference"),
    ("PAST_REF", "PAST_REF", "reference"),
    ("FUTURE_REF", "FUTURE_REF", "reference"),
])
def test_values_parse_to_a_canonical_text_and_a_precision(text, canonical, precision):
    value = timex.parse(text)
    assert (value.text, value.precision) == (canonical, precision)
    assert timex.parse(value.text) == value  # the canonical text reads back as the same value


@pytest.mark.parametrize("text, reason", [
    ("2013-13", "month 13 is out of range"),
    ("2013-02-29", "no such day"),
    ("2013-W54", "there is no week 54 in 2013"),
    ("2013-366", "day 366 is not a day of 2013"),
    ("2013-03-23T24:30", "no such time of day"),
    ("2013-03-23T15:00+25:00", "offset +25:00 is out of range"),
    ("2013-Q5", "not ISO 8601 or TimeML"),
    ("P", "not an ISO 8601 duration"),
    ("P1.5Y2M", "only the smallest unit may have a fraction"),
    ("2013-06/2013-01", "the interval ends (2013-01) before it starts (2013-06)"),
    ("P1Y/P2M", "needs at least one end that is not a duration"),
    ("PXM/2013-04", "cannot be placed with an unknown (X) duration"),
    ("next week", "not ISO 8601 or TimeML"),
    ("", "not ISO 8601 or TimeML"),
])
def test_nonsense_is_an_error_that_says_why(text, reason):
    with pytest.raises(timex.TimexError) as err:
        timex.parse(text)
    assert str(err.value).startswith(f"{text!r} is not a time value: ") and reason in str(err.value)
    assert timex.parse_or_none(text) is None


@pytest.mark.parametrize("a, b, same", [
    ("2013-03", "2013-03-23", True),
    ("2013-W12", "2013-03-20", True),  # Wednesday of week 12
    ("2013-W12", "2013-03-25", False),  # Monday of week 13
    ("2013-W12", "2013-03", True),
    ("2013-W09", "2013-03", False),  # 25 February - 3 March: in neither month
    ("2013", "2013-W12-3", True),
    ("2013-03-23", "2013-03-23T15:00", True),
    ("2013-03-23TAF", "2013-03-23T15:00", True),
    ("2013-03-23TMO", "2013-03-23T15:00", False),
    ("2013-03-23T15:00Z", "2013-03-23T17:00+02:00", True),
    ("2013-03-23T15:00:30", "2013-03-23T15:00", True),
    ("2013-03-23T15:01", "2013-03-23T15:00", False),
    ("2013-SU", "2013-07-14", True),
    ("2013-Q1", "2013-04-01", False),
    ("198", "1989-12-31", True),
    ("2013-03-23", "2013-03-24", False),
    ("P1Y", "P12M", True),
    ("P2W", "P14D", True),
    ("P1D", "PT24H", False),  # a day is a calendar day, not 24 hours
    ("P1M", "P30D", False),
    ("PXY", "PXY", True),
    ("PXY", "P3Y", False),
    ("2013-03-01/P1M", "2013-03-01/2013-04-01", True),
    ("P1M/2013-04-01", "2013-03-01/2013-04-01", True),
    ("2013-03/2013-06", "2013-03-05/2013-06-30", True),
    ("2013-03/2013-06", "2013-03-05/2013-07-01", False),
    ("PRESENT_REF", "PRESENT_REF", True),
    ("PRESENT_REF", "PAST_REF", False),
    ("PRESENT_REF", "2013", False),
    ("P1Y", "2013", False),
])
def test_comparison_at_the_coarser_precision(a, b, same):
    assert timex.matches(a, b) is same
    assert timex.matches(b, a) is same


def test_text_that_is_not_a_time_matches_only_itself():
    assert timex.matches(None, None) and not timex.matches(None, "2013")
    assert timex.matches("successive [] years", " Successive  [] years")
    assert not timex.matches("perpetual", "2013")


@pytest.mark.parametrize("phrase, iso", [
    ("60 days", "P60D"), ("successive 1 year", "P1Y"), ("three (3) months", "P3M"), ("sixty (60) days", "P60D"),
    ("0.5 year", "P0.5Y"), ("24 months", "P24M"), ("P2W", "P2W"), ("p1y", "P1Y"), ("perpetual", None),
    ("successive [] years", None),
])
def test_english_duration_phrases_become_iso_durations(phrase, iso):
    assert timex.duration_from_phrase(phrase) == iso


def test_literal_normalisation_keeps_timeml_values_and_reads_phrases():
    assert timex.normalise("date", "2013-W12") == "2013-W12"
    assert timex.normalise("date", "2013-03-23T15:00") == "2013-03-23T15:00"  # the hour is kept
    assert timex.normalise("date", "PRESENT_REF") == "PRESENT_REF"
    assert timex.normalise("date", "the 23rd day of March, 2013") == "2013-03-23"
    assert timex.normalise("date", "soon") is None
    assert timex.normalise("duration", "thirty (30) days") == "P30D"
    assert timex.normalise("money", "$5 million") == {"amount": 5e6, "currency": "USD"}


class _Scope:
    def __init__(self):
        self.rejected = []

    def reject(self, reason, item, message):
        self.rejected.append((reason, message))


def test_temporal_qualifiers_accept_timeml_values():
    declared = {q.name: q for q in (Qualifier(name="start", type="date", relations=("*",)),
                                    Qualifier(name="term", type="duration", relations=("*",)))}
    scope = _Scope()
    out = qualify({"start": "2013-W12-3", "term": "P1Y2M", "end": "2014"}, declared.get, "leads", scope, {})
    assert out == {"start": {"text": "2013-W12-3", "type": "date", "value": "2013-03-20"},
                   "term": {"text": "P1Y2M", "type": "duration", "value": "P1Y2M"}}
    assert scope.rejected == [("unknown_qualifier", "qualifier 'end' is not declared for leads")]


# --------------------------------------------------------------------------- properties

days = st.dates(min_value=date(1, 1, 1), max_value=date(9999, 12, 30))


@given(days)
def test_every_date_round_trips_in_each_of_its_spellings(day):
    year, week, weekday = day.isocalendar()
    spellings = [day.isoformat(), day.strftime("%Y%m%d").zfill(8), f"{year:04d}-W{week:02d}-{weekday}",
                 f"{day.year:04d}-{day.timetuple().tm_yday:03d}"]
    for text in spellings:
        value = timex.parse(text)
        assert (value.text, value.precision) == (day.isoformat(), "day"), text
        assert (value.start, value.end - value.start) == (datetime(day.year, day.month, day.day), timedelta(days=1))


@given(days)
def test_a_day_lies_in_its_week_month_and_year_and_in_no_other(day):
    year, week, _ = day.isocalendar()
    text = day.isoformat()
    assert timex.matches(text, f"{year:04d}-W{week:02d}")
    assert timex.matches(text, text[:7]) and timex.matches(text, text[:4])
    other = day + timedelta(days=7)
    o_year, o_week, _ = other.isocalendar()
    assert not timex.matches(text, f"{o_year:04d}-W{o_week:02d}")


_points = st.one_of(
    days.map(date.isoformat),
    days.map(lambda d: d.isoformat()[:7]),
    days.map(lambda d: d.isoformat()[:4]),
    days.map(lambda d: "{:04d}-W{:02d}".format(*d.isocalendar()[:2])),
    st.tuples(days, st.integers(0, 23), st.integers(0, 59)).map(lambda t: f"{t[0].isoformat()}T{t[1]:02d}:{t[2]:02d}"),
    st.tuples(days, st.sampled_from(sorted(timex.PARTS_OF_DAY))).map(lambda t: f"{t[0].isoformat()}T{t[1]}"),
)
_durations = st.tuples(*[st.integers(0, 30)] * 4).map(lambda n: "P{}Y{}M{}W{}D".format(*n))


@given(st.one_of(_points, _durations), st.one_of(_points, _durations))
def test_comparison_is_symmetric_and_reflexive(a, b):
    assert timex.matches(a, b) == timex.matches(b, a)
    assert timex.matches(a, a)


@given(_durations)
def test_years_fold_into_months_and_weeks_into_days(text):
    value = timex.parse(text)
    folded = f"P{value.months}M{value.days}D"
    assert timex.matches(text, folded)


@given(st.text(alphabet="0123456789-WTPYMDHSZQXE:+./,_ RFAUIN", max_size=24))
def test_any_text_parses_or_says_why(text):
    try:
        value = timex.parse(text)
    except timex.TimexError as exc:
        assert str(exc).startswith(f"{text!r} is not a time value: ")
    else:
        assert timex.matches(value.text, text)


def test_a_date_literal_is_no_duration_and_a_duration_no_date():
    assert timex.normalise("date", "P3Y") is None and timex.normalise("duration", "2013-03") is None
    assert timex.normalise("date", "2013-01/P6M") == "2013-01/P6M"
