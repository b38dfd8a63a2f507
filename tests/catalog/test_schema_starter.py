"""Starter text: names and phrases written into generated YAML read back unchanged."""
from __future__ import annotations

import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kgkit.catalog.starter import flow
from kgkit.formats.yaml_source import scalar


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), min_size=1))
def test_scalar_round_trips(text):
    # the gold scaffold writes names from data nobody vetted: "Ill.", "O'Brien", "yes", "1 May", ...
    assert yaml.safe_load(f"key: {scalar(text)}\n")["key"] == text
    assert yaml.safe_load(f"key: {{name: {scalar(text)}, type: T}}\n")["key"]["name"] == text


@given(st.lists(st.sampled_from(["Peop", "on", "2024-01-01", "a, b", "x: y", "#tag", "Ill."]), min_size=1))
def test_flow_lists_round_trip(items):
    assert yaml.safe_load(f"key: {flow(items)}\n")["key"] == items


def test_plain_where_unambiguous():
    assert scalar("Work_For") == "Work_For" and scalar("Acme Corp") == "Acme Corp"
    assert scalar("yes") == '"yes"' and scalar("3rd") == '"3rd"'
