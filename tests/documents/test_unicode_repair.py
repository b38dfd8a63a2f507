"""A PDF whose font maps glyphs to UTF-16 surrogate halves loads, hashes and extracts:
pairs are joined, lone halves replaced and counted (the text layer's crash, fixed at the
loader so no later stage ever sees an unencodable string)."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.documents import load_document
from kgkit.documents.unicode_repair import valid_unicode
from support.pdf_maker import Run, make_pdf


@pytest.mark.parametrize("raw, fixed, count", [
    ("plain text", "plain text", 0),
    ("pair \ud835\udc00 joined", "pair \U0001d400 joined", 0),
    ("lone \ud835 high", "lone \ufffd high", 1),
    ("lone \udc00 low and \ud800", "lone \ufffd low and \ufffd", 2),
    ("kept \ufffd already", "kept \ufffd already", 0),
])
def test_valid_unicode(raw, fixed, count):
    assert valid_unicode(raw) == (fixed, count)
    fixed.encode("utf-8")  # encodable, which is the point


def test_pdf_with_a_lone_surrogate_loads_with_a_counted_warning(tmp_path):
    path = make_pdf(tmp_path / "broken_map.pdf", [[Run(72, 700, "Value A and A again")]],
                    to_unicode={0x41: "D835"})
    doc = load_document(path)
    assert doc.text == "Value \ufffd and \ufffd again"
    assert any("2 character(s)" in w and "surrogates" in w for w in doc.warnings)
    json.dumps(doc.text, ensure_ascii=False).encode("utf-8")


def test_pdf_with_a_split_surrogate_pair_keeps_the_character(tmp_path):
    path = make_pdf(tmp_path / "math.pdf", [[Run(72, 700, "bold AB here")]], to_unicode={0x41: "D835", 0x42: "DC00"})
    doc = load_document(path)
    assert doc.text == "bold \U0001d400 here" and not doc.warnings


def test_extract_on_such_a_pdf_writes_a_run(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    path = make_pdf(tmp_path / "paper.pdf", [[Run(72, 700, "We propose the A network for machine translation.")]],
                    to_unicode={0x41: "D835"})
    result = CliRunner().invoke(cli, ["extract", "--domain", "scholarly", str(path), "--out", str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    nodes = json.loads((tmp_path / "out" / "paper" / "nodes.json").read_text(encoding="utf-8"))
    assert nodes["doc_id"].startswith("d_")
