"""Governing law on the tune half of CUAD with the clause cut or wrapped as a page layout
leaves it: the perturbation is made here, at test time, from the shared file (no text of a
contract is kept in the repository), and each contract's gold law must still be found.

Only the tune half is read (``benchmarks/splits/cuad.tune.txt``): the report half is held out.
"""
from __future__ import annotations

import json
import re
import textwrap
from pathlib import Path

import pytest

from support.shared_data import DATA, REPO

pytestmark = pytest.mark.corpus

# A sentence that states a law, not where a party was formed.
_CLAUSE = re.compile(r"[^.\n]*\b(?:governed|construed)\b[^.\n]*\blaws?\s+of\b[^.\n]*\.", re.I)
_FORMED = re.compile(r"organi[sz]ed|incorporated|existing", re.I)


def _page_break(clause: str) -> str:
    words = clause.split(" ")
    return " ".join(words[:len(words) // 2]) + "\n\n12\n\nSource: A FILER INC, 10-K, 3/1/2011\n\n" + " ".join(
        words[len(words) // 2:])


def _footer_in_capitals(clause: str) -> str:
    words = clause.split(" ")
    return " ".join(words[:len(words) // 2]) + "\n\n- 12 -\n\nCONFIDENTIAL TREATMENT REQUESTED\n\n" + " ".join(
        words[len(words) // 2:])


def _capitals_wrapped(clause: str) -> str:
    return "\n".join(textwrap.wrap(clause.upper(), 50))


PERTURB = {"page break": _page_break, "footer in capitals": _footer_in_capitals, "capitals wrapped": _capitals_wrapped}


def _tune_ids() -> list[str]:
    return [line.strip() for line in (REPO / "benchmarks" / "splits" / "cuad.tune.txt").read_text().splitlines()
            if line.strip()]


def _perturbed(doc_id: str, perturb, target: Path) -> None:
    """The contract with its governing-law sentence perturbed, and its gold, spans moved."""
    text = (DATA / "cuad" / f"{doc_id}.txt").read_text(encoding="utf-8")
    gold = json.loads((DATA / "cuad" / f"{doc_id}.gold.json").read_text(encoding="utf-8"))
    laws = [e["name"].split(",")[0].lower() for e in gold["entities"] if e["type"] == "Jurisdiction"]
    found = [m for m in _CLAUSE.finditer(text) if not _FORMED.search(m.group(0))]
    m = [c for c in found if any(law in c.group(0).lower() for law in laws)][-1]
    new = perturb(m.group(0))
    delta = len(new) - len(m.group(0))
    for ent in gold["entities"]:
        ent["spans"] = [[a + delta, b + delta] if a >= m.end() else [a, b] for a, b in ent.get("spans", [])
                        if b <= m.start() or a >= m.end()]
    (target / f"{doc_id}.txt").write_text(text[:m.start()] + new + text[m.end():], encoding="utf-8")
    (target / f"{doc_id}.gold.json").write_text(json.dumps(gold), encoding="utf-8")


@pytest.mark.parametrize("kind", sorted(PERTURB))
def test_governing_law_of_every_tune_contract_survives_the_layout(kind, tmp_path, monkeypatch):
    from kgkit.catalog.load import load_domain
    from kgkit.config.model import Config
    from kgkit.eval.run import evaluate

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    gold_dir = tmp_path / "gold"
    gold_dir.mkdir()
    ids = _tune_ids()
    for doc_id in ids:
        _perturbed(doc_id, PERTURB[kind], gold_dir)
    report = evaluate(str(gold_dir), domain=load_domain("legal_contracts"), views=["binary"], config=Config())
    missed = [d for d, score in report.per_doc.items()
              if not score.categories["relations"].counts("GOVERNING_LAW").tp]
    assert sorted(report.per_doc) == sorted(ids) and missed == []


_PDF_CLAUSE = re.compile(r"[^.]*\b(?:governed|construed)\b[^.]*\blaws?\s+of\b[^.]*\.", re.I)


@pytest.mark.parametrize("kind", ["page break", "footer in capitals"])
def test_governing_law_of_every_tune_pdf_survives_a_page_break_in_its_clause(kind, tmp_path, monkeypatch):
    """The PDFs as kgkit reads them (lines wrapped as on the page), the clause cut in two."""
    from kgkit.cli import main
    from kgkit.documents.load import load_document
    from kgkit.eval.metrics import NameMatcher

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    ids = _tune_ids()
    for doc_id in ids:
        text = load_document(str(DATA / "cuad" / f"{doc_id}.pdf")).text
        m = [c for c in _PDF_CLAUSE.finditer(text) if not _FORMED.search(c.group(0))][-1]
        (tmp_path / f"{doc_id}.txt").write_text(text[:m.start()] + PERTURB[kind](m.group(0)) + text[m.end():],
                                                encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["extract", "--domain", "legal_contracts", "--view", "binary", *[str(tmp_path / f"{d}.txt") for d in ids],
              "--out", str(tmp_path / "runs"), "--json"])
    assert done.value.code == 0
    missed = []
    for doc_id in ids:
        gold = json.loads((DATA / "cuad" / f"{doc_id}.gold.json").read_text(encoding="utf-8"))
        matcher = NameMatcher([e for e in gold["entities"] if e["type"] == "Jurisdiction"])
        folder = tmp_path / "runs" / doc_id
        nodes = {n["id"]: n for n in json.loads((folder / "nodes.json").read_text())["nodes"]}
        laws = [nodes[e["tail"]]["name"] for e in json.loads((folder / "views" / "binary.json").read_text())["edges"]
                if e["relation"] == "GOVERNING_LAW" and nodes[e["head"]].get("document")]
        if not any(matcher.resolve(law, type_name="Jurisdiction")[1] != "none" for law in laws):
            missed.append(doc_id)
    assert missed == []
