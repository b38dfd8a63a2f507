"""Numbers and hyper-parameters stay out of the scholarly domain's relations (module E)
unless a domain asks for them: one setting, ``not_in_relations``, applied when a domain is
built, so every backend, prompt and mode sees the same relations. The text is our own."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.errors import ValidationError
from kgkit.catalog.load import load_domain
from kgkit.catalog.build import build_domain

TEXT = ("Sparse Routing for Reading Comprehension\n\nWe propose a routing network for question answering. "
        "Our routing network achieves 91.2% accuracy on the SQuAD dataset, outperforming the LSTM baseline. "
        "The routing network uses self-attention and is trained with a learning rate of 0.001 for 10 epochs.\n")
NUMBERS = ("Score", "ImplementationDetail")


def _child(tmp_path: Path, body: str) -> Path:
    path = tmp_path / "child.yaml"
    path.write_text(f"name: child\nextends: scholarly\n{body}", encoding="utf-8")
    return path


def _ends(domain) -> set[str]:
    """Every entity type a relation end or a role may take, and every literal kind."""
    out = {t for r in domain.relation_types for t in r.head + r.tail}
    for item in domain.nary_relation_types + domain.event_types:
        out |= {t for role in item.roles for t in role.types} | {role.literal for role in item.roles if role.literal}
    return out | {q.type for q in domain.qualifiers}


def test_scholarly_keeps_numbers_and_hyper_parameters_out_of_every_relation():
    domain = load_domain("scholarly")
    ends = _ends(domain)
    assert not ends & {*NUMBERS, "percent", "quantity"}
    assert {"Method", "Dataset", "Metric", "Paper"} <= ends  # the rest is still there
    causes = next(r for r in domain.relation_types if r.name == "CAUSES")  # "*" ends: every other type
    assert causes.allows("Method", "Claim") and not causes.allows("Score", "Method")
    assert not causes.allows("Method", "ImplementationDetail")
    evaluation = next(r for r in domain.nary_relation_types if r.name == "EvaluationResult")
    assert "score" not in {role.name for role in evaluation.roles}
    assert {t.name for t in domain.entity_types} >= set(NUMBERS)  # still entities


def test_a_child_domain_includes_them_again_with_one_setting(tmp_path):
    domain = build_domain(_child(tmp_path, "not_in_relations: {}\n"))
    ends = _ends(domain)
    assert {"*", "percent"} <= ends  # "*" takes Score and ImplementationDetail again
    assert "score" in {q.name for q in domain.qualifiers}
    causes = next(r for r in domain.relation_types if r.name == "CAUSES")
    assert causes.head == ("*",) and causes.allows("Score", "Method")


def test_extraction_writes_no_score_role_by_default_and_one_when_asked(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    text = tmp_path / "paper.txt"
    text.write_text(TEXT, encoding="utf-8")
    found = {}
    for name, domain in (("default", "scholarly"), ("numbers", str(_child(tmp_path, "not_in_relations: {}\n")))):
        out = tmp_path / name
        result = CliRunner().invoke(cli, ["extract", "--domain", domain, str(text), "--out", str(out),
                                          "--view", "binary", "--view", "nary"])
        assert result.exit_code == 0, result.output
        nodes = {n["id"]: n for n in json.loads((out / "paper" / "nodes.json").read_text())["nodes"]}
        assert "Score" in {n["type"] for n in nodes.values()}  # "91.2%" is an entity either way
        hyper = json.loads((out / "paper" / "views" / "nary.json").read_text())["hyperedges"]
        edges = json.loads((out / "paper" / "views" / "binary.json").read_text())["edges"]
        typed = {nodes[n]["type"] for e in edges for n in (e["head"], e["tail"])}
        roles = {role for h in hyper if h["relation"] == "EvaluationResult" for role in h["roles"]}
        found[name] = (typed, roles)
    assert found["default"][1] >= {"method", "dataset", "metric"} and "score" not in found["default"][1]
    assert not found["default"][0] & set(NUMBERS)
    assert "score" in found["numbers"][1]


def test_a_type_the_domain_does_not_declare_is_named_with_a_suggestion(tmp_path):
    with pytest.raises(ValidationError) as err:
        build_domain(_child(tmp_path, "not_in_relations:\n  types: [Scores]\n"))
    text = err.value.format() if hasattr(err.value, "format") else str(err.value)
    assert "Scores" in text and "Score" in text and "child.yaml:4" in text
    with pytest.raises(ValidationError):
        build_domain(_child(tmp_path, "not_in_relations:\n  literals: [money, colour]\n"))
