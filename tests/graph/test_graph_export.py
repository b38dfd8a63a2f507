"""Graph exports: every format from a GraphSnapshot, read back by the tools people use."""
from __future__ import annotations

import csv
import dataclasses
import json
import os
import random
from pathlib import Path

import networkx as nx
import pytest
import rdflib
from click.testing import CliRunner
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.graph_export_support import (NODE_FIELD, RELATIONSHIP_FIELD, cypher_errors, cypher_graph, expected_counts,
                                  make_snapshot, neo4j_csv_graph, value_entries)
from support.graph_support import comparable
from kgkit.errors import InputError
from kgkit.graph.export import ExportOptions, export_formats, export_graph, register_format
from kgkit.graph.export.escape import spreadsheet_text, xml_safe
from kgkit.graph.export.neo4j import relationship_type
from kgkit.graph.export.rdf import KG, triples

# rdflib's own JSON-LD parser still builds a ConjunctiveGraph internally
pytestmark = pytest.mark.filterwarnings("ignore:ConjunctiveGraph is deprecated:DeprecationWarning")

FORMATS = ["csv", "graphml", "json", "jsonld", "neo4j", "turtle"]


def read_csv(path: Path) -> list[dict[str, str]]:
    """The rows of a CSV export, each cell's text as it was (a formula guard undone)."""
    with path.open(encoding="utf-8", newline="") as fh:
        return [{k: spreadsheet_text(v) for k, v in row.items()} for row in csv.DictReader(fh)]


def rdf_graphs(out: Path) -> tuple[rdflib.Graph, rdflib.Graph]:
    return (rdflib.Graph().parse(out / "graph.ttl", format="turtle"),
            rdflib.Graph().parse(out / "graph.jsonld", format="json-ld"))


def export_all(snapshot, out: Path) -> None:
    for fmt in FORMATS:
        export_graph(snapshot, fmt, out)


def test_every_built_in_format_is_registered():
    assert export_formats() == FORMATS


def test_graphml_reads_back_in_networkx_with_items_reified(tmp_path):
    snap = make_snapshot()
    export_graph(snap, "graphml", tmp_path)
    g = nx.read_graphml(tmp_path / "graph.graphml")
    literal = {n["id"] for n in snap.nodes if n["scope"] == "value"}
    roles = sum(len(set(ids) - literal) for h in snap.hyperedges for ids in h["roles"].values()) + \
        sum(len(set(ids) - literal) for v in snap.events for ids in v["arguments"].values())
    mentions = sum(len(n["documents"]) for n in snap.nodes if n["id"] not in literal)
    supports = sum(len(i["documents"]) for i in snap.hyperedges + snap.events)
    assert g.number_of_nodes() == len(snap.documents) + len(snap.nodes) - len(literal) + len(snap.hyperedges) + \
        len(snap.events) == 6
    assert g.number_of_edges() == len(snap.edges) + len(snap.temporal) + roles + mentions + supports == 3 + 5 + 3 + 2
    assert g.nodes["n_a"]["name"] == "Acme Widgets Inc." and g.nodes["n_a"]["evidence_count"] == 1
    assert json.loads(g.nodes["n_a"]["aliases"]) == ["Acme"]
    assert g.nodes["v_1"]["kind"] == "event" and g.nodes["v_1"]["time.value"] == "2021-03-03"
    # the date is the event's property, not a node that could join documents
    assert "n_c" not in g and json.loads(g.nodes["v_1"]["role.date"]) == ["2021-03-03"]
    assert g.nodes["d_1"]["kind"] == "document" and g.nodes["d_1"]["title"] == "Supply Agreement"
    assert g.edges["n_a", "d_2", "n_a|MENTIONED_IN|d_2"]["label"] == "MENTIONED_IN"
    assert g.edges["v_1", "d_2", "v_1|SUPPORTED_BY|d_2"]["kind"] == "supported_by"
    edge = g.edges["n_a", "n_b", "e_1"]
    assert edge["relation"] == "SUPPLIES" and edge["confidence"] == 0.8
    assert json.loads(edge["documents"]) == ["signing.pdf", "supply.txt"]  # by name
    assert (edge["quote"], edge["page"], edge["evidence_document"]) == ("Acme supplies Borealis.", 1, "supply.txt")
    assert (edge["span_start"], edge["span_end"], edge["evidence_count"]) == (0, 10, 2)
    assert g.edges["n_a", "n_b", "t_1"]["qualifier.since.value"] == "2021-03-03"
    # n_a fills two roles of v_1: two role edges, told apart by their role
    assert sorted(d["role"] for _, t, d in g.out_edges("v_1", data=True) if t == "n_a") == ["party", "signatory"]
    assert "confidence" not in g.edges["n_b", "n_a", "e_2"]  # absent, not an empty string


