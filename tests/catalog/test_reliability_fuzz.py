"""Bad files and values, fuzzed: every loader answers with a result or a KgkitError.

Hypothesis throws arbitrary bytes, arbitrary text and random YAML/JSON structures shaped
like the real files at the YAML validators, the config loader, the model-answer parser and
the gold loader. None may raise anything but :class:`kgkit.errors.KgkitError` (which the
CLI turns into a message and exit code 2). Then odd documents, one by one: empty, a
huge single line, broken encodings, right-to-left and CJK text, and a PDF of thousands of
pages read in bounded memory.

``max_examples`` is bounded per property so the file runs in seconds; the total is
reported in docs/reliability.md.
"""
from __future__ import annotations

import json
import os
import tempfile
import tracemalloc
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kgkit.backends.parse import parse_json_answer
from kgkit.config.loader import load_config
from kgkit.documents.chunking import chunk_document
from kgkit.documents.load import load_document
from kgkit.errors import InputError, KgkitError
from kgkit.eval.gold import load_gold
from kgkit.catalog.validation import validate_file

FUZZ = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
KEYS = ["name", "type", "entity_types", "relation_types", "head", "tail", "roles", "extends", "mode", "llm",
        "model", "api_key", "api_key_env", "chunking", "size", "cache", "prompts", "views", "entities",
        "relations", "doc_id", "spans", "evidence", "upgrade", "output_schema", "version", "description"]
scalars = (st.none() | st.booleans() | st.integers(-10, 10**6) | st.floats(allow_nan=True)
           | st.text(max_size=12) | st.sampled_from(["${HOME}", "${NOPE}", "*", "Person", "[a-", "../x", "!!str"]))
structures = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4)
                          | st.dictionaries(st.sampled_from(KEYS) | st.text(max_size=6), inner, max_size=5),
                          max_leaves=25)
yaml_text = structures.map(lambda v: yaml.safe_dump(v, allow_unicode=True))
odd_bytes = st.binary(max_size=400) | st.text(max_size=400).map(str.encode) | yaml_text.map(str.encode)
YAML_BOMBS = [
    b"a: &a [1,2,3]\nb: &b [*a,*a,*a,*a]\nc: &c [*b,*b,*b,*b]\nd: &d [*c,*c,*c,*c]\ne: [*d,*d,*d,*d,*d,*d]\n",
    b"!!python/object/apply:os.system ['echo pwned']\n",
    b"name: !!python/name:os.system\n",
    b"\xef\xbb\xbfname: x\n\x00\x01",
    b"[" * 5000,
    b"key: value\nkey: again\n",
]


_SCRATCH = tempfile.TemporaryDirectory(prefix="kgkit-fuzz-")  # one folder, removed at exit


def scratch_file(data: bytes, name: str) -> Path:
    """Write ``data`` to ``name`` in the scratch folder (each example overwrites the last)."""
    path = Path(_SCRATCH.name) / name
    path.write_bytes(data)
    return path


@pytest.mark.parametrize("kind", ["domain", "view", "template"])
@FUZZ
@given(data=odd_bytes)
def test_yaml_validation_answers_with_a_result_or_a_kgkit_error(kind, data):
    path = scratch_file(data, f"fuzz.{kind}.yaml")
    try:
        assert isinstance(validate_file(kind, path), dict)
    except KgkitError as exc:
        assert exc.format()


@pytest.mark.parametrize("data", YAML_BOMBS, ids=["alias-bomb", "python-apply", "python-name", "nul", "deep",
                                                 "duplicate"])
@pytest.mark.parametrize("kind", ["domain", "config"])
def test_hostile_yaml_is_refused_not_executed(kind, data, tmp_path):
    path = scratch_file(data, "kgkit.yaml")
    with pytest.raises(KgkitError):
        validate_file(kind, path) if kind == "domain" else load_config(path, env={}, cwd=tmp_path)
    assert not (Path.cwd() / "pwned").exists()


@FUZZ
@given(data=odd_bytes, env=st.dictionaries(st.sampled_from(["HOME", "KGKIT_MODEL", "KGKIT_CACHE_DIR"]),
                                           st.text(max_size=10), max_size=2))
def test_the_config_loader_answers_with_a_config_or_a_kgkit_error(data, env):
    path = scratch_file(data, "kgkit.yaml")
    env = {k: v.replace("\x00", "") for k, v in env.items()}
    try:
        load_config(path, env=env, cwd=path.parent)
    except KgkitError as exc:
        assert exc.format()


json_values = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=10),
                           lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner,
                                                                                     max_size=4), max_leaves=20)
