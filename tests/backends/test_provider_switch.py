"""Issue 3's promise, as a user meets it: the same `kgkit extract` over a real PDF runs on
the offline backend, then against a provider by editing only `llm.model` and `llm.api_base`
in kgkit.yaml — no code, no other key."""
from __future__ import annotations

import json

import pytest

from kgkit.cli import main
from support.shared_data import CONTRACT_PDF as PDF
from support.stub_provider import Recorded, Reply

PARTY = "Cool Technologies Inc."  # as the PDF's text layer spells it


def answer_from_the_chunk(request: Recorded) -> Reply:
    """A model that names the party where the chunk it was sent states it."""
    system, user = request.messages[0]["content"], request.messages[-1]["content"]
    if "typed entities" not in system:
        return Reply.answer({"relations": []})
    found = PARTY in user
    return Reply.answer({"entities": [{"name": PARTY, "type": "Organization", "evidence": PARTY}] if found else []})


def extract(tmp_path, config_text: str) -> tuple[int, dict, list]:
    tmp_path.mkdir()
    (tmp_path / "kgkit.yaml").write_text(config_text, encoding="utf-8")
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["extract", "--config", str(tmp_path / "kgkit.yaml"), "--domain", "general", "--view", "binary",
              "--out", str(out), str(PDF)])
    run = out / PDF.stem
    manifest = json.loads((run / "manifest.json").read_text(encoding="utf-8"))
    nodes = json.loads((run / "nodes.json").read_text(encoding="utf-8"))["nodes"]
    return done.value.code, manifest, nodes


def test_the_same_extraction_runs_offline_and_against_a_provider_by_changing_two_lines(
        stub_provider, tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-switch")  # litellm's usual variable for openai/
    stub_provider.responder = answer_from_the_chunk
    common = "llm:\n  retries: 0\n"

    offline_code, offline, offline_nodes = extract(tmp_path / "offline", common)
    assert offline_code == 0 and offline["model"]["core"]["backend"] == "offline"
    assert offline["calls"]["requests"] == 0 and stub_provider.requests == []
    n = offline["input"]["chunks"]
    assert n > 1 and any(node["name"].startswith("Cool Technologies") for node in offline_nodes)

    switched = common + f"  model: openai/test-model\n  api_base: {stub_provider.openai_base}\n"
    code, manifest, nodes = extract(tmp_path / "provider", switched)

    assert code == 0 and manifest["model"]["core"]["model"] == "openai/test-model"
    assert manifest["input"]["chunks"] == n
    assert manifest["calls"]["requests"] == len(stub_provider.requests) == 2 * n  # entities + relations per chunk
    assert all(r.path == "/v1/chat/completions" for r in stub_provider.requests)
    assert [node["name"] for node in nodes] == [PARTY]
