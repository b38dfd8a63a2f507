"""benchmarks/ask.py on a small store and question file written here (no shared data): one
answer line per question and the four figures, offline and through the scripted model over
real HTTP; ``--model local/PATH.gguf`` goes to the in-process backend through the same
config (a missing file is named, exit 2, nothing written)."""
from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

from support.graph_support import small_runs  # noqa: F401  (fixture)
from kgkit.graph import GraphStore

ROOT = Path(__file__).resolve().parents[2]
QUESTIONS = [
    {"id": "q_texas", "kind": "governed_by", "question": "Which contracts are governed by the law of Texas?",
     "params": {"jurisdiction": "Texas"}, "answer": ["gamma"]},
    {"id": "q_quill", "kind": "party_to", "question": "Which contracts is Quill Media Corp. a party to?",
     "params": {"party": "Quill Media Corp."}, "answer": ["gamma"]},
]
GOLD = {"gamma": [("GOVERNING_LAW", "Texas"), ("HAS_PARTY", "Quill Media Corp."), ("HAS_PARTY", "Harbor Analytics Ltd.")]}


def _bench():
    spec = importlib.util.spec_from_file_location("ask_bench", ROOT / "benchmarks" / "ask.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture()
def files(small_runs, tmp_path):  # noqa: F811
    graph = tmp_path / "g.sqlite"
    with GraphStore(str(graph)) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
    questions = tmp_path / "questions.jsonl"
    questions.write_text("".join(json.dumps(q) + "\n" for q in QUESTIONS), encoding="utf-8")
    gold = tmp_path / "gold"
    gold.mkdir()
    for doc, relations in GOLD.items():
        data = {"relations": [{"relation": r, "head": "LICENSE AGREEMENT", "tail": t} for r, t in relations]}
        (gold / f"{doc}.gold.json").write_text(json.dumps(data), encoding="utf-8")
    return graph, questions, gold, tmp_path / "answers.jsonl"


@pytest.mark.parametrize("model", ["offline", "stub"])
def test_the_benchmark_answers_and_scores_each_question(files, model, capsys):
    graph, questions, gold, out = files
    rc = _bench().main(["--questions", str(questions), "--graph", str(graph), "--out", str(out), "--gold", str(gold),
                        "--model", model])
    printed = capsys.readouterr().out
    assert rc == 0, printed
    lines = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    assert [a["id"] for a in lines] == ["q_texas", "q_quill"]
    assert all(a["answer"] == ["gamma"] and a["verified"] and a["evidence"] for a in lines), lines
    total = next(line for line in printed.splitlines() if line.startswith("all "))
    assert total.split()[1:] == ["2", "1.000", "1.000", "1.000", "0.000"], printed
    assert f"model {model}" in printed


def test_a_local_model_goes_through_the_same_config_and_a_missing_file_is_named(files, tmp_path, capsys):
    from kgkit.backends.clients import pick_client

    graph, questions, gold, out = files
    bench = _bench()
    with pytest.raises(SystemExit) as exit_:
        bench.main(["--questions", str(questions), "--graph", str(graph), "--out", str(out),
                    "--model", f"local/{tmp_path / 'no-such.gguf'}"])
    assert exit_.value.code == 2 and "no-such.gguf: no model file at this path" in capsys.readouterr().err
    assert not out.exists()
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF")  # only its path is read here: nothing loads it
    config, server = bench.model_config(bench.model_mode(f"local/{model}"))
    assert server is None and config.llm.model == f"local/{model}" and pick_client(config.llm) == "local"
    assert not config.cache.enabled and config.ask.deadline >= 3600
