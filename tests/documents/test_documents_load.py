"""Loading documents: the real contract PDF in examples/ (and, marked corpus, the shared data),
broken PDFs made at run time, text formats."""
from __future__ import annotations

import hashlib
import io
import json
import os
from pathlib import Path

import pypdf
import pytest
from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

from kgkit.documents import load_document
from kgkit.errors import InputError
from support.shared_data import CONTRACT_PDF as ALLIANCE, DATA

CUAD = DATA / "cuad"
PAPERS = DATA / "papers"


def text_pdf(path: Path, pages: list[list[str]], title: str | None = None) -> Path:
    """Write a PDF whose pages carry the given lines as a real text layer (Helvetica)."""
    writer = pypdf.PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"),
        NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica"),
    }))
    for lines in pages:
        page = writer.add_blank_page(612, 792)
        if not lines:
            continue  # a page with nothing on it, as a scan without OCR looks to a text reader
        ops = ["BT /F1 11 Tf 14 TL 72 720 Td"]
        ops += ["(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*" for line in lines]
        ops.append("ET")
        stream = DecodedStreamObject()
        stream.set_data("\n".join(ops).encode("latin-1"))
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject(
            {NameObject("/Font"): DictionaryObject({NameObject("/F1"): font})}
        )
    if title:
        writer.add_metadata({"/Title": title})
    writer.write(path)
    return path


def test_real_contract_pdf_keeps_pages_and_text():
    doc = load_document(ALLIANCE)
    assert doc.media_type == "application/pdf"
    assert doc.name == "cooltech_strategic_alliance"
    assert doc.sha256 == hashlib.sha256(ALLIANCE.read_bytes()).hexdigest()
    assert doc.id == "d_" + hashlib.sha256(doc.text.encode()).hexdigest()[:16]
    assert [p.number for p in doc.pages] == list(range(1, len(pypdf.PdfReader(ALLIANCE).pages) + 1))
    # pages are in order, do not overlap, and each slice is that page's text
    for before, after in zip(doc.pages, doc.pages[1:]):
        assert before.end < after.start
    first = doc.text[doc.pages[0].start:doc.pages[0].end]
    assert "Strategic Alliance Agreement" in first
    assert doc.pages_for(doc.pages[1].start, doc.pages[1].start + 10) == (2,)
    assert "\xa0" not in doc.text
    assert doc.title == "EXHIBIT 10.71"


@pytest.mark.corpus
def test_pdf_text_holds_the_gold_mentions():
    """The PDF's text layer carries what the dataset's own text says (whitespace aside)."""
    total = found = 0
    for pdf in sorted(CUAD.glob("*.pdf")):
        text = " ".join(load_document(pdf).text.split())
        gold = json.loads(pdf.with_suffix(".gold.json").read_text(encoding="utf-8"))
        source = pdf.with_suffix(".txt").read_text(encoding="utf-8")
        for entity in gold["entities"]:
            for start, end in entity["spans"]:
                total += 1
                found += " ".join(source[start:end].split()) in text
    assert total >= 30
    assert found / total >= 0.95


@pytest.mark.corpus
def test_paper_title_comes_from_pdf_metadata():
    doc = load_document(PAPERS / "semeval2013_tempeval3_task_paper.pdf")
    assert doc.title.startswith("SemEval-2013 Task 1: TempEval-3")
    assert len(doc.pages) == 9


def test_same_content_same_id_wherever_it_is_read_from(tmp_path):
    a = load_document(ALLIANCE)
    copy = tmp_path / "renamed copy.pdf"
    copy.write_bytes(ALLIANCE.read_bytes())
    b = load_document(copy)
    c = load_document("-", stdin=io.BytesIO(ALLIANCE.read_bytes()))
    assert a.id == b.id == c.id
    assert (b.name, c.name, c.source) == ("renamed_copy", "stdin", "-")


def test_generated_pdf_page_offsets(tmp_path):
    path = text_pdf(tmp_path / "three.pdf", [["Alpha page one."], ["Beta page two.", "More beta."], ["Gamma."]],
                    title="Three Pages")
    doc = load_document(path)
    assert doc.title == "Three Pages"
    assert [doc.text[p.start:p.end] for p in doc.pages] == ["Alpha page one.", "Beta page two.\nMore beta.", "Gamma."]
    beta = doc.text.index("Beta")
    assert doc.pages_for(beta - 5, beta + 4) == (1, 2)
    assert doc.pages_for(beta, beta) == (2,)


def test_blank_pages_are_a_warning_and_keep_numbering(tmp_path):
    doc = load_document(text_pdf(tmp_path / "gap.pdf", [["First."], [], ["Third."]]))
    assert [p.number for p in doc.pages] == [1, 3]
    assert doc.warnings == ("1 of 3 pages have no text layer (scanned?): 2",)


