"""The README a newcomer reads: its two commands are where .ci/run reads them, it stays short,
and no user-facing text (README, docs/) carries internal issue numbers or branch names."""
from __future__ import annotations

import importlib.util
import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def _reader():
    spec = importlib.util.spec_from_file_location("readme_commands", REPO / ".ci" / "readme_commands.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_first_two_console_blocks_are_the_try_it_and_test_commands():
    try_it, test = _reader().commands((REPO / "README.md").read_text(encoding="utf-8"))
    assert try_it.endswith("kgkit extract --domain legal_contracts --view nary,temporal "
                           "examples/cooltech_strategic_alliance.pdf")
    assert test.endswith("pip install '.[test]' && pytest -q")


def test_a_readme_whose_commands_are_not_one_line_each_is_refused():
    reader = _reader()
    try:
        reader.commands("```console\npip install .\nkgkit extract x\n```\n```console\npytest\n```\n")
    except ValueError as e:
        assert "try-it command must be one line (steps joined with &&)" in str(e)
    else:
        raise AssertionError("a two-line try-it block was accepted")
    try:
        reader.commands("```console\npytest -q\n```\n")
    except ValueError as e:
        assert str(e) == "README.md has 1 ```console block(s); the try-it and test commands need 2"
    else:
        raise AssertionError("a README with one command was accepted")


def test_the_readme_is_short_enough_to_read_to_the_end():
    assert len((REPO / "README.md").read_text(encoding="utf-8").splitlines()) <= 150


def test_no_internal_issue_numbers_or_branch_names_in_user_facing_text():
    pattern = re.compile(r"\bissues? #?\d+|\bh\d\d-[a-z]+\b", re.I)
    found = [f"{path.relative_to(REPO)}: {m.group()}" for path in [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
             for m in pattern.finditer(path.read_text(encoding="utf-8"))]
    assert found == []
