"""Literal recognition and normalisation (kgkit.text.literals), public API only."""
from __future__ import annotations

import pytest

from kgkit.text.literals import find_literals, literal_name, normalise


@pytest.mark.parametrize("text, iso", [
    ("January 20, 2014", "2014-01-20"),
    ("Nov  5,  1999", "1999-11-05"),            # CUAD RaeSystems: doubled spaces
    ("July 11 , 2006", "2006-07-11"),           # CUAD Euromedia: space before the comma
    ("the 26t h day of May, 2017", "2017-05-26"),  # CUAD Cool Technologies: broken ordinal
    ("20th January, 2014", "2014-01-20"),
    ("2014-03-04", "2014-03-04"),
    ("01/20/14", "2014-01-20"),
    ("1/5/1998", "1998-01-05"),
    ("March 2021", "2021-03"),
    ("Sept. 3, 2020", "2020-09-03"),
])
def test_dates_normalise_to_iso_8601(text, iso):
    assert normalise("date", text) == iso


def test_impossible_dates_are_not_dates():
    assert normalise("date", "February 45, 2020") is None
    assert normalise("date", "13/40/2020") is None


@pytest.mark.parametrize("text, iso, name", [
    ("sixty (60) days", "P60D", "60 days"),
    ("ninety (90) calendar days", "P90D", "90 days"),
    ("five (5) years", "P5Y", "5 years"),
    ("one (1) year", "P1Y", "1 year"),
    ("a 90-day period", "P90D", "90 days"),
    ("48 hours", "PT48H", "48 hours"),
    ("two quarters", "P6M", "2 quarters"),
    ("successive six (6) month periods", "P6M", "successive 6 months"),
    ("successive renewal terms of three (3) years", "P3Y", "successive 3 years"),
])
def test_durations(text, iso, name):
    assert normalise("duration", text) == iso
    assert literal_name("duration", text) == name


@pytest.mark.parametrize("text, surface, iso", [
    ("within twenty-four (24) hours of the notice", "twenty-four (24) hours", "PT24H"),
    ("for a period of thirty one days", "thirty one days", "P31D"),
    ("a forty-five day period", "forty-five day period", "P45D"),
    ("seventy-two hours later", "seventy-two hours", "PT72H"),
])
def test_compound_number_words_stay_whole_in_durations(text, surface, iso):
    [duration] = [lit for lit in find_literals(text) if lit.kind == "duration"]
    assert (duration.surface, duration.value) == (surface, iso)
    assert text[duration.start:duration.end] == surface


@pytest.mark.parametrize("text, amount, currency", [
    ("$1,500,000", 1_500_000.0, "USD"),
    ("US$ 5.2 million", 5_200_000.0, "USD"),
    ("€10 billion", 10e9, "EUR"),
    ("300 dollars", 300.0, "USD"),
    ("CAD 250", 250.0, "CAD"),
])
def test_money(text, amount, currency):
    assert normalise("money", text) == {"amount": amount, "currency": currency}


def test_percent_and_quantity():
    assert normalise("percent", "12.5%") == 12.5
    assert normalise("percent", "ten percent") == 10.0
    assert normalise("quantity", "5 mg/kg") == {"amount": 5.0, "unit": "mg/kg"}


def test_text_kinds_collapse_whitespace():
    assert normalise("text", "  New   Jersey ") == "New Jersey"
    assert normalise("enum", "major") == "major"


def test_overlapping_literals_keep_the_longest_and_spans_slice_the_text():
    text = "Fees of $5 million are due within thirty (30) days, i.e. by March 3, 2021, plus 2% interest."
    found = find_literals(text)
    assert [(lit.kind, lit.name) for lit in found] == [
        ("money", "$5 million"), ("duration", "30 days"), ("date", "2021-03-03"), ("percent", "2%")]
    for lit in found:
        assert text[lit.start:lit.end] == lit.surface


def test_a_bare_year_needs_a_preposition():
    assert [lit.value for lit in find_literals("founded in 1998", ["date"])] == ["1998"]
    assert find_literals("Section 2019 applies", ["date"]) == []


def test_unknown_kind_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown literal kind 'colour'"):
        find_literals("red", ["colour"])