def _dated_snapshot():
    """make_snapshot with an edge to its date: a value as an edge's end."""
    snap = make_snapshot()
    edge = {"id": "e_3", "head": "n_a", "relation": "SIGNED_ON", "tail": "n_c", "views": ["binary"],
            "confidence": 0.9, "documents": ["d_2"]}
    ev = {"item": "e_3", "document": "d_2", "chunk": "c_9", "page": 2, "span": [5, 40], "quote": "signed on 3 March",
          "view": "binary"}
    return dataclasses.replace(snap, edges=snap.edges + [edge], evidence=snap.evidence + [ev])


def test_a_value_end_is_a_property_in_graphml_and_neo4j_and_a_typed_literal_in_rdf(tmp_path):
    snap = _dated_snapshot()
    for fmt in ("graphml", "neo4j", "turtle"):
        export_graph(snap, fmt, tmp_path)
    g = nx.read_graphml(tmp_path / "graph.graphml")
    a = g.nodes["n_a"]
    assert json.loads(a["value.SIGNED_ON"]) == ["2021-03-03"] and json.loads(a["value.SIGNED_ON.value"]) == ["2021-03-03"]
    assert json.loads(a["value.SIGNED_ON.quote"]) == ["signed on 3 March"]
    assert json.loads(a["value.SIGNED_ON.documents"]) == [["signing.pdf"]]
    assert (g.number_of_nodes(), g.number_of_edges(), value_entries(g)) == expected_counts(snap)
    nodes, rels = cypher_graph((tmp_path / "neo4j" / "graph.cypher").read_text(encoding="utf-8"))
    assert json.loads(nodes["n_a"][1]["value_SIGNED_ON"]) == ["2021-03-03"] and "e_3" not in rels
    ttl = rdflib.Graph().parse(tmp_path / "graph.ttl", format="turtle")
    base = "https://kgkit.dev/graph/t1/"
    [date] = ttl.objects(rdflib.URIRef(base + "n_a"), rdflib.URIRef("https://kgkit.dev/ns/relation/SIGNED_ON"))
    assert isinstance(date, rdflib.Literal) and date.datatype == rdflib.XSD.date and str(date) == "2021-03-03"
    assert (rdflib.URIRef(base + "e_3"), rdflib.URIRef(KG + "inDocument"), rdflib.URIRef(base + "d_2")) in ttl


def test_values_as_nodes_is_an_option(tmp_path):
    snap = make_snapshot()
    export_graph(snap, "graphml", tmp_path, ExportOptions(values="nodes"))
    g = nx.read_graphml(tmp_path / "graph.graphml")
    assert g.nodes["n_c"]["scope"] == "value" and g.nodes["n_c"]["value"] == "2021-03-03"
    assert "role.date" not in g.nodes["v_1"]
    assert [d["role"] for _, t, d in g.out_edges("v_1", data=True) if t == "n_c"] == ["date"]
    with pytest.raises(InputError, match="values must be one of"):
        export_graph(snap, "graphml", tmp_path / "x", ExportOptions(values="maybe"))


def test_turtle_and_jsonld_hold_the_same_triples(tmp_path):
    snap = make_snapshot()
    export_graph(snap, "turtle", tmp_path)
    export_graph(snap, "jsonld", tmp_path)
    ttl, jsonld = rdf_graphs(tmp_path)
    assert set(ttl) == set(jsonld)
    assert len(ttl) == len(triples(snap, ExportOptions()))
    kg = rdflib.Namespace(KG)
    base = "https://kgkit.dev/graph/t1/"
    a, v1 = rdflib.URIRef(base + "n_a"), rdflib.URIRef(base + "v_1")
    assert (a, rdflib.RDF.type, kg.Entity) in ttl
    assert (a, rdflib.URIRef("https://kgkit.dev/ns/relation/SUPPLIES"), rdflib.URIRef(base + "n_b")) in ttl
    fillers = {(str(ttl.value(r, kg.roleName)), ttl.value(r, kg.filler)) for r in ttl.objects(v1, kg.role)}
    assert fillers == {("party", a), ("party", rdflib.URIRef(base + "n_b")), ("signatory", a),
                       ("date", rdflib.URIRef(base + "n_c"))}
    conf = ttl.value(rdflib.URIRef(base + "e_1"), kg.confidence)
    assert conf.datatype == rdflib.XSD.double and conf.toPython() == 0.8
    assert len(list(ttl.objects(rdflib.URIRef(base + "e_1"), kg.evidence))) == 2