answers = (st.text(max_size=300)
           | json_values.map(json.dumps)
           | st.tuples(st.text(max_size=30), json_values.map(json.dumps), st.text(max_size=30),
                       st.integers(0, 200)).map(lambda t: f"{t[0]}```json\n{t[1]}\n```{t[2]}"[: len(t[1]) + t[3]])
           | st.builds(lambda n: "{" * n + "}" * (n // 2), st.integers(0, 3000)))


@settings(max_examples=400, deadline=None)
@given(text=answers)
def test_the_answer_parser_returns_an_object_or_a_kgkit_error(text):
    try:
        assert isinstance(parse_json_answer(text), dict)
    except KgkitError as exc:
        assert exc.format()


gold_like = st.fixed_dictionaries(
    {"doc_id": st.sampled_from(["doc", "other"]) | st.text(max_size=5)},
    optional={k: json_values | st.lists(st.dictionaries(st.sampled_from(["name", "type", "spans", "head", "tail",
                                                                         "relation", "roles", "aliases"]),
                                                        json_values, max_size=4), max_size=3)
              for k in ("title", "entities", "relations", "hyperedges", "events", "temporal", "source")},
)
gold_files = odd_bytes | gold_like.map(lambda d: json.dumps(d).encode()) | json_values.map(lambda v: json.dumps(v).encode())


@FUZZ
@given(data=gold_files, text=st.binary(max_size=60) | st.text(max_size=60).map(str.encode))
def test_the_gold_loader_returns_documents_or_a_kgkit_error(data, text):
    gold = scratch_file(data, "doc.gold.json")
    (gold.parent / "doc.txt").write_bytes(text)
    try:
        docs = load_gold(gold.parent)
        assert [d.doc_id for d in docs] == ["doc"]
    except KgkitError as exc:
        assert exc.format()


# -- odd documents ----------------------------------------------------------------------


def test_an_empty_document_is_a_clear_input_error(tmp_path):
    (tmp_path / "empty.txt").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("  \n\t\n")
    with pytest.raises(InputError, match="empty.txt is empty"):
        load_document(tmp_path / "empty.txt")
    with pytest.raises(InputError, match="has no text"):
        load_document(tmp_path / "blank.txt")


def test_a_huge_single_line_is_cut_into_bounded_chunks_that_cover_it(tmp_path):
    line = ("Acme" + "x" * 9_995 + " ") * 200  # 2 MB, one line, words longer than a chunk
    (tmp_path / "line.txt").write_text(line)
    doc = load_document(tmp_path / "line.txt")
    chunks = chunk_document(doc, size=2000, overlap=200)
    assert all(len(c.text) <= 2000 for c in chunks)
    covered = bytearray(len(doc.text))
    for c in chunks:
        assert doc.text[c.start:c.end] == c.text
        covered[c.start:c.end] = b"\x01" * (c.end - c.start)
    assert all(covered[i] or doc.text[i].isspace() for i in range(len(doc.text)))


@pytest.mark.parametrize("raw", [
    "Müller GmbH hired José in Zürich.".encode("utf-8") + " Café Crème".encode("latin-1"),
    b"Ann Lee works for Acme Corp.\xff\xfe\x80 broken \xc3",
    "Ann Lee works for Acme Corp.".encode("utf-16"),
    b"\xef\xbb\xbfAnn Lee works for Acme Corp.\r\nSecond line\rthird\x00line",
], ids=["utf8+latin1", "invalid-utf8", "utf16-bom", "bom-crlf-nul"])
def test_mixed_and_broken_encodings_load_as_text_or_fail_clearly(tmp_path, raw):
    (tmp_path / "doc.txt").write_bytes(raw)
    try:
        doc = load_document(tmp_path / "doc.txt")
    except InputError as exc:
        assert "doc.txt" in exc.format()
        return
    assert "Acme" in doc.text or "Müller" in doc.text
    doc.text.encode("utf-8")  # what kgkit keeps is valid Unicode, whatever came in


def test_right_to_left_and_cjk_text_round_trips_through_a_run(tmp_path, monkeypatch):
    import kgkit

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    text = ("שרה כהן עובדת בחברת אקמה בתל אביב. "
            "Ann Lee works for Acme Corp in Boston. "
            "张伟在北京的华为公司工作。 "
            "محمد علي يعمل في شركة أكمي في القاهرة.\n")
    (tmp_path / "mixed.txt").write_text(text, encoding="utf-8")

    [run] = kgkit.extract(tmp_path / "mixed.txt", domain="general", views=["binary"], out_dir=tmp_path / "out")

    assert "Acme Corp" in {n["name"] for n in run.nodes}
    assert run.manifest["input"]["characters"] == len(text)  # code points, not bytes
    written = json.loads((run.run_dir / "nodes.json").read_text(encoding="utf-8"))
    for node in written["nodes"]:
        for mention in node["mentions"]:
            start, end = mention["span"]
            assert text[start:end].strip()  # spans index the Unicode text, not bytes


def _thousand_page_pdf(path: Path, pages: int) -> None:
    from pypdf import PdfWriter
    from pypdf.generic import DecodedStreamObject, DictionaryObject, NameObject

    writer = PdfWriter()
    font = writer._add_object(DictionaryObject({
        NameObject("/Type"): NameObject("/Font"), NameObject("/Subtype"): NameObject("/Type1"),
        NameObject("/BaseFont"): NameObject("/Helvetica")}))
    for n in range(pages):
        page = writer.add_blank_page(612, 792)
        stream = DecodedStreamObject()
        stream.set_data(f"BT /F1 11 Tf 72 720 Td (Page {n}: Ann Lee works for Acme Corp in Boston.) Tj ET".encode())
        page[NameObject("/Contents")] = writer._add_object(stream)
        page[NameObject("/Resources")] = DictionaryObject({NameObject("/Font"): DictionaryObject(
            {NameObject("/F1"): font})})
    with open(path, "wb") as fh:
        writer.write(fh)


def test_a_pdf_of_thousands_of_pages_loads_in_bounded_memory(tmp_path):
    pages = 2000
    path = tmp_path / "long.pdf"
    _thousand_page_pdf(path, pages)
    size = os.path.getsize(path)

    tracemalloc.start()
    try:
        doc = load_document(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()

    assert len(doc.pages) == pages
    assert f"Page {pages - 1}: Ann Lee works for Acme Corp" in doc.text
    # A generous bound: about 9 MiB is measured for 2000 pages (the text itself is 0.1 MB);
    # reading the file whole and keeping every page's parsed content would cost far more.
    assert peak < 48 * 2**20, f"peak {peak / 2**20:.1f} MiB for a {size / 2**20:.1f} MiB PDF"
