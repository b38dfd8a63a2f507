"""Input hardening (issue 10): files stay in their folder, errors never print a file, no
regex or special file can stall a run, and one ``kgkit validate`` checks every kind of file.

Each test is one case of docs/security.md or docs/reliability.md, run through the real
entry point (``kgkit ...`` under CliRunner) where a user would meet it.
"""
from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cli_support import kgkit
from kgkit.documents.load import load_document
from kgkit.errors import InputError


def _nodes(out: Path) -> list[dict]:
    (doc,) = [p for p in out.iterdir() if (p / "nodes.json").is_file()]
    return json.loads((doc / "nodes.json").read_text())["nodes"]


# --------------------------------------------------------------------------- item 12


def test_blank_defined_term_does_not_crash_offline_backend(tmp_path):
    """A placeholder left in a filing -- a defined term of only narrow no-break spaces --
    used to raise IndexError in the offline backend (exit 1, traceback)."""
    doc = tmp_path / "filing.txt"
    doc.write_text('This Agreement is made by Northwind Traders Inc. (the "Supplier") and '
                   'Harbor Lane LLC ("\u202f\u202f\u202f").\nThe Supplier shall deliver the goods.\n',
                   encoding="utf-8")
    result = kgkit("extract", str(doc), "--domain", "legal_contracts", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    names = {n["name"]: n["aliases"] for n in _nodes(tmp_path / "out")}
    assert names["Northwind Traders Inc."] == ["Supplier"]
    assert "Harbor Lane LLC" in names and all(a.strip() for a in names["Harbor Lane LLC"])


# --------------------------------------------------------------------------- item 9


def test_ten_thousand_types_without_aliases_are_not_an_alias_bomb(tmp_path):
    """Only values added by alias expansion count towards the alias-bomb limit."""
    lines = ["name: many_types", "entity_types:"]
    lines += [f"  - name: Kind{i}\n    description: kind number {i}\n    examples: [Sample {i}]" for i in range(10_000)]
    path = tmp_path / "many_types.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = kgkit("domain", "validate", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"OK {path}\n"


def test_alias_bomb_is_still_refused(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                    "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n")
    result = kgkit("domain", "validate", str(path))
    assert result.exit_code == 2
    assert "aliases expand to more than 50000 values" in result.stderr


# --------------------------------------------------------------------------- item 3

SECRET = "sk-live-4b1d2c3e9f8a7b6c5d4e"


def _secret_files(tmp_path: Path) -> Path:
    """A project with a .env beside a domains/ folder, as many repositories have."""
    (tmp_path / ".env").write_text(f"OPENAI_API_KEY={SECRET}\nDB_PASSWORD=hunter2-{SECRET}\n")
    (tmp_path / "domains").mkdir()
    return tmp_path / "domains"


def test_extends_outside_the_domain_folder_is_refused_without_reading_it(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    domains = _secret_files(tmp_path)
    child = domains / "mine.yaml"
    child.write_text("name: mine\nextends: ../.env\nentity_types:\n  - name: Thing\n")
    result = kgkit("domain", "validate", str(child))
    assert result.exit_code == 2
    assert SECRET not in result.output and "hunter2" not in result.output
    assert result.stderr.splitlines()[0] == (
        f"{child}:2:10: extends: extends path '../.env' leads outside the domain's folder ({domains}); "
        "expected a file beside it or a domain name on the search path")


def test_extends_through_a_symlink_leaving_the_folder_is_refused(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    domains = _secret_files(tmp_path)
    (domains / "base.yaml").symlink_to(tmp_path / ".env")
    child = domains / "mine.yaml"
    child.write_text("name: mine\nextends: ./base.yaml\nentity_types:\n  - name: Thing\n")
    result = kgkit("domain", "validate", str(child))
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert "extends path './base.yaml' leads outside the domain's folder" in result.stderr


def test_extends_beside_the_child_still_works(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    shared = tmp_path / "team"
    shared.mkdir()
    (shared / "base.yaml").write_text("name: base\nentity_types:\n  - name: Thing\n")
    (shared / "mine.yaml").write_text("name: mine\nextends: ./base.yaml\nrelation_types:\n"
                                      "  - name: next_to\n    head: [Thing]\n    tail: [Thing]\n")
    result = kgkit("domain", "validate", str(shared / "mine.yaml"))
    assert result.exit_code == 0, result.output


def test_a_text_file_given_as_domain_is_not_printed(tmp_path):
    env = tmp_path / "settings.env"
    env.write_text(f"OPENAI_API_KEY={SECRET}\nDB_PASSWORD=hunter2\n")
    result = kgkit("extract", str(env), "--domain", str(env), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert SECRET not in result.output and "hunter2" not in result.output
    assert "got plain text (" in result.stderr
    assert not (tmp_path / "out").exists()


def test_a_system_file_given_as_view_is_one_issue_not_its_lines(tmp_path):
    """A shadow-like file parses as a mapping of its lines; listing each unknown key printed it."""
    shadow = tmp_path / "shadow"
    shadow.write_text("".join(f"user{i}:$6$salt{i}$Q9hashhashhash{i}:20228:0:99999:7:::\n" for i in range(12)))
    doc = tmp_path / "doc.txt"
    doc.write_text("Ada Lovelace worked with Charles Babbage in London.\n")
    result = kgkit("extract", str(doc), "--view", str(shadow), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert "hashhash" not in result.output and "user0" not in result.output
    assert f"{shadow}:1:1: not a view file: none of its 12 top-level keys is a view key" in result.stderr


def test_view_prompt_outside_the_view_folder_is_refused(tmp_path):
    (tmp_path / "secret.j2").write_text(f"{SECRET}\n")
    views = tmp_path / "views"
    views.mkdir()
    (views / "leak.yaml").write_text("name: leak\nstrategy: upgrade\nmode: nary.v1\nupgrade:\n  prompt: ../secret.j2\n"
                                     "  output_schema: {type: object}\n")
    (views / "ok.j2").write_text("{{ chunk }}\n")
    (views / "fine.yaml").write_text("name: fine\nstrategy: upgrade\nmode: nary.v1\nupgrade:\n  prompt: ok.j2\n"
                                     "  output_schema: {type: object}\n")
    result = kgkit("domain", "validate", "--kind", "view", str(views / "leak.yaml"), str(views / "fine.yaml"))
    assert result.exit_code == 2
    assert SECRET not in result.output
    assert f"{views / 'leak.yaml'}:5:11: upgrade -> prompt: prompt file '../secret.j2' not found" in result.stderr
    assert f"OK {views / 'fine.yaml'}" in result.stdout


# --------------------------------------------------------------------------- item 5: special files and size


def _run_cli(*args: str, cwd: Path, stdin: bytes | None = None) -> subprocess.CompletedProcess:
    """The CLI in a child process with a deadline: a regression here hangs, and the test must not."""
    return subprocess.run([sys.executable, "-c", "from kgkit.cli import main; main()", *args], cwd=cwd,
                          input=stdin, capture_output=True, timeout=60)


@pytest.mark.parametrize("make", ["fifo", "dev_zero", "symlink_to_dev_zero"])
def test_special_files_are_refused_as_input(tmp_path, make):
    if make == "fifo":
        target = tmp_path / "pipe.txt"
        os.mkfifo(target)
        kind = "a FIFO (named pipe)"
    elif make == "dev_zero":
        target, kind = Path("/dev/zero"), "a character device"
    else:
        target, kind = tmp_path / "zeros.txt", "a character device"
        target.symlink_to("/dev/zero")
    result = _run_cli("extract", str(target), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    assert result.stderr.decode() == f"Error: {target} is {kind}, not a regular file; expected a document file\n"
    assert not (tmp_path / "out").exists()


def test_a_fifo_as_domain_file_is_an_issue_not_a_hang(tmp_path):
    fifo = tmp_path / "domain.yaml"
    os.mkfifo(fifo)
    result = _run_cli("domain", "validate", str(fifo), cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.decode().splitlines()[0] == f"{fifo}: is a FIFO (named pipe), not a regular file; expected a YAML file"


def test_document_over_input_max_bytes_is_refused_with_its_size(tmp_path):
    (tmp_path / "kgkit.yaml").write_text("input:\n  max_bytes: 1000\n")
    doc = tmp_path / "long.txt"
    doc.write_text("Ada Lovelace met Charles Babbage. " * 100)  # 3,400 bytes
    result = kgkit("extract", str(doc), "--config", str(tmp_path / "kgkit.yaml"), "--out", str(tmp_path / "out"))
    assert result.exit_code == 2
    assert result.stderr == (f"Error: {doc} is 3,400 bytes, over input.max_bytes (1,000 bytes)\n"
                             "  hint: raise input.max_bytes if this file is meant to be read\n")
    assert not (tmp_path / "out").exists()


def test_stdin_over_the_limit_is_refused_without_reading_it_all():
    endless = io.BytesIO(b"a" * 5000)
    with pytest.raises(InputError, match=r"^stdin is more than 1,000 bytes, over input.max_bytes$"):
        load_document("-", stdin=endless, max_bytes=1000)
    assert endless.tell() == 1001
