"""The places a law is named after by an adjective."""
from __future__ import annotations

from kgkit.text.place_adjectives import PLACE_OF_ADJECTIVE, adjectives_of, place_of


def test_an_adjective_names_its_place_and_back():
    assert place_of("English") == "England" and adjectives_of("England") == ["English"]
    assert sorted(adjectives_of("Scotland")) == ["Scots", "Scottish"]


def test_an_adjective_of_no_single_legal_system_names_nothing():
    assert place_of("British") is None and adjectives_of("Atlantis") == []


def test_every_adjective_is_capitalised_and_names_another_word():
    assert all(a[:1].isupper() and a != p for a, p in PLACE_OF_ADJECTIVE.items())
