"""Two papers that cite each other, extracted with the scholarly domain and added to one
corpus graph: each paper's reference to the other resolves to the other's stored paper
(here by title, year and first author: neither reference prints a DOI, one paper does)."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.graph.store import GraphStore
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
