"""Shared fixtures and test-run settings."""
from __future__ import annotations

import os
import signal

import pytest
from hypothesis import settings

from support.stub_provider import StubProvider

# Fixtures shared by the schema-layer test modules (fixture_project); the guard that fails
# collection when a module reads the shared corpora at import (shared_guard.py).
pytest_plugins = ["support.schema_support", "support.shared_guard"]

# Locally, hypothesis explores new examples every run (that is how it finds bugs); in CI
# (CI=true) it replays a fixed sequence, so a green main stays green for the same code.
# No example has a deadline: these machines are noisy, and a property's time is a benchmark's
# business (benchmarks/), not a unit test's.
settings.register_profile("kgkit", deadline=None)
settings.register_profile("ci", parent=settings.get_profile("kgkit"), derandomize=True, database=None,
                          print_blob=True)
settings.load_profile("ci" if os.environ.get("CI") else "kgkit")

# A suite started in the background by a non-interactive shell (`pytest &`, some CI runners)
# inherits SIGINT ignored, and so would every kgkit it starts: the Ctrl-C tests (exit 130)
# need it delivered, so the run restores Python's default.
if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture
def stub_provider():
    """A scriptable OpenAI/Anthropic-compatible server on 127.0.0.1 (see stub_provider.py)."""
    server = StubProvider().start()
    yield server
    server.stop()


@pytest.fixture(autouse=True)
def _user_skill_library(tmp_path_factory, monkeypatch):
    """Keep every test off the developer's own skill library (the user data directory)."""
    monkeypatch.setenv("KGKIT_DATA_DIR", str(tmp_path_factory.mktemp("user-data")))


@pytest.fixture
def cli_home(tmp_path, monkeypatch):
    """A CLI run with no state of the user's: config and cache folders under ``tmp_path``,
    which is also the working directory."""
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache-home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
