"""Every failure class through the real entry point (``kgkit.cli.main``): code and message.

The codes are few (``kgkit.errors``): 0 ok, 1 finished with failed chunks, 2 bad input or
configuration (every KgkitError subclass but ProviderError, plus click's usage errors),
3 provider failure, 130 interrupted. Each case checks the exit code and the first line of
the message a user sees, and that no traceback reaches them.
"""
from __future__ import annotations

import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kgkit import errors
from kgkit.cli import main
from support.reliability_support import FAKE_KEY, KEY_ENV, child_env, write_config
from support.stub_provider import Reply

README = Path(__file__).resolve().parent.parent / "README.md"
TEXT = "Ann Lee works for Acme Corp in Boston.\n"


@pytest.fixture(autouse=True)
def _isolated(cli_home, monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    (cli_home / "doc.txt").write_text(TEXT)


def run(capsys, *args: str) -> tuple[int, str, str]:
    with pytest.raises(SystemExit) as done:
        main(list(args))
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    return done.value.code, out, err


def test_0_success(capsys):
    code, out, err = run(capsys, "extract", "doc.txt", "--view", "binary")
    assert code == errors.EXIT_OK == 0
    assert out.startswith("document ") and "kgkit-out/doc: core 2" in out


def test_1_some_chunks_failed(capsys, stub_provider, tmp_path):
    stub_provider.responder = lambda request: Reply.answer("no JSON here, sorry")
    config = write_config(tmp_path, stub_provider.openai_base)
    code, out, err = run(capsys, "extract", "doc.txt", "--view", "binary", "--config", str(config))
    assert code == errors.EXIT_PARTIAL == 1
    # the entity pass failed, so no entity: the relation pass had nothing to work on and was not sent
    assert "warning: 1 pass(es) failed; rerun with --resume to retry them" in out


@pytest.mark.parametrize("args, files, first_line", [
    (["extract", "missing.txt"], {}, "Error: missing.txt: no such file"),
    (["extract", "empty.txt"], {"empty.txt": ""}, "Error: empty.txt is empty"),
    (["extract", "doc.txt", "--view", "binray"], {}, "Error: "),
    (["extract", "doc.txt", "--domain", "bad.yaml"], {"bad.yaml": "name: x\nentity_types: [\n"}, "Error: bad.yaml:"),
    (["extract", "doc.txt", "--config", "kgkit.yaml"], {"kgkit.yaml": "llm:\n  modle: x\n"}, "Error: "),
    (["extract", "doc.txt", "--config", "kgkit.yaml"], {"kgkit.yaml": "llm:\n  model: ${NOT_SET_ANYWHERE}\n"},
     "Error: "),
    (["eval", "--gold", "nogold"], {}, "Error: gold folder not found: nogold"),
    (["domain", "validate", "evil.yaml"], {"evil.yaml": "name: !!python/object/apply:os.system [id]\n"},
     "evil.yaml:1:7: unsupported tag !!python/object/apply:os.system"),
    (["extract", "doc.txt", "--no-such-option"], {}, "Usage: "),
], ids=["missing-file", "empty-file", "unknown-view", "broken-domain-yaml", "unknown-config-key",
        "unset-env-variable", "missing-gold", "python-yaml-tag", "usage"])
def test_2_bad_input_or_configuration(capsys, tmp_path, args, files, first_line):
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    code, out, err = run(capsys, *args)
    assert code == errors.EXIT_INPUT == 2
    assert err.startswith(first_line), err


def test_2_messages_say_what_to_do(capsys, tmp_path):
    _, _, err = run(capsys, "extract", "doc.txt", "--view", "binray")
    assert "binray" in err and "binary" in err  # the name, and the nearest valid one
    (tmp_path / "typo.yaml").write_text("llm:\n  modle: x\n")
    _, _, err = run(capsys, "extract", "doc.txt", "--config", "typo.yaml")
    assert "typo.yaml:2:3: llm -> modle: unknown key 'modle' (did you mean 'model'?)" in err
    (tmp_path / "unset.yaml").write_text("llm:\n  model: ${NOT_SET_ANYWHERE}\n")
    _, _, err = run(capsys, "extract", "doc.txt", "--config", "unset.yaml")
    assert "environment variable NOT_SET_ANYWHERE is not set (export NOT_SET_ANYWHERE=... or edit the file)" in err


def test_2_unsafe_template(capsys, stub_provider, tmp_path):
    (tmp_path / "evil.j2").write_text('{% call message("user") %}{{ chunk.__class__.__mro__ }}{% endcall %}')
    config = write_config(tmp_path, stub_provider.openai_base)
    config.write_text(config.read_text() + f"prompts:\n  entities: {tmp_path / 'evil.j2'}\n")
    code, _, err = run(capsys, "extract", "doc.txt", "--config", str(config))
    assert code == 2 and err.startswith("Error: prompt template") and "forbidden" in err


@pytest.mark.parametrize("reply, code, first_line", [
    (Reply.error(401, "invalid api key"), 2, "Error: openai/stub-model: the provider rejected the API key (HTTP 401"),
    (Reply.error(503, "overloaded"), 3, "Error: openai/stub-model: provider failed after 2 attempts: HTTP 503"),
    (Reply.error(404, "model not found"), 2, "Error: openai/stub-model: the provider does not know this model (HTTP 404"),
], ids=["auth", "down", "unknown-model"])
def test_provider_failure(capsys, stub_provider, tmp_path, reply, code, first_line):
    """A provider that is down is 3; one that cannot work as configured (key, model) is 2
    (tests/backends/test_llm_errors.py has every failure class)."""
    stub_provider.responder = lambda request: reply
    config = write_config(tmp_path, stub_provider.openai_base, retries=1)
    got, _, err = run(capsys, "extract", "doc.txt", "--config", str(config))
    assert got == code
    assert err.startswith(first_line), err
    assert "hint: " in err


def test_2_missing_key_variable(capsys, stub_provider, tmp_path, monkeypatch):
    """``api_key_env`` names a variable that is empty at call time (``api_key: ${VAR}`` would
    already fail as configuration, exit 2, when the file is read)."""
    monkeypatch.delenv(KEY_ENV)
    config = write_config(tmp_path, stub_provider.openai_base)
    config.write_text(config.read_text().replace(f"api_key: ${{{KEY_ENV}}}", f"api_key_env: {KEY_ENV}"))
    code, _, err = run(capsys, "extract", "doc.txt", "--config", str(config))
    assert code == 2
    assert f"the environment variable {KEY_ENV} (llm.api_key_env) is not set" in err
    assert f"hint: export {KEY_ENV}=<your API key>" in err
    assert stub_provider.requests == []


def wait_reading_stdin(pid: int, within: float = 60.0) -> None:
    """Until the process's main thread blocks in read(0, ...) (Linux: /proc/PID/syscall), so
    the signal lands where a user's Ctrl-C would, not during start-up on a loaded machine."""
    path = Path(f"/proc/{pid}/syscall")
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            fields = path.read_text().split()
        except OSError:  # no /proc, or not allowed: a generous pause instead
            time.sleep(3.0)
            return
        if fields[:2] == ["0", "0x0"]:
            return
        time.sleep(0.05)
    raise AssertionError(f"process {pid} did not block on stdin within {within:g}s")


def test_130_interrupted_says_how_to_resume(tmp_path):
    """A real SIGINT while ``kgkit extract -`` waits on stdin (the offline backend)."""
    child = subprocess.Popen([sys.executable, "-c", "from kgkit.cli import main; main()", "extract", "-"],
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             env=child_env(tmp_path), cwd=tmp_path)
    wait_reading_stdin(child.pid)
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=30)
    assert child.returncode == errors.EXIT_INTERRUPTED == 130
    assert "Interrupted." in err.decode() and "--resume" in err.decode()
    assert b"Traceback" not in err


def test_the_docs_and_the_help_list_every_code():
    codes = {v for k, v in vars(errors).items() if k.startswith("EXIT_")}
    usage = (README.parent / "docs" / "usage.md").read_text()  # the README links it for the table
    table = usage[usage.index("## Exit codes"):]
    listed = {int(c) for c in re.findall(r"^\| (\d+) \|", table, flags=re.M)}
    assert listed == codes == {0, 1, 2, 3, 75, 130}
    from click.testing import CliRunner
    from kgkit.cli import cli

    help_text = " ".join(CliRunner().invoke(cli, ["--help"]).output.split())
    assert all(f"{code} " in help_text for code in codes)
