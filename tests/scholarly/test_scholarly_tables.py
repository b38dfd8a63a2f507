"""Two tables stacked on one page with a caption between them (captions set under their
tables, as many templates do) each read their own rows: on PDFs of our own made at run
time, never the same rows for two tables."""
from __future__ import annotations

import pytest

from support.pdf_maker import Run, make_pdf

pytest.importorskip("pdfplumber")


def _cells(y: float, cells: list[str], xs=(90, 200, 300)) -> list[Run]:
    return [Run(x, y, text, size=9) for x, text in zip(xs, cells)]


def _tables(path):
    from kgkit.documents.layout import read_pdf_layout
    from kgkit.scholarly.paper import read_paper

    paper = read_paper(read_pdf_layout(str(path), source=str(path)))
    return {a.label: a.rows for a in paper.anchors if a.kind == "table"}


def test_a_table_the_layer_gives_as_text_does_not_take_the_next_tables_rows(tmp_path):
    """Table 1's figures are single runs (no cells to split), Table 2's rows are cells and
    lie nearer its own caption below them than Table 1's caption above them."""
    page = [Run(72, 740, "Agreement of the annotators on each kind of item.", size=10),
            Run(110, 712, "Events 0.87", size=9), Run(110, 701, "Times 0.91", size=9),
            Run(90, 682, "Table 1: Agreement between the two annotators.", size=9),
            *_cells(656, ["Corpus", "Words", "Kind"]),
            *_cells(645, ["Harbour news", "61,418", "Gold"]),
            *_cells(634, ["River notes", "33,973", "Silver"]),
            Run(90, 614, "Table 2: The corpora we built.", size=9),
            Run(72, 580, "The rest of the page is ordinary prose about the two tables above.", size=10)]
    rows = _tables(make_pdf(tmp_path / "stacked.pdf", [page]))
    assert rows["Table 2"] == [["Corpus", "Words", "Kind"], ["Harbour news", "61,418", "Gold"],
                               ["River notes", "33,973", "Silver"]]
    assert rows["Table 1"] != rows["Table 2"]


def test_two_tables_of_cells_each_keep_their_own_rows(tmp_path):
    """Table 1 ends in a line the layer gives as one run, right above its caption; Table 2
    begins closer under Table 1's caption than Table 1's first row of cells is above it."""
    page = [*_cells(740, ["System", "F1", "P"]),
            *_cells(729, ["Ours", "81.0", "81.4"]),
            *_cells(718, ["Flat", "80.9", "81.0"]),
            *_cells(707, ["Rules", "79.3", "80.7"]),
            Run(90, 696, "Baseline from the earlier round 63.9 78.9", size=9),
            Run(100, 683, "Table 1: Entity extraction.", size=9),
            *_cells(668, ["System", "F1", "P"]),
            *_cells(657, ["Tree", "30.9", "34.0"]),
            *_cells(646, ["Chain", "29.7", "34.4"]),
            Run(90, 635, "Baseline from the earlier round 19.0 17.9", size=9),
            Run(90, 622, "Table 2: Relation extraction.", size=9)]
    rows = _tables(make_pdf(tmp_path / "cells.pdf", [page]))
    assert ["Ours", "81.0", "81.4"] in rows["Table 1"] and ["Tree", "30.9", "34.0"] not in rows["Table 1"]
    assert ["Tree", "30.9", "34.0"] in rows["Table 2"] and ["Ours", "81.0", "81.4"] not in rows["Table 2"]
