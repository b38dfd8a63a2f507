"""``kgkit extract`` on a vault: chosen automatically, one run folder that ``kgkit graph add``
takes, bad input an exit 2 naming the problem and writing nothing."""
from __future__ import annotations

import json

from support.cli_support import kgkit
from support.wiki_vaults import write_vault


def files_under(root):
    return sorted(str(p.relative_to(root)) for p in root.rglob("*"))


def test_a_folder_with_index_md_is_read_as_a_vault_into_one_run_folder(cli_home):
    vault = write_vault(cli_home / "garden")
    before = files_under(vault)
    result = kgkit("extract", str(vault), "--out", "out")
    assert result.exit_code == 0, result.output
    assert "vault: 9 articles" in result.stdout and "model calls 0" in result.stdout
    assert "read as a Markdown vault" in result.stderr
    assert "warning: index.md:13: [[missing-page]] names no note in the vault (broken link)" in result.stdout
    run = cli_home / "out" / "garden"
    assert sorted(p.name for p in run.iterdir()) == ["manifest.json", "nodes.json", "review.jsonl", "views",
                                                     "wiki_report.json"]
    assert files_under(vault) == before  # nothing written into the vault
    review = [json.loads(line) for line in (run / "review.jsonl").read_text().splitlines()]
    assert {r["reason"] for r in review} == {"broken link", "ambiguous link"}

    added = kgkit("graph", "add", "g.sqlite", str(run))
    assert added.exit_code == 0, added.output
    shown = kgkit("graph", "show", "g.sqlite")
    assert "soil  Article  Soil" in shown.stdout
    assert "Soil -related-> Watering" in shown.stdout


def test_reader_wiki_reads_any_folder_and_json_carries_the_scan(cli_home):
    vault = write_vault(cli_home / "notes", {"a.md": "# A\n\n[[b]] and [[c]]\n", "b.md": "# B\n"})
    result = kgkit("extract", "--reader", "wiki", str(vault), "--out", "out", "--json")
    assert result.exit_code == 0, result.output
    [run] = json.loads(result.stdout)["runs"]
    assert run["wiki"]["links_by_status"] == {"broken": 1, "resolved": 1}
    assert run["edges"] == {"wiki": 1} and run["calls"]["total"] == 0


def test_reader_document_reads_a_vault_file_by_file(cli_home):
    vault = write_vault(cli_home / "small", {"index.md": "# Index\n\nJohn Smith works for Acme Corp.\n",
                                             "b.md": "# B\n\nMary Jones lives in Paris.\n"})
    result = kgkit("extract", "--reader", "document", str(vault), "--out", "out", "--json")
    assert result.exit_code == 0, result.output
    assert sorted(r["document"] for r in json.loads(result.stdout)["runs"]) == ["b", "index"]


def test_dry_run_plans_and_writes_nothing(cli_home):
    vault = write_vault(cli_home / "garden")
    result = kgkit("extract", str(vault), "--out", "out", "--dry-run")
    assert result.exit_code == 0, result.output
    assert "9 notes; the baseline makes no call" in result.stdout
    assert not (cli_home / "out").exists()


def test_bad_input_is_exit_2_with_the_reason_and_no_run_folder(cli_home):
    missing = kgkit("extract", "--reader", "wiki", "nowhere", "--out", "out")
    assert missing.exit_code == 2
    assert "nowhere: not a folder" in missing.stderr and "Traceback" not in missing.output
    empty = write_vault(cli_home / "empty", {"readme.txt": "no notes here"})
    result = kgkit("extract", "--reader", "wiki", str(empty), "--out", "out")
    assert result.exit_code == 2 and "no Markdown notes" in result.stderr
    vault = write_vault(cli_home / "garden")
    for extra in (["--view", "nary"], ["--domain", "legal_contracts"], [str(empty)]):
        refused = kgkit("extract", "--reader", "wiki", str(vault), *extra, "--out", "out")
        assert refused.exit_code == 2, extra
    assert not (cli_home / "out").exists()


def test_with_a_model_the_cli_runs_the_model_layer_and_a_failed_batch_is_a_warning(cli_home, stub_provider,
                                                                                     monkeypatch):
    from support.wiki_stub import scripted_answers
    from support.wiki_vaults import two_shelves

    monkeypatch.setenv("KGKIT_TEST_WIKI_CLI_KEY", "sk-wiki-cli-0000")
    (cli_home / "kgkit.yaml").write_text(
        f"llm: {{model: openai/test-model, api_base: '{stub_provider.openai_base}', "
        "api_key_env: KGKIT_TEST_WIKI_CLI_KEY, backoff: 0.0, retries: 0}\ncache: {enabled: false}\n")
    stub_provider.responder = scripted_answers(fail_batch=2)
    vault = two_shelves(cli_home / "library")
    result = kgkit("extract", str(vault), "--out", "out", "--config", "kgkit.yaml")
    assert result.exit_code == 0, result.output
    assert "model layer: 2 batches (1 failed)" in result.stdout
    assert "warning: model batch 2 (13 articles) failed" in result.stdout
    assert len(stub_provider.requests) == 2


def test_graph_loads_the_vault_and_says_what_it_holds(cli_home):
    vault = write_vault(cli_home / "garden")
    result = kgkit("extract", str(vault), "--out", "out", "--graph", "corpus.sqlite")
    assert result.exit_code == 0, result.output
    assert "1 document(s) added" in result.stdout
    assert "garden" in kgkit("graph", "show", "corpus.sqlite").stdout
