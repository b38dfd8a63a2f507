"""Citation intent through a model: one pass per sentence over real HTTP to the stub
provider; the sentence travels inside the untrusted fence, the answer is checked against
the seven functions, and a pass answering outside them falls back to the cue rules."""
from __future__ import annotations

from kgkit.backends.factory import create_backend
from kgkit.config.model import CacheConfig, Config, LLMConfig
from kgkit.scholarly.intent_model import classify
from support.stub_provider import Reply

KEY_ENV = "KGKIT_TEST_INTENT_KEY"


def test_model_answers_are_used_and_an_answer_outside_the_set_falls_back(stub_provider, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    stub_provider.script(Reply(content={"function": "extends"}),
                         Reply(content={"function": "praise"}), Reply(content={"function": "praise"}))
    llm = LLMConfig(model="openai/stub-model", api_base=stub_provider.openai_base, api_key_env=KEY_ENV,
                    backoff=0.0)
    backend = create_backend(Config(llm=llm, cache=CacheConfig(enabled=False)), "core")
    got = classify(["Graphs have a long history [1].", "We use the parser of [2]."], backend)
    assert got.functions == ["extends", "uses"]  # the second: the model's answer was no function; cue rules
    assert got.fallbacks == 1 and got.requests == 3  # the invalid answer was asked once more
    prompt = stub_provider.requests[0].messages[-1]["content"]
    assert "Graphs have a long history [1]." in prompt and "BEGIN UNTRUSTED DOCUMENT" in prompt
