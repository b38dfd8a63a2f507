"""Corpus runs (issue 11, item 2): folders, globs, distinct run folders, unreadable inputs
skipped and counted, ``runs.jsonl``, one document in memory at a time. Offline backend."""
from __future__ import annotations

import json

import pytest

import kgkit.engine.run as engine_run
from kgkit.engine.options import RunOptions
from kgkit.cli import main
from kgkit.engine.corpus import distinct_names

TEXT = "Ann Lee works for Acme Corp in Boston. Bob Stone joined Beta Ltd in Paris.\n"


@pytest.fixture
def corpus(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    root = tmp_path / "corpus"
    for rel in ["a/notes.txt", "b/notes.txt", "c/memo.md", "drafts/old.txt", "top.txt"]:
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(TEXT)
    (root / "a" / "gold.json").write_text("{}")  # not a format kgkit reads: not taken by default
    (root / "empty.txt").write_text("")  # unreadable: reported, skipped, counted
    (root / ".hidden").mkdir()
    (root / ".hidden" / "x.txt").write_text(TEXT)
    return root


def test_a_folder_runs_every_document_skips_the_unreadable_one_and_writes_runs_jsonl(corpus, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["extract", str(corpus), "--exclude", "drafts/*", "--out", str(out), "--view", "binary", "--json"])

    assert done.value.code == 1  # one input skipped; the others done
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert [r["document"] for r in summary["runs"]] == ["top", "a__notes", "b__notes", "memo"]
    assert summary["skipped"] == [{"input": str(corpus / "empty.txt"), "error": f"{corpus / 'empty.txt'} is empty"}]
    assert f"Error: {corpus / 'empty.txt'}: skipped:" in captured.err
    rows = [json.loads(line) for line in (out / "runs.jsonl").read_text().splitlines()]
    assert [(r["run_folder"], r["status"]) for r in rows] == [
        ("empty", "unreadable"), ("top", "ok"), ("a__notes", "ok"), ("b__notes", "ok"), ("memo", "ok")]
    assert all(r["calls"] == 2 for r in rows[1:]) and rows[0]["calls"] == 0
    assert sorted(p.name for p in out.iterdir()) == ["a__notes", "b__notes", "memo", "runs.jsonl", "top"]
    assert all((out / name / "manifest.json").is_file() for name in ["a__notes", "b__notes", "memo", "top"])


def test_include_globs_choose_the_files_and_plain_progress_lines_count_the_corpus(corpus, tmp_path, capsys):
    out = tmp_path / "out"
    with pytest.raises(SystemExit) as done:
        main(["extract", str(corpus), "--include", "*.md", "--include", "drafts/*", "--out", str(out),
              "--view", "binary"])
    assert done.value.code == 0
    err = capsys.readouterr().err
    assert "[1/2] memo: ok; calls 2" in err and "[2/2] old: ok; calls 4" in err
    assert sorted(p.name for p in out.iterdir()) == ["memo", "old", "runs.jsonl"]


def test_documents_are_loaded_and_written_one_at_a_time(corpus, tmp_path, monkeypatch):
    """The second document is loaded only after the first one's run folder is written."""
    events = []
    real_load = __import__("kgkit.documents.load", fromlist=["load_document"]).load_document
    monkeypatch.setattr("kgkit.documents.load.load_document",
                        lambda path, **kw: events.append(("load", str(path))) or real_load(path, **kw))
    for result in engine_run.extract_each([corpus / "a", corpus / "b"], RunOptions(views="binary", out_dir=tmp_path / "out")):
        events.append(("written", result.run_dir.name))
    assert events == [("load", str(corpus / "a" / "notes.txt")), ("written", "a__notes"),
                      ("load", str(corpus / "b" / "notes.txt")), ("written", "b__notes")]


def test_a_file_named_twice_runs_once(corpus, tmp_path):
    results = engine_run.extract([corpus / "top.txt", corpus / "top.txt"], views="binary", out_dir=tmp_path / "out")
    assert [r.run_dir.name for r in results] == ["top"]


def test_a_single_unreadable_file_is_still_bad_input(corpus, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["extract", str(corpus / "empty.txt"), "--out", str(tmp_path / "out")])
    assert done.value.code == 2
    assert not (tmp_path / "out" / "runs.jsonl").exists()


def test_run_folder_names_are_told_apart_by_the_fewest_folders():
    safe = lambda s: s  # noqa: E731
    assert distinct_names([("x", "a", "n"), ("y", "a", "n"), ("m",)], safe) == ["x__a__n", "y__a__n", "m"]
    assert distinct_names([("a", "n"), ("b", "n"), ("n",)], safe)[:2] == ["a__n", "b__n"]
    deep = distinct_names([("p", *"abcdefghi", "n"), ("q", *"abcdefghi", "n")], safe)  # alike 9 folders up
    assert len(set(deep)) == 2 and all(s.startswith("b__c__d__e__f__g__h__i__n-") for s in deep)


def test_a_dry_run_plans_a_folder(corpus, tmp_path, capsys):
    with pytest.raises(SystemExit) as done:
        main(["extract", str(corpus / "a"), str(corpus / "c"), "--dry-run", "--json"])
    assert done.value.code == 0
    assert [p["document"] for p in json.loads(capsys.readouterr().out)["plan"]] == ["notes", "memo"]


def test_runs_jsonl_replaces_the_last_run_then_grows_in_place(tmp_path):
    """A corpus run's first line replaces the last run's file; later lines are appended to
    the same file (one write each), not the whole file rewritten per document."""
    import json

    from kgkit.engine.corpus import CorpusManifest

    path = tmp_path / "runs.jsonl"
    path.write_text('{"input": "from the last run"}\n')
    runs = CorpusManifest(tmp_path)
    runs.add({"input": "a.txt", "status": "ok"})
    first = path.stat().st_ino
    runs.add({"input": "b.txt", "status": "ok"})
    runs.add({"input": "c.txt", "status": "unreadable"})
    assert [json.loads(line)["input"] for line in path.read_text().splitlines()] == ["a.txt", "b.txt", "c.txt"]
    assert path.stat().st_ino == first
