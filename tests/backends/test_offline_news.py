"""The offline backend on everyday news text with the built-in ``general`` domain.

Capitalised names without an honorific used to be dropped; these tests pin the person
cues that replace that, the cases that must stay non-persons (in news and in contracts,
since legal_contracts extends general), and the relations they make possible. Real files
go through ``kgkit extract`` (click's CliRunner) and ``kgkit.extract``.
"""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

import kgkit
from kgkit.backends.offline.entities import find_entities
from kgkit.catalog.load import load_domain
from kgkit.cli import cli
from kgkit.config.model import Config

NEWS = ("John Smith, who works for Acme Corp., lives in Boston. "
        "Lee Harvey Oswald killed John F. Kennedy in Dallas.\n")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def _graph(tmp_path: Path, text: str, domain: str = "general", name: str = "news.txt"):
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    [run] = kgkit.extract(str(path), domain=domain, views=["binary", "person"], config=Config(),
                          out_dir=str(tmp_path / "out"))
    names = {n["id"]: n["name"] for n in run.nodes}
    nodes = {(n["name"], n["type"]) for n in run.nodes}
    edges = {(names[e["head"]], e["relation"], names[e["tail"]]) for e in run.views["binary"]["edges"]}
    return run, nodes, edges


def _persons(text: str, domain: str = "general") -> set[str]:
    return {e.name for e in find_entities(text, load_domain(domain).entity_types) if e.type == "Person"}


def test_the_newcomer_sentence_gives_three_people_and_their_relations(tmp_path):
    (tmp_path / "t.txt").write_text(NEWS, encoding="utf-8")
    result = CliRunner().invoke(cli, ["extract", "--view", "binary,person", "t.txt"], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    folder = tmp_path / "kgkit-out" / "t"
    nodes = json.loads((folder / "nodes.json").read_text())["nodes"]
    typed = {(n["name"], n["type"]) for n in nodes}
    assert {("John Smith", "Person"), ("Lee Harvey Oswald", "Person"), ("John F. Kennedy", "Person"),
            ("Acme Corp.", "Organization"), ("Boston", "Location"), ("Dallas", "Location")} <= typed
    assert len([t for _, t in typed if t == "Person"]) == 3
    names = {n["id"]: n["name"] for n in nodes}
    person_view = json.loads((folder / "views" / "person.json").read_text())
    edges = {(names[e["head"]], e["relation"], names[e["tail"]]) for e in person_view["edges"]}
    assert {("John Smith", "works_for", "Acme Corp."), ("John Smith", "lives_in", "Boston"),
            ("Lee Harvey Oswald", "killed", "John F. Kennedy")} <= edges
    assert ("John F. Kennedy", "killed", "Lee Harvey Oswald") not in edges


def test_extraction_is_deterministic(tmp_path):
    text = NEWS + "Kennedy was shot from the sixth floor. Soprano Judy Kaye, who won a Tony, sang.\n"
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first, second = _graph(tmp_path / "a", text), _graph(tmp_path / "b", text)
    assert ("Judy Kaye", "Person") in first[1]
    assert first[1] == second[1] and first[2] == second[2]
    assert [n["id"] for n in first[0].nodes] == [n["id"] for n in second[0].nodes]


@pytest.mark.parametrize("text, person", [
    ('"We will plant rice," said Bruno Pusterla, a top official of the confederation.', "Bruno Pusterla"),
    ("For singer and guitarist Bob Boyd, 57, the ranch has been home.", "Bob Boyd"),
    ("Israel television rejected a skit by comedian Tuvia Tzafir that attacked apathy.", "Tuvia Tzafir"),
    ("Soviet Foreign Minister Eduard Shevardnadze arrived on Monday.", "Eduard Shevardnadze"),
    ("Franca Chlistovsky, who heads the observatory, disagreed.", "Franca Chlistovsky"),
    ("Mitch McConnell voted against the bill.", "Mitch McConnell"),
    ("Gavrilo Princip fired twice.", "Gavrilo Princip"),
])
def test_person_cues(text, person):
    assert person in _persons(text)


@pytest.mark.parametrize("text", [
    "The Company shall pay the fees. The United States objected.",
    "Shares of the New York Stock Exchange fell.",
    "Officials in Perugia said five people were arrested.",
    "STRATEGIC ALLIANCE AGREEMENT\nThis agreement is made today.",
    "Strategic Alliance Agreement\nThe parties agree as follows.",
    'Oswald was arrested during a showing of "War Is Hell" downtown.',
    "The storm hit Niagara Falls and Early County overnight.",
    "ARTICLE X. GENERAL PROVISIONS. A. Entire Agreement.",
    "Confidential Information is protected. Each party keeps confidential information secret.",
])
def test_not_persons(text):
    assert _persons(text) == set()


def test_surnames_and_titles_become_aliases_of_the_person():
    found = find_entities("President John F. Kennedy waved. Later Kennedy was shot.",
                          load_domain("general").entity_types)
    [jfk] = [e for e in found if e.type == "Person"]
    assert jfk.name == "John F. Kennedy"
    assert {"Kennedy", "President John F. Kennedy"} <= set(jfk.aliases)


def test_two_people_joined_by_and_are_two_people():
    assert _persons("Police said Nils Bemer and Tomas Nilsen, who were arrested, denied it.") == {
        "Nils Bemer", "Tomas Nilsen"}


def test_acronyms_in_running_text_are_organisations_but_not_in_contract_domains():
    text = "FAA Administrator Allan McArtor said the GE engine failed on TV."
    general = {(e.name, e.type) for e in find_entities(text, load_domain("general").entity_types)}
    assert {("FAA", "Organization"), ("GE", "Organization"), ("Allan McArtor", "Person")} <= general
    assert ("TV", "Organization") not in general
    contract = {e.name for e in find_entities(text, load_domain("legal_contracts").entity_types)}
    assert "FAA" not in contract and "GE" not in contract


def test_contracts_get_no_default_persons_but_keep_cued_ones(tmp_path):
    text = ("This Strategic Alliance Agreement is made by Acme Corp. and Widget Ltd.\n\n"
            "Licensed Program means any program added to the Program List. "
            "Notices go to Attn: Steven J. Blad, President and CEO.\n")
    _, nodes, _ = _graph(tmp_path, text, domain="legal_contracts", name="contract.txt")
    persons = {name for name, typ in nodes if typ == "Person"}
    assert persons == {"Steven J. Blad"}


def test_single_words_need_a_cue():
    found = {(e.name, e.type) for e in find_entities(
        "Officials in Perugia said five people were arrested on Tuesday. The broadcast was in Spanish. "
        "For singer Bob Boyd of Chattanooga, Tenn., the ranch is home. Exxon said prices rose.",
        load_domain("general").entity_types)}
    assert {("Perugia", "Location"), ("Chattanooga, Tenn.", "Location"), ("Bob Boyd", "Person")} <= found
    assert not {name for name, _ in found} & {"Officials", "Spanish", "Tuesday", "Exxon", "For"}