def test_base_iri_is_an_option_and_a_bad_one_is_refused(tmp_path):
    export_graph(make_snapshot(), "turtle", tmp_path, ExportOptions(base_iri="urn:example:g/"))
    ttl = rdflib.Graph().parse(tmp_path / "graph.ttl", format="turtle")
    assert (rdflib.URIRef("urn:example:g/n_a"), rdflib.RDF.type, rdflib.URIRef(KG + "Entity")) in ttl
    with pytest.raises(InputError, match="not an absolute IRI"):
        export_graph(make_snapshot(), "turtle", tmp_path / "x", ExportOptions(base_iri="https://x/a b/"))
    assert not (tmp_path / "x").exists()


def test_neo4j_headers_follow_the_import_tools_grammar(tmp_path):
    export_graph(make_snapshot(), "neo4j", tmp_path)
    folder = tmp_path / "neo4j"
    nodes = sorted(folder.glob("nodes_*.csv"))
    rels = sorted(folder.glob("relationships_*.csv"))
    assert [p.name for p in nodes] == ["nodes_document.csv", "nodes_entity.csv", "nodes_event.csv",
                                       "nodes_hyperedge.csv"]
    assert [p.name for p in rels] == ["relationships_edge.csv", "relationships_mentioned_in.csv",
                                      "relationships_role.csv", "relationships_supported_by.csv",
                                      "relationships_temporal.csv"]
    for path, grammar, required in [(p, NODE_FIELD, {"id:ID", ":LABEL"}) for p in nodes] + \
                                   [(p, RELATIONSHIP_FIELD, {":START_ID", ":END_ID", ":TYPE"}) for p in rels]:
        header = next(csv.reader(path.open(encoding="utf-8")))
        assert required <= set(header), path
        assert [cell for cell in header if not grammar.fullmatch(cell)] == [], path
    entity = {r["id:ID"]: r for r in read_csv(folder / "nodes_entity.csv")}
    assert entity["n_a"][":LABEL"] == "Organization;Entity" and entity["n_a"]["evidence_count:int"] == "1"
    assert {r["id:ID"]: r["name"] for r in read_csv(folder / "nodes_document.csv")} == \
        {"d_1": "supply.txt", "d_2": "signing.pdf"}
    edges = read_csv(folder / "relationships_edge.csv")
    assert [(r[":START_ID"], r[":TYPE"], r[":END_ID"], r["confidence:double"]) for r in edges] == \
        [("n_a", "SUPPLIES", "n_b", "0.8"), ("n_b", "PARTNER_OF", "n_a", "")]
    assert (edges[0]["quote"], edges[0]["documents"]) == ("Acme supplies Borealis.", '["signing.pdf", "supply.txt"]')
    assert len(read_csv(folder / "relationships_role.csv")) == 5
    assert {(r[":START_ID"], r[":TYPE"], r[":END_ID"]) for r in read_csv(folder / "relationships_mentioned_in.csv")} \
        == {("n_a", "MENTIONED_IN", "d_1"), ("n_a", "MENTIONED_IN", "d_2"), ("n_b", "MENTIONED_IN", "d_1")}


