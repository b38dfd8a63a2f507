"""The broken-file corpus: each file gets exactly the issues listed in tests/broken/expected.yaml.

Domain files go through the real command (`kgkit domain validate`, exit code 2, message on
stderr); views and templates through the library door every loader uses.
"""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from kgkit.cli import cli
from kgkit.errors import ValidationError
from kgkit.catalog.validation import validate_file
from support.schema_support import BROKEN

EXPECTED: dict[str, list[str]] = yaml.safe_load((BROKEN / "expected.yaml").read_text(encoding="utf-8"))


def test_corpus_is_large_and_fully_indexed():
    on_disk = {p.relative_to(BROKEN).as_posix() for p in BROKEN.glob("*/*.yaml")}
    assert on_disk == set(EXPECTED), "every broken file needs an entry in expected.yaml and vice versa"
    assert len(on_disk) >= 30


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if n.startswith("domains/")))
def test_broken_domain_via_cli(name, fixture_project):
    path = BROKEN / name
    result = CliRunner().invoke(cli, ["domain", "validate", str(path)])
    assert result.exit_code == 2, result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert "Traceback" not in result.output
    want = [f"{path}:{issue}" for issue in EXPECTED[name]]
    n = len(want)
    assert result.stderr.splitlines() == want + [f"{n} problem{'s' if n != 1 else ''} found"]
    assert result.stdout == ""


@pytest.mark.parametrize("name", sorted(n for n in EXPECTED if not n.startswith("domains/")))
def test_broken_view_or_template(name, fixture_project):
    path = BROKEN / name
    with pytest.raises(ValidationError) as caught:
        validate_file(name.split("/")[0], path)
    assert [issue.format() for issue in caught.value.issues] == [f"{path}:{i}" for i in EXPECTED[name]]


def test_issues_carry_structured_location(fixture_project):
    """Callers other than the CLI get line, column and key path as data, not only text."""
    with pytest.raises(ValidationError) as caught:
        validate_file("domain", BROKEN / "domains" / "unknown_head_type.yaml")
    (issue,) = caught.value.issues
    assert (issue.line, issue.column) == (7, 12)
    assert issue.path == ("relation_types", "Work_For", "head", 0)
    assert issue.hint == "did you mean 'Person'?"


def test_every_problem_of_a_file_at_once_sorted_by_line(fixture_project):
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", BROKEN / "domains" / "many_errors.yaml")
    lines = [i.line for i in caught.value.issues]
    assert len(lines) == 5 and lines == sorted(lines)


def test_several_files_report_each_and_fail_once(fixture_project):
    good = Path("domains/people.yaml")
    bad = BROKEN / "domains" / "key_typo_top.yaml"
    result = CliRunner().invoke(cli, ["domain", "validate", str(good), str(bad), str(good)])
    assert result.exit_code == 2
    assert result.stdout == f"OK {good}\nOK {good}\n"
    assert result.stderr.startswith(f"{bad}:3:1: entitiy_types: unknown key")
