"""Word documents: paragraphs and tables in order, headings as section starts under
reading: layout, a damaged file as a clear error."""
from __future__ import annotations

import pytest

from kgkit.documents import load_document
from kgkit.errors import InputError

docx = pytest.importorskip("docx")


def _write(path):
    document = docx.Document()
    document.add_heading("Field Notes", level=0)
    document.add_paragraph("The survey ran in spring.")
    document.add_heading("Methods", level=1)
    document.add_paragraph("We counted birds at dawn.")
    table = document.add_table(rows=2, cols=2)
    for r, row in enumerate([("Site", "Count"), ("North", "12")]):
        for c, value in enumerate(row):
            table.cell(r, c).text = value
    document.add_heading("Results", level=1)
    document.add_paragraph("North had the most.")
    document.save(path)
    return path


def test_docx_text_title_tables_and_sections(tmp_path):
    path = _write(tmp_path / "notes.docx")
    doc = load_document(path, layout=True)
    assert doc.media_type.endswith("wordprocessingml.document") and doc.title == "Field Notes"
    assert doc.text == ("Field Notes\n\nThe survey ran in spring.\n\nMethods\n\nWe counted birds at dawn.\n\n"
                        "Site | Count\nNorth | 12\n\nResults\n\nNorth had the most.")
    assert [doc.text[b:b + 7] for b in doc.boundaries] == ["Methods", "Results"]
    assert load_document(path).boundaries == ()


def test_damaged_docx_is_a_clear_error(tmp_path):
    path = tmp_path / "broken.docx"
    path.write_bytes(b"PK\x03\x04 not really a zip")
    with pytest.raises(InputError, match=r"broken\.docx cannot be read as a Word document"):
        load_document(path)
