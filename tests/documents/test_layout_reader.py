"""The layout reader on PDFs made at run time (tests/support/pdf_maker.py): reading order across
two columns, running heads, page numbers and line-number gutters out, headings with
numbers and levels, captions with labels, a numbered equation, table rows, hyphenation
and ligatures mended, spans that index the shown text, chunks that respect sections."""
from __future__ import annotations

import pytest

from kgkit.documents import chunk_document, load_document
from kgkit.documents.layout.blocks import caption_label, join_lines
from support.pdf_maker import Run, make_pdf, two_column_paper

pytest.importorskip("pdfplumber")

REFS = [f"[{i}] A. Author{i}. 20{10 + i}. Title number {i} of a work. Journal {i}." for i in range(1, 13)]


@pytest.fixture(scope="module")
def paper(tmp_path_factory):
    path = two_column_paper(tmp_path_factory.mktemp("layout") / "paper.pdf", references=REFS,
                            gutter_numbers=True, extra_pages=1)
    return load_document(path, layout=True)


def kinds(doc, kind):
    return [b for b in doc.layout.blocks if b.kind == kind]


def test_left_column_is_read_before_the_right_one(paper):
    text = paper.text
    assert text.index("Intent labels extend this view") < text.index("Figure 1: Overview")
    assert "cite each other and propose a graph method" in text  # one paragraph, not interleaved


def test_running_heads_page_numbers_and_gutter_numbers_leave_the_text(paper):
    assert "Preprint" not in paper.text
    assert "[1] A. Author1" in paper.text and "2 [1]" not in paper.text
    assert any("line number(s)" in w for w in paper.warnings)
    assert any(line.text.startswith("Preprint") for line in paper.layout.furniture)


def test_headings_carry_number_level_and_the_sections_of_blocks(paper):
    heads = [(b.number, b.text, b.level) for b in kinds(paper, "heading")]
    assert heads[:5] == [(None, "Abstract", 1), ("1", "Introduction", 1), ("2", "Related Work", 1),
                         ("2.1", "Typed Citations", 2), (None, "References", 1)]
    block = next(b for b in paper.layout.blocks if b.text.startswith("Intent labels"))
    assert block.section == "2.1 Typed Citations" and block.section_path == ["2 Related Work", "2.1 Typed Citations"]


def test_captions_have_labels_and_a_sentence_about_a_table_is_no_caption(paper):
    assert [(b.label, b.printed_label) for b in kinds(paper, "caption")] == [("Figure 1", "Figure 1:"),
                                                                          ("Table 1", "Table 1:")]
    body = next(b for b in paper.layout.blocks if b.text.startswith("Table 2 shows"))
    assert body.kind == "paragraph"


def test_equation_number_and_table_rows(paper):
    (eq,) = kinds(paper, "equation")
    assert (eq.label, eq.printed_label, eq.page) == ("Equation 1", "(1)", 1)
    rows = [r for b in kinds(paper, "table_row") for r in b.rows]
    assert ["Ours", "0.91", "3s"] in rows


def test_every_block_has_page_bbox_and_a_span_of_the_shown_text(paper):
    for b in paper.layout.blocks:
        assert paper.text[b.start:b.end] == b.text
        assert b.page in (1, 2, 3) and b.bbox[0] < b.bbox[2] and b.bbox[1] < b.bbox[3]
        assert b.page in paper.pages_for(b.start, b.end)


def test_hyphenation_is_mended(paper):
    assert "hyphenated idea" in paper.text


def test_chunks_never_span_a_section_start(paper):
    starts = set(paper.boundaries)
    assert starts
    for chunk in chunk_document(paper, size=400, overlap=60):
        assert paper.text[chunk.start:chunk.end] == chunk.text
        assert not any(chunk.start < s < chunk.end for s in starts)


def test_ligature_glyphs_become_letters(tmp_path):
    path = make_pdf(tmp_path / "lig.pdf", [[Run(72, 700, "The \x80rst de\x80nition")]], to_unicode={0x80: "FB01"})
    assert load_document(path, layout=True).text == "The first definition"


@pytest.mark.parametrize("text, found", [
    ("Figure 3: A pipeline.", ("figure", "Figure 3", "Figure 3:")),
    ("Fig. 2. Heat flow", ("figure", "Figure 2", "Fig. 2.")),
    ("Table 4 Characteristics of the sample", ("table", "Table 4", "Table 4")),
    ("Table 2 shows the results", None),
    ("Figure 5 and Figure 6 compare", None),
    ("Tables are useful", None),
])
def test_caption_label(text, found):
    assert caption_label(text) == found


@pytest.mark.parametrize("a, b, joined", [
    ("hyphen-", "ation", "hyphenation"), ("GPT-", "4 works", "GPT-4 works"), ("plain", "text", "plain text"),
])
def test_join_lines(a, b, joined):
    assert join_lines(a, b) == joined


def test_markdown_headings_are_section_boundaries(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("# Title\n\nIntro.\n\n## Methods\n\nText.\n\n```\n# not a heading\n```\n\n## Results\n\nMore.\n",
                    encoding="utf-8")
    doc = load_document(path, layout=True)
    assert [doc.text[b:b + 10] for b in doc.boundaries] == ["## Methods", "## Results"]
    assert load_document(path).boundaries == ()


def test_html_headings_are_section_boundaries(tmp_path):
    path = tmp_path / "page.html"
    path.write_text("<html><head><title>T</title></head><body><h1>Guide</h1><p>Intro text.</p>"
                    "<h2>Set&nbsp;up</h2><p>Install it.</p><h2>Use</h2><p>Run it. Use it well.</p></body></html>",
                    encoding="utf-8")
    doc = load_document(path, layout=True)
    assert [doc.text[b:b + 6] for b in doc.boundaries] == ["Set up", "Use\n\nR"]
    assert load_document(path).boundaries == ()
