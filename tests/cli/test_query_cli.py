"""``kgkit query`` through the real entry point: tables and JSON, exit 2 with the reason on
bad input, an empty graph answering with nothing, named queries from a domain file."""
from __future__ import annotations

import json

import jsonschema
import pytest

from support.cli_support import kgkit
from support.graph_support import small_runs  # noqa: F401  (fixture)
from support.query_support import SCHEMA
from kgkit.graph import GraphStore


@pytest.fixture()
def graph(small_runs, tmp_path):
    path = str(tmp_path / "g.sqlite")
    result = kgkit("graph", "add", path, *(str(small_runs[n]) for n in ("alpha", "beta", "gamma")))
    assert result.exit_code == 0, result.output
    return path


def test_every_operator_answers_json_that_fits_the_schema(graph):
    for args in (["find", graph, "Harbor"], ["neighbours", graph, "Harbor Analytics Ltd.", "--hops", "1"],
                 ["lineage", graph, "LICENSE AGREEMENT", "--relation", "HAS_PARTY"],
                 ["path", graph, "Northwind Traders", "Quill Media Corp."],
                 ["match", graph, 'Agreement -GOVERNING_LAW-> Jurisdiction{name: "Texas"}'],
                 ["gaps", graph], ["novelty", graph, "governed by the laws of Texas"],
                 ["search", graph, "laws of the State of Texas"], ["anchors", graph]):
        result = kgkit("query", *args, "--json")
        assert result.exit_code == 0, (args, result.output)
        answer = json.loads(result.output)
        jsonschema.validate(answer, SCHEMA)
        assert answer["tenant"] == "default" and answer["version"] == 3


def test_novelty_takes_limit_as_every_subcommand_does(graph):
    result = kgkit("query", "novelty", graph, "governed by the laws of Texas", "--limit", "1", "--json")
    assert result.exit_code == 0, result.output
    answer = json.loads(result.output)
    assert len(answer["nodes"]) == 1 and answer["limits"]["k"] == 1


def test_tables_by_default(graph):
    out = kgkit("query", "neighbours", graph, "Harbor Analytics Ltd.", "--hops", "1", "--fanout", "1").output
    assert out.startswith("neighbours: tenant 'default', graph version 3\n")
    assert "Harbor Analytics Ltd." in out and "cut by fanout:" in out
    assert "Texas" in kgkit("query", "match", graph, "Agreement -GOVERNING_LAW-> Jurisdiction").output
    assert "gamma" in kgkit("query", "search", graph, "Texas law", "--limit", "1").output


@pytest.mark.parametrize("args, says", [
    (["find", "{g}", "Harbor", "--type", "Partie"], "did you mean 'Party'?"),
    (["neighbours", "{g}", "Harbor", "--relation", "HAS_PARTI"], "did you mean 'HAS_PARTY'?"),
    (["neighbours", "{g}", "Harbor", "--hops", "99"], "hop limit 99 is out of range"),
    (["match", "{g}", "Agreement -GOVERNING_LAW Jurisdiction"], "pattern column 26"),
    (["match", "{g}", "--named", "governed_bi", "-d", "legal_contracts"], "did you mean 'governed_by'?"),
    (["match", "{g}", "--named", "governed_by", "-d", "legal_contracts", "--param", "jurisdictin=Texas"],
     "did you mean 'jurisdiction'?"),
    (["match", "{g}", "--named", "dated_in", "-d", "legal_contracts", "--param", "year=last"], "must be a year"),
    (["match", "{g}"], "give a PATTERN or --named NAME"),
])
def test_bad_input_exits_2_with_the_reason_and_no_traceback(graph, args, says):
    result = kgkit("query", *[a.replace("{g}", graph) for a in args])
    assert result.exit_code == 2, result.output
    assert says in result.output and "Traceback" not in result.output


def test_named_queries_answer_with_documents_or_nodes(graph):
    docs = json.loads(kgkit("query", "match", graph, "--named", "governed_by", "-d", "legal_contracts",
                            "--param", "jurisdiction=Texas", "--json").output)
    assert docs["report"]["answer"] == ["gamma"] and docs["query"]["named"] == "governed_by"
    law = json.loads(kgkit("query", "match", graph, "--named", "governing_law_of", "-d", "legal_contracts",
                           "--param", "contract=beta", "--json").output)
    assert law["report"]["answer"] == ["California"]
    dated = json.loads(kgkit("query", "match", graph, "--named", "dated_in", "-d", "legal_contracts",
                             "--param", "year=2020", "--json").output)
    assert dated["report"]["answer"] == ["gamma"]


def test_an_empty_graph_answers_nothing_and_exits_0(tmp_path):
    empty = str(tmp_path / "empty.sqlite")
    GraphStore(empty).close()
    for args in (["find", empty, "x", "--type", "Party"], ["match", empty, "Agreement -GOVERNING_LAW-> Jurisdiction"],
                 ["search", empty, "x"], ["gaps", empty], ["neighbours", empty, "x"]):
        result = kgkit("query", *args)
        assert result.exit_code == 0, (args, result.output)
    assert "not in the graph" in kgkit("query", "neighbours", empty, "x").output


def test_a_store_that_is_not_there_exits_2_and_no_file_is_made(tmp_path):
    missing = tmp_path / "nowhere.sqlite"
    for args in (["find", str(missing), "x"], ["gaps", str(missing)], ["search", str(missing), "x", "--json"]):
        result = kgkit("query", *args)
        assert result.exit_code == 2, (args, result.output)
        assert "no graph store at this path" in result.output and "Traceback" not in result.output
    assert not missing.exists()


def test_named_queries_in_a_domain_file_are_validated(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: badq\nextends: legal_contracts\nqueries:\n"
                   "  - name: q1\n    pattern: 'Agreement -GOVERNING_LAWS-> Jurisdictio{name: $jur}'\n"
                   "    params: [{name: jurisdiction}]\n"
                   "  - name: q2\n    pattern: 'Agreement -GOVERNING_LAW Jurisdiction'\n", encoding="utf-8")
    result = kgkit("validate", str(bad))
    assert result.exit_code == 2
    for says in ("did you mean 'GOVERNING_LAW'?", "did you mean 'Jurisdiction'?", "$jur is not declared",
                 "'jurisdiction' is not used", "pattern column 26"):
        assert says in result.output, result.output
    assert "bad.yaml:5:" in result.output