def test_cypher_script_parses_and_loads_what_the_csv_files_hold(tmp_path):
    export_graph(make_snapshot(), "neo4j", tmp_path)
    script = (tmp_path / "neo4j" / "graph.cypher").read_text(encoding="utf-8")
    assert cypher_errors(script) == []
    lines = script.splitlines()
    constraints = [line for line in lines if line.startswith("CREATE CONSTRAINT")]
    assert len(constraints) == 5 and any("(n:`Organization`)" in line for line in constraints)  # one per label
    assert all(line.endswith(";") for line in lines if not line.startswith("//"))
    nodes, rels = cypher_graph(script)
    assert (nodes, rels) == neo4j_csv_graph(tmp_path / "neo4j")
    assert len(nodes) == 6 and len(rels) == 13
    assert nodes["n_a"] == ("Organization;Entity", {
        "id": "n_a", "type": "Organization", "name": "Acme Widgets Inc.", "aliases": '["Acme"]', "scope": "corpus",
        "documents": '["signing.pdf", "supply.txt"]', "evidence_count": 1})
    assert rels["e_1"][:3] == ("n_a", "SUPPLIES", "n_b") and rels["e_1"][3]["confidence"] == 0.8
    assert rels["e_1"][3]["quote"] == "Acme supplies Borealis." and rels["e_1"][3]["evidence_document"] == "supply.txt"
    assert nodes["d_2"] == ("Document", {"id": "d_2", "name": "signing.pdf", "sha256": "cd" * 32, "pages": 3,
                                         "added": "2026-01-02T03:04:06+00:00"})


def test_the_checker_catches_a_broken_cypher_statement():
    assert cypher_errors("UNWIND [{`id`: 'x'] AS row MERGE (n:`Entity` {id: row.id});")
    assert cypher_errors("CREATE CONSTRAINT `c` FOR (n:`Entity`) REQUIRE n.id IS UNIQUE;")


def test_plain_csv_tables_join_by_id(tmp_path):
    snap = make_snapshot()
    export_graph(snap, "csv", tmp_path)
    assert [r["id"] for r in read_csv(tmp_path / "nodes.csv")] == ["n_a", "n_b", "n_c"]
    assert read_csv(tmp_path / "hyperedge_roles.csv") == [
        {"hyperedge": "h_1", "role": "buyer", "node": "n_b"}, {"hyperedge": "h_1", "role": "seller", "node": "n_a"}]
    assert len(read_csv(tmp_path / "event_arguments.csv")) == 4
    assert read_csv(tmp_path / "temporal_qualifiers.csv")[0]["value"] == "2021-03-03"
    evidence = read_csv(tmp_path / "evidence.csv")
    assert [(r["item"], r["document"], r["span_start"], r["page"]) for r in evidence] == [
        ("e_1", "d_1", "0", "1"), ("e_1", "d_2", "", ""), ("n_a", "d_1", "0", "1"), ("v_1", "d_2", "5", "2")]
    assert read_csv(tmp_path / "documents.csv")[1]["source"] == ""


def test_json_is_the_snapshot(tmp_path):
    snap = make_snapshot()
    export_graph(snap, "json", tmp_path)
    data = json.loads((tmp_path / "graph.json").read_text(encoding="utf-8"))
    assert data.pop("kgkit_graph_export") == 3
    expected = dataclasses.asdict(snap)
    expected["evidence"].sort(key=lambda r: (r["item"], r["document"], r["chunk"]))
    assert data == expected


def _shuffled(snap):
    rng = random.Random(3)
    lists = {f.name: rng.sample(getattr(snap, f.name), len(getattr(snap, f.name)))
             for f in dataclasses.fields(snap) if isinstance(getattr(snap, f.name), list)}
    return dataclasses.replace(snap, **lists)


def test_same_snapshot_same_bytes_whatever_the_item_order(tmp_path):
    export_all(make_snapshot(), tmp_path / "a")
    export_all(_shuffled(make_snapshot()), tmp_path / "b")
    files = sorted(p.relative_to(tmp_path / "a") for p in (tmp_path / "a").rglob("*") if p.is_file())
    assert len(files) == 11 + 1 + 1 + 1 + 10 + 1  # csv: 11 tables (edge_properties.csv the 11th)
    for name in files:
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name


def test_a_reference_to_a_missing_node_is_refused_and_nothing_is_written(tmp_path):
    snap = make_snapshot()
    broken = dataclasses.replace(snap, hyperedges=[{**snap.hyperedges[0], "roles": {"buyer": ["n_gone"]}}])
    for fmt in ("graphml", "neo4j"):
        with pytest.raises(InputError, match="h_1 refers to node 'n_gone'"):
            export_graph(broken, fmt, tmp_path / fmt)
        assert not (tmp_path / fmt).exists()


