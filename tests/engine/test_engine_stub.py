"""The response cache through litellm and the stub provider: what a rerun or a new view sends.

Separate from test_engine_run.py because importing litellm alone takes seconds.
"""
from __future__ import annotations

import pytest

import kgkit
from kgkit.config.model import Config

from support.engine_support import CHUNK_SIZE, write_inputs


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.chdir(tmp_path)


def test_against_the_stub_provider_a_rerun_sends_nothing_and_a_new_view_only_its_passes(stub_provider, tmp_path,
                                                                                        monkeypatch):
    """Through litellm and the response cache (fresh run folders, so state/ cannot help)."""
    from kgkit.config.model import CacheConfig, LLMConfig
    from support.stub_provider import Reply

    def answer(request):
        system = request.messages[0]["content"]
        for cue, reply in (("typed entities", {"entities": [{"name": "Ann Lee", "type": "Person"}]}),
                           ("binary relations", {"relations": []}), ("n-ary", {"hyperedges": []}),
                           ("events", {"events": []})):
            if cue in system:
                return Reply.answer(reply)
        raise AssertionError(system)

    stub_provider.responder = answer
    monkeypatch.setenv("KGKIT_TEST_KEY", "sk-test")
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    cfg = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0,
                 llm=LLMConfig(model="openai/test-model", api_base=stub_provider.openai_base,
                               api_key_env="KGKIT_TEST_KEY", backoff=0.0),
                 cache=CacheConfig(enabled=True, dir=tmp_path / "cache"))

    def extract(views, out):
        before = len(stub_provider.requests)
        [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=views, config=cfg, out_dir=out)
        return result, len(stub_provider.requests) - before

    first, sent = extract(["nary"], tmp_path / "one")
    assert sent == 6 and first.manifest["calls"]["requests"] == 6  # n = 2: 2n core + n nary
    again, sent = extract(["nary"], tmp_path / "two")
    assert sent == 0 and again.manifest["calls"]["cache_hits"] == 6 and again.views == first.views
    added, sent = extract(["nary", "event"], tmp_path / "three")
    assert sent == 2 and added.manifest["calls"]["cache_hits"] == 6


def test_dry_run_prices_a_known_model_from_litellms_table_and_calls_nothing(tmp_path, stub_provider):
    from kgkit.config.model import LLMConfig
    from kgkit.engine.options import RunOptions
    from kgkit.engine.plan import plan

    inputs = write_inputs(tmp_path / "in")
    priced = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, llm=LLMConfig(model="gpt-4o-mini"))
    [p] = plan(inputs["doc"], RunOptions(domain=inputs["domain"], views=["binary", "nary"]), config=priced)
    assert p.calls == {"entities": 8, "relations": 8, "upgrade": {"nary": 8}, "projection": 0, "total": 24,
                       "naive": 32, "skipped": {}, "saved": 0}
    assert p.cost is not None and 0 < p.cost < 0.1
    unknown = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, llm=LLMConfig(model="openai/no-such-model-xyz",
                                                                           api_base=stub_provider.openai_base))
    assert plan(inputs["doc"], RunOptions(domain=inputs["domain"], views=["binary"]), config=unknown)[0].cost is None
    assert stub_provider.requests == []
