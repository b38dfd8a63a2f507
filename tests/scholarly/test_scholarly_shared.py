"""The scholarly reader on the shared papers' tune half (marked corpus): the figures the
benchmark publishes for tune hold, the offline goals with them, and every paper of the
set (tune and report) is read without an error. The report half is measured by
benchmarks/scholarly.py, not asserted here."""
from __future__ import annotations

import json

import pytest

from support.shared_data import DATA

pytestmark = pytest.mark.corpus
pytest.importorskip("pdfplumber")

SCHOLARLY = DATA / "scholarly"


def _split(name: str) -> list[str]:
    return json.loads((DATA / "splits.json").read_text(encoding="utf-8"))["sets"][f"scholarly/{name}"]["tune"]


def test_tune_papers_meet_the_offline_goals():
    from kgkit.documents.layout import read_pdf_layout
    from kgkit.scholarly.gold import PaperScores, score_paper
    from kgkit.scholarly.paper import read_paper

    scores = PaperScores()
    for doc in _split("papers"):
        gold = json.loads((SCHOLARLY / "papers" / f"{doc}.gold.json").read_text(encoding="utf-8"))
        pdf = SCHOLARLY / "papers" / gold["pdf"]
        score_paper(read_paper(read_pdf_layout(str(pdf), source=str(pdf))), gold, scores)
    figures = scores.figures()
    assert figures["title_exact"] >= 0.9 and figures["authors_exact"] >= 0.9
    assert figures["anchors_f1"] >= 0.9 and figures["references_f1"] >= 0.9
    assert figures["marker_linking_f1"] >= 0.85 and figures["sections_f1"] >= 0.9


def test_every_shared_paper_is_read(tmp_path):
    from kgkit.documents import load_document

    for pdf in sorted((SCHOLARLY / "papers").glob("*.pdf")):
        doc = load_document(pdf, layout=True)
        assert doc.layout.blocks and all(doc.text[b.start:b.end] == b.text for b in doc.layout.blocks)


def test_benchmark_writes_the_keys_the_issue_names(tmp_path):
    import subprocess
    import sys
    from pathlib import Path

    out = tmp_path / "figures.json"
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "scholarly.py"
    done = subprocess.run([sys.executable, str(script), "--data", str(SCHOLARLY), "--split", "tune", "--json",
                           str(out)], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert set(json.loads(out.read_text())) == {
        "title_exact", "authors_exact", "sections_f1", "anchors_f1", "references_f1", "reference_fields_accuracy",
        "marker_linking_f1", "intent_macro_f1_scicite", "intent_macro_f1_aclarc"}
    bad = subprocess.run([sys.executable, str(script), "--data", str(tmp_path)], capture_output=True, text=True)
    assert bad.returncode == 2 and "no papers/ folder" in bad.stderr