def test_a_failing_writer_leaves_the_output_folder_as_it_was(tmp_path):
    (tmp_path / "keep.txt").write_text("mine")

    def half_then_fail(snapshot, out, options):
        out.open("first.txt").write("complete")
        out.open("sub/second.txt").write("half")
        raise RuntimeError("disk full")

    register_format("failing", half_then_fail)
    with pytest.raises(RuntimeError):
        export_graph(make_snapshot(), "failing", tmp_path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["keep.txt"]


def test_unknown_format_and_file_as_output_are_input_errors(tmp_path):
    with pytest.raises(InputError, match="unknown export format 'graphm'") as exc:
        export_graph(make_snapshot(), "graphm", tmp_path)
    assert exc.value.hint == "did you mean 'graphml'?"
    (tmp_path / "file").write_text("")
    with pytest.raises(InputError, match="exists and is not a folder"):
        export_graph(make_snapshot(), "csv", tmp_path / "file")  # csv writes several files


def test_a_one_file_format_writes_the_file_out_names_and_a_folder_stays_a_folder(tmp_path):
    [written] = export_graph(make_snapshot(), "graphml", tmp_path / "corpus.graphml")
    assert written == tmp_path / "corpus.graphml" and written.is_file()
    assert written.read_text(encoding="utf-8").startswith("<?xml")
    (tmp_path / "old.json").write_text("old")
    [written] = export_graph(make_snapshot(), "json", tmp_path / "old.json")  # an existing file is replaced
    assert written == tmp_path / "old.json" and json.loads(written.read_text())["nodes"]
    (tmp_path / "folder.graphml").mkdir()
    [written] = export_graph(make_snapshot(), "graphml", tmp_path / "folder.graphml")
    assert written == tmp_path / "folder.graphml" / "graph.graphml"
    written = export_graph(make_snapshot(), "csv", tmp_path / "tables.csv")  # several files: a folder
    assert all(p.parent == tmp_path / "tables.csv" for p in written) and len(written) > 1
    assert sorted(p.name for p in tmp_path.iterdir()) == ["corpus.graphml", "folder.graphml", "old.json", "tables.csv"]


def test_export_files_get_the_mode_run_folder_files_get(tmp_path):
    old = os.umask(0o022)
    try:
        written = export_graph(make_snapshot(), "neo4j", tmp_path / "neo4j") + \
            export_graph(make_snapshot(), "turtle", tmp_path / "graph.ttl")
    finally:
        os.umask(old)
    assert written and {oct(p.stat().st_mode & 0o777) for p in written} == {oct(0o644)}


# Names, quotes and labels as users' documents produce them: quotes, line breaks, markup,
# backslashes, control characters, any script. (Valid Unicode: no lone surrogates, which
# neither UTF-8 files nor the store can hold.)
hostile = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1, max_size=30) | st.sampled_from(
    ['"quoted" \'single\'', "line\nbreak\r\nand\rreturn", "<tag a=\"1\">&amp;</tag>", "back\\slash\\u0041\\",
     "nul\x00bell\x07esc\x1b", "ünïcødé ✓ 日本 \U0001f600", "'); MATCH (n) DETACH DELETE n; //", "`tick`"])


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=hostile, relation=hostile, quote=hostile, alias=hostile, role=hostile, qualifier=hostile)
def test_hostile_strings_export_correctly_in_every_format(tmp_path_factory, name, relation, quote, alias, role,
                                                          qualifier):
    out = tmp_path_factory.mktemp("hostile")
    snap = make_snapshot(name=name, relation=relation, quote=quote, alias=alias, role=role, qualifier=qualifier)
    export_all(snap, out)

    data = json.loads((out / "graph.json").read_text(encoding="utf-8"))
    assert data["nodes"][0]["name"] == name and data["evidence"][0]["quote"] == quote

    nodes = read_csv(out / "nodes.csv")
    assert nodes[0]["name"] == name and json.loads(nodes[0]["aliases"]) == [alias]
    assert read_csv(out / "edges.csv")[0]["relation"] == relation
    assert read_csv(out / "evidence.csv")[0]["quote"] == quote
    assert {r["role"] for r in read_csv(out / "hyperedge_roles.csv")} == {role, "seller"}

    g = nx.read_graphml(out / "graph.graphml")
    assert g.number_of_nodes() == 6 and g.number_of_edges() == 13
    assert g.nodes["n_a"]["name"] == xml_safe(name)
    assert g.edges["n_a", "n_b", "e_1"]["relation"] == xml_safe(relation)

    ttl, jsonld = rdf_graphs(out)
    assert set(ttl) == set(jsonld)
    assert len(ttl) == len(triples(snap, ExportOptions()))
    kg = rdflib.Namespace(KG)
    base = "https://kgkit.dev/graph/t1/"
    assert str(ttl.value(rdflib.URIRef(base + "n_a"), kg.name)) == name
    assert str(ttl.value(rdflib.URIRef(base + "e_1"), kg.relation)) == relation
    assert str(ttl.value(rdflib.URIRef(base + "e_1/evidence/0"), kg.quote)) == quote

    script = (out / "neo4j" / "graph.cypher").read_text(encoding="utf-8")
    assert cypher_errors(script) == []
    nodes, rels = cypher_graph(script)
    assert (nodes, rels) == neo4j_csv_graph(out / "neo4j")
    assert nodes["n_a"][1]["name"] == name and rels["e_1"][3]["relation"] == relation
    rel = read_csv(out / "neo4j" / "relationships_edge.csv")
    assert rel[0][":TYPE"] == relationship_type(relation) and rel[0]["relation"] == relation


