"""The direct client for OpenAI-compatible servers (issue 11, item 5) against litellm's path.

Both clients talk to the same stub over real HTTP. What must not depend on the client:
the run folder, byte for byte (the manifest's ``model.client`` aside, which names it);
each failure's class, message, hint and exit code; the output format asked for; usage and
cost. And the direct path must not import litellm at all: that import is the seconds of
start-up the client exists to save."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import kgkit
from support.engine_support import write_inputs
from kgkit.backends.clients import pick_client
from kgkit.backends.llm import LLMBackend
from kgkit.config.model import CacheConfig, Config, LLMConfig
from kgkit.errors import ProviderConfigError, ProviderError
from support.stub_provider import Reply
from engine.test_engine_concurrency import SlowModel, run_folder
from test_llm_backend import ANSWER, FAKE_KEY, KEY_ENV, entities_request

CLIENTS = ("direct", "litellm")
VIEWS = ["binary", "nary", "temporal", "event"]


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    return FAKE_KEY


def backend(stub, client: str, model: str = "openai/test-model", **kw) -> LLMBackend:
    settings = {"model": model, "api_base": stub.openai_base, "api_key_env": KEY_ENV, "backoff": 0.0,
                "timeout": 60.0, "client": client, **kw}  # generous: litellm imports inside the first request
    return LLMBackend(LLMConfig(**settings), sleep=lambda s: None)


def test_both_clients_write_the_same_run_folder_and_the_manifest_names_each(stub_provider, key, tmp_path,
                                                                          monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=8)
    stub_provider.responder = SlowModel(latency=0.0)
    folders = {}
    for client in CLIENTS:
        llm = LLMConfig(model="openai/stub-model", api_base=stub_provider.openai_base, api_key_env=KEY_ENV,
                        backoff=0.0, timeout=60.0, concurrency=4, client=client)
        [run] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=VIEWS, out_dir=tmp_path / client,
                              config=Config(llm=llm, cache=CacheConfig(enabled=False), chunk_size=220,
                                            chunk_overlap=0), skills=False)
        assert run.manifest["model"]["client"] == {"core": client, "upgrades": client}
        assert run.manifest["model"]["core"]["backend"] == run.manifest["model"]["upgrades"]["backend"] == client
        assert run.manifest["calls"]["total"] == 8 * 5 and run.views["nary"]["hyperedges"]
        folders[client] = run_folder(tmp_path / client)
    for files in folders.values():  # the client is named, and is all that differs
        manifest = json.loads(files["staff_notes/manifest.json"])
        del manifest["model"]["client"]
        for stage in ("core", "upgrades"):
            del manifest["model"][stage]["backend"]
        files["staff_notes/manifest.json"] = json.dumps(manifest, indent=2).encode()
    assert folders["direct"] == folders["litellm"]


def test_auto_sends_openai_models_direct_and_every_other_through_litellm():
    def pick(model, client="auto", api_base=None):
        return pick_client(LLMConfig(model=model, client=client, api_base=api_base))

    assert pick("openai/gpt-4o-mini") == "direct"
    assert pick("openai/llama3.1:8b", api_base="http://127.0.0.1:11434/v1") == "direct"  # Ollama, vLLM, a proxy
    assert pick("anthropic/claude-3-5-haiku-20241022") == "litellm"
    assert pick("ollama/llama3") == "litellm"  # litellm speaks Ollama's own API for these
    assert pick("openai/o3-mini") == pick("openai/gpt-5") == "litellm"  # litellm rewrites their parameters
    assert pick("openai/gpt-4o-mini", client="litellm") == "litellm"
    assert pick("hosted_vllm/qwen", client="direct", api_base="http://127.0.0.1:8000/v1") == "direct"
    with pytest.raises(ProviderConfigError, match="llm.client: direct speaks the OpenAI chat completions API"):
        pick("anthropic/claude-3-5-haiku-20241022", client="direct")
    with pytest.raises(ProviderConfigError, match="expected one of auto, litellm, direct"):
        pick("openai/gpt-4o-mini", client="fast")


FAILURES = {
    "429 then give up": [Reply.error(429, "rate limited", retry_after="0")] * 2,
    "500 then give up": [Reply.error(500, "upstream exploded")] * 2,
    "an error body that is no JSON": [Reply(status=503, body="<html>busy</html>")] * 2,
    "an answer that is no JSON": [Reply(body="<html>502 Bad Gateway</html>")] * 2,
    "a dropped connection": [Reply(drop=True)] * 2,
    "rejected key": [Reply.error(401, f"invalid api key {FAKE_KEY}")],
    "unknown model": [Reply.error(404, "The model `test-model` does not exist")],
    "refusal": [Reply.error(400, "The response was filtered due to the prompt triggering a content policy")],
    "prompt over the context window": [Reply.error(400, "This model's maximum context length is 8192 tokens")],
    "odd status": [Reply.error(418, "teapot")],
}


@pytest.mark.parametrize("case", sorted(FAILURES))
def test_each_failure_reads_the_same_on_both_clients(stub_provider, key, case):
    seen = {}
    for client in CLIENTS:
        stub_provider.requests.clear()
        stub_provider.script(*FAILURES[case])
        with pytest.raises(ProviderError) as err:
            backend(stub_provider, client, retries=1).run(entities_request())
        e = err.value
        seen[client] = (type(e).__name__, e.exit_code, e.message, e.hint, getattr(e, "request_specific", None),
                        e.requests, e.retries, len(stub_provider.requests))
    assert seen["direct"] == seen["litellm"]
    assert FAKE_KEY not in repr(seen)


def test_a_missing_key_is_named_and_nothing_is_sent_on_both_clients(stub_provider, key):
    for client in CLIENTS:
        b = LLMBackend(LLMConfig(model="openai/test-model", api_base=stub_provider.openai_base, retries=2,
                                 client=client), sleep=lambda s: None)
        with pytest.raises(ProviderConfigError) as err:
            b.run(entities_request())
        assert err.value.message == "openai/test-model: no API key: OPENAI_API_KEY is not set"
    assert stub_provider.requests == []


@pytest.mark.parametrize("model", ["openai/gpt-4o-mini", "openai/stub-model"])
def test_format_usage_and_cost_are_litellms(stub_provider, key, model):
    """A model litellm's table prices and says takes a strict schema, and one it does not know."""
    results = {}
    for client in CLIENTS:
        stub_provider.script(Reply(content=ANSWER, tokens_in=1000, tokens_out=200, tokens_cached=400))
        result = backend(stub_provider, client, model=model).run(entities_request())
        sent = stub_provider.requests[-1].body
        results[client] = (result.output_format, sent.get("response_format"), sent["model"], result.usage)
    assert results["direct"] == results["litellm"]
    output_format, _, sent_model, usage = results["direct"]
    assert sent_model == model.split("/", 1)[1]
    assert (usage.tokens_in, usage.tokens_out, usage.tokens_cached) == (1000, 200, 400)
    if model == "openai/gpt-4o-mini":
        assert output_format == "json_schema" and usage.cost == pytest.approx(600 * 1.5e-7 + 400 * 7.5e-8 + 200 * 6e-7)
    else:
        assert output_format == "json_object_schema" and usage.cost is None  # a compatible server: the schema in JSON mode


