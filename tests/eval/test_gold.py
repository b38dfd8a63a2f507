"""`kgkit gold validate` and kgkit.eval.gold: the checks, their locations, the shared data."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.errors import InputError, ValidationError
from kgkit.eval.gold import check_gold, load_gold
from support.shared_data import DATA, FIXTURES

TEXT = "John Smith works for IBM in Boston."


def gold(**overrides):
    doc = {
        "doc_id": "doc1",
        "source": "hand-made",
        "title": None,
        "entities": [
            {"name": "John Smith", "type": "Peop", "aliases": [], "spans": [[0, 10]]},
            {"name": "IBM", "type": "Org", "aliases": [], "spans": [[21, 24]]},
            {"name": "Boston", "type": "Loc", "aliases": [], "spans": [[28, 34]]},
        ],
        "relations": [{"head": "John Smith", "relation": "Work_For", "tail": "IBM", "evidence": TEXT}],
        "hyperedges": [],
        "events": [],
        "temporal": [],
    }
    doc.update(overrides)
    return doc


def write(folder: Path, doc: dict, text: str = TEXT) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{doc['doc_id']}.txt").write_text(text, encoding="utf-8")
    path = folder / f"{doc['doc_id']}.gold.json"
    path.write_text(json.dumps(doc, indent=1), encoding="utf-8")
    return path


DOMAIN_YAML = """\
name: tiny
entity_types:
  - name: Peop
  - name: Org
relation_types:
  - name: Work_For
    head: [Peop]
    tail: [Org]
"""


def test_a_good_folder_loads_and_skips_other_files(tmp_path):
    write(tmp_path, gold())
    (tmp_path / "manifest.json").write_text("{}")
    docs = load_gold(tmp_path)
    assert [d.doc_id for d in docs] == ["doc1"]
    assert docs[0].text == TEXT and docs[0].relations[0]["tail"] == "IBM"


def test_every_problem_is_reported_with_its_line(tmp_path):
    bad = gold()
    bad["entities"][1]["spans"] = [[20, 24]]  # slices " IBM"
    bad["relations"].append({"head": "John Smith", "relation": "Live_In", "tail": "Bostn", "evidence": None})
    path = write(tmp_path, bad)
    with pytest.raises(ValidationError) as err:
        load_gold(tmp_path)
    lines = err.value.format().splitlines()
    text_lines = path.read_text().splitlines()
    span_line = next(i for i, l in enumerate(text_lines, 1) if l.strip() == "20,") - 1  # the "[" opening the span
    column = text_lines[span_line - 1].index("[") + 1
    assert lines[0] == (f"{path}:{span_line}:{column}: entities -> 1 -> spans -> 0: span [20, 24) slices ' IBM', "
                        "which is neither the name nor an alias")
    assert lines[1].endswith("relations -> 1 -> tail: 'Bostn' is not an entity of this document")
    assert lines[-1] == f"2 problems in gold folder {tmp_path}"


def test_missing_keys_and_bad_json_are_structural_errors(tmp_path):
    doc = gold()
    del doc["temporal"]
    write(tmp_path, doc)
    (tmp_path / "doc2.txt").write_text("x")
    (tmp_path / "doc2.gold.json").write_text('{"doc_id": "doc2",\n  "entities": [,]}')
    _, issues = check_gold(tmp_path)
    text = [i.format() for i in issues]
    assert any(t.endswith("doc1.gold.json:1:1: 'temporal' is a required property") for t in text)
    assert any("doc2.gold.json:2:16: not valid JSON: Expecting value" in t for t in text)


def test_domain_types_are_checked(tmp_path):
    write(tmp_path, gold())
    domain_file = tmp_path / "tiny.yaml"
    domain_file.write_text(DOMAIN_YAML)
    from kgkit.catalog.load import load_domain

    _, issues = check_gold(tmp_path, load_domain(domain_file))
    assert [i.message for i in issues] == ["entity type 'Loc' is not in domain 'tiny'; the domain has: Peop, Org"]


def test_empty_or_missing_folder_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no \\*.gold.json files"):
        load_gold(tmp_path)
    with pytest.raises(InputError, match="gold folder not found"):
        load_gold(tmp_path / "nope")


def test_missing_text_and_mismatched_doc_id(tmp_path):
    path = write(tmp_path, gold())
    path.rename(tmp_path / "other.gold.json")
    _, issues = check_gold(tmp_path)
    assert sorted(i.message for i in issues) == [
        "doc_id 'doc1' does not match the file name 'other'",
        "the document text other.txt is missing next to it",
    ]


def test_the_gold_fixtures_in_the_repository_are_valid():
    docs, issues = check_gold(FIXTURES / "news")
    assert issues == [] and [d.doc_id for d in docs] == [f"news_{i:03d}" for i in range(6)]


@pytest.mark.corpus
@pytest.mark.parametrize("name", ["conll04", "scierc", "wikievents", "cuad"])
def test_the_shared_gold_sets_are_valid(name):
    docs, issues = check_gold(DATA / name)
    assert issues == [] and len(docs) == json.loads((DATA / name / "manifest.json").read_text())["num_docs"]


def test_cli_validate_ok_and_failing(tmp_path):
    good = tmp_path / "good"
    write(good, gold())
    runner = CliRunner()
    result = runner.invoke(cli, ["gold", "validate", str(good)])
    assert result.exit_code == 0, result.output
    assert result.output == f"{good}: 1 documents OK (3 entities, 1 relations, 0 hyperedges, 0 events, 0 temporal)\n"

    bad = tmp_path / "bad"
    shutil.copytree(good, bad)
    doc = gold()
    doc["entities"][0]["type"] = "Person"
    write(bad, doc)
    (tmp_path / "tiny.yaml").write_text(DOMAIN_YAML)
    result = runner.invoke(cli, ["gold", "validate", str(bad), "--domain", str(tmp_path / "tiny.yaml")])
    assert result.exit_code == 2
    assert "entities -> 0 -> type: entity type 'Person' is not in domain 'tiny'" in result.output
    assert "entities -> 2 -> type: entity type 'Loc' is not in domain 'tiny'" in result.output
    assert "Traceback" not in result.output
