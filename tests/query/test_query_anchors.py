"""O4 on both stores (``graph_url``): a paper PDF of our own, extracted with the scholarly
domain and added to a corpus graph, answers "anchors about X" from the store with each
anchor's raw payload (caption, table rows, equation text, page, bounding box), and forgets
them when the document is removed."""
from __future__ import annotations

import json

import jsonschema
import pytest
from click.testing import CliRunner

from support.graph_support import graph_url, postgres  # noqa: F401  (fixtures)
from support.pdf_maker import two_column_paper
from support.query_support import SCHEMA
from kgkit.cli import cli
from kgkit.errors import InputError
from kgkit.graph import GraphStore
from kgkit.query import Query

pytest.importorskip("pdfplumber")


@pytest.fixture
def paper_runs(tmp_path, monkeypatch):
    """Run folders of two papers: ``a`` (the pdf_maker paper) and ``b`` (another title)."""
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    out = tmp_path / "out"
    for name, title in (("a", "Graph Methods for Citation Analysis"), ("b", "Typed links between papers")):
        pdf = two_column_paper(tmp_path / f"{name}.pdf", title=title,
                               venue="Proceedings of the Example Workshop 2020, pages 1-9")
        result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(out)])
        assert result.exit_code == 0, result.output
    return {"a": out / "a", "b": out / "b"}


def _valid(answer):
    jsonschema.validate(json.loads(json.dumps(answer.to_json())), SCHEMA)
    return answer


def _one(answer, document="a"):
    """The payloads of an answer, of one document."""
    return [a for a in answer.report.get("anchors", []) if a["document"] == document]


def test_anchors_about_a_term_answer_with_their_payload(graph_url, paper_runs):
    with GraphStore(graph_url) as g:
        g.add([paper_runs["a"], paper_runs["b"]])
        q = Query(g)
        table = _valid(q.anchors("Table 1", document="a"))
        assert [a["name"] for a in table.report["anchors"]][0] == "Table 1"
        first = table.report["anchors"][0]
        assert first["why"][0] == "label" and first["kind"] == "table" and first["modality"] == "table"
        assert first["caption"] == "Results on the test papers" and first["page"] == 1
        assert ["Ours", "0.91", "3s"] in first["rows"] and len(first["bbox"]) == 4
        assert table.nodes[0].id == first["id"] and table.nodes[0].type == "Anchor"
        assert table.nodes[0].evidence[0].page == 1 and table.nodes[0].evidence[0].quote == first["caption"]
        # a table is about what its rows say, a figure about its caption's words
        assert [a["label"] for a in _one(q.anchors("Ours"))] == ["Table 1"]
        assert [(a["label"], a["why"]) for a in _one(q.anchors("pipeline"))] == [("Figure 1", ["caption"])]
        equation = _one(_valid(q.anchors(kind="equation")))
        assert [(a["label"], a["text"]) for a in equation] == [("Equation 1", "s = a + b (1)")]
        # an entity is grounded in the paragraph its mention falls in
        grounded = _one(q.anchors("graph method"))
        assert grounded and grounded[0]["kind"] == "paragraph" and "grounded" in grounded[0]["why"]
        assert "graph method" in grounded[0]["text"] and grounded[0]["section"] == "Abstract"
        # each paper's anchors are its own: two "Table 1"s, one per document
        both = q.anchors("Table 1", kind="table")
        assert sorted(a["document"] for a in both.report["anchors"]) == ["a", "b"]
        assert len({n.id for n in both.nodes}) == 2
        assert q.anchors("nothing mentions this").nodes == []
        g.remove("a")
        assert _one(Query(g).anchors("Table 1")) == []
        g.remove("b")
        gone = _valid(Query(g).anchors())
        assert gone.nodes == [] and "no anchors" in gone.note


def test_anchors_are_nodes_of_their_section_and_document_in_the_graph(graph_url, paper_runs):
    with GraphStore(graph_url) as g:
        g.add([paper_runs["a"]])
        snap = g.snapshot()
        q = Query(g)
        table = q.anchors("Table 1").nodes[0].id
        section = next(n for n in snap.nodes if n["type"] == "Section" and n["name"] == "2.1 Typed Citations")
        paper = next(n for n in snap.nodes if n["type"] == "Paper" and n["id"].endswith("/paper"))
        edges = {(e["head"], e["relation"], e["tail"]) for e in snap.edges}
        assert (table, "belongs_to", section["id"]) in edges
        parent = next(n["id"] for n in snap.nodes if n["type"] == "Section" and n["name"] == "2 Related Work")
        assert (section["id"], "belongs_to", parent) in edges and (parent, "belongs_to", paper["id"]) in edges
        # O2 reaches an anchor from its section: the layer is part of the graph, not a side file
        hood = q.neighbours([section["id"]], hops=1, relations=["belongs_to"])
        assert table in {n.id for n in hood.nodes}