def store_snapshot(runs: Path, store: Path):
    """The run folders under ``runs`` added to a fresh store at ``store``, as its snapshot."""
    from kgkit.graph import GraphStore

    with GraphStore(store) as g:
        g.add(sorted(p for p in runs.iterdir() if p.is_dir()))
        return g.snapshot()


def test_run_folders_become_one_snapshot_and_export(tmp_path):
    """Two documents extracted offline share a party: one node, evidence from both."""
    from support.cli_support import kgkit

    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "supply.txt").write_text(
        'This Supply Agreement is entered into as of March 3, 2021 by and between Kestrel Farms LLC, an Oregon '
        'company ("Kestrel"), and Orbitline Foods Inc., a Delaware corporation ("Buyer"). Kestrel shall deliver '
        'produce every week.\n', encoding="utf-8")
    (docs / "lease.txt").write_text(
        'This Lease Agreement is entered into as of June 9, 2022 by and between Kestrel Farms LLC, an Oregon '
        'company ("Tenant"), and Harbor Storage Corp., a Washington corporation ("Landlord"). This Agreement is '
        'governed by the laws of the State of Oregon.\n', encoding="utf-8")
    runs = tmp_path / "runs"
    result = kgkit("extract", "--domain", "legal_contracts", "--view", "binary,nary,temporal,event",
                   "--out", str(runs), str(docs / "supply.txt"), str(docs / "lease.txt"))
    assert result.exit_code == 0, result.output
    snap = store_snapshot(runs, tmp_path / "graph.sqlite")
    assert len(snap.documents) == 2
    kestrel = [n for n in snap.nodes if n["name"] == "Kestrel Farms LLC"]
    assert len(kestrel) == 1 and len(kestrel[0]["documents"]) == 2
    assert {r["document"] for r in snap.evidence if r["item"] == kestrel[0]["id"]} == {d["id"] for d in snap.documents}
    assert snap.edges and snap.hyperedges and snap.events
    out = tmp_path / "export"
    export_all(snap, out)
    g = nx.read_graphml(out / "graph.graphml")
    vertices, links, values = expected_counts(snap)
    assert (g.number_of_nodes(), g.number_of_edges(), value_entries(g)) == (vertices, links, values)
    ttl, jsonld = rdf_graphs(out)
    assert set(ttl) == set(jsonld)
    assert cypher_errors((out / "neo4j" / "graph.cypher").read_text(encoding="utf-8")) == []
    # same folders, same snapshot
    assert comparable(store_snapshot(runs, tmp_path / "again.sqlite")) == comparable(snap)

    # the command reads the same store
    result = kgkit("graph", "export", str(tmp_path / "graph.sqlite"), "--format", "json", "-o", str(tmp_path / "cli"))
    assert result.exit_code == 0, result.output
    assert (tmp_path / "cli" / "graph.json").read_bytes() == (out / "graph.json").read_bytes()