def test_a_compatible_server_gets_the_schema_without_what_its_grammar_cannot_take(stub_provider, key):
    """llama.cpp's servers build a grammar from the schema in JSON mode: a string cap there is a rule per
    character (and a crash in the thousands), so it is left out of what is sent and checked here instead."""
    from kgkit.engine.core import ENTITIES_SCHEMA

    entities = ENTITIES_SCHEMA["properties"]["entities"]
    capped = {**ENTITIES_SCHEMA, "properties": {"entities": {**entities, "items": {
        **entities["items"], "properties": {**entities["items"]["properties"],
                                            "name": {"type": "string", "minLength": 1, "maxLength": 4000}}}}}}
    for client in CLIENTS:
        stub_provider.script(Reply(content=ANSWER))
        result = backend(stub_provider, client, model="openai/stub-model").run(entities_request(schema=capped))
        sent = stub_provider.requests[-1].body["response_format"]
        assert result.ok and result.output_format == "json_object_schema" and sent["type"] == "json_object"
        assert "maxLength" not in json.dumps(sent["schema"]) and "entities" in sent["schema"]["properties"]


def test_retry_after_is_honoured_and_counted_on_the_direct_client(stub_provider, key):
    delays = []
    stub_provider.script(Reply.error(429, "slow down", retry_after="1.5"), ANSWER)
    b = LLMBackend(LLMConfig(model="openai/test-model", api_base=stub_provider.openai_base, api_key_env=KEY_ENV,
                             client="direct"), sleep=delays.append)

    result = b.run(entities_request())

    assert result.data == ANSWER and (result.requests, result.retries) == (2, 1)
    assert delays == [pytest.approx(1.5, abs=0.01)]  # the pace's hold, then the request waits no more


