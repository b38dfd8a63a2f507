"""`kgkit extract` on the bundled CUAD contract with the offline backend, through the CLI."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from kgkit.cli import cli, main

from support.engine_support import ScriptedBackend, write_inputs

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cooltech_strategic_alliance.pdf"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def pdf(tmp_path):
    return shutil.copy(EXAMPLE, tmp_path / EXAMPLE.name)


def extract(*args):
    return CliRunner().invoke(cli, ["extract", *map(str, args)], catch_exceptions=False)


def test_quickstart_writes_a_run_folder_whose_views_use_the_node_table(pdf, tmp_path):
    result = extract("--domain", "legal_contracts", "--view", "nary,temporal", pdf)
    assert result.exit_code == 0, result.output
    run = tmp_path / "kgkit-out" / "cooltech_strategic_alliance"
    manifest = json.loads((run / "manifest.json").read_text())
    n = manifest["input"]["chunks"]
    assert n == 8 and manifest["input"]["pages"] == 6 and manifest["input"]["media_type"] == "application/pdf"
    assert manifest["calls"]["core"] == 2 * n
    assert manifest["calls"]["upgrade"] == {"nary": n, "temporal": n}
    assert (manifest["calls"]["total"], manifest["calls"]["projection"]) == (4 * n, 0)
    assert manifest["model"]["core"]["backend"] == "offline" and manifest["cost"] == 0.0
    node_ids = {node["id"] for node in json.loads((run / "nodes.json").read_text())["nodes"]}
    nary = json.loads((run / "views" / "nary.json").read_text())
    temporal = json.loads((run / "views" / "temporal.json").read_text())
    referenced = {f["node"] for h in nary["hyperedges"] for v in h["roles"].values()
                  for f in (v if isinstance(v, list) else [v]) if "node" in f}
    referenced |= {e[end] for e in temporal["edges"] for end in ("head", "tail")}
    assert nary["hyperedges"] and referenced <= node_ids
    # the summary table goes to stdout, progress lines to stderr
    assert result.stdout.splitlines()[0].split() == ["document", "nodes", "edges", "per", "view", "calls",
                                                     "(naive)", "tokens", "in/out", "cost", "time", "warnings"]
    assert "cooltech_strategic_alliance: entities 8/8 done" in result.stderr
    assert "cooltech_strategic_alliance: temporal 8/8 done" in result.stderr


def test_json_summary_and_adding_a_view_runs_only_its_passes(pdf, tmp_path):
    first = json.loads(extract("--domain", "legal_contracts", "--view", "nary,temporal", "--json", pdf).stdout)
    assert first["ok"] and first["runs"][0]["calls"]["executed"] == 32
    result = extract("--domain", "legal_contracts", "--view", "event", "--resume", "--json", pdf)
    run = json.loads(result.stdout)["runs"][0]
    assert run["calls"]["executed"] == 8 and run["calls"]["reused"] == 32
    assert run["calls"]["upgrade"] == {"nary": 8, "temporal": 8, "event": 8}
    assert sorted(run["edges"]) == ["event", "nary", "temporal"]
    assert run["run_dir"] == str(Path("kgkit-out") / "cooltech_strategic_alliance")


def test_dry_run_prints_the_plan_and_calls_nothing(pdf, tmp_path):
    result = extract("--domain", "legal_contracts", "--view", "all", "--dry-run", "--json", pdf)
    assert result.exit_code == 0
    plan = json.loads(result.stdout)["plan"][0]
    assert plan["chunks"] == 8
    assert plan["calls"]["upgrade"] == {"event": 8, "nary": 8, "temporal": 8}
    assert (plan["calls"]["total"], plan["calls"]["naive"]) == (40, 80)
    assert plan["cost"] == 0.0 and plan["tokens"]["in"] > 0
    assert not (tmp_path / "kgkit-out").exists()
    table = extract("--domain", "legal_contracts", "--dry-run", pdf).stdout
    assert table.endswith("(dry run: nothing was called)\n")


def test_bad_input_exits_2_with_a_message(pdf, tmp_path, capsys):
    with pytest.raises(SystemExit) as exit_:
        main(["extract", "--view", "narry", str(pdf)])
    assert exit_.value.code == 2
    err = capsys.readouterr().err
    assert err.startswith("Error: unknown view 'narry'; available: binary, diy, event, nary, person, temporal")
    assert "hint: did you mean 'nary', 'binary'?" in err
    with pytest.raises(SystemExit) as exit_:
        main(["extract", str(tmp_path / "missing.pdf")])
    assert exit_.value.code == 2
    assert "missing.pdf" in capsys.readouterr().err
    assert not (tmp_path / "kgkit-out").exists()


def test_failed_chunks_exit_1_and_resume_retries_them(tmp_path, monkeypatch):
    inputs = write_inputs(tmp_path / "in")
    (tmp_path / "kgkit.yaml").write_text("chunking: {size: 220, overlap: 0}\n")
    backend = ScriptedBackend(fail={("entities", 3)})
    monkeypatch.setattr("kgkit.backends.factory.create_backend", lambda config, stage: backend)
    result = extract("--domain", inputs["domain"], "--view", "binary", inputs["doc"])
    assert result.exit_code == 1
    assert "warning: 1 pass(es) failed; rerun with --resume to retry them" in result.stdout
    backend.fail.clear()
    result = extract("--domain", inputs["domain"], "--resume", "--json", inputs["doc"])
    run = json.loads(result.stdout)["runs"][0]
    assert result.exit_code == 0 and run["calls"]["executed"] == 1 + 8  # entities 3, then relations see a new node
    assert run["edges"] == {"binary": 8}


def test_progress_redraws_a_bar_on_a_terminal_and_prints_lines_otherwise():
    import io

    from kgkit.cli.extract import _Progress

    class Terminal(io.StringIO):
        def isatty(self):
            return True

    tty, pipe = Terminal(), io.StringIO()
    for stream in (tty, pipe):
        for done in (1, 2, 4):
            _Progress(stream)("doc", "entities", done, 4)
    assert tty.getvalue().split("\r")[1:] == [
        "doc: entities             [######------------------] 1/4",
        "doc: entities             [############------------] 2/4",
        "doc: entities             [########################] 4/4\n",
    ]
    assert pipe.getvalue() == "doc: entities 4/4 done\n"


def _dry_run_provider_line(tmp_path, *args) -> str:
    (tmp_path / "note.txt").write_text("Acme Corp. signed with Beta LLC on March 3, 2021.\n")
    result = extract("--dry-run", *args, tmp_path / "note.txt")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[-1] == "(dry run: nothing was called)"
    return lines[-2]


def test_dry_run_names_model_client_and_key_variable_set_or_not(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    assert _dry_run_provider_line(tmp_path) == "model: none (the offline backend; no key needed)"
    assert _dry_run_provider_line(tmp_path, "--model", "openai/gpt-4o-mini") == \
        "model: openai/gpt-4o-mini, client: direct, key: OPENAI_API_KEY (NOT SET: the run would stop at its first call)"
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    assert _dry_run_provider_line(tmp_path, "--model", "openai/gpt-4o-mini") == \
        "model: openai/gpt-4o-mini, client: direct, key: OPENAI_API_KEY (set)"
    (tmp_path / "team.yaml").write_text("llm:\n  model: anthropic/claude-3-5-haiku-20241022\n  api_key_env: TEAM_KEY\n")
    monkeypatch.delenv("TEAM_KEY", raising=False)
    assert _dry_run_provider_line(tmp_path, "--config", tmp_path / "team.yaml") == (
        "model: anthropic/claude-3-5-haiku-20241022, client: litellm, key: TEAM_KEY "
        "(NOT SET: the run would stop at its first call)")
    result = extract("--dry-run", "--json", "--model", "openai/gpt-4o-mini", tmp_path / "note.txt")
    assert json.loads(result.stdout)["provider"] == {"model": "openai/gpt-4o-mini", "client": "direct",
                                                     "key_variable": "OPENAI_API_KEY", "key_set": True}
    assert "sk-test-not-a-real-key" not in result.stdout


@pytest.mark.parametrize("cost, shown", [(0.0, "$0.0000"), (3.6e-05, "$0.000036"), (0.00041, "$0.00041"),
                                         (0.0123, "$0.0123"), (1.5, "$1.5000"), (2e-07, "$0.00000020")])
def test_costs_print_with_enough_digits_to_be_non_zero(cost, shown):
    from kgkit.cli.extract import money

    assert money(cost) == shown


def test_the_summary_shows_a_small_cost_as_non_zero():
    from kgkit.cli.extract import format_summary

    run = {"document": "d", "run_dir": "out/d", "nodes": 1, "edges": {}, "tokens": {"in": 1, "out": 1},
           "cost": 3.6e-05, "seconds": 0.1, "warnings": [], "review": 0,
           "calls": {"total": 2, "naive": 2, "core": 2, "upgrade": {}, "reused": 0, "cache_hits": 0, "requests": 2}}
    assert "$0.000036" in format_summary({"runs": [run]}).splitlines()[2]


NO_NARY_DOMAIN = """name: no_nary
description: People and companies, nothing more.
version: 1
entity_types:
  - name: Person
    patterns:
      regex: ['\\b(?:Mr|Ms|Dr)\\. [A-Z][a-z]+']
  - name: Organization
    patterns: [Acme Corp]
