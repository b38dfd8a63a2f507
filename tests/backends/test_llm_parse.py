"""Tolerant answer parsing: what models wrap around JSON, and what stays an error."""
from __future__ import annotations

import json

import pytest
from hypothesis import given, settings, strategies as st

from kgkit.backends.parse import AnswerParseError, parse_json_answer
from kgkit.errors import KgkitError

OBJ = {"entities": [{"name": "Acme, Inc.", "type": "Party", "evidence": "Acme, Inc. (\"Supplier\")"}]}
DUMPED = json.dumps(OBJ)


@pytest.mark.parametrize(
    "text",
    [
        DUMPED,
        f"\ufeff  {DUMPED}\n",
        f"```json\n{DUMPED}\n```",
        f"```\n{DUMPED}\n```",
        f"Here is the extraction:\n```json\n{DUMPED}\n```\nLet me know if you need more.",
        f"Sure! {DUMPED} I found one entity.",
        f"```json\n{DUMPED}",  # fence never closed
        '{"entities": [{"name": "Acme, Inc.", "type": "Party", "evidence": "Acme, Inc. (\\"Supplier\\")",},],}',
        'Note {this} first. ' + DUMPED,  # a brace in prose before the object
    ],
    ids=["plain", "bom-space", "fence-json", "fence-bare", "fence-prose", "prose", "open-fence", "trailing-commas",
         "brace-in-prose"],
)
def test_json_object_is_found_whatever_surrounds_it(text):
    assert parse_json_answer(text) == OBJ


def test_commas_inside_strings_are_left_alone():
    assert parse_json_answer('{"q": "a,]", "r": ",}",}') == {"q": "a,]", "r": ",}"}


@pytest.mark.parametrize(
    "text, reason",
    [
        ("", "empty answer"),
        ("   \n", "empty answer"),
        (None, "empty answer"),
        ("I could not find any entities.", "no JSON object found"),
        ('[{"name": "Acme"}]', "expected a JSON object, got a JSON array"),
        ('```json\n"just a string"\n```', "expected a JSON object, got a JSON string"),
        ('{"entities": [{"name": "Ac', "the JSON object is cut off before it closes (truncated answer?)"),
        ('{"a": 1 "b": 2}', "invalid JSON: Expecting ',' delimiter at line 1 column 9"),
        ("[" * 50_000, "JSON nested too deeply"),
    ],
    ids=["empty", "blank", "none", "prose-only", "array", "string", "truncated", "missing-comma", "deep"],
)
def test_unreadable_answers_raise_with_a_short_reason(text, reason):
    with pytest.raises(AnswerParseError) as err:
        parse_json_answer(text)
    assert err.value.reason == reason
    assert err.value.message == f"unparsable answer: {reason}"


@settings(max_examples=200, deadline=None)
@given(st.text())
def test_any_text_gives_a_dict_or_a_kgkit_error(text):
    try:
        assert isinstance(parse_json_answer(text), dict)
    except KgkitError as exc:
        assert isinstance(exc, AnswerParseError) and exc.reason


@settings(max_examples=100, deadline=None)
@given(
    st.dictionaries(st.text(), st.recursive(st.none() | st.booleans() | st.integers() | st.text(),
                                            lambda c: st.lists(c) | st.dictionaries(st.text(), c), max_leaves=10)),
    st.text(alphabet=st.characters(blacklist_characters="{}[]\"`"), max_size=40),
    st.text(alphabet=st.characters(blacklist_characters="{}[]\"`"), max_size=40),
)
def test_any_object_survives_prose_around_it(obj, before, after):
    assert parse_json_answer(f"{before}{json.dumps(obj)}{after}") == obj