def stub_config(tmp_path: Path, stub_provider) -> Path:
    """A config file sending an OpenAI model to the stub, with no cache and no skills."""
    config = tmp_path / "kgkit.yaml"
    config.write_text(f"llm:\n  model: openai/stub-model\n  api_base: {stub_provider.openai_base}\n"
                      f"  api_key_env: {KEY_ENV}\ncache: {{enabled: false}}\nskills: {{enabled: false}}\n")
    return config


def test_an_openai_extraction_never_imports_litellm(stub_provider, tmp_path):
    """Through the CLI, in a fresh process: the whole run, not only the backend."""
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    stub_provider.responder = SlowModel(latency=0.0)
    config = stub_config(tmp_path, stub_provider)
    script = ("import json, sys\nfrom kgkit.cli import main\n"
              "try:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n    code = done.code\n"
              "print(json.dumps([code, sorted(m for m in sys.modules if m.split('.')[0] in ('litellm', 'openai'))]))\n")
    env = {**os.environ, KEY_ENV: FAKE_KEY, "KGKIT_CONFIG_DIR": str(tmp_path / "home")}
    done = subprocess.run([sys.executable, "-c", script, "extract", str(inputs["doc"]), "--config", str(config),
                           "--domain", str(inputs["domain"]), "--view", "binary", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout.strip().splitlines()[-1]) == [0, []]
    manifest = json.loads((tmp_path / "out" / "staff_notes" / "manifest.json").read_text())
    assert manifest["model"]["client"] == {"core": "direct", "upgrades": "direct"}
    assert manifest["model"]["core"]["backend"] == "direct"  # never litellm beside client: direct
    assert manifest["calls"]["requests"] == len(stub_provider.requests) == 2  # entities, then relations


def test_state_is_written_at_once_and_synced_once_per_stage(tmp_path, monkeypatch):
    """A pass's state file is in place as soon as it completes (a kill keeps it), with no
    fsync of its own; the stage's files are made durable together, off the pass's thread."""
    from kgkit.engine import outputs
    from kgkit.engine.outputs import RunFolder

    synced = []
    monkeypatch.setattr(outputs, "_make_durable", lambda paths: synced.append(sorted(p.name for p in paths)))
    fsyncs = []
    real_fsync = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (fsyncs.append(fd), real_fsync(fd)))
    folder = RunFolder(tmp_path / "run")
    with folder.locked():
        for i in range(3):
            folder.save_pass("entities", f"c_{i}", "key", {"entities": []}, "m")
            assert folder.load_pass("entities", f"c_{i}", "key") == {"entities": []}
        assert fsyncs == []
        folder.sync_state()
        outputs._SYNCER.flush()
        folder.sync_state()  # nothing new: nothing to sync
        outputs._SYNCER.flush()
    assert synced == [["c_0.json", "c_1.json", "c_2.json"]]


def test_a_run_makes_every_stage_s_state_durable(tmp_path, monkeypatch):
    """The engine reads each stage's answers with zip(), which never resumes the answers'
    generator after the last one: the stage's sync must not wait for that."""
    import kgkit
    from kgkit.config.model import CacheConfig, Config
    from kgkit.engine import outputs

    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    synced = []
    monkeypatch.setattr(outputs, "_make_durable", lambda paths: synced.extend(p.relative_to(tmp_path) for p in paths))
    text = tmp_path / "doc.txt"
    text.write_text("Acme Corp hired Jane Doe in Paris on May 4, 2017.\n\nJane Doe works for Acme Corp.\n",
                    encoding="utf-8")
    for combine in (False, True):
        config = Config(cache=CacheConfig(enabled=False))
        config.upgrades.combine = combine
        kgkit.extract([text], domain="general", views=["binary", "nary", "temporal"], config=config,
                      out_dir=tmp_path / f"out{combine}", skills=False)
        outputs._SYNCER.flush()
        written = sorted(p.relative_to(tmp_path) for p in (tmp_path / f"out{combine}").rglob("state/*/*.json"))
        assert written and sorted(p for p in synced if p.parts[0] == f"out{combine}") == written


