"""``state/batch.json`` of the wrong shape (hand-edited, truncated, another program's):
``extract --resume`` and ``kgkit batch status`` name the file and the place, exit 2, and
send nothing."""
from __future__ import annotations

import json

import pytest

from support.cli_support import kgkit as run_cli
from kgkit.errors import EXIT_INPUT
from test_batch import inputs, write_config  # noqa: F401  (fixture)

JOB = {"id": "batch_1", "wire": "openai", "model": "openai/gpt-4o-mini", "stage": "entities", "lines": ["k1"],
       "collected": False, "status": "submitted"}
SHAPES = {
    "a list": ([], "the top level: "),
    "an empty object": ({}, "the top level: \"jobs\" is a required property"),
    "null": (None, "the top level: "),
    "a job without id": ({"jobs": [{k: v for k, v in JOB.items() if k != "id"}], "passes": {}},
                         "jobs/0: \"id\" is a required property"),
    "a job without model": ({"jobs": [{k: v for k, v in JOB.items() if k != "model"}], "passes": {}},
                            "jobs/0: \"model\" is a required property"),
    "lines that are a number": ({"jobs": [{**JOB, "lines": 3}], "passes": {}}, "jobs/0/lines: "),
    "a pass whose answers are text": ({"jobs": [JOB], "passes": {"k1": {"answers": "x", "errors": []}}},
                                      "passes/k1/answers: "),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_a_batch_record_of_the_wrong_shape_is_named(stub_provider, inputs, tmp_path, case):  # noqa: F811
    record, expected = SHAPES[case]
    cfg = write_config(stub_provider, "openai", tmp_path)
    state = tmp_path / "out" / "staff_notes" / "state"
    state.mkdir(parents=True)
    (state / "batch.json").write_text(json.dumps(record))

    resumed = run_cli("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--resume",
                      "--config", str(cfg), "--out", str(tmp_path / "out"))
    status = run_cli("batch", "status", "--config", str(cfg), "--out", str(tmp_path / "out"))

    for result in (resumed, status):
        assert result.exit_code == EXIT_INPUT, result.output
        assert "batch.json: " + expected in result.stderr and "not a batch record kgkit wrote" in result.stderr
        assert "Traceback" not in result.output
    assert stub_provider.requests == [] and stub_provider.batches == {}
