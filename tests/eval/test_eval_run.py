"""`kgkit eval --run`: scoring an existing run folder written in the documented format."""
from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.eval.run import evaluate, read_predictions

TEXT = "John Smith works for IBM in Boston. IBM is based in Boston."
GOLD = {
    "doc_id": "doc1", "source": "hand-made", "title": None,
    "entities": [
        {"name": "John Smith", "type": "Peop", "aliases": [], "spans": [[0, 10]]},
        {"name": "IBM", "type": "Org", "aliases": [], "spans": [[21, 24], [36, 39]]},
        {"name": "Boston", "type": "Loc", "aliases": [], "spans": [[28, 34], [52, 58]]},
    ],
    "relations": [
        {"head": "John Smith", "relation": "Work_For", "tail": "IBM", "evidence": None},
        {"head": "IBM", "relation": "OrgBased_In", "tail": "Boston", "evidence": None},
    ],
    "hyperedges": [], "events": [],
    "temporal": [{"head": "John Smith", "relation": "Work_For", "tail": "IBM", "start": "2001-05-01", "end": None,
                  "evidence": None}],
}


def make_gold(folder: Path) -> Path:
    folder.mkdir()
    (folder / "doc1.txt").write_text(TEXT)
    (folder / "doc1.gold.json").write_text(json.dumps(GOLD))
    return folder


def make_run(folder: Path) -> Path:
    """A run folder as docs/design.md describes it: nodes.json and views/<view>.json."""
    doc = folder / "doc1"
    (doc / "views").mkdir(parents=True)
    (doc / "manifest.json").write_text(json.dumps({"input": {"path": "gold/doc1.txt"}}))
    nodes = [{"id": "n1", "type": "Peop", "name": "John Smith", "aliases": []},
             {"id": "n2", "type": "Org", "name": "IBM", "aliases": []},
             {"id": "n3", "type": "Org", "name": "Boston", "aliases": []}]  # wrong type
    (doc / "nodes.json").write_text(json.dumps({"doc_id": "d_x", "nodes": nodes}))
    edge = {"evidence": None, "verified": True, "confidence": 1.0}
    (doc / "views" / "binary.json").write_text(json.dumps({"view": "binary", "mode": "projection.v1", "edges": [
        {"id": "e1", "head": "n1", "relation": "Work_For", "tail": "n2", **edge},
        {"id": "e2", "head": "n2", "relation": "Located_In", "tail": "n3", **edge}]}))
    (doc / "views" / "temporal.json").write_text(json.dumps({"view": "temporal", "mode": "temporal.v1", "edges": [
        {"id": "t1", "head": "n1", "relation": "Work_For", "tail": "n2",
         "qualifiers": {"start_date": {"text": "June 2001", "type": "date", "value": "2001-06"}}, **edge}]}))
    return folder


def test_evaluate_scores_a_run_folder(tmp_path):
    gold_dir = make_gold(tmp_path / "gold")
    run = make_run(tmp_path / "run")
    pred = read_predictions(run / "doc1")
    assert pred["relations"][1] == {"head": "IBM", "relation": "Located_In", "tail": "Boston"}
    assert pred["temporal"] == [{"head": "John Smith", "relation": "Work_For", "tail": "IBM", "start": "2001-06", "end": None}]

    report = evaluate(gold_dir, run_dir=run)
    scores = report.to_dict()["scores"]
    assert scores["entities"]["micro"] == {"tp": 2, "fp": 1, "fn": 1, "precision": 0.6667, "recall": 0.6667, "f1": 0.6667}
    assert scores["relations"]["micro"]["tp"] == 1 and scores["relations"]["micro"]["fp"] == 1
    assert scores["relations"]["per_type"]["OrgBased_In"] == {"tp": 0, "fp": 0, "fn": 1, "precision": 0.0,
                                                             "recall": 0.0, "f1": 0.0}
    assert scores["temporal"]["micro"]["f1"] == 1.0
    assert scores["temporal_timed"]["micro"]["f1"] == 0.0  # 2001-05-01 is not in 2001-06
    assert "hyperedges" not in scores  # no nary view ran


def test_eval_cli_table_and_json(tmp_path):
    gold_dir = make_gold(tmp_path / "gold")
    run = make_run(tmp_path / "run")
    runner = CliRunner()
    result = runner.invoke(cli, ["eval", "--gold", str(gold_dir), "--run", str(run)])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert lines[0] == f"1 documents from {gold_dir}"
    assert lines[1].split() == ["category", "type", "P", "R", "F1", "tp", "fp", "fn"]
    assert ["relations", "micro", "0.500", "0.500", "0.500", "1", "1", "1"] in [l.split() for l in lines]
    result = runner.invoke(cli, ["eval", "--gold", str(gold_dir), "--run", str(run), "--json"])
    data = json.loads(result.output)
    assert data["scores"]["relations"]["micro"]["f1"] == 0.5
    assert data["matching"] == {"names": "exact, then alias, then place, then fuzzy", "fuzzy_threshold": 90.0}


def test_missing_document_runs_count_as_empty_predictions(tmp_path):
    gold_dir = make_gold(tmp_path / "gold")
    (tmp_path / "run").mkdir()
    report = evaluate(gold_dir, run_dir=tmp_path / "run")
    assert report.missing == ["doc1"]
    assert report.total.categories["relations"].micro.fn == 2


