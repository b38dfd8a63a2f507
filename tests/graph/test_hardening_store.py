"""``kgkit graph add`` against tampered run folders, on SQLite and PostgreSQL: each is
refused whole before anything is written (exit 2, the file and the item named, no
traceback), the tenant's graph is unchanged and every later command still works. Special
files inside a run folder (FIFOs, links to /dev/zero) are refused without blocking: those
cases run the CLI in a child process under a deadline."""
from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from support.cli_support import kgkit
from support.graph_support import graph_url, postgres, small_runs  # noqa: F401  (fixtures)
from kgkit.graph import GraphStore


def _json(path: Path):
    return json.loads(path.read_text(encoding="utf-8"))


def _put(path: Path, data) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def _edit(name: str, change):
    """A tampering of ``views/<name>.json`` (or nodes.json / manifest.json) by ``change(data)``."""
    def tamper(run: Path) -> None:
        path = run / (f"{name}.json" if name in ("nodes", "manifest") else f"views/{name}.json")
        data = _json(path)
        change(data)
        _put(path, data)
    return tamper


def _raw(name: str, old: str, new: str):
    """A tampering of the file's text: the first ``old`` replaced by ``new`` (for what json.dumps cannot write)."""
    def tamper(run: Path) -> None:
        path = run / name
        text = path.read_text(encoding="utf-8")
        assert old in text, (name, old)
        path.write_text(text.replace(old, new, 1), encoding="utf-8")
    return tamper


def _set(key: str, value):
    return lambda d: d["edges"][0].__setitem__(key, value)


def _rename(d):
    node = d["nodes"][0]
    node["name"], node["type"] = "Evil Person", "Person"


def _duplicate(d):
    d["nodes"].append(dict(d["nodes"][0]))


def _span(span):
    return lambda d: d["edges"][0]["evidence"].__setitem__("span", span)


def _characters(d):
    d["input"]["characters"] = 2**40


def _review_nan(run: Path) -> None:
    with (run / "review.jsonl").open("a", encoding="utf-8") as fh:
        fh.write('{"stage": "entities", "chunk": null, "item": {"confidence": NaN}, "reason": "x"}\n')


