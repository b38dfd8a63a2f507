"""The query layer's two model-backed parts, against the stub provider over real HTTP: novelty's
LLM rubric (problem, mechanism, training, target domain) and typed retrieval's embedding list
(litellm's embedding API). Offline both are absent, and a failing provider leaves the
offline answer with the reason."""
from __future__ import annotations

import json

import pytest

from support.cli_support import kgkit
from support.graph_support import graph_url, postgres, small_runs  # noqa: F401  (fixtures)
from support.stub_provider import Reply
from kgkit.config.model import CacheConfig, Config, EmbeddingsConfig, LLMConfig
from kgkit.graph import GraphStore
from kgkit.query import Query
from kgkit.query.embeddings import Embedder
from kgkit.query.rubric import Rubric

KEY_ENV = "KGKIT_TEST_QUERY_KEY"
TEXT = "A licence agreement governed by the laws of the State of Texas, for analytics software."
# a toy embedding: one dimension per concept, whatever words name it (so "Lone Star" is near Texas)
CONCEPTS = [("texas", "lone star"), ("california", "golden state"), ("licen",), ("analytics",)]


def _vector(text: str) -> list[float]:
    low = text.lower()
    return [1.0 if any(w in low for w in words) else 0.0 for words in CONCEPTS] + [0.05]


def _embedding_replies(req):
    return Reply(vectors=[_vector(t) for t in req.body["input"]])


def _config(stub, **embeddings) -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0, retries=0)
    emb = EmbeddingsConfig(model="openai/stub-embed", api_base=stub.openai_base, api_key_env=KEY_ENV, **embeddings)
    return Config(llm=llm, cache=CacheConfig(enabled=False), embeddings=emb)


@pytest.fixture(autouse=True)
def _key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")


def _grades(closest="n1", grade=2):
    return {a: {"grade": grade, "closest": closest, "reason": f"{a}: shares the governing-law clause"}
            for a in ("problem", "mechanism", "training", "target_domain")}


def test_the_rubric_grades_four_aspects_against_the_neighbourhoods_it_was_sent(graph_url, small_runs, stub_provider):
    with GraphStore(graph_url) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        grades = _grades()
        grades["training"] = {"grade": 5, "closest": "n99", "reason": "not stated"}  # an id it was not given
        stub_provider.script(grades)
        q = Query.from_config(g, _config(stub_provider))
        answer = q.novelty(TEXT, k=3)
    [request] = stub_provider.requests
    assert request.path.endswith("/chat/completions")
    prompt = "\n".join(m["content"] for m in request.messages)
    assert "BEGIN UNTRUSTED DOCUMENT" in prompt and "State of Texas" in prompt and '"id": "n1"' in prompt
    rubric = answer.report["rubric"]
    assert answer.report["method"] == "rubric" and rubric["model"] == "openai/stub-model"
    assert rubric["neighbourhoods"] == [n.id for n in answer.nodes]
    assert rubric["aspects"]["problem"] == {"score": 0.25, "grade": 2, "closest": answer.nodes[0].id,
                                            "reason": "problem: shares the governing-law clause"}
    assert rubric["aspects"]["training"]["closest"] is None and rubric["unknown_closest"] == 1
    assert answer.report["novelty"] == rubric["novelty"] == round((0.25 * 3 + 1.0) / 4, 4)
    assert 0 <= answer.report["lexical_novelty"] < 1


def test_without_a_model_or_with_a_failing_one_novelty_is_lexical_and_says_why(graph_url, small_runs, stub_provider):
    with GraphStore(graph_url) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        offline = Query.from_config(g, Config()).novelty(TEXT)
        stub_provider.script(Reply.error(400, "model rejected the request"))
        failed = Query.from_config(g, _config(stub_provider)).novelty(TEXT)
    assert offline.report["rubric"] is None and offline.report["method"] == "lexical" and "LLM" in offline.note
    assert failed.report["rubric"] is None and "rubric model failed" in failed.note
    assert failed.report["novelty"] == offline.report["novelty"] == offline.report["lexical_novelty"]


def test_the_cli_grades_with_the_configured_model(small_runs, stub_provider, tmp_path):
    path = str(tmp_path / "g.sqlite")
    with GraphStore(path) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
    config = tmp_path / "kgkit.yaml"
    config.write_text(f"llm:\n  model: openai/stub-model\n  api_base: {stub_provider.openai_base}\n"
                      f"  api_key_env: {KEY_ENV}\n  retries: 0\ncache:\n  enabled: false\n", encoding="utf-8")
    stub_provider.script(_grades(grade=1))
    result = kgkit("query", "novelty", path, TEXT, "--config", str(config), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.output)["report"]
    assert report["method"] == "rubric" and report["novelty"] == 0.0 and len(stub_provider.requests) == 1
    stub_provider.script(_grades(grade=3))
    table = kgkit("query", "novelty", path, TEXT, "--config", str(config)).output
    assert "rubric (openai/stub-model): novelty 0.5" in table and "target domain: 0.5 (grade 3)" in table


def test_the_embedding_list_finds_what_no_word_of_the_query_names(graph_url, small_runs, stub_provider):
    stub_provider.responder = _embedding_replies
    with GraphStore(graph_url) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        places = {"reduce": "entity", "types": ["Jurisdiction"]}
        assert Query(g).search("Lone Star", **places).hits == []  # BM25 alone: no word matches
        q = Query.from_config(g, _config(stub_provider, batch=16))
        answer = q.search("Lone Star", **places)
        sent = len(stub_provider.requests)
        again = q.search("Lone Star", **places)
    assert answer.hits[0].name == "Texas" and answer.hits[0].via[0]["list"] == "embedding"
    assert answer.report["lists"]["embedding"] > 0 and answer.report["embeddings"]["model"] == "openai/stub-embed"
    assert all(r.path.endswith("/embeddings") and r.body["model"] == "stub-embed" for r in stub_provider.requests)
    assert all(len(r.body["input"]) <= 16 for r in stub_provider.requests) and sent > 1  # batched
    assert len(stub_provider.requests) == sent and again.hits == answer.hits  # every text embedded once


def test_a_large_tenant_embeds_the_full_text_hits_and_reports_the_rest_cut(graph_url, small_runs, stub_provider):
    stub_provider.responder = _embedding_replies
    with GraphStore(graph_url) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        answer = Query.from_config(g, _config(stub_provider, texts=5)).search("Texas law")
    embedded = {t for r in stub_provider.requests for t in r.body["input"]}
    assert "Texas law" in embedded and any("Texas" in t for t in embedded - {"Texas law"})
    assert any(c.limit == "embeddings" and c.dropped > 0 for c in answer.cuts)
    assert answer.hits and answer.hits[0].name == "gamma"


def test_a_failing_embedding_provider_leaves_the_bm25_lists(graph_url, small_runs, stub_provider):
    stub_provider.responder = lambda req: Reply.error(400, "no such model")
    with GraphStore(graph_url) as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        plain = Query(g).search("Texas law")
        answer = Query.from_config(g, _config(stub_provider)).search("Texas law")
    assert [h.id for h in answer.hits] == [h.id for h in plain.hits] and "embedding model failed" in answer.note
    assert "embedding" not in answer.report["lists"]


def test_an_unset_key_variable_is_a_configuration_error(stub_provider, monkeypatch):
    from kgkit.errors import ProviderConfigError

    monkeypatch.delenv(KEY_ENV)
    with pytest.raises(ProviderConfigError, match=KEY_ENV):
        Embedder(_config(stub_provider).embeddings).embed(["x"])
    assert Rubric(_config(stub_provider)).model == "openai/stub-model"
