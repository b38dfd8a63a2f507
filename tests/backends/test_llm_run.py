"""A whole extraction run against the stub provider: config picks the model, nothing leaks."""
from __future__ import annotations

import json

import pytest

import kgkit
from kgkit.config.model import CacheConfig, Config, LLMConfig
from support.stub_provider import Recorded, Reply

FAKE_KEY = "sk-kgkit-run-0d9e8f7a6b5c4d3e"
KEY_ENV = "KGKIT_TEST_RUN_KEY"
TEXT = "John Smith works for Acme Corp in Boston.\n"
ENTITIES = {"entities": [
    {"name": "John Smith", "type": "Person", "evidence": "John Smith"},
    {"name": "Acme Corp", "type": "Organization", "evidence": "Acme Corp"},
]}
RELATIONS = {"relations": [
    {"head": "John Smith", "relation": "Work_For", "tail": "Acme Corp", "evidence": "John Smith works for Acme Corp"},
]}


def answer_by_pass(request: Recorded) -> Reply:
    """Answer like a model would: entities for pass 1, relations among them for pass 2."""
    system = request.messages[0]["content"]
    return Reply.answer(ENTITIES if "typed entities" in system else RELATIONS)


@pytest.fixture
def document(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    path = tmp_path / "memo.txt"
    path.write_text(TEXT)
    return path


def config_for(stub, model: str, **cache) -> Config:
    base = stub.openai_base if model.startswith("openai/") else stub.anthropic_base
    llm = LLMConfig(model=model, api_base=base, api_key_env=KEY_ENV, backoff=0.0)
    return Config(llm=llm, cache=CacheConfig(**cache) if cache else CacheConfig(enabled=False))


def written_text(root) -> str:
    return "\n".join(p.read_text(errors="replace") for p in sorted(root.rglob("*")) if p.is_file())


@pytest.mark.parametrize("model", ["openai/test-model", "anthropic/claude-3-5-haiku-20241022"])
def test_extraction_runs_against_the_stub_and_the_key_stays_in_the_header(stub_provider, document, tmp_path, model):
    stub_provider.responder = answer_by_pass
    out = tmp_path / "out"

    [run] = kgkit.extract(document, domain="general", views=["binary"], config=config_for(stub_provider, model),
                          out_dir=out)

    [edge] = run.views["binary"]["edges"]
    names = {n["id"]: n["name"] for n in run.nodes}
    assert (names[edge["head"]], names[edge["tail"]]) == ("John Smith", "Acme Corp")
    assert edge["relation"] == "works_for"  # the binary view's label for Work_For
    assert run.manifest["calls"]["requests"] == len(stub_provider.requests) == 2
    assert run.manifest["model"]["core"]["model"] == model
    header = "authorization" if model.startswith("openai/") else "x-api-key"
    assert all(FAKE_KEY in r.headers[header] for r in stub_provider.requests)
    assert FAKE_KEY not in written_text(out)


def test_retries_show_in_the_manifest(stub_provider, document, tmp_path):
    stub_provider.script(Reply.error(429, "slow down", retry_after="0"), Reply.error(503, "busy"))
    stub_provider.responder = answer_by_pass

    [run] = kgkit.extract(document, domain="general", views=["binary"],
                          config=config_for(stub_provider, "openai/test-model"), out_dir=tmp_path / "out")

    assert run.manifest["calls"]["retries"] == 2
    assert run.manifest["calls"]["requests"] == 4
    assert run.views["binary"]["edges"]


def test_an_answer_invalid_after_the_re_ask_is_kept_for_review(stub_provider, document, tmp_path):
    junk = "I'm sorry, as an AI I cannot list entities."
    stub_provider.responder = lambda request: Reply.answer(junk)
    out = tmp_path / "out"

    [run] = kgkit.extract(document, domain="general", views=["binary"],
                          config=config_for(stub_provider, "openai/test-model"), out_dir=out)

    asked, reasked = stub_provider.requests[:2]
    assert reasked.messages[:-2] == asked.messages and reasked.messages[-2]["content"] == junk
    failure = next(f for f in run.manifest["failures"] if f["stage"] == "entities")
    assert "no JSON object found" in failure["error"]
    review = [json.loads(line) for line in (run.run_dir / "review.jsonl").read_text().splitlines()]
    assert {"stage": "entities", "raw": junk} in [{"stage": r["stage"], "raw": r["item"].get("raw")} for r in review]


def test_a_cached_re_run_sends_no_request_and_the_cache_holds_no_key(stub_provider, document, tmp_path):
    stub_provider.responder = answer_by_pass
    config = config_for(stub_provider, "openai/test-model", dir=tmp_path / "cache")

    [first] = kgkit.extract(document, domain="general", views=["binary"], config=config, out_dir=tmp_path / "one")
    sent = len(stub_provider.requests)
    [again] = kgkit.extract(document, domain="general", views=["binary"], config=config, out_dir=tmp_path / "two")

    assert sent == 2 and len(stub_provider.requests) == sent
    assert again.manifest["calls"]["cache_hits"] == 2 and again.manifest["calls"]["requests"] == 0
    assert again.views["binary"]["edges"] == first.views["binary"]["edges"]
    stored = b"".join(p.read_bytes() for p in (tmp_path / "cache").rglob("*") if p.is_file())
    assert stored and FAKE_KEY.encode() not in stored


@pytest.mark.parametrize("model, tokens_in", [
    ("openai/gpt-4o-mini", 1800),  # prompt_tokens_details.cached_tokens: part of prompt_tokens
    ("anthropic/claude-sonnet-4-5", 3000),  # cache_read_input_tokens: litellm adds them to input_tokens
])
def test_manifest_counts_cached_input_tokens_and_names_the_output_format(stub_provider, document, tmp_path, model,
                                                                         tokens_in):
    stub_provider.responder = lambda request: Reply(
        content=answer_by_pass(request).content, tokens_in=900, tokens_cached=600)

    [run] = kgkit.extract(document, domain="general", views=["binary"], config=config_for(stub_provider, model),
                          out_dir=tmp_path / "out")

    assert run.manifest["tokens"] == {"in": tokens_in, "out": 14, "cached_in": 1200}  # two passes, 600 cached each
    assert run.manifest["model"]["output_format"] == {"entities": "json_schema", "relations": "json_schema"}


def test_a_key_the_provider_echoes_in_an_answer_is_written_nowhere(stub_provider, document, tmp_path):
    """Issue 10 (8): the key inside a normal answer (a name, a quote, an invalid answer kept
    raw for review) is masked before anything is stored: nodes, views, review, state, cache."""
    echoed = {"entities": [*ENTITIES["entities"], {"name": f"Key {FAKE_KEY}", "type": "Organization",
                                                   "evidence": f"John Smith {FAKE_KEY}"}]}
    stub_provider.script(echoed, f"not JSON {FAKE_KEY}", f"still not JSON {FAKE_KEY}")
    cache = tmp_path / "cache"

    [run] = kgkit.extract(document, domain="general", views=["binary"],
                          config=config_for(stub_provider, "openai/test-model", dir=cache), out_dir=tmp_path / "out")

    assert len(stub_provider.requests) == 3  # the answer was used; the relation pass failed twice
    assert FAKE_KEY not in written_text(tmp_path / "out")
    assert not [p for p in cache.rglob("*") if p.is_file() and FAKE_KEY.encode() in p.read_bytes()]
    assert "***" in written_text(tmp_path / "out")  # masked, not dropped: the review still shows what came
