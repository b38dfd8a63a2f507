"""Helpers shared by the schema tests: an isolated catalog rooted at tests/schema_fixtures."""
from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parents[1]
FIXTURES = TESTS / "schema_fixtures"
BROKEN = TESTS / "broken"


@pytest.fixture
def fixture_project(monkeypatch, tmp_path):
    """cwd = tests/schema_fixtures (its domains/, views/, templates/), an empty user config
    dir and no built-ins: results do not depend on the user's home or on shipped files."""
    from kgkit.formats import search_path

    monkeypatch.chdir(FIXTURES)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setattr(search_path, "builtin_root", lambda: tmp_path / "no-builtins")
    return FIXTURES
