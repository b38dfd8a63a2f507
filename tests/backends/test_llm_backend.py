"""The litellm backend over real HTTP: litellm's own client talks to a stub on 127.0.0.1."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from kgkit.backends.base import ENTITIES, RELATIONS, PassRequest
from kgkit.backends.budget import answer_items, answer_tokens, decoding_schema
from kgkit.backends.factory import create_backend
from kgkit.backends.llm import LLMBackend
from kgkit.config.model import CacheConfig, Config, LimitsConfig, LLMConfig
from kgkit.documents.types import Chunk
from kgkit.errors import ProviderError
from kgkit.formats.model import Domain, EntityType, RelationType
from support.stub_provider import Reply

FAKE_KEY = "sk-kgkit-test-7f3a9c1e5b2d4680"
KEY_ENV = "KGKIT_TEST_PROVIDER_KEY"
WIRES = {
    "openai": ("openai/test-model", lambda s: s.openai_base, "/v1/chat/completions"),
    "anthropic": ("anthropic/claude-3-5-haiku-20241022", lambda s: s.anthropic_base, "/v1/messages"),
}

ENTITIES_SCHEMA = {
    "type": "object",
    "required": ["entities"],
    "properties": {
        "entities": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["name", "type"],
                "properties": {"name": {"type": "string", "minLength": 1}, "type": {"type": "string"}},
            },
        }
    },
}
RELATIONS_SCHEMA = {
    "type": "object",
    "required": ["relations"],
    "properties": {"relations": {"type": "array", "items": {"type": "object", "required": ["head", "relation", "tail"]}}},
}
DOMAIN = Domain(
    name="legal",
    entity_types=(EntityType("Party", "A party to the contract"), EntityType("Date")),
    relation_types=(RelationType("signed_on", head=("Party",), tail=("Date",)),),
)
TEXT = "Acme Corp signed the agreement on 1 March 2024."
ANSWER = {"entities": [{"name": "Acme Corp", "type": "Party"}, {"name": "1 March 2024", "type": "Date"}]}


def entities_request(text: str = TEXT, schema=ENTITIES_SCHEMA, **kw) -> PassRequest:
    chunk = Chunk(id="c_test", doc_id="d_test", index=0, text=text, start=0, end=len(text))
    return PassRequest(
        kind=ENTITIES, stage="entities", chunk=chunk, schema=schema,
        context={"domain": DOMAIN, "skills": []}, prompt="entities.j2", **kw,
    )


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    return FAKE_KEY


def llm_config(stub, wire="openai", **kw) -> LLMConfig:
    """The backend's settings against ``stub``. The timeout is generous: where a test is not
    about the timeout, a loaded machine (or litellm's imports on a wire's first request, which
    fall inside it) must never turn an answer into a retry."""
    model, base, _ = WIRES[wire]
    settings = {"model": model, "api_base": base(stub), "api_key_env": KEY_ENV, "backoff": 0.01, "timeout": 60.0}
    settings.update(kw)
    return LLMConfig(**settings)


def backend(stub, wire="openai", delays=None, **kw) -> LLMBackend:
    return LLMBackend(llm_config(stub, wire, **kw), sleep=(delays.append if delays is not None else lambda s: None))


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_same_pass_runs_against_each_wire_format_by_config_only(stub_provider, key, wire):
    stub_provider.script(ANSWER)
    config = Config(llm=llm_config(stub_provider, wire), cache=CacheConfig(enabled=False))

    result = create_backend(config).run(entities_request())

    assert result.ok and result.data == ANSWER
    assert (result.requests, result.retries) == (1, 0)
    assert (result.usage.tokens_in, result.usage.tokens_out) == (11, 7)
    [sent] = stub_provider.requests
    model, _, path = WIRES[wire]
    assert sent.path == path
    assert sent.body["model"] == model.split("/", 1)[1]
    assert sent.body["temperature"] == 0
    assert sent.body["max_tokens"] == answer_tokens(entities_request(), 2048, LimitsConfig())  # sized to the chunk
    if wire == "openai":  # an OpenAI-compatible server at api_base: JSON mode held to the pass's schema
        assert sent.headers["authorization"] == f"Bearer {FAKE_KEY}"
        assert sent.body["response_format"] == {"type": "json_object", "schema": decoding_schema(
            ENTITIES_SCHEMA, answer_items(entities_request(), LimitsConfig()), entities_request())}
        item = sent.body["response_format"]["schema"]["properties"]["entities"]["items"]
        assert item["properties"]["type"] == {"enum": ["Date", "Party"]}  # the domain's types, nothing else
    else:
        assert sent.headers["x-api-key"] == FAKE_KEY
    system, user = sent.messages
    assert system["role"] == "system" and "untrusted" in system["content"]
    assert TEXT in user["content"]


def test_key_appears_in_no_result_description_or_cache_key(stub_provider, key):
    stub_provider.script("not json at all", "still not json")
    b = backend(stub_provider)
    request = entities_request()

    result = b.run(request)

    assert not result.ok
    exposed = json.dumps([repr(result), b.describe(), b.cache_key_parts(request)], default=str)
    assert FAKE_KEY not in exposed
    assert stub_provider.requests[0].headers["authorization"] == f"Bearer {FAKE_KEY}"


def test_describe_gives_host_only_and_parameters(stub_provider, key):
    b = backend(stub_provider, api_base=stub_provider.openai_base.replace("http://", "http://user:pw@"))
    described = b.describe()
    assert described["model"] == "openai/test-model"
    assert described["api_base_host"] == stub_provider.url.removeprefix("http://")
    assert described["temperature"] == 0.0 and described["max_tokens"] == 2048
    assert "pw" not in json.dumps(described)
    assert backend(stub_provider, api_base=stub_provider.openai_base, timeout=1.0, retries=9).describe() == {
        "backend": "litellm", "model": "openai/test-model", "temperature": 0.0, "max_tokens": 2048,
        "json_mode": True, "api_base_host": described["api_base_host"],
    }  # transport settings stay out: raising llm.retries before --resume keeps completed passes


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_429_with_retry_after_waits_what_the_provider_asked(stub_provider, key, wire):
    stub_provider.script(Reply.error(429, "slow down", retry_after="2"), ANSWER)
    delays: list[float] = []

    result = backend(stub_provider, wire, delays).run(entities_request())

    assert result.data == ANSWER
    assert delays == [2.0]
    assert (result.requests, result.retries) == (2, 1)
    assert len(stub_provider.requests) == 2


def test_retry_after_as_http_date_is_honoured(stub_provider, key):
    stub_provider.script(Reply.error(503, "maintenance", retry_after="Wed, 21 Oct 2015 07:28:00 GMT"), ANSWER)
    delays: list[float] = []

    result = backend(stub_provider, delays=delays).run(entities_request())

    assert result.ok and delays == [0.0]  # a date in the past: retry at once


def test_429_without_retry_after_backs_off_exponentially_then_gives_up(stub_provider, key):
    stub_provider.script(*[Reply.error(429, "rate limited") for _ in range(4)])
    delays: list[float] = []

    with pytest.raises(ProviderError) as err:
        backend(stub_provider, delays=delays, retries=3, backoff=0.01).run(entities_request())

    assert delays == pytest.approx([0.01, 0.02, 0.04])
    assert len(stub_provider.requests) == 4
    assert err.value.exit_code == 3
    assert "after 4 attempts" in err.value.message
    assert "HTTP 429: rate limited" in err.value.message


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_500_is_retried_and_gives_up_at_the_limit_with_a_clear_message(stub_provider, key, wire):
    stub_provider.script(*[Reply.error(500, "upstream exploded") for _ in range(3)])

    with pytest.raises(ProviderError) as err:
        backend(stub_provider, wire, retries=2).run(entities_request())

    assert len(stub_provider.requests) == 3
    assert (err.value.requests, err.value.retries) == (3, 2)  # spent before giving up, for the manifest
    assert err.value.message == f"{WIRES[wire][0]}: provider failed after 3 attempts: HTTP 500: upstream exploded"
    assert "llm.retries" in err.value.hint


def test_500_then_success_counts_the_retry(stub_provider, key):
    stub_provider.script(Reply.error(502, "bad gateway"), Reply.error(500, "again"), ANSWER)

    result = backend(stub_provider, retries=3).run(entities_request())

    assert result.data == ANSWER and (result.requests, result.retries) == (3, 2)
    assert (result.usage.tokens_in, result.usage.tokens_out) == (11, 7)  # failed attempts carry no usage


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_timeout_dropped_connection_and_garbled_body_are_retried(stub_provider, key, wire):
    """The first request hangs until the stub stops, so only the timeout can end it; the
    others answer at once. The wire's first request is made before (litellm imports its
    handlers then, inside the deadline: seconds on a loaded machine), so the timeout, short
    enough to keep the test quick, is still many times what an answer takes."""
    stub_provider.script(ANSWER)
    assert backend(stub_provider, wire).run(entities_request()).ok
    stub_provider.script(Reply(delay=3600), Reply(drop=True), Reply(body="<html>502 Bad Gateway</html>"), ANSWER)

    result = backend(stub_provider, wire, timeout=3.0, retries=3).run(entities_request())

    assert result.data == ANSWER and (result.requests, result.retries) == (4, 3)


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_rejected_key_is_not_retried_and_names_the_variable(stub_provider, key, wire):
    stub_provider.script(Reply.error(401, f"invalid api key {FAKE_KEY}"))

    with pytest.raises(ProviderError) as err:
        backend(stub_provider, wire, retries=3).run(entities_request())

    assert len(stub_provider.requests) == 1
    assert "rejected the API key (HTTP 401" in err.value.message
    assert KEY_ENV in err.value.hint
    assert FAKE_KEY not in err.value.format()


def test_missing_key_variable_fails_before_any_request(stub_provider, monkeypatch):
    monkeypatch.delenv(KEY_ENV, raising=False)

    with pytest.raises(ProviderError, match=f"the environment variable {KEY_ENV} .* is not set"):
        backend(stub_provider).run(entities_request())

    assert stub_provider.requests == []


def test_bad_request_is_not_retried(stub_provider, key):
    stub_provider.script(Reply.error(400, "model not found: test-model"))

    with pytest.raises(ProviderError, match="refused the request: HTTP 400: model not found"):
        backend(stub_provider, retries=3).run(entities_request())

    assert len(stub_provider.requests) == 1


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_invalid_json_is_re_asked_once_with_the_error_and_the_second_answer_used(stub_provider, key, wire):
    stub_provider.script('{"entities": [{"name": "Acme Corp", "type": ', ANSWER)

    result = backend(stub_provider, wire).run(entities_request())

    assert result.ok and result.data == ANSWER
    assert result.requests == 2 and result.retries == 0
    assert (result.usage.tokens_in, result.usage.tokens_out) == (22, 14)
    first, second = stub_provider.requests
    assert second.messages[: len(first.messages)] == first.messages
    assistant, reask = second.messages[-2:]
    assert assistant["role"] == "assistant"
    assert assistant["content"].strip() == '{"entities": [{"name": "Acme Corp", "type":'
    assert reask["role"] == "user"
    assert "cut off before it closes" in reask["content"]


def test_schema_violation_is_re_asked_and_a_second_failure_is_kept_for_review(stub_provider, key):
    bad = {"entities": [{"name": "", "type": "Party"}]}
    worse = "Sorry, I cannot help with that."
    stub_provider.script(bad, worse)

    result = backend(stub_provider).run(entities_request())

    assert not result.ok and result.data is None
    assert result.raw == worse
    assert result.error.startswith("no JSON object found (still invalid after one re-ask; first answer: schema")
    reask = stub_provider.requests[1].messages[-1]["content"]
    assert "schema violation at entities/0/name" in reask


def test_prose_and_code_fences_around_the_json_need_no_re_ask(stub_provider, key):
    stub_provider.script("Here is the JSON you asked for:\n```json\n" + json.dumps(ANSWER) + "\n```\nHope it helps!")

    result = backend(stub_provider).run(entities_request())

    assert result.data == ANSWER and result.requests == 1


def test_answer_cut_at_the_token_limit_says_so(stub_provider, key):
    stub_provider.script(
        Reply.answer('{"entities": [{"name": "Ac', finish_reason="length"),
        Reply.answer('{"entities": [', finish_reason="length"),
    )

    result = backend(stub_provider, max_tokens=16).run(entities_request())

    assert not result.ok
    assert "stopped at max_tokens=16" in result.error
    assert stub_provider.requests[0].body["max_tokens"] == 16


def test_rollout_temperature_reaches_the_provider(stub_provider, key):
    stub_provider.script(ANSWER)

    backend(stub_provider).run(entities_request(temperature=0.7, sample=2))

    assert stub_provider.requests[0].body["temperature"] == 0.7


def test_cache_key_parts_change_with_what_changes_the_answer(stub_provider, key):
    b = backend(stub_provider)
    base = b.cache_key_parts(entities_request())

    assert base == backend(stub_provider, timeout=1.0, api_base="http://elsewhere:1/v1").cache_key_parts(
        entities_request()
    )
    assert base != b.cache_key_parts(entities_request(sample=1))
    assert base != b.cache_key_parts(entities_request(text=TEXT + " Beta LLC too."))
    assert base != backend(stub_provider, model="openai/other").cache_key_parts(entities_request())
    assert stub_provider.requests == []


def test_cost_comes_from_litellms_price_table_when_it_knows_the_model(stub_provider, key):
    stub_provider.script(ANSWER, ANSWER)

    priced = backend(stub_provider, model="openai/gpt-4o-mini").run(entities_request())
    unpriced = backend(stub_provider).run(entities_request())

    assert priced.usage.cost is not None and priced.usage.cost > 0
    assert unpriced.usage.cost is None


def test_stage_overrides_pick_the_model_and_no_model_means_offline(stub_provider, key):
    from kgkit.backends.offline import OfflineBackend
    from kgkit.config.model import StageLLM

    llm = llm_config(stub_provider, stages={"upgrades": StageLLM(model="openai/cheap-model", max_tokens=99)})
    config = Config(llm=llm, cache=CacheConfig(enabled=False))
    stub_provider.script(ANSWER)

    create_backend(config, "upgrades").run(entities_request())

    assert stub_provider.requests[0].body["model"] == "cheap-model"
    assert stub_provider.requests[0].body["max_tokens"] == 99
    assert create_backend(config, "core").describe()["model"] == "openai/test-model"
    assert isinstance(create_backend(Config()), OfflineBackend)


def test_relations_pass_sends_the_document_entities(stub_provider, key):
    entities = [{"id": "n_1", "name": "Acme Corp", "type": "Party", "aliases": ["Acme"]},
                {"id": "n_2", "name": "1 March 2024", "type": "Date", "aliases": []}]
    chunk = Chunk(id="c_test", doc_id="d_test", index=0, text=TEXT, start=0, end=len(TEXT))
    request = PassRequest(kind=RELATIONS, stage="relations", chunk=chunk, schema=RELATIONS_SCHEMA,
                          context={"domain": DOMAIN, "entities": entities, "skills": []}, prompt="relations.j2")
    answer = {"relations": [{"head": "Acme Corp", "relation": "signed_on", "tail": "1 March 2024"}]}
    stub_provider.script(answer)

    result = backend(stub_provider).run(request)

    assert result.data == answer
    user = stub_provider.requests[0].messages[-1]["content"]
    assert '- "Acme Corp" (Party), also written: "Acme"' in user
    assert "- signed_on: Party -> Date" in user


def test_no_log_record_carries_the_key(stub_provider, key, caplog):
    stub_provider.script(Reply.error(500, f"echo {FAKE_KEY}"), "no json", ANSWER, Reply.error(401, f"bad {FAKE_KEY}"))
    b = backend(stub_provider, retries=1)

    with caplog.at_level("DEBUG"):
        b.run(entities_request())
        with pytest.raises(ProviderError):
            b.run(entities_request())

    assert len(stub_provider.requests) == 4
    assert caplog.records and not [r for r in caplog.records if FAKE_KEY in r.getMessage()]


def test_cached_backend_answers_a_repeat_without_a_request(stub_provider, key, tmp_path):
    stub_provider.script(ANSWER)
    config = Config(llm=llm_config(stub_provider), cache=CacheConfig(dir=tmp_path / "cache"))

    first = create_backend(config).run(entities_request())
    again = create_backend(config).run(entities_request())
    other_sample = create_backend(config)

    assert first.data == again.data == ANSWER
    assert (again.cached, again.requests) == (True, 0)
    assert len(stub_provider.requests) == 1
    stub_provider.script(ANSWER)
    assert other_sample.run(entities_request(sample=1)).cached is False  # a new rollout is a new question
    assert len(stub_provider.requests) == 2


def test_unknown_model_is_not_retried_and_says_what_to_check(stub_provider, key):
    stub_provider.script(Reply.error(404, "The model `test-model` does not exist"))

    with pytest.raises(ProviderError) as err:
        backend(stub_provider, retries=3).run(entities_request())

    assert len(stub_provider.requests) == 1
    assert err.value.message == ("openai/test-model: the provider does not know this model "
                                 "(HTTP 404: The model `test-model` does not exist)")
    assert err.value.exit_code == 2  # the fix is in the configuration
    assert err.value.hint.startswith("check llm.model")


def test_rejected_key_without_api_key_env_names_the_providers_usual_variable(stub_provider, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", FAKE_KEY)
    stub_provider.script(Reply.error(401, f"invalid x-api-key {FAKE_KEY}"))

    with pytest.raises(ProviderError) as err:
        backend(stub_provider, "anthropic", api_key_env=None).run(entities_request())

    assert stub_provider.requests[0].headers["x-api-key"] == FAKE_KEY  # litellm read its usual variable
    assert "set ANTHROPIC_API_KEY, or name the variable holding your key in llm.api_key_env" == err.value.hint
    assert FAKE_KEY not in err.value.format()


def test_litellm_loads_only_for_a_request_and_touches_no_other_server(tmp_path):
    """Building the backend and its cache key must not pay litellm's import (a fully
    cached run never loads it). And litellm fetches price and header tables on import
    unless told not to; the backend tells it. An audit hook in a fresh process sees
    every connection and DNS lookup."""
    script = (
        "import json, os, sys\n"
        "seen = []\n"
        "sys.addaudithook(lambda event, args: seen.append(str(args[0] if event == 'socket.getaddrinfo' else args[1]))"
        " if event in ('socket.connect', 'socket.getaddrinfo') else None)\n"
        "sys.path[:0] = sys.argv[1:]\n"
        "from support.stub_provider import StubProvider\n"
        "import test_llm_backend as t\n"
        "os.environ[t.KEY_ENV] = t.FAKE_KEY\n"
        "config = t.Config(llm=t.LLMConfig(model='openai/test-model'), cache=t.CacheConfig(enabled=False))\n"
        "b = t.create_backend(config)\n"
        "b.describe(), b.cache_key_parts(t.entities_request())\n"
        "loaded_early = 'litellm' in sys.modules\n"
        "stub = StubProvider().start()\n"
        "for wire in t.WIRES:\n"
        "    stub.script(t.ANSWER)\n"
        "    assert t.backend(stub, wire).run(t.entities_request()).ok\n"
        "stub.stop()\n"
        "print(json.dumps([loaded_early, sorted({s for s in seen if '127.0.0.1' not in s})]))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    done = subprocess.run([sys.executable, "-c", script, str(Path(__file__).parents[1]),
                           str(Path(__file__).parent)], capture_output=True, text=True,
                          cwd=tmp_path, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [False, []]


def test_a_huge_retry_after_is_capped(stub_provider, key):
    from kgkit.backends.llm import MAX_DELAY

    stub_provider.script(Reply.error(429, "come back tomorrow", retry_after="86400"), ANSWER)
    delays: list[float] = []

    backend(stub_provider, delays=delays).run(entities_request())

    assert delays == [MAX_DELAY]


NARY_SCHEMA = {"type": "object", "required": ["hyperedges"], "properties": {"hyperedges": {"type": "array", "items": {
    "type": "object", "required": ["relation", "roles"],
    "properties": {"relation": {"type": "string"}, "roles": {"type": "object", "additionalProperties": {"type": "string"}}},
}}}}


def test_a_strict_json_schema_goes_where_litellm_says_the_model_takes_one(stub_provider, key):
    stub_provider.script({"entities": [{"name": "Acme Corp", "type": "Party"}]})

    result = backend(stub_provider, model="openai/gpt-4o-mini").run(entities_request())

    sent = stub_provider.requests[0].body["response_format"]
    assert sent["type"] == "json_schema" and sent["json_schema"]["strict"] is True
    assert sent["json_schema"]["name"] == "kgkit_entities"
    item = sent["json_schema"]["schema"]["properties"]["entities"]["items"]
    assert item == {"type": "object", "required": ["name", "type"], "additionalProperties": False,
                    "properties": {"name": {"type": "string"}, "type": {"type": "string"}}}  # minLength dropped
    assert sent["json_schema"]["schema"]["additionalProperties"] is False
    assert result.output_format == "json_schema" and result.ok


def test_strict_mode_spells_optional_as_nullable_and_the_nulls_are_dropped_from_the_answer(stub_provider, key):
    from kgkit.engine.core import ENTITIES_SCHEMA

    stub_provider.script({"entities": [{"name": "Acme Corp", "type": "Party", "evidence": None, "confidence": None}]})

    result = backend(stub_provider, model="openai/gpt-4o-mini").run(entities_request(schema=ENTITIES_SCHEMA))

    item = stub_provider.requests[0].body["response_format"]["json_schema"]["schema"]["properties"]["entities"]["items"]
    assert item["required"] == ["name", "type", "evidence", "confidence"]
    assert item["properties"]["evidence"] == {"type": ["string", "null"]}
    assert item["properties"]["confidence"] == {"type": ["number", "null"]}  # bounds checked after, not sent
    assert result.data == {"entities": [{"name": "Acme Corp", "type": "Party"}]}


def test_anthropic_models_with_structured_output_get_the_schema_in_their_own_field(stub_provider, key):
    stub_provider.script(ANSWER)

    result = backend(stub_provider, "anthropic", model="anthropic/claude-sonnet-4-5").run(entities_request())

    sent = stub_provider.requests[0].body["output_format"]
    assert sent["type"] == "json_schema" and sent["schema"]["additionalProperties"] is False
    assert result.output_format == "json_schema" and result.data == ANSWER


def test_json_mode_where_the_model_takes_no_schema_and_for_a_schema_with_open_maps(stub_provider, key):
    stub_provider.script(ANSWER, {"hyperedges": []})

    plain_model = backend(stub_provider).run(entities_request())  # openai/test-model: not in litellm's table
    open_map = backend(stub_provider, model="openai/gpt-4o-mini").run(entities_request(schema=NARY_SCHEMA))

    first, second = (r.body["response_format"] for r in stub_provider.requests)
    assert first["type"] == "json_object" and first["schema"]["properties"]["entities"]["maxItems"] >= 4
    assert second == {"type": "json_object"}
    assert (plain_model.output_format, open_map.output_format) == ("json_object_schema", "json_object")


def test_a_server_that_refuses_a_schema_in_json_mode_gets_json_mode_alone(stub_provider, key):
    # llama-cpp-python's server answers 500 to OpenAI's json_schema form; a server may refuse a schema likewise
    stub_provider.script(Reply.error(500, "Input should be 'text' or 'json_object' (response_format)"), ANSWER, ANSWER)
    llm = backend(stub_provider)

    first = llm.run(entities_request())
    second = llm.run(entities_request())

    formats = [r.body["response_format"] for r in stub_provider.requests]
    assert "schema" in formats[0] and formats[1:] == [{"type": "json_object"}] * 2  # remembered for the run
    assert first.data == second.data == ANSWER and first.retries == 0
    assert (first.output_format, second.output_format) == ("json_object", "json_object")


def test_max_tokens_follows_the_chunk_and_the_item_limit_under_the_ceiling(stub_provider, key):
    short, long = entities_request("Acme Corp signed."), entities_request("Acme Corp signed the lease. " * 200)
    stub_provider.script(ANSWER, ANSWER, ANSWER)

    backend(stub_provider).run(short)
    backend(stub_provider).run(long)
    backend(stub_provider, max_tokens=300).run(long)

    sent = [r.body["max_tokens"] for r in stub_provider.requests]
    assert sent[0] < 400 and sent[1] == 2048 and sent[2] == 300  # llm.max_tokens stays the ceiling
    assert answer_tokens(long, 10**6, LimitsConfig(items_per_answer=10)) < answer_tokens(long, 10**6, LimitsConfig())


def test_a_runaway_cut_at_max_tokens_keeps_its_complete_items_without_a_re_ask(stub_provider, key):
    items = [{"name": "Acme Corp", "type": "Party"}, {"name": "1 March 2024", "type": "Date"}] * 4
    cut = '{"entities": [' + ", ".join(json.dumps(i) for i in items) + ', {"na'
    stub_provider.script(Reply.answer(cut, finish_reason="length"))

    result = backend(stub_provider).run(entities_request())

    assert result.ok and result.cut and not result.reasked and result.requests == 1
    assert result.data == ANSWER  # the repeats dropped


def test_an_answer_cut_at_max_tokens_while_still_new_is_asked_again(stub_provider, key):
    cut = '{"entities": [{"name": "Acme Corp", "type": "Party"}, {"na'
    stub_provider.script(Reply.answer(cut, finish_reason="length"), ANSWER)

    result = backend(stub_provider).run(entities_request())

    assert result.ok and result.reasked and not result.cut and result.data == ANSWER


def test_plain_text_when_json_mode_is_off(stub_provider, key):
    stub_provider.script(ANSWER)

    result = backend(stub_provider, model="openai/gpt-4o-mini", json_mode=False).run(entities_request())

    assert "response_format" not in stub_provider.requests[0].body
    assert result.output_format == "plain" and result.data == ANSWER


def test_litellm_is_told_to_use_its_bundled_cost_map_before_it_is_imported():
    """LITELLM_LOCAL_MODEL_COST_MAP must be set before ``import litellm`` (it reads it then);
    a fresh process shows the order and that no other host is contacted (see also
    test_litellm_loads_only_for_a_request_and_touches_no_other_server)."""
    script = (
        "import os, sys, builtins\n"
        "seen = {}\n"
        "real = builtins.__import__\n"
        "def spy(name, *a, **k):\n"
        "    if name == 'litellm' and 'litellm' not in sys.modules:\n"
        "        seen['flag'] = os.environ.get('LITELLM_LOCAL_MODEL_COST_MAP')\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = spy\n"
        "from kgkit.backends.clients import load_litellm\n"
        "load_litellm()\n"
        "print(seen['flag'])\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("LITELLM_")}
    env["LITELLM_LOCAL_MODEL_COST_MAP"] = "False"  # left over in a user's shell: overridden
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip().splitlines()[-1] == "True"