def test_eval_cli_errors_are_messages(tmp_path):
    gold_dir = make_gold(tmp_path / "gold")
    result = CliRunner().invoke(cli, ["eval", "--gold", str(gold_dir), "--run", str(tmp_path / "nope")])
    assert result.exit_code == 2
    assert result.output == f"Error: run folder not found: {tmp_path / 'nope'}\n"


DOMAIN = """\
name: staff
entity_types:
  - name: Peop
    patterns: {phrases: [John Smith]}
  - name: Org
    patterns: {phrases: [IBM]}
  - name: Loc
    patterns: {phrases: [Boston]}
relation_types:
  - name: Work_For
    head: [Peop]
    tail: [Org]
    triggers: [works for]
  - name: OrgBased_In
    head: [Org]
    tail: [Loc]
"""


def test_eval_extracts_with_the_offline_backend_when_no_run_is_given(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.chdir(tmp_path)
    gold_dir = make_gold(tmp_path / "gold")
    (tmp_path / "staff.yaml").write_text(DOMAIN)
    result = CliRunner().invoke(cli, ["eval", "--gold", str(gold_dir), "--domain", "staff.yaml", "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.output)["scores"]
    # every entity is declared as a pattern; only Work_For has a trigger, so OrgBased_In is missed
    assert scores["entities"]["micro"]["f1"] == 1.0
    assert scores["relations"]["per_type"]["Work_For"]["f1"] == 1.0
    assert scores["relations"]["micro"] == {"tp": 1, "fp": 0, "fn": 1, "precision": 1.0, "recall": 0.5, "f1": 0.6667}


def test_gold_types_outside_the_domain_are_listed_not_fatal(tmp_path):
    gold_dir = make_gold(tmp_path / "gold")
    run = make_run(tmp_path / "run")
    narrow = tmp_path / "narrow.yaml"
    narrow.write_text("name: narrow\nentity_types:\n  - name: Peop\n  - name: Org\n"
                      "relation_types:\n  - name: Work_For\n    head: [Peop]\n    tail: [Org]\n")
    report = evaluate(gold_dir, domain=str(narrow), run_dir=run)
    assert report.unknown_types == ["Loc", "relation OrgBased_In"]
    assert report.format_table().splitlines()[1] == (
        "gold types the domain does not declare (their items can only be missed): Loc, relation OrgBased_In")
    assert report.total.categories["relations"].micro.fn == 1


def test_eval_cli_scores_gold_labels_in_the_domains_terms(tmp_path):
    gold_dir = make_gold(tmp_path / "gold")
    run = make_run(tmp_path / "run")
    nodes_file = run / "doc1" / "nodes.json"
    data = json.loads(nodes_file.read_text())  # the run's nodes in the domain's type names
    for node, new_type in zip(data["nodes"], ("Person", "Organization", "Organization")):
        node["type"] = new_type
    nodes_file.write_text(json.dumps(data))
    general = tmp_path / "general_like.yaml"
    general.write_text(
        "name: general_like\nentity_types:\n  - name: Person\n    aliases: [Peop]\n"
        "  - name: Organization\n    aliases: [org]\n  - name: Location\n    aliases: [LOC]\n"
        "relation_types:\n  - name: works_for\n    aliases: [Work_For]\n    head: [Person]\n    tail: [Organization]\n"
        "  - name: based_in\n    aliases: [OrgBased_In]\n    head: [Organization]\n    tail: [Location]\n"
        "  - name: Located_In\n    head: ['*']\n    tail: ['*']\n")
    result = CliRunner().invoke(cli, ["eval", "--gold", str(gold_dir), "--run", str(run), "--domain", str(general),
                                      "--json"])
    assert result.exit_code == 0, result.output
    scores = json.loads(result.stdout)["scores"]
    # John Smith/Person and IBM/Organization right; Boston is a Location in gold, Organization here
    assert scores["entities"]["per_type"] == {
        "Location": {"tp": 0, "fp": 0, "fn": 1, "precision": 0.0, "recall": 0.0, "f1": 0.0},
        "Organization": {"tp": 1, "fp": 1, "fn": 0, "precision": 0.5, "recall": 1.0, "f1": 0.6667},
        "Person": {"tp": 1, "fp": 0, "fn": 0, "precision": 1.0, "recall": 1.0, "f1": 1.0}}
    assert scores["relations"]["micro"]["tp"] == 1  # Work_For as works_for; Located_In is wrong
    assert json.loads(result.stdout)["gold_types_not_in_domain"] == []


def test_a_domain_object_with_no_file_is_a_configuration_error_before_any_extraction(tmp_path):
    """Extraction loads a domain by name or path: an in-memory domain with no file cannot be
    handed on, and says so instead of failing inside the loader."""
    import dataclasses

    import pytest

    from kgkit.catalog.load import load_domain
    from kgkit.errors import ConfigError

    loose = dataclasses.replace(load_domain("general"), source=None)
    with pytest.raises(ConfigError, match="no file to extract with"):
        evaluate(make_gold(tmp_path / "gold"), domain=loose, out_dir=tmp_path / "out")
    assert not (tmp_path / "out").exists()
