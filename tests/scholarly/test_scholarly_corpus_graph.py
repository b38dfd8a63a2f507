"""Two papers that cite each other, extracted with the scholarly domain and added to one
corpus graph: each paper's reference to the other resolves to the other's stored paper
(here by title, year and first author: neither reference prints a DOI, one paper does)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from support.graph_support import graph_url, postgres  # noqa: F401  (fixtures)
from kgkit.cli import cli
from kgkit.graph.store import GraphStore
from kgkit.query import Query
from support.pdf_maker import two_column_paper

pytest.importorskip("pdfplumber")


def test_citations_between_two_stored_papers_link_to_them(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    a = two_column_paper(tmp_path / "a.pdf", title="Graph Methods for Citation Analysis",
                         authors="Ada Lovelace1, Alan Turing2 and Grace Hopper1",
                         venue="Proceedings of the Example Workshop 2020, pages 1-9. doi:10.5555/example.2020.1",
                         references=["[1] N. Park and O. Reed. 2021. Typed links between papers. In Proc. of Z.",
                                     "[2] C. Brown. 2019. A survey of citation analysis. Journal of Examples."])
    b = two_column_paper(tmp_path / "b.pdf", title="Typed links between papers",
                         authors="Naomi Park1 and Omar Reed2",
                         venue="Proceedings of the Example Conference 2021, pages 10-19",
                         references=["[1] A. Lovelace, A. Turing, and G. Hopper. 2020. Graph methods for citation",
                                     "analysis. In Proc. of the Example Workshop.",
                                     "[2] C. Brown. 2019. A survey of citation analysis. Journal of Examples."])
    out = tmp_path / "out"
    for pdf in (a, b):
        result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(out)])
        assert result.exit_code == 0, result.output
    with GraphStore(tmp_path / "graph.db") as store:
        store.add([out / "a", out / "b"])
        snap = store.snapshot()
    papers = {n["id"]: n for n in snap.nodes if n["type"] == "Paper" and n["id"].endswith("/paper")}
    assert len(papers) == 2
    by_title = {n["name"]: node for node, n in papers.items()}
    cites = {(e["head"], e["tail"]) for e in snap.edges if e["relation"] == "CITES"}
    a_id, b_id = by_title["Graph Methods for Citation Analysis"], by_title["Typed links between papers"]
    assert (a_id, b_id) in cites and (b_id, a_id) in cites
    brown = {t for h, t in cites if t not in (a_id, b_id)}
    assert len(brown) == 1  # the work both cite is one node of the graph


def test_lineage_runs_across_stored_papers_on_both_stores(graph_url, tmp_path, monkeypatch):
    """A cites B, B cites C: O2 lineage from A along CITES reaches B, then C, each a stored
    paper met through the other paper's reference list (by DOI for C, by title, year and
    first author for B); backward from C it comes back through B to A."""
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    papers = {
        "a": dict(title="Graph Methods for Citation Analysis", authors="Ada Lovelace1 and Alan Turing2",
                  venue="Proceedings of the Example Workshop 2022, pages 1-9",
                  references=["[1] N. Park and O. Reed. 2021. Typed links between papers. In Proc. of Z."]),
        "b": dict(title="Typed links between papers", authors="Naomi Park1 and Omar Reed2",
                  venue="Proceedings of the Example Conference 2021, pages 10-19",
                  references=["[1] E. Stone. 2019. Counting references by hand. Journal of Examples.",
                              "doi:10.5555/example.2019.7"]),
        "c": dict(title="Counting references by hand", authors="Edith Stone1",
                  venue="Journal of Examples 2019, pages 3-8. doi:10.5555/example.2019.7",
                  references=["[1] C. Brown. 2015. A survey of citation analysis. Journal of Examples."]),
    }
    out = tmp_path / "out"
    for name, spec in papers.items():
        pdf = two_column_paper(tmp_path / f"{name}.pdf", **spec)
        result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(out)])
        assert result.exit_code == 0, result.output
    with GraphStore(graph_url) as store:
        store.add([out / name for name in papers])
        q = Query(store)
        a, b, c = (q.find(papers[x]["title"], types=["Paper"]).nodes[0].id for x in "abc")
        assert len({a, b, c}) == 3
        forward = q.lineage(a, relations=["CITES"], hops=3)
        hops = {n.id: n.hops for n in forward.nodes}
        assert hops[b] == 1 and hops[c] == 2
        assert [a, b, c] in forward.paths
        backward = q.lineage(c, relations=["CITES"], direction="backward", hops=3)
        assert {n.id: n.hops for n in backward.nodes} == {c: 0, b: 1, a: 2}
        # each hop is evidenced by the citing paper's own reference entry
        quotes = {ev.quote for item in forward.items for ev in item.evidence}
        assert any("Typed links between papers" in (qt or "") for qt in quotes)
        assert any("Counting references by hand" in (qt or "") for qt in quotes)


def _typed_citation_papers(tmp_path):
    """Paper A cites B (stored too) once, in the introduction's background sentence, and two
    other works: one it says it used, one its related work extends, each cited twice."""
    a = two_column_paper(tmp_path / "a.pdf", title="Graph Methods for Citation Analysis",
                         authors="Ada Lovelace1 and Alan Turing2",
                         venue="Proceedings of the Example Workshop 2022, pages 1-9",
                         references=["[1] N. Park and O. Reed. 2021. Typed links between papers. In Proc. of Z.",
                                     "[2] C. Brown. 2019. A survey of citation analysis. Journal of Examples.",
                                     "[3] D. Green. 2018. Reading order in two columns. In Proc. of Layout."])
    b = two_column_paper(tmp_path / "b.pdf", title="Typed links between papers",
                         authors="Naomi Park1 and Omar Reed2",
                         venue="Proceedings of the Example Conference 2021, pages 10-19",
                         references=["[1] C. Brown. 2019. A survey of citation analysis. Journal of Examples."])
    out = tmp_path / "out"
    for pdf in (a, b):
        result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(out)])
        assert result.exit_code == 0, result.output
    return out


def test_cites_edges_keep_intent_and_strength_on_both_stores(graph_url, tmp_path, monkeypatch):
    """`kgkit graph add` keeps each citation's intent, its SciCite and ACL-ARC labels, its
    pooled strength and its mentions on the stored CITES edge, with each citing sentence as
    evidence: in the snapshot, in every export format and in `kgkit query` answers."""
    import csv
    import json

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    out = _typed_citation_papers(tmp_path)
    added = CliRunner().invoke(cli, ["graph", "add", graph_url, str(out / "a"), str(out / "b")])
    assert added.exit_code == 0, added.output
    with GraphStore(graph_url) as store:
        snap = store.snapshot()
        q = Query(store)
        a = q.find("Graph Methods for Citation Analysis", types=["Paper"]).nodes[0].id
        b = q.find("Typed links between papers", types=["Paper"]).nodes[0].id
        answer = q.neighbours([a], relations=["CITES"], hops=1)
    names = {n["id"]: n["name"] for n in snap.nodes}
    cites = {names[e["tail"]]: e for e in snap.edges if e["relation"] == "CITES" and e["head"] == a}
    assert set(cites) == {"Typed links between papers", "A survey of citation analysis",
                          "Reading order in two columns"}
    to_b = cites["Typed links between papers"]
    assert to_b["tail"] == b  # the reference resolved to the stored paper, and the edge says how it is cited
    assert to_b["properties"] == {"kind": "structural", "intent": "background", "scicite": "background", "aclarc": "Background",
                                  "function": "background", "strength": 2, "strength_label": "contextual",
                                  "mentions": 1, "sections": ["1 Introduction"]}
    used = cites["A survey of citation analysis"]["properties"]
    assert (used["function"], used["intent"], used["scicite"], used["aclarc"]) == ("uses", "extend", "method", "Uses")
    assert (used["strength"], used["strength_label"], used["mentions"]) == (4, "strong", 2)
    assert used["sections"] == ["1 Introduction", "2 Related Work"]
    extended = cites["Reading order in two columns"]["properties"]
    assert (extended["function"], extended["aclarc"], extended["strength"]) == ("extends", "Extends", 4)
    # each citing sentence is evidence of its edge, with its page and span in the shown text
    quotes = {ev["quote"]: ev for ev in snap.evidence if ev["item"] == cites["A survey of citation analysis"]["id"]}
    assert "Earlier work used a single edge type [2]." in quotes
    assert quotes["Earlier work used a single edge type [2]."]["page"] == 1
    assert quotes["Earlier work used a single edge type [2]."]["span"] is not None
    # kgkit query: the items of the answer carry the properties, as JSON and as the table
    items = {i.ends["tail"][0]: i for i in answer.items}
    assert items[b].properties["strength_label"] == "contextual"
    shown = CliRunner().invoke(cli, ["query", "neighbours", graph_url, a, "--relation", "CITES", "--hops", "1",
                                     "--json"])
    assert shown.exit_code == 0, shown.output
    by_tail = {i["ends"]["tail"][0]: i for i in json.loads(shown.output)["items"]}
    assert by_tail[b]["properties"]["intent"] == "background"
    table = CliRunner().invoke(cli, ["query", "neighbours", graph_url, a, "--relation", "CITES", "--hops", "1"])
    assert "strength_label strong" in table.output and "intent extend" in table.output
    # exports: JSON, CSV, GraphML, Neo4j and Turtle all hold them
    for fmt in ("json", "csv", "graphml", "neo4j", "turtle"):
        done = CliRunner().invoke(cli, ["graph", "export", graph_url, "--format", fmt, "--out",
                                        str(tmp_path / f"ex_{fmt}")])
        assert done.exit_code == 0, done.output
    graph_json = json.loads((tmp_path / "ex_json" / "graph.json").read_text(encoding="utf-8"))
    assert {e["id"]: e.get("properties") for e in graph_json["edges"]}[to_b["id"]] == to_b["properties"]
    with (tmp_path / "ex_csv" / "edge_properties.csv").open(encoding="utf-8", newline="") as fh:
        rows = {(r["edge"], r["name"]): r["value"] for r in csv.DictReader(fh)}
    assert rows[(to_b["id"], "strength")] == "2" and rows[(to_b["id"], "intent")] == "background"
    assert rows[(to_b["id"], "sections")] == '["1 Introduction"]'
    assert rows[(to_b["id"], "kind")] == "structural"  # materialised from the reference list, not read from text
    graphml = (tmp_path / "ex_graphml" / "graph.graphml").read_text(encoding="utf-8")
    assert 'attr.name="property.strength" attr.type="int"' in graphml
    neo4j = "".join(p.read_text(encoding="utf-8") for p in (tmp_path / "ex_neo4j").rglob("*.csv"))
    assert "property_strength_label" in neo4j and "contextual" in neo4j
    turtle = (tmp_path / "ex_turtle" / "graph.ttl").read_text(encoding="utf-8")
    assert "propertyName" in turtle and '"contextual"' in turtle


def test_a_damaged_cited_work_keeps_its_link_and_the_properties_it_can(tmp_path, monkeypatch):
    """A structure.json whose cited work has a strength in the wrong type, no intent and
    evidence that is not a list still adds its CITES edge, with what is usable."""
    import json

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    out = _typed_citation_papers(tmp_path)
    path = out / "a" / "structure.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    for ref in data["references"]:
        ref.update(strength="4", intent=None, evidence={"not": "a list"}, sentence_span=None)
    path.write_text(json.dumps(data), encoding="utf-8")
    with GraphStore(tmp_path / "g.sqlite") as store:
        store.add([out / "a"])
        snap = store.snapshot()
    cites = [e for e in snap.edges if e["relation"] == "CITES"]
    assert len(cites) == 3
    for edge in cites:
        assert "strength" not in edge["properties"] and "intent" not in edge["properties"]
        assert edge["properties"]["strength_label"] and "sections" not in edge["properties"]


def test_authors_and_venue_are_structural_edges_of_the_stored_paper(tmp_path, monkeypatch):
    """Module A in the corpus graph: AUTHORED_BY to each author in printed order and
    PUBLISHED_IN to the venue, each marked structural, with the first page as evidence."""
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    out = _typed_citation_papers(tmp_path)
    with GraphStore(tmp_path / "g.sqlite") as store:
        store.add([out / "a", out / "b"])
        snap = store.snapshot()
        a = Query(store).find("Graph Methods for Citation Analysis", types=["Paper"]).nodes[0].id
    names = {n["id"]: n for n in snap.nodes}
    authored = sorted((e["properties"]["order"], names[e["tail"]]["name"], names[e["tail"]]["type"], e["properties"]["kind"])
                      for e in snap.edges if e["relation"] == "AUTHORED_BY" and e["head"] == a)
    assert authored == [(1, "Ada Lovelace", "Author", "structural"), (2, "Alan Turing", "Author", "structural")]
    (venue,) = [e for e in snap.edges if e["relation"] == "PUBLISHED_IN" and e["head"] == a]
    assert names[venue["tail"]]["type"] == "Venue" and "Example Workshop" in names[venue["tail"]]["name"]
    assert {ev["page"] for ev in snap.evidence if ev["item"] == venue["id"]} == {1}


def test_one_edge_stated_twice_shows_the_stronger_citation_whatever_the_read_order():
    from kgkit.graph.assemble import merge_properties

    weak = {"intent": "background", "strength": 2}
    strong = {"intent": "extend", "strength": 4}
    assert merge_properties(weak, strong) == merge_properties(strong, weak) == strong
    assert merge_properties(None, weak) == weak and merge_properties(weak, None) == weak
    tie_a, tie_b = {"intent": "support", "strength": 3}, {"intent": "contrast", "strength": 3}
    assert merge_properties(tie_a, tie_b) == merge_properties(tie_b, tie_a)


def test_a_paper_that_prints_no_year_is_stored_and_met_by_the_references_naming_it(tmp_path, monkeypatch):
    """No DOI, no arXiv id and no year on A's first page: A still has its Paper node with its
    typed CITES edges, and B's reference to A (which prints a year) resolves to it by title
    and first author."""
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    a = two_column_paper(tmp_path / "a.pdf", title="Graph Methods for Citation Analysis",
                         authors="Ada Lovelace1 and Alan Turing2",
                         references=["[1] C. Brown. 2019. A survey of citation analysis. Journal of Examples."])
    b = two_column_paper(tmp_path / "b.pdf", title="Typed links between papers", authors="Naomi Park1 and Omar Reed2",
                         venue="Proceedings of the Example Conference 2021, pages 10-19",
                         references=["[1] A. Lovelace and A. Turing. 2020. Graph methods for citation analysis. In",
                                     "Proc. of the Example Workshop."])
    out = tmp_path / "out"
    for pdf in (a, b):
        result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(out)])
        assert result.exit_code == 0, result.output
    with GraphStore(tmp_path / "g.sqlite") as store:
        store.add([out / "a", out / "b"])
        snap = store.snapshot()
    papers = {n["name"].lower(): n["id"] for n in snap.nodes if n["type"] == "Paper"}
    a_id, b_id = papers["graph methods for citation analysis"], papers["typed links between papers"]
    cites = {(e["head"], e["tail"]): e for e in snap.edges if e["relation"] == "CITES"}
    assert (b_id, a_id) in cites
    assert any(head == a_id and e["properties"]["strength"] >= 1 for (head, _), e in cites.items())


def test_a_run_stored_by_an_older_reader_is_read_again_when_re_added(tmp_path, monkeypatch):
    """The store's fingerprint of a run includes the version of what it takes from
    structure.json: a folder added before CITES edges kept their properties is replaced, not
    skipped as unchanged, when it is added again."""
    import kgkit.scholarly.corpus as corpus

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    out = _typed_citation_papers(tmp_path)
    with GraphStore(tmp_path / "g.sqlite") as store:
        with monkeypatch.context() as m:
            m.setattr(corpus, "READ_VERSION", b"structure.json")
            assert [r.status for r in store.add([out / "a"])] == ["added"]
        assert [r.status for r in store.add([out / "a"])] == ["replaced"]
        assert [r.status for r in store.add([out / "a"])] == ["unchanged"]


def test_module_a_and_d_come_in_as_structural_edges_affiliations_tied_by_their_markers(tmp_path, monkeypatch):
    """"Ada Lovelace1, Alan Turing2 and Grace Hopper1" over "1 Department …" and "2 Institute
    …": each author AFFILIATED_WITH the affiliation their marker names, in structure.json
    and in the store; every edge modules A and D materialise is tagged structural."""
    import json

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    pdf = two_column_paper(tmp_path / "a.pdf", venue="Proceedings of the Example Workshop 2020, pages 1-9")
    result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    graph = json.loads((tmp_path / "out" / "a" / "structure.json").read_text())["graph"]
    names = {n["id"]: n.get("name") or "" for n in graph["nodes"]}
    affiliated = sorted((names[e["source"]], names[e["target"]].split(",")[0]) for e in graph["edges"]
                        if e["type"] == "AFFILIATED_WITH")
    assert affiliated == [("Ada Lovelace", "1 Department of Computing"), ("Alan Turing", "2 Institute of Logic"),
                          ("Grace Hopper", "1 Department of Computing")]
    module_a_d = [e for e in graph["edges"] if e["type"] in ("AUTHORED_BY", "AFFILIATED_WITH", "PUBLISHED_IN", "CITES")]
    assert {e["type"] for e in module_a_d} == {"AUTHORED_BY", "AFFILIATED_WITH", "PUBLISHED_IN", "CITES"}
    assert {e["kind"] for e in module_a_d} == {"structural"}
    with GraphStore(tmp_path / "g.sqlite") as store:
        store.add([tmp_path / "out" / "a"])
        snap = store.snapshot()
    stored = {n["id"]: n for n in snap.nodes}
    in_store = sorted((stored[e["head"]]["name"], stored[e["tail"]]["type"], e["properties"]["kind"])
                      for e in snap.edges if e["relation"] == "AFFILIATED_WITH")
    assert in_store == [("Ada Lovelace", "Affiliation", "structural"), ("Alan Turing", "Affiliation", "structural"),
                        ("Grace Hopper", "Affiliation", "structural")]
    assert {e["properties"]["kind"] for e in snap.edges if e["relation"] in ("CITES", "PUBLISHED_IN")} == {"structural"}
