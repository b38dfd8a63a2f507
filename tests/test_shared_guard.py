"""The guard that keeps the README's test command working on a clone with nothing beside it:
a test module reading the shared corpora at collection fails the run, wherever it runs; one
reading them when its test runs is fine (tests/support/shared_guard.py)."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

TESTS = Path(__file__).resolve().parent

AT_IMPORT = '''
from support.shared_data import DATA
NAMES = sorted(p.stem for p in DATA.glob("*.txt"))

def test_names():
    assert NAMES
'''
IN_PARAMETRIZE = '''
import pytest
from support.shared_data import DATA

@pytest.mark.parametrize("name", [(DATA / "a.txt").read_text()])
def test_name(name):
    assert name
'''
WHEN_RUN = '''
from support.shared_data import DATA

def test_names():
    assert sorted(p.stem for p in DATA.glob("*.txt")) == ["a"]
'''


def _collect(tmp_path: Path, module: str) -> subprocess.CompletedProcess:
    data = tmp_path / "shared-data"
    data.mkdir()
    (data / "a.txt").write_text("a document\n")
    project = tmp_path / "project"
    project.mkdir()
    (project / "conftest.py").write_text('pytest_plugins = ["support.shared_guard"]\n')
    (project / "test_module.py").write_text(module)
    env = {**os.environ, "KGKIT_SHARED_DATA": str(data), "PYTHONPATH": str(TESTS)}
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(project)],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)


def test_a_module_listing_the_shared_data_at_import_fails_collection(tmp_path):
    run = _collect(tmp_path, AT_IMPORT)
    assert run.returncode == 2, run.stdout + run.stderr
    assert "while being collected: tests must find the shared corpora when they run" in run.stdout
    assert "1 error" in run.stdout


def test_a_parametrize_reading_a_shared_file_fails_collection(tmp_path):
    run = _collect(tmp_path, IN_PARAMETRIZE)
    assert run.returncode == 2, run.stdout + run.stderr
    assert f"read {tmp_path / 'shared-data' / 'a.txt'} while being collected" in run.stdout


def test_a_test_reading_the_shared_data_when_it_runs_passes(tmp_path):
    run = _collect(tmp_path, WHEN_RUN)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "1 passed" in run.stdout
