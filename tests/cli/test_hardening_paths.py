"""Store files and output paths under a careless operator: a damaged, foreign or special
graph file is named (exit 2, no traceback) and left as it was; ``extract --graph`` with an
unusable store stops before any request is paid for; an export never writes through a
symlinked sub-folder, and ``-o afile/sub`` is named."""
from __future__ import annotations

import os
import sqlite3

import pytest

from support.cli_support import kgkit
from support.graph_support import small_runs  # noqa: F401  (fixture)
from support.stub_provider import Reply
from backends.test_llm_backend import ANSWER, FAKE_KEY, KEY_ENV

HINT = "restore the store from a backup, or build a new one with kgkit graph add"


@pytest.fixture
def store(small_runs, tmp_path):  # noqa: F811
    path = tmp_path / "g.sqlite"
    assert kgkit("graph", "add", str(path), str(small_runs["alpha"])).exit_code == 0
    return path


def _sql(path, statement):
    conn = sqlite3.connect(path)
    conn.execute(statement)
    conn.commit()
    conn.close()


def _corrupt(path):
    with open(path, "r+b") as fh:  # a page of the data area overwritten
        fh.seek(4096 * 2)
        fh.write(b"\xde\xad" * 2048)


def test_a_corrupted_page_is_named(store):
    _sql(store, "PRAGMA wal_checkpoint(TRUNCATE)")
    _corrupt(store)
    result = kgkit("graph", "stats", str(store))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert f"{store}: the graph store cannot be read (database disk image is malformed)" in result.output


def test_a_schema_version_that_is_text_is_named(store):
    _sql(store, "UPDATE schema_version SET version = 'two'")
    result = kgkit("graph", "stats", str(store))
    assert result.exit_code == 2 and "its schema_version holds 'two', not one version" in result.output


def test_a_dropped_table_is_named(store):
    _sql(store, "DROP TABLE items")
    for command in (["graph", "stats"], ["graph", "show"]):
        result = kgkit(*command, str(store))
        assert result.exit_code == 2 and "the graph store is damaged: table items is missing" in result.output
        assert HINT in result.output


def test_another_programs_database_is_refused_and_left_as_it_was(tmp_path, small_runs):  # noqa: F811
    other = tmp_path / "app.sqlite"
    _sql(other, "CREATE TABLE users (name TEXT)")
    before = other.read_bytes()
    for command in (["graph", "stats", str(other)], ["graph", "add", str(other), str(small_runs["alpha"])]):
        result = kgkit(*command)
        assert result.exit_code == 2 and "not a kgkit graph store (it holds other tables: users)" in result.output
    assert other.read_bytes() == before and not (tmp_path / "app.sqlite-wal").exists()
    assert sqlite3.connect(other).execute("PRAGMA journal_mode").fetchone() == ("delete",)


@pytest.mark.parametrize("kind", ["/dev/zero", "a FIFO", "a link to /dev/zero", "a text file"])
def test_a_special_or_plain_file_as_the_graph_is_named(tmp_path, kind):
    path = tmp_path / "g.sqlite"
    if kind == "/dev/zero":
        path = "/dev/zero"
    elif kind == "a FIFO":
        os.mkfifo(path)
    elif kind == "a link to /dev/zero":
        os.symlink("/dev/zero", path)
    else:
        path.write_text("notes\n" * 100)
    result = kgkit("graph", "stats", str(path))
    assert result.exit_code == 2 and "Traceback" not in result.output
    expected = {"/dev/zero": "is a character device", "a FIFO": "is a FIFO", "a link to /dev/zero":
                "is a character device", "a text file": "not an SQLite database"}[kind]
    assert expected in result.output


@pytest.mark.parametrize("graph", ["missing-folder/g.sqlite", "/dev/zero", "app.sqlite"])
def test_extract_with_an_unusable_graph_stops_before_any_request(cli_home, stub_provider, monkeypatch, graph):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    _sql(cli_home / "app.sqlite", "CREATE TABLE users (name TEXT)")
    (cli_home / "doc.txt").write_text("Ann Lee works for Acme Corp in Boston.\n")
    (cli_home / "kgkit.yaml").write_text(
        f"llm: {{model: openai/stub-model, api_base: '{stub_provider.openai_base}', api_key_env: {KEY_ENV}}}\n"
        "cache: {enabled: false}\nskills: {enabled: false}\n")
    stub_provider.responder = lambda request: Reply(content=ANSWER)
    result = kgkit("extract", "doc.txt", "--config", "kgkit.yaml", "--out", "out", "--graph", graph)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert stub_provider.requests == []  # nothing paid for
    assert not (cli_home / "out" / "doc" / "manifest.json").exists()


def test_export_never_writes_through_a_symlinked_sub_folder(store, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    out = tmp_path / "export"
    out.mkdir()
    os.symlink(elsewhere, out / "neo4j")
    result = kgkit("graph", "export", str(store), "--format", "neo4j", "-o", str(out))
    assert result.exit_code == 2 and "neo4j is a symbolic link, not a folder of this export" in result.output
    assert list(elsewhere.iterdir()) == [] and sorted(p.name for p in out.iterdir()) == ["neo4j"]


def test_export_to_a_folder_below_a_file_is_named(store, tmp_path):
    (tmp_path / "afile").write_text("x")
    result = kgkit("graph", "export", str(store), "--format", "json", "-o", str(tmp_path / "afile" / "sub"))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "cannot create the export folder" in result.output and (tmp_path / "afile").read_text() == "x"
