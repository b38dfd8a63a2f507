"""Run docs/authoring-domains.md as written, so the tutorial cannot rot.

The markdown is the script. A fenced block whose info string names a file
(```yaml my_contracts.yaml```) is written to that file; a ```console``` block is a list of
``$ command`` lines, each followed by its expected output (stdout and stderr together).
An expected line ``...`` stands for any number of lines, ``...`` inside a line for any
text, and runs of spaces compare equal. Commands must exit 0, or N with ```console exit=N```.
Other blocks are illustration only. Commands run in bash, in a fresh folder, with the
``kgkit`` next to this Python first on PATH and no access to the user's config.
"""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parent.parent / "docs" / "authoring-domains.md"
FENCE = re.compile(r"^```(?P<info>[^\n`]*)\n(?P<body>.*?)^```\s*$", re.M | re.S)


def steps(markdown: str):
    """("file", name, text) and ("run", command, expected lines, exit code), in document order."""
    for block in FENCE.finditer(markdown):
        info = block["info"].split()
        body = block["body"]
        if not info:
            continue
        if info[0] == "console":
            exit_code = next((int(w[5:]) for w in info[1:] if w.startswith("exit=")), 0)
            command, expected = None, []
            for line in body.splitlines():
                if line.startswith("$ "):
                    if command is not None:
                        yield ("run", command, expected, exit_code)
                    command, expected = line[2:], []
                else:
                    expected.append(line)
            if command is not None:
                yield ("run", command, expected, exit_code)
        elif len(info) == 2:
            yield ("file", info[1], body)


def _line_rx(expected: str) -> re.Pattern[str]:
    parts = [re.escape(" ".join(p.split())) for p in expected.split("...")]
    return re.compile("^" + ".*".join(parts) + "$")


def matches(expected: list[str], actual: list[str]) -> bool:
    """Expected lines against actual ones; '...' alone matches any run of lines."""
    if not expected:
        return not actual
    head, rest = expected[0], expected[1:]
    if head == "...":
        return any(matches(rest, actual[i:]) for i in range(len(actual) + 1))
    return bool(actual) and bool(_line_rx(head).match(" ".join(actual[0].split()))) and matches(rest, actual[1:])


def test_the_tutorial_has_the_steps_it_promises():
    found = list(steps(DOC.read_text(encoding="utf-8")))
    commands = [s[1] for s in found if s[0] == "run"]
    assert commands[0] == "kgkit domain new my_contracts"
    assert "kgkit domain validate domains/my_contracts.yaml" in commands
    # the starter lands where --domain NAME finds it: no copying, no path needed
    assert any(c.startswith("kgkit extract") and "--domain my_contracts " in c for c in commands)
    assert any(s[0] == "run" and s[3] == 2 for s in found), "the tutorial shows a failing validation"


def test_tutorial_runs_as_written(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    env = dict(os.environ)
    env.update({
        "PATH": str(Path(sys.executable).parent) + os.pathsep + env.get("PATH", ""),
        "HOME": str(tmp_path / "home"),
        "KGKIT_CONFIG_DIR": str(tmp_path / "config"),
        "KGKIT_CACHE_DIR": str(tmp_path / "cache"),
        "NO_COLOR": "1",
    })
    for step in steps(DOC.read_text(encoding="utf-8")):
        if step[0] == "file":
            (work / step[1]).parent.mkdir(parents=True, exist_ok=True)
            (work / step[1]).write_text(step[2], encoding="utf-8")
            continue
        _, command, expected, exit_code = step
        proc = subprocess.run(["bash", "-c", command + " 2>&1"], cwd=work, env=env,
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == exit_code, f"$ {command}\n{proc.stdout}"
        assert matches(expected, proc.stdout.splitlines()), (
            f"$ {command}\nexpected:\n" + "\n".join(expected) + "\nactual:\n" + proc.stdout
        )


@pytest.mark.parametrize(
    "expected, actual, ok",
    [
        (["a", "...", "z"], ["a", "b", "c", "z"], True),
        (["a ... z"], ["a  anything z"], True),
        (["a", "z"], ["a", "b", "z"], False),
        (["OK x"], ["OK y"], False),
        ([], ["unexpected output"], False),
    ],
)
def test_output_matcher(expected, actual, ok):
    assert matches(expected, actual) is ok
