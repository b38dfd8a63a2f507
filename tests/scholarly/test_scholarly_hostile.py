"""Malformed and hostile PDFs give a result or a clear error, never a traceback: no text
layer, a rotated page, a caption-looking line in body text, 2,000 references, a reference
list set as a table, a corrupt file."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.documents import load_document
from kgkit.documents.layout import read_pdf_layout
from kgkit.errors import InputError
from kgkit.scholarly.paper import read_paper
from support.pdf_maker import Run, column, make_pdf, two_column_paper

pytest.importorskip("pdfplumber")


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))


def extract(tmp_path, pdf):
    return CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(pdf), "--out", str(tmp_path / "out")])


def test_no_text_layer_is_a_clear_error_with_exit_2(tmp_path):
    pdf = make_pdf(tmp_path / "scan.pdf", [[], []])
    with pytest.raises(InputError, match="has no text layer; it needs OCR first"):
        load_document(pdf, layout=True)
    result = extract(tmp_path, pdf)
    assert result.exit_code == 2 and "no text layer" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "out" / "scan").exists()


def test_corrupt_pdf_is_a_clear_error(tmp_path):
    pdf = two_column_paper(tmp_path / "whole.pdf")
    cut = tmp_path / "cut.pdf"
    cut.write_bytes(pdf.read_bytes()[:900])
    result = extract(tmp_path, cut)
    assert result.exit_code == 2 and "cut.pdf" in result.output and "Traceback" not in result.output


def test_rotated_pages_are_read(tmp_path):
    lines, _ = column(72, 700, ["1 Introduction", "Text on a page turned for display.", "More of it [1]."])
    pdf = make_pdf(tmp_path / "turned.pdf", [lines, lines], rotate={0: 90, 1: 270})
    doc = load_document(pdf, layout=True)
    assert "Text on a page turned for display." in doc.text
    assert [p.number for p in doc.pages] == [1, 2]


def test_caption_looking_body_line_is_body_text(tmp_path):
    lines, _ = column(72, 700, ["Introduction", "Figure 3 shows that the method works, and",
                                "Table 2 lists the numbers we measured.", "Figure 3 and the table agree."])
    layout = read_pdf_layout(str(make_pdf(tmp_path / "body.pdf", [lines])), source="body.pdf")
    assert [a for a in read_paper(layout).anchors if a.label] == []


def test_two_thousand_references(tmp_path):
    refs = [f"[{i}] A. Writer{i}. {1900 + i % 120}. A work numbered {i}. Journal of Tests." for i in range(1, 2001)]
    pages, per_page = [], 60
    for start in range(0, len(refs), per_page):
        chunk = ([("References", {"bold": True, "size": 11})] if start == 0 else []) + refs[start:start + per_page]
        runs, _ = column(72, 720, chunk, size=8, leading=10)
        pages.append(runs)
    body, _ = column(72, 740, [("1 Introduction", {"bold": True, "size": 11}),
                               "Many works came before [1-3] and after [1999, 2000]."], size=10)
    pdf = make_pdf(tmp_path / "long.pdf", [body] + pages)
    paper = read_paper(read_pdf_layout(str(pdf), source="long.pdf"))  # no wall-time bound: the machine is shared
    assert len(paper.references) == 2000 and paper.references[-1].key == "[2000]"
    linked = [k for c in paper.citations for k in c.refs]
    assert linked == ["[1]", "[2]", "[3]", "[1999]", "[2000]"]


def test_references_set_as_a_table(tmp_path):
    head, _ = column(72, 740, [("1 Introduction", {"bold": True, "size": 11}), "As shown before [2].",
                               ("References", {"bold": True, "size": 11, "gap": 10})])
    cells = []
    for i, (who, what) in enumerate([("A. Writer. 2001.", "First table work."), ("B. Maker. 2002.", "Second one."),
                                     ("C. Doer. 2003.", "Third one.")], start=1):
        y = 680 - 14 * i
        cells += [Run(72, y, f"[{i}]", size=9), Run(120, y, who, size=9), Run(260, y, what, size=9)]
    pdf = make_pdf(tmp_path / "table_refs.pdf", [head + cells])
    paper = read_paper(read_pdf_layout(str(pdf), source="table_refs.pdf"))
    assert [r.key for r in paper.references] == ["[1]", "[2]", "[3]"]
    assert paper.citations[0].refs == ["[2]"]


def test_extract_on_a_hostile_paper_writes_a_complete_run(tmp_path):
    refs = [f"[{i}] A. Author{i}. 20{10 + i}. Title {i}. Journal." for i in range(1, 13)]
    pdf = two_column_paper(tmp_path / "odd.pdf", references=refs, gutter_numbers=True, extra_pages=2)
    result = extract(tmp_path, pdf)
    assert result.exit_code == 0, result.output
    data = json.loads((tmp_path / "out" / "odd" / "structure.json").read_text(encoding="utf-8"))
    assert len(data["references"]) == 12


def test_a_scanned_page_is_read_by_ocr_with_its_confidence(tmp_path):
    import shutil

    import pypdfium2 as pdfium

    from support.optional_parts import unavailable

    if shutil.which("tesseract") is None:
        unavailable("tesseract", "needs Debian's tesseract-ocr on PATH")

    source = two_column_paper(tmp_path / "source.pdf")
    document = pdfium.PdfDocument(str(source))
    try:
        image = document[0].render(scale=200 / 72).to_pil().convert("RGB")
    finally:
        document.close()
    scan = tmp_path / "scan.pdf"
    image.save(scan, "PDF", resolution=200)  # an image only: no text layer at all
    doc = load_document(scan, layout=True)
    (note,) = [w for w in doc.warnings if "read by OCR" in w]
    assert int(note.split("confidence ")[1].split("/")[0]) >= 60
    assert "Graph Methods for Citation Analysis" in doc.text and "Introduction" in doc.text
    assert all(doc.text[b.start:b.end] == b.text for b in doc.layout.blocks)


def test_a_library_error_under_a_folder_named_kgkit_is_not_ours():
    """A clone named kgkit holds its venv's pdfminer under ``…/kgkit/.venv/``: an error raised
    there is the file's fault, not a bug of kgkit's to re-raise."""
    from kgkit.documents.layout.reader import _raised_in_kgkit

    scope: dict = {}
    exec(compile("def fail():\n    raise ValueError('Unexpected EOF')\n",
                 "/tmp/clone/kgkit/.venv/lib/python3.11/site-packages/pdfminer/psparser.py", "exec"), scope)
    try:
        scope["fail"]()
    except ValueError as exc:
        assert not _raised_in_kgkit(exc)
    try:
        read_paper(None)  # kgkit's own frame is ours
    except Exception as exc:  # noqa: BLE001 - whatever it raises, it is raised in kgkit
        assert _raised_in_kgkit(exc)
