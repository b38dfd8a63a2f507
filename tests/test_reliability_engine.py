"""The engine against answers nobody should trust and run folders nobody should trust.

Each case is a promise of docs/security.md or docs/reliability.md: an entity the model
invents (its quote is not in the text) never reaches nodes.json, a view or a later prompt;
answers are bounded before anything is stored or sent; a run folder's symlinks are never
followed; two runs into one folder never both pay or destroy each other's files; a bad
--out is refused before any call; files honour the umask; an earlier run's views are kept.
Model answers come from tests/stub_provider.py over real HTTP where the case is about
what a provider sends.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import kgkit
from kgkit.config.model import Config, LLMConfig

from cli_support import kgkit as run_cli
from engine_support import CHUNK_SIZE, PEOPLE, ScriptedBackend, write_inputs
from fault_script import chunk_text, stage_of
from stub_provider import Reply

INVENTED = "Zara Quill"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KGKIT_TEST_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)


def stub_config(stub) -> Config:
    return Config(chunk_size=CHUNK_SIZE, chunk_overlap=0,
                  llm=LLMConfig(model="openai/test-model", api_base=stub.openai_base, api_key_env="KGKIT_TEST_KEY",
                                backoff=0.0, retries=0))


def people_in(text: str, extra: list[dict] | None = None) -> dict:
    found = [{"name": p, "type": "Person", "evidence": f"{p} joined", "confidence": 0.9} for p in PEOPLE if p in text]
    return {"entities": found + (extra or [])}


def test_an_invented_entity_is_held_back_from_nodes_views_and_the_later_passes_prompts(stub_provider, tmp_path):
    """Issue 9's done-when: the model names an entity whose evidence is not in the text."""
    invented = {"name": INVENTED, "type": "Person", "evidence": f"{INVENTED} signed the merger", "confidence": 0.95}

    def answer(request):
        stage, text = stage_of(request), chunk_text(request)
        if stage == "entities":
            return Reply.answer(people_in(text, [invented]))
        if stage == "relations":
            return Reply.answer({"relations": [{"head": INVENTED, "relation": "Work_For", "tail": "Acme Corp",
                                                "evidence": f"{INVENTED} joined Acme Corp"}]})
        if stage == "nary":
            return Reply.answer({"hyperedges": []})
        raise AssertionError(stage)

    stub_provider.responder = answer
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "nary"],
                             config=stub_config(stub_provider), out_dir=tmp_path / "out")
    stages = [stage_of(r) for r in stub_provider.requests]
    assert stages == ["entities"] * 2 + ["relations"] * 2 + ["nary"] * 2
    later = [r for r in stub_provider.requests if stage_of(r) != "entities"]
    assert all(INVENTED not in r.raw.decode("utf-8") for r in later)  # in no later prompt
    nodes = json.loads((result.run_dir / "nodes.json").read_text())["nodes"]
    assert [n["name"] for n in nodes] == ["Ann Lee", "Bob Stone"]
    assert INVENTED not in (result.run_dir / "views" / "binary.json").read_text()
    held = [r for r in result.review if r["item"].get("name") == INVENTED]
    assert len(held) == 2 and all(r["reason"].startswith("held back (unverified_evidence)") for r in held)
    assert result.manifest["counts"]["held_back"]["entities"] == {"unverified_evidence": 2}
    # spans are the names' own characters, never the whole chunk
    text = inputs["doc"].read_text()
    assert all(text[m["span"][0]:m["span"][1]] == n["name"] for n in nodes for m in n["mentions"])


def test_passes_with_nothing_to_work_on_are_not_sent_and_counted_as_skipped(stub_provider, tmp_path):
    """No entity in the document: no relation pass, no temporal pass (its edges join two
    entities); the nary pass still goes, as a role of the domain takes a date literal."""
    def answer(request):
        return Reply.answer({"entities": {"entities": []}, "nary": {"hyperedges": []}}[stage_of(request)])

    stub_provider.responder = answer
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "temporal", "nary"],
                             config=stub_config(stub_provider), out_dir=tmp_path / "out")
    assert [stage_of(r) for r in stub_provider.requests] == ["entities"] * 2 + ["nary"] * 2
    calls = result.manifest["calls"]
    assert calls["skipped"] == {"relations": 2, "temporal": 2}
    assert calls["requests"] == 4 and calls["total"] == 4
    assert result.views["temporal"]["edges"] == [] and result.ok
