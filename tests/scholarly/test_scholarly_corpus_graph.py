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