def test_image_only_pdf_says_ocr_is_needed(tmp_path):
    path = text_pdf(tmp_path / "scan.pdf", [[], []])
    with pytest.raises(InputError) as err:
        load_document(path)
    assert err.value.message == (
        f"{path} has no text layer; it needs OCR first (e.g. ocrmypdf in.pdf out.pdf), kgkit does not OCR"
    )


def _encrypted(tmp_path: Path, user: str) -> Path:
    writer = pypdf.PdfWriter(clone_from=ALLIANCE)
    writer.encrypt(user_password=user, owner_password="owner-secret", algorithm="RC4-128")
    path = tmp_path / "locked.pdf"
    writer.write(path)
    return path


def test_encrypted_pdf_asks_to_decrypt(tmp_path):
    path = _encrypted(tmp_path, user="open-sesame")
    with pytest.raises(InputError, match=r"locked\.pdf is encrypted; decrypt it first \(e\.g\. qpdf --decrypt"):
        load_document(path)


def test_pdf_with_only_an_owner_password_opens(tmp_path):
    """Viewers open these without asking; so does kgkit."""
    doc = load_document(_encrypted(tmp_path, user=""))
    assert doc.text == load_document(ALLIANCE).text


@pytest.mark.parametrize("keep", [0.5, 0.02, 20])
def test_truncated_pdf_is_a_clear_error(tmp_path, keep):
    raw = ALLIANCE.read_bytes()
    path = tmp_path / "cut.pdf"
    path.write_bytes(raw[: int(len(raw) * keep)] if keep < 1 else raw[:keep])
    with pytest.raises(InputError, match=r"cut\.pdf cannot be read as a PDF \(corrupt or truncated\?\)"):
        load_document(path)


def test_a_pdf_is_a_pdf_whatever_its_suffix(tmp_path):
    path = tmp_path / "contract.txt"
    path.write_bytes(ALLIANCE.read_bytes())
    doc = load_document(path)
    assert (doc.media_type, doc.id) == ("application/pdf", load_document(ALLIANCE).id)


def test_a_repairable_pdf_loads_with_warnings_and_nothing_on_stderr(tmp_path, capfd):
    import re

    raw = ALLIANCE.read_bytes()
    pointer = list(re.finditer(rb"startxref\s+(\d+)", raw))[-1]
    path = tmp_path / "shifted.pdf"
    path.write_bytes(raw[: pointer.start(1)] + str(int(pointer.group(1)) + 7).encode() + raw[pointer.end(1):])
    doc = load_document(path)
    assert doc.text == load_document(ALLIANCE).text
    assert doc.warnings and all(w.startswith("PDF repaired while reading: ") for w in doc.warnings)
    assert any("startxref" in w for w in doc.warnings)
    assert capfd.readouterr().err == ""


def test_not_a_pdf_despite_the_suffix(tmp_path):
    path = tmp_path / "fake.pdf"
    path.write_text("just words", encoding="utf-8")
    with pytest.raises(InputError, match="cannot be read as a PDF"):
        load_document(path)


def _write(path: Path, data: bytes) -> Path:
    path.write_bytes(data)
    return path


@pytest.mark.parametrize(
    "make, message",
    [
        (lambda d: d / "missing.txt", "missing.txt: no such file"),
        (lambda d: d, "is a directory; give the document files inside it"),
        (lambda d: _write(d / "empty.txt", b""), "empty.txt is empty"),
        (lambda d: _write(d / "empty.pdf", b""), "empty.pdf is empty"),
        (lambda d: _write(d / "blank.md", b" \n\n\t"), "blank.md has no text"),
        (lambda d: _write(d / "x.bin", b"\x89PNG\r\n\x1a\n\x00\x00"), "looks like a binary file"),
        (lambda d: d / ("n" * 300 + ".txt"), "cannot read it (File name too long)"),
    ],
)
def test_unusable_inputs_are_input_errors(tmp_path, make, message):
    with pytest.raises(InputError) as err:
        load_document(make(tmp_path))
    assert message in err.value.message


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads files whatever their mode")
def test_unreadable_file(tmp_path):
    path = tmp_path / "secret.txt"
    path.write_text("x")
    path.chmod(0)
    with pytest.raises(InputError, match="permission denied"):
        load_document(path)


def test_invalid_utf8_is_replaced_with_a_warning(tmp_path):
    path = tmp_path / "latin.txt"
    path.write_bytes("Café au lait. ".encode("utf-8") + "Crème brûlée.".encode("latin-1"))
    doc = load_document(path)
    assert doc.text.startswith("Café au lait. Cr\ufffdme br\ufffdl\ufffde.")
    assert doc.warnings == (f"{path} is not valid UTF-8 (first bad byte at offset 17); 3 invalid sequence(s) replaced by U+FFFD",)