def test_a_tenant_sees_only_its_own_anchors(graph_url, paper_runs):
    with GraphStore(graph_url, tenant="a") as g:
        g.add([paper_runs["a"]])
        assert Query(g).anchors("Table 1").nodes
    with GraphStore(graph_url, tenant="b") as g:
        other = Query(g).anchors("Table 1")
        assert other.nodes == [] and "no anchors" in other.note


def test_limit_cuts_and_says_so_and_a_bad_kind_is_refused(graph_url, paper_runs):
    with GraphStore(graph_url) as g:
        g.add([paper_runs["a"]])
        q = Query(g)
        every = q.anchors(limit=1000)
        assert {a["kind"] for a in every.report["anchors"]} == {"paragraph", "figure", "table", "equation"}
        cut = _valid(q.anchors(limit=2))
        assert len(cut.nodes) == 2 and cut.cuts[0].limit == "limit"
        assert cut.cuts[0].dropped == len(every.nodes) - 2
        with pytest.raises(InputError, match="unknown anchor kind"):
            q.anchors(kind="figures")


def test_cli_answers_anchors_about_x_from_a_graph_built_by_graph_add(tmp_path, paper_runs):
    graph = str(tmp_path / "corpus.sqlite")
    added = CliRunner().invoke(cli, ["graph", "add", graph, str(paper_runs["a"])])
    assert added.exit_code == 0, added.output
    shown = CliRunner().invoke(cli, ["query", "anchors", graph, "Table 1"])
    assert shown.exit_code == 0, shown.output
    assert "Table 1  [table]  a page 1" in shown.output and "caption: Results on the test papers" in shown.output
    assert "| Ours | 0.91 | 3s" in shown.output
    as_json = CliRunner().invoke(cli, ["query", "anchors", graph, "pipeline", "--kind", "figure", "--json"])
    assert as_json.exit_code == 0, as_json.output
    answer = json.loads(as_json.output)
    jsonschema.validate(answer, SCHEMA)
    assert [a["label"] for a in answer["report"]["anchors"]] == ["Figure 1"]
    bad = CliRunner().invoke(cli, ["query", "anchors", graph, "--kind", "chart"])
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_a_layout_read_outside_the_scholarly_domain_stores_its_anchors_too(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    domain = tmp_path / "laid_out.yaml"
    domain.write_text("name: laid_out\nextends: general\nreading: layout\n", encoding="utf-8")
    pdf = two_column_paper(tmp_path / "report.pdf")
    out = tmp_path / "out"
    result = CliRunner().invoke(cli, ["extract", "--domain", str(domain), str(pdf), "--out", str(out)])
    assert result.exit_code == 0, result.output
    with GraphStore(tmp_path / "g.sqlite") as g:
        g.add([out / "report"])
        labels = {a["label"] for a in Query(g).anchors(kind="table").report["anchors"]}
        snap = g.snapshot()
    assert labels == {"Table 1"}
    assert not [n for n in snap.nodes if n["type"] == "Paper"]  # only a scholarly read adds papers


def test_a_damaged_structure_file_adds_what_it_can_and_never_a_traceback(tmp_path, paper_runs):
    run = paper_runs["a"]
    data = json.loads((run / "structure.json").read_text(encoding="utf-8"))
    table = next(a for a in data["anchors"] if a["kind"] == "table")
    data["anchors"] = [7, "x", {"kind": "chart", "id": "c1", "page": 1}, {"kind": "table", "id": None, "page": 1},
                       {"kind": "figure", "id": "f9", "page": "one"}, table, dict(table, caption="a second copy")]
    data["sections"] = [None, {"name": ""}, {"name": 5}]
    data["graph"]["edges"] = [{"type": "grounded_in", "source": "no such node", "target": "nowhere"}, 3]
    (run / "structure.json").write_text(json.dumps(data), encoding="utf-8")
    with GraphStore(tmp_path / "g.sqlite") as g:
        g.add([run])
        answer = Query(g).anchors()
    assert [(a["label"], a["caption"]) for a in answer.report["anchors"]] == [("Table 1", table["caption"])]
    (run / "structure.json").write_text('{"reading": "scholarly", "anchors": {', encoding="utf-8")
    with GraphStore(tmp_path / "g2.sqlite") as g:
        g.add([run])  # the views and nodes still go in
        assert g.snapshot().nodes and "no anchors" in Query(g).anchors().note