def test_the_installed_program_exits_with_the_commands_code(tmp_path):
    """``kgkit`` (kgkit.cli:run) skips the interpreter's teardown but not the exit code or
    what was printed."""
    def kgkit_run(*args):
        return subprocess.run([sys.executable, "-c", "from kgkit.cli import run; run()", *args], capture_output=True,
                              text=True, cwd=tmp_path, env={**os.environ, "KGKIT_CONFIG_DIR": str(tmp_path / "home")},
                              timeout=60)

    assert kgkit_run("--version").returncode == 0
    missing = kgkit_run("extract", str(tmp_path / "absent.txt"))
    assert missing.returncode == 2 and "absent.txt" in missing.stderr
    assert "Usage" in kgkit_run("--help").stdout


def test_the_account_headers_the_openai_sdk_sends_are_sent_by_both_clients(stub_provider, key, monkeypatch):
    monkeypatch.setenv("OPENAI_ORG_ID", "org-kgkit-test")
    for client in CLIENTS:
        stub_provider.script(ANSWER)
        assert backend(stub_provider, client).run(entities_request()).ok
        assert stub_provider.requests[-1].headers.get("openai-organization") == "org-kgkit-test"


def test_a_plain_http_run_reads_no_certificates_and_https_requests_stay_verified(stub_provider, tmp_path):
    """aiohttp's import reads the system's certificate store into two TLS contexts; against an
    http:// server the run skips that, the contexts it skipped trust nothing (a connection through
    one would fail, never go unverified), and what an https request carries is verified."""
    inputs = write_inputs(tmp_path / "in", paragraphs=1)
    stub_provider.responder = SlowModel(latency=0.0)
    config = stub_config(tmp_path, stub_provider)
    script = ("import json, ssl, sys\nreads = []\nreal = ssl.SSLContext.set_default_verify_paths\n"
              "def counted(self):\n    reads.append(1)\n    return real(self)\n"
              "ssl.SSLContext.set_default_verify_paths = counted\nfrom kgkit.cli import main\n"
              "try:\n    main(sys.argv[1:])\nexcept SystemExit as done:\n    code = done.code\n"
              "import aiohttp.connector as c\nfrom kgkit.backends import direct\nmine = direct._tls_context()\n"
              "print(json.dumps([code, len(reads), ssl.SSLContext.set_default_verify_paths is counted,\n"
              "    c._SSL_CONTEXT_VERIFIED.cert_store_stats()['x509_ca'], c._SSL_CONTEXT_VERIFIED.verify_mode == ssl.CERT_REQUIRED,\n"
              "    mine.cert_store_stats()['x509_ca'] > 0, mine.verify_mode == ssl.CERT_REQUIRED, mine.check_hostname]))\n")
    env = {**os.environ, KEY_ENV: FAKE_KEY, "KGKIT_CONFIG_DIR": str(tmp_path / "home")}
    for proxy in ("http_proxy", "https_proxy", "HTTP_PROXY", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"):
        env.pop(proxy, None)
    done = subprocess.run([sys.executable, "-c", script, "extract", str(inputs["doc"]), "--config", str(config),
                           "--domain", str(inputs["domain"]), "--view", "binary", "--out", str(tmp_path / "out")],
                          capture_output=True, text=True, env=env, cwd=tmp_path, timeout=120)
    assert done.returncode == 0, done.stderr
    code, reads, restored, skipped_cas, skipped_verifies, verified, required, hostname = json.loads(
        done.stdout.strip().splitlines()[-1])
    assert (code, restored, skipped_cas, skipped_verifies) == (0, True, 0, True)
    assert reads == 1  # the https context made at the end, none during the run
    assert verified and required and hostname
    assert len(stub_provider.requests) == 2