CASES = {
    "an edge whose head is a list": (_edit("binary", _set("head", ["n_0123456789abcdef"])),
                                     "binary.json: edges/0/head: "),
    "a dangling edge": (_edit("binary", _set("tail", "n_0123456789abcdef")),
                        "binary.json: edges/0 (e_", "names node n_0123456789abcdef, which nodes.json does not hold"),
    "a node id reused with another name and type": (_edit("nodes", _rename), "nodes.json: nodes/0 (n_",
                                                    "is not the one of a 'Person' named 'Evil Person'"),
    "a node id used twice": (_edit("nodes", _duplicate), "nodes.json: nodes/", "used by another node of this file"),
    "confidence Infinity": (_raw("views/binary.json", '"confidence": 0.', '"confidence": Infinity, "x": 0.'),
                            "binary.json: not strict JSON (Infinity is not a JSON number)"),
    "confidence NaN": (_raw("views/binary.json", '"confidence": 0.', '"confidence": NaN, "x": 0.'),
                       "binary.json: not strict JSON (NaN is not a JSON number)"),
    "confidence 1e999": (_raw("views/binary.json", '"confidence": 0.', '"confidence": 1e999, "x": 0.'),
                         "binary.json: not strict JSON (the number 1e999 is too large for a double)"),
    "confidence 7": (_edit("binary", _set("confidence", 7)), "binary.json: edges/0", "confidence 7 is not between 0 and 1"),
    "a huge span": (_edit("binary", _span([0, 10**12])), "binary.json: edges/0", "evidence: span [0, 1000000000000] "
                    "is not within the document's"),
    "a one-number span": (_edit("binary", _span([5])), "binary.json: edges/0/evidence/span: "),
    "a span ending before it starts": (_edit("binary", _span([9, 3])), "span [9, 3] is not within"),
    "spans beyond 32 bits": (_edit("manifest", _characters), "manifest.json: input/characters 1099511627776 "
                             "is not a length"),
    "an object as an item id": (_edit("binary", _set("id", {"evil": 1})), "binary.json: edges/0/id: "),
    "a page that is text": (_edit("binary", lambda d: d["edges"][0]["evidence"].__setitem__("page", "x")),
                            "binary.json: edges/0/evidence/page: "),
    "a lone surrogate": (_raw("nodes.json", '"name": "', '"name": "\\ud800'), "nodes.json: /nodes/",
                         "a lone surrogate"),
    "a NUL byte": (_raw("nodes.json", '"name": "', '"name": "\\u0000'), "nodes.json: /nodes/", "a NUL character"),
    "NaN in review.jsonl": (_review_nan, "review.jsonl:", "not strict JSON (NaN is not a JSON number)"),
    "review.jsonl line of the wrong shape": (lambda run: (run / "review.jsonl").write_text("[1, 2]\n"),
                                             "review.jsonl:1: the top level: "),
    "a view of another document": (_edit("binary", lambda d: d.__setitem__("doc_id", "d_0000000000000000")),
                                   "binary.json: doc_id d_0000000000000000 is not the manifest's"),
    "a view that is not JSON": (lambda run: (run / "views" / "binary.json").write_bytes(b"\xff\xfe{"),
                                "binary.json: not UTF-8"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_tampered_run_folder_is_refused_whole_and_the_graph_keeps_serving(graph_url, small_runs, tmp_path, case):
    tamper, *expected = CASES[case]
    assert kgkit("graph", "add", graph_url, str(small_runs["beta"])).exit_code == 0
    with GraphStore(graph_url) as g:
        before = g.snapshot()
    broken = tmp_path / "alpha"
    shutil.copytree(small_runs["alpha"], broken)
    tamper(broken)

    result = kgkit("graph", "add", graph_url, str(broken))

    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and str(broken) in result.output
    for part in expected:
        assert part in result.output, result.output
    with GraphStore(graph_url) as g:
        assert g.snapshot() == before
    for command in (["graph", "stats"], ["graph", "show"]):
        assert kgkit(*command, graph_url).exit_code == 0
    for fmt in ("graphml", "neo4j", "turtle", "json"):
        assert kgkit("graph", "export", graph_url, "--format", fmt, "-o", str(tmp_path / fmt)).exit_code == 0


def test_an_untampered_folder_still_adds(graph_url, small_runs):
    result = kgkit("graph", "add", graph_url, *(str(small_runs[n]) for n in ("alpha", "beta", "gamma")))
    assert result.exit_code == 0, result.output


def _fifo(name: str):
    def make(run: Path) -> None:
        (run / name).unlink()
        os.mkfifo(run / name)
    return make


def _link(name: str, target: str):
    def make(run: Path) -> None:
        (run / name).unlink()
        os.symlink(target, run / name)
    return make


SPECIAL = {
    "a FIFO as manifest.json": (_fifo("manifest.json"), "manifest.json is a FIFO (named pipe), not a regular file"),
    "a FIFO as nodes.json": (_fifo("nodes.json"), "nodes.json is a FIFO (named pipe), not a regular file"),
    "a FIFO as review.jsonl": (_fifo("review.jsonl"), "review.jsonl is a FIFO (named pipe), not a regular file"),
    "a FIFO as a view": (_fifo("views/binary.json"), "binary.json is a FIFO (named pipe), not a regular file"),
    "review.jsonl linked to /dev/zero": (_link("review.jsonl", "/dev/zero"), "review.jsonl: is a symbolic link"),
    "nodes.json linked to a file elsewhere": (_link("nodes.json", "/etc/hostname"), "nodes.json: is a symbolic link"),
    "the views folder linked elsewhere": (lambda run: (shutil.rmtree(run / "views"), os.symlink("/etc", run / "views")),
                                          "views: is a symbolic link"),
}


@pytest.mark.parametrize("case", sorted(SPECIAL))
def test_a_special_file_in_a_run_folder_is_refused_without_blocking(small_runs, tmp_path, case):
    make, expected = SPECIAL[case]
    broken = tmp_path / "alpha"
    shutil.copytree(small_runs["alpha"], broken)
    make(broken)
    env = {**os.environ, "KGKIT_CONFIG_DIR": str(tmp_path / "home"), "KGKIT_CACHE_DIR": str(tmp_path / "cache")}
    done = subprocess.run([sys.executable, "-c", "from kgkit.cli import run; run()", "graph", "add",
                           str(tmp_path / "g.sqlite"), str(broken)], capture_output=True, text=True, timeout=60,
                          env=env)
    assert done.returncode == 2, done.stderr
    assert expected in done.stderr and "Traceback" not in done.stderr



def _own_id(src: Path, dst: Path, new_id: str) -> Path:
    """A copy of run folder ``src`` whose first corpus-wide node is named ``new_id`` everywhere (as a reader of
    its own names it)."""
    shutil.copytree(src, dst)
    old = next(n["id"] for n in _json(dst / "nodes.json")["nodes"]
               if not n.get("document") and (n.get("scope") or "corpus") == "corpus")
    for path in [dst / "nodes.json", *(dst / "views").glob("*.json")]:
        path.write_text(path.read_text(encoding="utf-8").replace(old, new_id), encoding="utf-8")
    return dst


def test_an_id_of_a_readers_own_reused_with_another_name_is_refused(graph_url, small_runs, tmp_path):  # noqa: F811
    first = _own_id(small_runs["alpha"], tmp_path / "one" / "alpha", "shared-id")
    second = _own_id(small_runs["beta"], tmp_path / "two" / "beta", "shared-id")
    assert kgkit("graph", "add", graph_url, str(first)).exit_code == 0
    with GraphStore(graph_url) as g:
        before = g.snapshot()
    result = kgkit("graph", "add", graph_url, str(second))
    assert result.exit_code == 2 and "reuses the id of a" in result.output and "Traceback" not in result.output
    with GraphStore(graph_url) as g:
        assert g.snapshot() == before
