"""A place written with its state or country ("Memphis, Tenn.") is one location, and the
merge also calls it by the place's own name; lists of places stay separate places.

Sentences are written for these tests (no gold document's text).
"""
from __future__ import annotations

from pathlib import Path

import pytest

import kgkit
from kgkit.backends.offline.entities import find_entities
from kgkit.canon.names import place_of_region
from kgkit.config.model import Config
from kgkit.catalog.load import load_domain


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _places(text: str, domain: str = "general") -> set[str]:
    return {e.name for e in find_entities(text, load_domain(domain).entity_types) if e.type == "Location"}


@pytest.mark.parametrize("text, place", [
    ("The painter Ada Quill was born in Dayton, Ohio, in 1911.", "Dayton, Ohio"),
    ("Police in Lakeview, Ore. said the road was closed.", "Lakeview, Ore."),
    ("The mill opened in Fairport, N. Y. last spring.", "Fairport, N. Y."),
    ("He moved to Ashford County, Kan., where he farmed.", "Ashford County, Kan."),
])
def test_a_place_with_its_state_is_one_location(text, place):
    assert place in _places(text)


def test_the_state_found_on_its_own_stays_a_location():
    places = _places("The painter Ada Quill was born in Dayton, Ohio, in 1911.")
    assert {"Dayton, Ohio", "Ohio"} <= places and "Dayton" not in places


def test_a_list_of_places_is_not_joined():
    places = _places("Talks were held in Norway, Sweden, Finland and Denmark.")
    assert {"Norway", "Sweden", "Finland", "Denmark"} <= places
    assert not [p for p in places if "," in p]


@pytest.mark.parametrize("name, aliases", [
    ("Memphis, Tenn.", ["Memphis"]),
    ("West Branch, Iowa", ["West Branch"]),
    ("Waterville, N. Y.", ["Waterville"]),
    ("St. Paul, Minn.", ["St. Paul"]),
    ("Dayton", []),
    ("Pakistan", []),
])
def test_place_of_region(name, aliases):
    assert place_of_region(name) == aliases


def test_the_city_named_alone_later_joins_the_place_with_its_state(tmp_path):
    path = tmp_path / "news.txt"
    path.write_text("The singer Ada Quill was born in Dayton, Ohio. She died in Dayton at 90.\n", encoding="utf-8")
    [run] = kgkit.extract(str(path), domain="general", views=["binary"], config=Config(), out_dir=str(tmp_path / "out"))
    places = {n["name"]: n for n in run.nodes if n["type"] == "Location"}
    assert "Dayton" not in places
    node = places["Dayton, Ohio"]
    assert "Dayton" in node["aliases"]
    assert {"name": "Dayton", "reason": "region", "score": 100.0} in node["merged_from"]


def test_contract_domains_have_no_places_to_join():
    found = {(e.name, e.type) for e in find_entities("Acme Corp., Dover, Del., agrees.",
                                                     load_domain("legal_contracts").entity_types)}
    assert not [n for n, _ in found if n.startswith("Dover")]


@pytest.mark.parametrize("text, person", [
    ("He came from Oslo, Northern Fisheries Board Deputy Ingrid Solberg, who spoke first.", "Ingrid Solberg"),
    ("\"It is done,\" said Department of Public Roads Chairman Carla J. Benning.", "Carla J. Benning"),
])
def test_a_long_title_before_a_name_leaves_the_person(text, person):
    found = {(e.name, e.type) for e in find_entities(text, load_domain("general").entity_types)}
    assert (person, "Person") in found
    assert not [n for n, _ in found if n.endswith(person) and n != person]


@pytest.mark.parametrize("text, place", [
    ("She studied at Nevada Tech and later taught there.", "Nevada"),
    ("Fans of the Denver Comets cheered.", "Denver"),
])
def test_a_listed_place_that_begins_a_longer_name_is_not_a_place_alone(text, place):
    """The longer name is typed by its own cues; the place alone is not an entity."""
    names = {e.name for e in find_entities(text, load_domain("general").entity_types)}
    assert place not in names


def test_a_listed_place_before_a_sentence_or_a_dateline_stays_a_place():
    names = {e.name for e in find_entities("He was born in Denver. Later he moved to Chicago.\nMOSCOW ITAR-TASS said so.",
                                           load_domain("general").entity_types)}
    assert {"Denver", "Chicago"} <= names


def test_a_wire_source_credit_names_an_organisation():
    text = "Oslo DAGBLADET in Norwegian 3 Jan 95 p 4\nThe fleet sailed north, the paper said."
    found = {(e.name, e.type) for e in find_entities(text, load_domain("general").entity_types)}
    assert ("DAGBLADET", "Organization") in found
    assert ("Oslo", "Location") in found
    contract = {e.name for e in find_entities(text, load_domain("legal_contracts").entity_types)}
    assert "DAGBLADET" not in contract


@pytest.mark.parametrize("text, place", [
    ("The film was made by Tom Vale, a Fresno native, in 1973.", "Fresno"),
    ("A Grand Rapids native, she sang at the fair.", "Grand Rapids"),
    ("Later, angry Dunmore residents blocked the road.", "Dunmore"),
])
def test_a_native_or_resident_of_a_place_names_the_place(text, place):
    assert place in _places(text)


def test_an_age_is_not_a_duration():
    # legal_contracts keeps durations as nodes (general keeps them as values on edges)
    found = {(e.name, e.type) for e in find_entities("Ada Quill, a 72-year-old farmer, served five years in office.",
                                                     load_domain("legal_contracts").entity_types)}
    assert ("five years", "Duration") in found
    assert not [n for n, t in found if t == "Duration" and n.startswith("72")]


@pytest.mark.parametrize("text, name, type_name", [
    ("The gala was held at the Harbor Hotel in town.", "Harbor Hotel", "Organization"),
    ("They rented a flat on the Lower East Side last year.", "Lower East Side", "Location"),
])
def test_facility_and_district_words_type_a_name(text, name, type_name):
    found = {(e.name, e.type) for e in find_entities(text, load_domain("general").entity_types)}
    assert (name, type_name) in found


@pytest.mark.parametrize("text, person, not_person", [
    ("\"It will hold,\" said Harbor Patrol spokesman Lt. Dana Ruiz. The boat sank.", "Dana Ruiz", "Lt"),
    ("The inquiry found that Mara Lynn Holt signed the order.", "Mara Lynn Holt", None),
    ("The dinner for Ambassador Ruth Ames was held at the Ambassador Hotel.", "Ruth Ames", "Hotel"),
])
def test_titles_hotels_and_that_clauses(text, person, not_person):
    found = {(e.name, e.type) for e in find_entities(text, load_domain("general").entity_types)}
    assert (person, "Person") in found
    assert (not_person, "Person") not in found


def test_a_pattern_find_does_not_run_across_a_sentence_end():
    """A learned skill's loose regex can match across a full stop; such a find is no name,
    and it must not hide the names on either side ("Dayton, Ohio" stays one place)."""
    skill = {"kind": "entity", "target": "Person",
             "pattern": {"regex": [r"(?-i:[A-Z][a-z]+\. [A-Z][a-z]+ [A-Z][a-z]+)"]}}
    text = "Ada Quill was born in Dayton, Ohio. Jack Morrow said so."
    found = {(e.name, e.type) for e in find_entities(text, load_domain("general").entity_types, [skill])}
    assert ("Dayton, Ohio", "Location") in found
    assert not [n for n, _ in found if ". " in n]
