"""Cross-view join by node ID: library call and `kgkit join`."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

import kgkit
from kgkit.cli import cli, main
from kgkit.config.model import Config
from kgkit.errors import InputError, NotFoundError

from support.engine_support import CHUNK_SIZE, PEOPLE, ScriptedBackend, write_inputs


@pytest.fixture
def run_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.chdir(tmp_path)
    inputs = write_inputs(tmp_path / "in")
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "nary", "temporal"],
                           config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0), out_dir=tmp_path / "out",
                           backend=ScriptedBackend())[0]
    return result.run_dir


def test_each_binary_edge_gets_the_hyperedges_and_temporal_edges_of_its_head(run_dir):
    rows = kgkit.join_views(run_dir, ["binary", "nary", "temporal"])
    assert len(rows) == 8 and sorted(r["node"]["name"] for r in rows) == sorted(PEOPLE)
    for row in rows:
        head = row["anchor"]["head"]
        assert row["node"]["id"] == head and row["node"]["type"] == "Person"
        assert [h["roles"]["employee"] for h in row["nary"]] == [{"node": head}]
        assert [(t["head"], t["tail"]) for t in row["temporal"]] == [(head, row["anchor"]["tail"])]


def test_a_hyperedge_anchor_joins_on_every_node_it_names(run_dir):
    rows = kgkit.join_views(run_dir, ["nary", "binary"])
    # each hyperedge names a person and an organisation: one row per node
    assert len(rows) == 16
    acme = [r for r in rows if r["node"]["name"] == "Acme Corp"]
    assert len(acme) == 4 and all(len(r["binary"]) == 4 for r in acme)  # four people joined Acme


def test_join_errors_name_what_exists(run_dir, tmp_path):
    with pytest.raises(NotFoundError, match=r"has no view 'event'; it has: binary, nary, temporal") as err:
        kgkit.join_views(run_dir, ["binary", "event"])
    assert err.value.hint == "add it with: kgkit extract --resume --view event <document>"
    with pytest.raises(InputError, match="at least two views"):
        kgkit.join_views(run_dir, ["binary"])
    with pytest.raises(NotFoundError, match="is not a kgkit run folder"):
        kgkit.join_views(tmp_path, ["binary", "nary"])


def test_join_cli_lists_rows_and_json(run_dir, capsys):
    result = CliRunner().invoke(cli, ["join", str(run_dir), "--views", "binary,nary"])
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert lines[0] == "binary: Ann Lee -Work_For-> Acme Corp   [via Ann Lee]"
    assert lines[1] == "  nary: Employment(employee=Ann Lee, employer=Acme Corp, start='March 1, 2020')"
    assert lines[-1] == "8 binary item(s) joined with nary"
    data = json.loads(CliRunner().invoke(cli, ["join", str(run_dir), "--views", "binary,temporal", "--json"]).stdout)
    assert data[0]["temporal"][0]["qualifiers"]["start_date"]["value"] == "2020-03-01"
    with pytest.raises(SystemExit) as exit_:
        main(["join", str(run_dir), "--views", "binary,event"])
    assert exit_.value.code == 2
    assert capsys.readouterr().err.startswith(f"Error: run {run_dir} has no view 'event'")
