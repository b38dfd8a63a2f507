"""Secrets: a recognisable fake key goes in through the environment and never comes out.

The whole workflow runs through the CLI against the stub provider with the response cache
on: extract, extract again (cache hits), skill learning, evaluation, ``config show``.
Then every file written (run folders, cache, skill library, working directory), all
captured stdout/stderr and every log record at DEBUG level are searched for the key:
zero occurrences. The stub checks the other side: the key did travel, in the
Authorization header and nowhere else.
"""
from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from kgkit.cli import main
from support.reliability_support import DATA, FAKE_KEY, KEY_ENV, VIEWS, GoldModel, copy_corpus, write_config
from support.stub_provider import StubProvider

GOLD = tuple(f"news_{i:03d}" for i in range(6))
CONLL_DOMAIN = """\
name: conll_test
extends: general
description: General plus CoNLL04's Other type, for the gold documents.
entity_types:
  - name: Other
    description: Anything else named.
"""


def cli(*args: str) -> int:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    return done.value.code


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache-home"))  # wins over the file's cache.dir
    monkeypatch.chdir(tmp_path)
    stub = StubProvider().start()
    stub.responder = GoldModel(GOLD)
    gold = tmp_path / "gold"
    gold.mkdir()
    for name in GOLD:
        for suffix in (".txt", ".gold.json"):
            shutil.copy(DATA / f"{name}{suffix}", gold / f"{name}{suffix}")
    (tmp_path / "conll.yaml").write_text(CONLL_DOMAIN)
    yield {"root": tmp_path, "stub": stub, "gold": gold, "docs": copy_corpus(tmp_path / "docs"),
           "config": write_config(tmp_path, stub.openai_base, cache=True)}
    stub.stop()


def test_the_key_is_in_no_file_log_or_output_of_a_whole_workflow(workspace, capfd, caplog):
    caplog.set_level(logging.DEBUG)
    root, config = workspace["root"], str(workspace["config"])
    docs = list(map(str, workspace["docs"]))

    codes = [
        cli("extract", *docs, "--config", config, "--view", VIEWS, "--out", "runs"),
        cli("extract", *docs, "--config", config, "--view", VIEWS, "--out", "again", "--json"),
        cli("skills", "learn", "--gold", "gold", "--domain", "conll.yaml", "--config", config,
            "--library", "library", "--rollouts", "2"),
        cli("eval", "--gold", "gold", "--domain", "conll.yaml", "--config", config, "--view", "binary"),
        cli("eval", "--gold", "gold", "--domain", "conll.yaml", "--run", "runs", "--json"),
        cli("config", "show", "--config", config),
    ]
    captured = capfd.readouterr()

    assert codes == [0, 0, 0, 0, 0, 0], captured.err
    stub = workspace["stub"]
    assert len(stub.requests) > 50  # learning and evaluation did talk to the provider
    assert all(r.headers["authorization"] == f"Bearer {FAKE_KEY}" for r in stub.requests)
    assert not [r for r in stub.requests if FAKE_KEY.encode() in r.raw]  # never in a request body
    again = json.loads(captured.out[captured.out.index('{\n  "runs"'):].split("\n}\n")[0] + "\n}")
    assert all(run["calls"]["cache_hits"] == run["calls"]["total"] for run in again["runs"])  # the cache was used
    # learning wrote a library, or accepted nothing (the gold model's one skill fires in one document)
    learned = (root / "library" / "conll_test").is_dir()
    assert learned or "unchanged (version 0)" in captured.out

    written = [p for p in root.rglob("*") if p.is_file()]
    assert {p.relative_to(root).parts[0] for p in written} >= {"runs", "again", "cache-home"} | ({"library"} if learned else set())
    leaks = [str(p.relative_to(root)) for p in written if FAKE_KEY.encode() in p.read_bytes()]
    assert leaks == []
    assert FAKE_KEY not in captured.out and FAKE_KEY not in captured.err
    assert not [r for r in caplog.records if FAKE_KEY in r.getMessage() or FAKE_KEY in str(r.args)]


@pytest.mark.parametrize("api_base, shown", [
    ("https://kgkit:${KGKIT_TEST_PROXY_PASSWORD}@proxy.example/v1", "api_base: '********'"),
    ("https://kgkit:hunter2-canary-pw@proxy.example/v1", "api_base: https://kgkit:********@proxy.example/v1"),
], ids=["from-a-secret-variable", "literal-in-url"])
def test_config_show_masks_secrets(workspace, capsys, monkeypatch, api_base, shown):
    monkeypatch.setenv("KGKIT_TEST_PROXY_PASSWORD", "hunter2-canary-pw")
    config = workspace["root"] / "secret.yaml"
    config.write_text(f"llm:\n  model: openai/stub-model\n  api_base: {api_base}\n  api_key: ${{{KEY_ENV}}}\n")

    assert cli("config", "show", "--config", str(config)) == 0

    out = capsys.readouterr().out
    assert FAKE_KEY not in out and "hunter2-canary-pw" not in out
    assert shown in out
    assert f"api_key_env: {KEY_ENV}" in out  # the variable's name is shown, never its value


def test_a_literal_key_in_a_config_file_is_refused(workspace, capsys):
    config = workspace["root"] / "literal.yaml"
    config.write_text(f"llm:\n  model: openai/stub-model\n  api_key: {FAKE_KEY}\n")

    assert cli("config", "show", "--config", str(config)) == 2

    err = capsys.readouterr().err
    assert "a literal API key does not belong in a file" in err
    assert FAKE_KEY not in err


def test_a_rejected_key_echoed_by_the_provider_is_scrubbed_from_the_error(workspace, capsys):
    from support.stub_provider import Reply

    workspace["stub"].responder = lambda request: Reply.error(401, f"Incorrect API key provided: {FAKE_KEY}")
    code = cli("extract", str(workspace["docs"][0]), "--config", str(workspace["config"]), "--out", "runs")

    err = capsys.readouterr().err
    assert code == 2  # a rejected key is configuration
    assert "rejected the API key (HTTP 401" in err and "***" in err
    assert FAKE_KEY not in err
    assert not [p for p in Path(workspace["root"], "runs").rglob("*") if p.is_file() and
                FAKE_KEY.encode() in p.read_bytes()]
