"""News names the offline backend reads with ``general``, and what ``general`` makes a node.

``general`` declares no date or amount types: its binary relations take none as an end, so
dates and amounts are values of roles and qualifiers in the n-ary, event and temporal
views, not nodes. Names: an organisation written before a title, a lone name called by a
possessive only people take, a place's possessive inside a
longer name. Sentences are written for these tests (no gold document's text).
"""
from __future__ import annotations

import pytest

import kgkit
from kgkit.backends.offline.entities import find_entities
from kgkit.config.model import Config
from kgkit.catalog.load import load_domain
from kgkit.text.type_kinds import literal_types


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _found(text: str, domain: str = "general") -> set[tuple[str, str]]:
    return {(e.name, e.type) for e in find_entities(text, load_domain(domain).entity_types)}


STORY = ("Dr. Vela Orrin, the chairman of Brightwater Freight Agency, said the agency bought Kestrel "
         "Mills Inc. for $40 million on June 9, 2022. Gunmen attacked a depot near Tbilisi on 2 May 1999.\n")


def test_general_declares_no_literal_types_and_the_domains_that_need_them_do():
    assert literal_types(load_domain("general").entity_types) == {}
    assert set(literal_types(load_domain("legal_contracts").entity_types)) == {"Date", "Duration", "Money", "Percent"}
    assert set(literal_types(load_domain("finance").entity_types)) == {"Date", "Duration", "Money", "Percent"}


def test_general_dates_and_amounts_are_values_on_edges_not_nodes(tmp_path):
    path = tmp_path / "story.txt"
    path.write_text(STORY, encoding="utf-8")
    [run] = kgkit.extract(str(path), domain="general", views=["binary", "nary", "event", "temporal"],
                          config=Config(), out_dir=str(tmp_path / "out"))
    assert {n["type"] for n in run.nodes} == {"Person", "Organization", "Location"}
    [acquisition] = [h for h in run.views["nary"]["hyperedges"] if h["relation"] == "Acquisition"]
    assert acquisition["roles"]["price"] == {"literal": "$40 million", "type": "money",
                                             "value": {"amount": 40000000.0, "currency": "USD"}}
    assert acquisition["roles"]["date"]["value"] == "2022-06-09"
    [attack] = [e for e in run.views["event"]["events"] if e["type"] == "Attack"]
    assert attack["time"] == {"text": "2 May 1999", "value": "1999-05-02"}
    [bought] = run.views["temporal"]["edges"]
    assert bought["qualifiers"]["point_in_time"]["value"] == "2022-06-09"
    assert bought["qualifiers"]["price"]["text"] == "$40 million"


@pytest.mark.parametrize("text, organisation, person", [
    ("The rules were explained, said Bureau of Water Works Chairman Tomas R. Quell.",
     "Bureau of Water Works", "Tomas R. Quell"),
    ("Fisheries and Ocean Services Inspector Ana P. Dorr said the nets were legal.",
     "Fisheries and Ocean Services", "Ana P. Dorr"),
])
def test_an_organisation_written_before_a_title_is_named_without_it(text, organisation, person):
    found = _found(text)
    assert (organisation, "Organization") in found and (person, "Person") in found
    assert not [n for n, t in found if t == "Organization" and n.endswith(("Chairman", "Inspector"))]


def test_an_opening_word_is_not_part_of_an_organisation():
    found = _found("Yesterday Appeals Court Judge Rina Vos ruled for the town.")
    assert ("Appeals Court", "Organization") in found
    assert not [n for n, _ in found if n.startswith("Yesterday")]


def test_a_title_ending_an_organisation_stays_when_no_name_follows():
    assert ("Department of Fisheries Chairman", "Organization") in _found(
        "The letter went to the Department of Fisheries Chairman.")


def test_tech_names_a_school_not_the_place_it_begins_with():
    found = _found("She studied physics at Oregon Tech before moving.")
    assert ("Oregon Tech", "Organization") in found and ("Oregon", "Location") not in found


@pytest.mark.parametrize("text, person", [
    ("Nobody doubted that during Marlow's tenure the port grew.", "Marlow"),
    ("Reform stalled within the Tanabe administration last year.", "Tanabe"),
])
def test_a_lone_name_with_a_cue_only_people_take_is_a_person(text, person):
    assert (person, "Person") in _found(text)


def test_a_possessive_inside_a_longer_name_is_not_a_place_alone():
    found = _found("The band played at Harlan's Ballroom on Friday.")
    assert not [n for n, t in found if t == "Location" and n == "Harlan"]


@pytest.mark.parametrize("text, organisation", [
    ("Leaders of the Farmers' Union met, and so did the Seamen's Union.", "Seamen's Union"),
    ("Ana Ruiz, a member of the Borough of Eastfield Council, objected.", "Borough of Eastfield Council"),
    ("The roof was paid for by the Bank of Avalon Foundation.", "Bank of Avalon Foundation"),
])
def test_organisation_names_with_a_possessive_or_an_of_before_the_organisation_word(text, organisation):
    assert (organisation, "Organization") in _found(text)


def test_a_place_with_its_state_is_a_place_whatever_its_last_word():
    found = _found("The painter was born in Lark Center, Minn., in 1901.")
    assert ("Lark Center, Minn.", "Location") in found
    assert not [n for n, t in found if t == "Organization"]


def test_an_organisation_word_before_of_or_for_heads_the_name():
    found = _found("The study was released by the Halvard Center for Coastal Studies last week.")
    assert ("Halvard Center for Coastal Studies", "Organization") in found


def test_a_titled_person_of_an_organisation_is_two_entities():
    found = _found("The results are promising, said Dr. Ines McAllen of DuBarry University in Leeds.")
    assert {("Ines McAllen", "Person"), ("DuBarry University", "Organization")} <= found
    assert not [n for n, t in found if t == "Organization" and "Ines" in n]


def test_a_long_name_hides_the_names_inside_it():
    found = _found("Aid came from the International Committee of the Avalon Relief Fund in Tbilisi.")
    orgs = {n for n, t in found if t == "Organization"}
    assert orgs == {"International Committee of the Avalon Relief Fund"}


@pytest.mark.parametrize("text, event", [
    ("Her grandfather fought in the Boer War as a boy.", "Boer War"),
    ("They met at the Lakeside Exposition in 1901.", "Lakeside Exposition"),
])
def test_a_named_event_is_not_a_place_or_a_person(text, event):
    assert not [n for n, _ in _found(text) if event in n]


@pytest.mark.parametrize("text, organisation", [
    ("Mira Lowe, a spokeswoman for the Coastal Fisheries Confederation, declined to comment.",
     "Coastal Fisheries Confederation"),
    ("He was a member of the Eastern Harbour Authority for ten years.", "Eastern Harbour Authority"),
])
def test_more_organisation_words(text, organisation):
    assert (organisation, "Organization") in _found(text)


@pytest.mark.parametrize("text, place", [
    ("The hikers were found two miles southwest of Ardmore on Sunday.", "Ardmore"),
    ("A deputy from Tarvold spoke first.", "Tarvold"),
])
def test_a_direction_of_or_from_before_a_lone_word_names_a_place(text, place):
    assert (place, "Location") in _found(text)
