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


def test_a_table_set_closer_than_the_line_reader_splits_is_read_as_rows_of_cells(tmp_path):
    """Columns 12-13 pt apart in 9 pt type, as LaTeX sets them: the line reader keeps each
    line whole (no table-row blocks at all), and the words' positions give the cells."""
    from kgkit.documents.layout import read_pdf_layout
    from kgkit.scholarly.paper import read_paper

    grid = [("Run", "Dev", "Test"), ("101", "81.0", "79.2"), ("102", "80.4", "78.8"), ("103", "77.9", "76.1")]
    page = [Run(72, 740, "We ran the system three times on the development and test papers.", size=10),
            Run(90, 700, "Table 1: Scores of three runs.", size=9)]
    for k, row in enumerate(grid):
        page += [Run(x, 680 - 11 * k, text, size=9) for x, text in zip((90, 118, 148), row)]
    page.append(Run(72, 610, "The second run is the one the rest of the paper reports on.", size=10))
    path = make_pdf(tmp_path / "close.pdf", [page])
    layout = read_pdf_layout(str(path), source=str(path))
    assert not [b for b in layout.blocks if b.kind == "table_row"]  # no line had a gap the reader splits at
    (table,) = [a for a in read_paper(layout).anchors if a.kind == "table"]
    assert table.rows == [list(row) for row in grid]
    assert table.as_dict()["rows"] == [list(row) for row in grid]  # the anchor payload the store keeps


def test_column_cuts_need_the_gap_in_many_lines_and_keep_a_long_label_in_its_cell():
    from kgkit.documents.layout.model import Line, Segment
    from kgkit.documents.layout.tables import column_cuts, table_cells

    def line(y: float, *words: tuple[str, float, float]) -> Line:
        segs = tuple(Segment(t, a, b) for t, a, b in words)
        return Line(text=" ".join(t for t, _, _ in words), page=1, bbox=(words[0][1], y, words[-1][2], y + 9),
                    size=9, bold=False, column=0, segments=segs, words=segs)

    rows = [line(100, ("Model", 90, 115), ("F1", 140, 150)),
            line(111, ("Ours", 90, 110), ("81.0", 140, 158)),
            line(122, ("A", 90, 95), ("much", 97, 118), ("longer", 120, 145), ("70.2", 150, 168)),
            line(133, ("Flat", 90, 106), ("80.9", 140, 158)), line(144, ("Rules", 90, 113), ("79.3", 140, 158))]
    cuts = column_cuts(rows)
    assert len(cuts) == 1 and 118 < cuts[0] < 140  # one row's long label does not hide the column
    assert table_cells(rows) == [["Model", "F1"], ["Ours", "81.0"], ["A much longer", "70.2"], ["Flat", "80.9"],
                                 ["Rules", "79.3"]]
    prose = [line(100, ("the", 90, 102), ("words", 104, 125), ("run", 127, 140)),
             line(111, ("on", 90, 99), ("and", 101, 115), ("on", 117, 126))]
    assert column_cuts(prose) == [] and table_cells(prose) == []