def test_plain_text_is_kept_verbatim(tmp_path):
    raw = "\ufeffAcme Corp. hires\r\nJane Doe.\r\n\r\nSecond paragraph.\n"
    path = tmp_path / "memo.txt"
    path.write_bytes(raw.encode("utf-8"))
    doc = load_document(path)
    assert doc.text == raw[1:]  # only the byte-order mark goes
    assert (doc.media_type, doc.title, doc.pages) == ("text/plain", "Acme Corp. hires", ())


def test_utf16_with_bom(tmp_path):
    path = tmp_path / "wide.txt"
    path.write_bytes("Ünïcode text.".encode("utf-16"))
    assert load_document(path).text == "Ünïcode text."


def test_markdown_title_is_the_first_heading(tmp_path):
    path = tmp_path / "notes.md"
    path.write_text("Intro line without hash\n\n## The Real Title ##\n\nBody.\n", encoding="utf-8")
    doc = load_document(path)
    assert (doc.media_type, doc.title) == ("text/markdown", "The Real Title")
    setext = tmp_path / "s.markdown"
    setext.write_text("Setext Title\n============\n\nBody.\n", encoding="utf-8")
    assert load_document(setext).title == "Setext Title"


def test_html_is_stripped_to_text_with_block_breaks(tmp_path):
    path = tmp_path / "page.html"
    path.write_text(
        "<!DOCTYPE html><html><head><title>Merger  News</title><style>p {color: red}</style>"
        "<script>var x = '<p>not text</p>';</script></head><body>"
        "<h1>Acme &amp; Co.</h1><p>Acme\n   acquired <b>Beta&nbsp;Inc.</b> in 2020.</p>"
        "<ul><li>One</li><li>Two</li></ul>line<br>break<noscript>enable js</noscript></body></html>",
        encoding="utf-8",
    )
    doc = load_document(path)
    assert doc.text == "Acme & Co.\n\nAcme acquired Beta Inc. in 2020.\n\nOne\n\nTwo\n\nline\nbreak"
    assert (doc.media_type, doc.title) == ("text/html", "Merger News")


def test_html_declared_charset_is_honoured(tmp_path):
    path = tmp_path / "old.htm"
    path.write_bytes('<html><head><meta http-equiv="Content-Type" content="text/html; charset=windows-1252">'
                     '</head><body><p>Société Générale – “quoted”</p></body></html>'.encode("cp1252"))
    doc = load_document(path)
    assert (doc.text, doc.warnings) == ("Société Générale – “quoted”", ())


def test_stdin_sniffs_html_and_text():
    html = load_document("-", stdin=io.BytesIO(b"<html><body><p>Hi there.</p></body></html>"))
    assert (html.media_type, html.text) == ("text/html", "Hi there.")
    text = load_document("-", stdin=io.StringIO("plain words\n"))
    assert (text.media_type, text.text, text.source) == ("text/plain", "plain words\n", "-")


def test_long_first_line_title_is_shortened(tmp_path):
    path = tmp_path / "long.txt"
    path.write_text("word " * 100, encoding="utf-8")
    title = load_document(path).title
    assert len(title) <= 121 and title.endswith("…")


@pytest.mark.parametrize("stem, name", [("..", "document"), ("../../etc", "etc"), ("a b/c", "a_b_c"), (".hidden", "hidden"),
                                        ("Vertrag Müller", "Vertrag_Müller"), ("a\\b:c*?", "a_b_c")])
def test_names_are_safe_folder_names(tmp_path, stem, name):
    from kgkit.documents.load import safe_name

    assert safe_name(stem) == name


# ------------------------------------------------------------------ never a traceback

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_SMALL_PDF = None


def _small_pdf() -> bytes:
    global _SMALL_PDF
    if _SMALL_PDF is None:
        buffer = io.BytesIO()
        writer = pypdf.PdfWriter(clone_from=ALLIANCE)
        while len(writer.pages) > 1:
            writer.remove_page(len(writer.pages) - 1)
        writer.write(buffer)
        _SMALL_PDF = buffer.getvalue()
    return _SMALL_PDF


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=st.binary(max_size=2000), suffix=st.sampled_from([".txt", ".md", ".html", ".pdf", ".bin"]))
def test_property_any_bytes_load_or_give_an_input_error(tmp_path, raw, suffix):
    path = tmp_path / f"fuzz{suffix}"
    path.write_bytes(raw)
    try:
        doc = load_document(path)
    except InputError:
        return
    assert doc.text.strip() and doc.id.startswith("d_")


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_property_damaged_pdf_loads_or_gives_an_input_error(tmp_path, data):
    raw = bytearray(_small_pdf())
    for _ in range(data.draw(st.integers(1, 8))):
        raw[data.draw(st.integers(0, len(raw) - 1))] = data.draw(st.integers(0, 255))
    cut = data.draw(st.integers(len(raw) // 2, len(raw)))
    path = tmp_path / "damaged.pdf"
    path.write_bytes(bytes(raw[:cut]))
    try:
        load_document(path)
    except InputError as exc:
        assert str(path) in exc.message