relation_types:
  - name: Work_For
    head: [Person]
    tail: [Organization]
    triggers: [works for]
"""


def test_a_view_the_domain_cannot_serve_is_reported(tmp_path):
    (tmp_path / "no_nary.yaml").write_text(NO_NARY_DOMAIN)
    (tmp_path / "note.txt").write_text("Dr. Lee works for Acme Corp in the city.\n")
    result = extract("--domain", tmp_path / "no_nary.yaml", "--view", "binary,nary", tmp_path / "note.txt")
    assert result.exit_code == 0, result.output
    warning = ("view nary: the domain no_nary declares no n-ary relation types (nary_relation_types), "
               "so the view stays empty")
    assert f"  warning: {warning}" in result.stdout.splitlines()
    manifest = json.loads((tmp_path / "kgkit-out" / "note" / "manifest.json").read_text())
    assert warning in manifest["warnings"]
    served = extract("--domain", "legal_contracts", "--view", "nary", tmp_path / "note.txt")
    assert served.exit_code == 0 and "warning: view nary" not in served.stdout


def test_a_run_that_stops_before_its_first_answer_leaves_no_folder(tmp_path, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (tmp_path / "note.txt").write_text("Acme Corp. signed with Beta LLC on March 3, 2021.\n")
    result = CliRunner().invoke(cli, ["extract", "--model", "openai/gpt-4o-mini", str(tmp_path / "note.txt")])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[-2:] == [
        "Error: openai/gpt-4o-mini: no API key: OPENAI_API_KEY is not set",
        "  hint: export OPENAI_API_KEY=<your API key>, or name the variable holding your key in llm.api_key_env"]
    assert not (tmp_path / "kgkit-out").exists()
    (tmp_path / "kept").mkdir()  # an --out that was there before stays
    result = CliRunner().invoke(cli, ["extract", "--model", "openai/gpt-4o-mini", "--out", str(tmp_path / "kept"),
                                      str(tmp_path / "note.txt")])
    assert result.exit_code == 2 and list((tmp_path / "kept").iterdir()) == []