@pytest.mark.corpus
def test_cuad_contracts_export_and_read_back_in_every_format(tmp_path):
    """Real contract text (quotes, section signs, odd spacing) through every format.
    Nothing is tuned or measured here, so the tune/report split does not apply."""
    from support.cli_support import kgkit
    from support.shared_data import DATA

    contracts = sorted((DATA / "cuad").glob("*.txt"))[:4]
    assert len(contracts) == 4
    runs = tmp_path / "runs"
    result = kgkit("extract", "--domain", "legal_contracts", "--view", "binary,nary,temporal,event",
                   "--out", str(runs), *map(str, contracts))
    assert result.exit_code == 0, result.output
    snap = store_snapshot(runs, tmp_path / "graph.sqlite")
    assert len(snap.documents) == 4 and snap.edges and snap.hyperedges and snap.events and snap.temporal
    out = tmp_path / "export"
    export_all(snap, out)
    g = nx.read_graphml(out / "graph.graphml")
    vertices, links, values = expected_counts(snap)
    assert (g.number_of_nodes(), g.number_of_edges(), value_entries(g)) == (vertices, links, values)
    names = {d["name"] for d in snap.documents}
    for _, _, data in g.edges(data=True):  # every edge names its documents and quotes its best evidence
        if data["kind"] in ("edge", "temporal"):
            assert set(json.loads(data["documents"])) <= names and data["documents"] != "[]" and data["quote"]
    ttl, jsonld = rdf_graphs(out)
    assert set(ttl) == set(jsonld) and len(ttl) == len(triples(snap, ExportOptions()))
    script = (out / "neo4j" / "graph.cypher").read_text(encoding="utf-8")
    assert cypher_errors(script) == []
    nodes, rels = cypher_graph(script)
    assert (nodes, rels) == neo4j_csv_graph(out / "neo4j")
    assert (len(nodes), len(rels)) == (vertices, links)
    assert any(label == "Party;Entity" for label, _ in nodes.values())
    for start, rel_type, end, props in rels.values():
        if rel_type not in ("ROLE", "MENTIONED_IN", "SUPPORTED_BY"):
            assert json.loads(props["documents"]) and props["quote"], (start, rel_type, end)
    assert len(read_csv(out / "evidence.csv")) == len(snap.evidence)
    assert [r["quote"] for r in read_csv(out / "evidence.csv")] == \
        [r["quote"] or "" for r in sorted(snap.evidence, key=lambda r: (r["item"], r["document"], r["chunk"],
                                                                         r["span"] or []))]


def test_export_command_hands_its_options_to_the_snapshot_provider(tmp_path):
    import click

    from kgkit.cli.graph_export import make_export_cli

    asked = []

    def provider(graph, tenant, config_path):
        asked.append((graph, tenant, config_path))
        return make_snapshot()

    cli = make_export_cli(provider, options=[click.option("--tenant"), click.option("--config", "config_path")])
    result = CliRunner().invoke(cli, ["my.db", "--format", "turtle", "-o", str(tmp_path), "--tenant", "acme"])
    assert result.exit_code == 0, result.output
    assert asked == [("my.db", "acme", None)]
    assert result.output == f"{tmp_path / 'graph.ttl'}\n"
    result = CliRunner().invoke(cli, ["--format", "json", "-o", str(tmp_path), "--config", "k.yaml"])
    assert result.exit_code == 0 and asked[-1] == (None, None, "k.yaml")
    bad = CliRunner().invoke(cli, ["my.db", "--format", "gml", "-o", str(tmp_path)])
    assert isinstance(bad.exception, InputError) and "did you mean 'graphml'?" == bad.exception.hint


def test_values_become_the_xsd_literal_their_form_names():
    from kgkit.graph.export.rdf import XSD, Lit, typed_value

    assert typed_value("2021-03-03") == Lit("2021-03-03", XSD + "date")
    assert typed_value("2021-03") == Lit("2021-03", XSD + "gYearMonth")
    assert typed_value("P2W") == Lit("P14D", XSD + "duration")  # xsd:duration has no weeks
    assert typed_value("P1Y6M") == Lit("P1Y6M", XSD + "duration")
    assert typed_value({"amount": 11000.0, "currency": "USD"}) == Lit("11000.000000", XSD + "decimal")
    assert typed_value("two years or so") is None and typed_value(None) is None
