"""``kgkit extract --batch`` against the stub's OpenAI and Anthropic batch endpoints over real HTTP.

A batch run must write what a direct run writes (only the manifest's cost, timings,
creation time and ``batch`` key differ), go a stage per round, survive being stopped between
any two rounds, and never pay twice for a pass: a line a batch failed or let expire is sent
again, and only that line.
"""
from __future__ import annotations

import collections
import json
from pathlib import Path
from types import SimpleNamespace

import jsonschema
import pytest

import kgkit
from support.cli_support import kgkit as run_cli
from support.engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs
from support.fault_script import chunk_text, stage_of
from kgkit.config.model import CacheConfig, Config, LLMConfig
from kgkit.engine.batch import BatchWaiting, extract_batch
from kgkit.engine.options import RunOptions
from kgkit.errors import EXIT_INPUT, EXIT_INTERRUPTED, EXIT_OK, EXIT_PENDING
from support.stub_provider import Reply

KEY_ENV = "KGKIT_BATCH_TEST_KEY"
VIEWS = ["binary", "nary", "event"]
PARAGRAPHS = 3  # chunks: 3 entity, 3 relation, 3 + 3 upgrade passes
MODELS = {"openai": "openai/gpt-4o-mini", "anthropic": "anthropic/claude-haiku-4-5"}  # both have batch prices
SCHEMA = json.loads((Path(kgkit.__file__).parent / "schemas" / "payload.schema.json").read_text())
VOLATILE = ("created", "timings", "cost", "batch")  # what may differ between a direct and a batch run


def answer(request) -> Reply:
    """A model that answers each pass from the chunk it was sent, as ScriptedBackend does."""
    fake = SimpleNamespace(stage=stage_of(request), chunk=SimpleNamespace(text=chunk_text(request), index=-1))
    return Reply.answer(ScriptedBackend().run(fake).data)


@pytest.fixture
def inputs(tmp_path, monkeypatch, stub_provider):
    monkeypatch.setenv(KEY_ENV, "sk-batch-test-0123456789")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache-home"))
    monkeypatch.chdir(tmp_path)
    stub_provider.responder = answer
    return write_inputs(tmp_path / "in", paragraphs=PARAGRAPHS)


def config(stub, wire: str, retries: int = 2, model: str | None = None, **cache) -> Config:
    base = stub.openai_base if wire == "openai" else stub.anthropic_base
    return Config(chunk_size=CHUNK_SIZE, chunk_overlap=0,
                  llm=LLMConfig(model=model or MODELS[wire], api_base=base, api_key_env=KEY_ENV, backoff=0.0, retries=retries),
                  cache=CacheConfig(**cache) if cache else CacheConfig(enabled=False))


def write_config(stub, wire: str, folder: Path) -> Path:
    base = stub.openai_base if wire == "openai" else stub.anthropic_base
    path = folder / "kgkit.yaml"
    path.write_text(f"llm: {{model: {MODELS[wire]}, api_base: '{base}', api_key_env: {KEY_ENV}, backoff: 0.0}}\n"
                    f"chunking: {{size: {CHUNK_SIZE}, overlap: 0}}\ncache: {{enabled: false}}\n", encoding="utf-8")
    return path


def batch_rounds(inputs, cfg, out, limit=10, **kw):
    """Run extract_batch until the document is done: (the result, what each round yielded)."""
    rounds = []
    for _ in range(limit):
        [outcome] = list(extract_batch(inputs["doc"], RunOptions(domain=inputs["domain"], views=VIEWS,
                                                                 out_dir=out, **kw), config=cfg))
        rounds.append(outcome)
        if not isinstance(outcome, BatchWaiting):
            return outcome, rounds
    raise AssertionError(f"not done after {limit} rounds: {rounds}")


def folder_files(run_dir: Path) -> dict[str, bytes]:
    """Every file of a run folder but the manifest and the batch record, by relative path."""
    return {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*"))
            if p.is_file() and p.name not in ("manifest.json", "batch.json")}


def stable(manifest: dict) -> dict:
    return {k: v for k, v in manifest.items() if k not in VOLATILE}


def answered_lines(stub) -> collections.Counter:
    """How often each pass (its custom id) came back answered from a batch: what was paid."""
    paid = collections.Counter()
    for batch in stub.batches.values():
        for row in batch.results:
            ok = (row["result"]["type"] == "succeeded" if "result" in row
                  else row["response"]["status_code"] < 400)
            paid[row["custom_id"]] += ok
    return paid


@pytest.mark.parametrize("wire,model,price", [("openai", MODELS["openai"], "batch"),
                                              ("anthropic", MODELS["anthropic"], "batch"),
                                              ("openai", "openai/gpt-3.5-turbo", "half")])  # no batch price
def test_a_batch_run_writes_what_a_direct_run_writes_at_the_batch_price(stub_provider, inputs, tmp_path, wire,
                                                                        model, price):
    [direct] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=VIEWS,
                             config=config(stub_provider, wire, model=model), out_dir=tmp_path / "direct")
    asked_directly = sorted(json.dumps(r.body, sort_keys=True) for r in stub_provider.requests)

    result, rounds = batch_rounds(inputs, config(stub_provider, wire, model=model), tmp_path / "batch")

    assert [r.stage for r in rounds[:-1]] == ["entities", "relations", "nary,event"]  # a batch per stage
    assert folder_files(result.run_dir) == folder_files(direct.run_dir)  # nodes, views, review, state/
    assert direct.views["nary"]["hyperedges"] and direct.nodes
    assert stable(result.manifest) == stable(direct.manifest)
    assert result.manifest["cost"] == pytest.approx(direct.manifest["cost"] / 2)  # the providers' discount
    ids = [b["id"] for b in result.manifest["batch"]["batches"]]
    assert result.manifest["batch"]["mode"] == "batch" and result.manifest["batch"]["price"] == price
    assert ids == list(stub_provider.batches) and len(ids) == 3
    assert "batch" not in direct.manifest
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(json.dumps(result.as_dict())))
    # each line asks exactly what the direct run asked, and each pass was paid for once
    lines = sorted(json.dumps(r.body, sort_keys=True) for r in stub_provider.batch_lines())
    assert lines == asked_directly
    assert set(answered_lines(stub_provider).values()) == {1} and sum(answered_lines(stub_provider).values()) == 12


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_the_cli_submits_a_stage_per_run_and_resume_goes_on_until_the_run_folder_is_written(
        stub_provider, inputs, tmp_path, wire):
    cfg = write_config(stub_provider, wire, tmp_path)
    args = ["extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--view", ",".join(VIEWS),
            "--config", str(cfg), "--out", str(tmp_path / "out")]
    run_dir = tmp_path / "out" / "staff_notes"

    first = run_cli(*args, "--batch")
    assert first.exit_code == EXIT_PENDING, first.output
    assert "entities submitted as batch" in first.stderr and "Run the same command again later" in first.stderr
    for stage in ("relations", "nary,event"):  # resume after each stage: its answers in, the next submitted
        assert not (run_dir / "manifest.json").exists() and not (run_dir / "views").exists()
        step = run_cli(*args, "--resume")
        assert step.exit_code == EXIT_PENDING, step.output
        assert f"{stage} submitted as batch" in step.stderr
    done = run_cli(*args, "--resume", "--json")
    assert done.exit_code == EXIT_OK, done.output
    manifest = json.loads((run_dir / "manifest.json").read_text())
    assert [b["stage"] for b in manifest["batch"]["batches"]] == ["entities", "relations", "nary,event"]
    assert json.loads(done.stdout)["runs"][0]["calls"]["requests"] == 12
    again = run_cli(*args, "--resume")  # nothing left to send: a direct rerun from state/
    assert again.exit_code == EXIT_OK and len(stub_provider.batches) == 3


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_batch_still_in_progress_is_waited_for_and_never_sent_again(stub_provider, inputs, tmp_path, wire):
    cfg = config(stub_provider, wire)
    stub_provider.batch.in_progress = True
    options = RunOptions(domain=inputs["domain"], views=VIEWS, out_dir=tmp_path / "out")
    [submitted] = list(extract_batch(inputs["doc"], options, config=cfg))
    [waiting] = list(extract_batch(inputs["doc"], options, config=cfg))
    assert submitted.submitted and not waiting.submitted
    assert waiting.batch_id == submitted.batch_id and waiting.status == "in_progress"
    assert len(stub_provider.batches) == 1 and stub_provider.batch_lines() == []

    cfg_file = write_config(stub_provider, wire, tmp_path)
    status = run_cli("batch", "status", "--out", str(tmp_path / "out"), "--config", str(cfg_file), "--json")
    assert status.exit_code == EXIT_PENDING
    [row] = json.loads(status.stdout)["batches"]
    assert (row["batch"], row["stage"], row["lines"], row["status"], row["ended"]) == (
        submitted.batch_id, "entities", PARAGRAPHS, "in_progress", False)
    stub_provider.batch.in_progress = False
    waited = run_cli("batch", "status", "--out", str(tmp_path / "out"), "--config", str(cfg_file), "--wait",
                     "--every", "0.01")
    assert waited.exit_code == EXIT_OK and "kgkit extract --resume" in waited.stderr

    result, _ = batch_rounds(inputs, cfg, tmp_path / "out")
    assert result.ok and sum(answered_lines(stub_provider).values()) == 12


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_an_expired_batch_sends_again_only_the_passes_it_did_not_answer(stub_provider, inputs, tmp_path, wire):
    [direct] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=VIEWS,
                             config=config(stub_provider, wire), out_dir=tmp_path / "direct")
    stub_provider.batch.expire_after = 1  # each batch answers one line and expires

    result, rounds = batch_rounds(inputs, config(stub_provider, wire, retries=5), tmp_path / "batch", limit=20)

    stub_provider.batch.expire_after = None
    statuses = [b["status"] for b in result.manifest["batch"]["batches"]]
    assert "expired" in statuses or wire == "anthropic"  # litellm reads Anthropic's "ended" as completed
    sizes = [b["lines"] for b in result.manifest["batch"]["batches"]]
    assert sizes[:3] == [3, 2, 1]  # entities: 3 lines, then the 2 that expired, then the last one
    paid = answered_lines(stub_provider)
    assert set(paid.values()) == {1} and sum(paid.values()) == 12  # nothing answered was asked again
    assert folder_files(result.run_dir) == folder_files(direct.run_dir)
    calls = result.manifest["calls"]
    assert calls["retries"] == sum(sizes) - 12 and calls["requests"] == sum(sizes)


def one_round(inputs, cfg, out, **kw):
    [outcome] = list(extract_batch(inputs["doc"], RunOptions(domain=inputs["domain"], views=VIEWS, out_dir=out, **kw),
                                   config=cfg))
    return outcome


@pytest.mark.parametrize("direct_retries", [False, True])
def test_a_partly_failed_batch_retries_only_the_failed_lines(stub_provider, inputs, tmp_path, direct_retries):
    [direct] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=VIEWS,
                             config=config(stub_provider, "anthropic"), out_dir=tmp_path / "direct")
    before = len(stub_provider.requests)
    cfg, out = config(stub_provider, "anthropic"), tmp_path / "batch"
    stub_provider.batch.fail_lines = 1  # the first line of the first batch comes back as a server error
    assert one_round(inputs, cfg, out, direct_retries=direct_retries).stage == "entities"
    second = one_round(inputs, cfg, out, direct_retries=direct_retries)  # collects: 1 line of 3 failed
    stub_provider.batch.fail_lines = 0
    if direct_retries:  # the failed pass ran directly, at once: the next stage is submitted
        assert second.stage == "relations"
    else:  # the failed pass went out again, alone
        assert second.stage == "entities" and len(stub_provider.batches[second.batch_id].lines) == 1

    result, _ = batch_rounds(inputs, cfg, out, direct_retries=direct_retries)

    sent_directly = len(stub_provider.requests) - before - len(stub_provider.batch_lines())
    paid = answered_lines(stub_provider)
    assert max(paid.values()) == 1 and sum(paid.values()) + sent_directly == 12  # nothing answered twice
    assert sent_directly == (1 if direct_retries else 0)
    assert folder_files(result.run_dir) == folder_files(direct.run_dir) and result.ok
    assert result.manifest["calls"]["retries"] == 1 and result.manifest["calls"]["requests"] == 13


def test_a_pass_every_batch_fails_is_a_failure_a_later_run_sends_again(stub_provider, inputs, tmp_path):
    cfg, out = config(stub_provider, "openai", retries=1), tmp_path / "out"
    stub_provider.batch.fail_lines = 1  # the first line of every batch fails
    result, _ = batch_rounds(inputs, cfg, out)
    assert result.failures[0]["stage"] == "entities"  # and one pass of each later stage
    assert all("no answer after 2 batch attempt(s)" in f["error"] for f in result.failures)
    assert len(stub_provider.batches[list(stub_provider.batches)[1]].lines) == 1  # the failed line alone

    stub_provider.batch.fail_lines = 0
    paid_before = sum(answered_lines(stub_provider).values())
    again, rounds = batch_rounds(inputs, cfg, out)
    assert again.ok and rounds[0].stage == "entities"  # only the failed pass, and what depends on it
    assert max(answered_lines(stub_provider).values()) == 1
    assert sum(answered_lines(stub_provider).values()) > paid_before


def test_an_answer_off_the_schema_is_re_asked_in_the_next_batch(stub_provider, inputs, tmp_path):
    stub_provider.script(Reply.answer("not json at all"))  # the first line of the first batch
    result, rounds = batch_rounds(inputs, config(stub_provider, "openai"), tmp_path / "out")
    assert [r.stage for r in rounds[:2]] == ["entities", "entities"]
    reask = stub_provider.batch_lines()[3]
    assert reask.body["messages"][-2] == {"role": "assistant", "content": "not json at all"}
    assert "could not be used" in reask.body["messages"][-1]["content"]
    assert result.ok and result.manifest["calls"]["requests"] == 13


def test_an_interrupt_between_submit_and_collect_loses_nothing_and_sends_nothing_twice(
        stub_provider, inputs, tmp_path, monkeypatch):
    cfg = write_config(stub_provider, "openai", tmp_path)
    args = ["extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--view", ",".join(VIEWS),
            "--config", str(cfg), "--out", str(tmp_path / "out")]
    assert run_cli(*args, "--batch").exit_code == EXIT_PENDING

    from kgkit.engine.batch_wire import BatchClient

    def ctrl_c(self, batch_id, status):
        raise KeyboardInterrupt

    with monkeypatch.context() as patch:
        patch.setattr(BatchClient, "results", ctrl_c)
        stopped = run_cli(*args, "--resume")
    assert stopped.exit_code == EXIT_INTERRUPTED
    record = json.loads((tmp_path / "out" / "staff_notes" / "state" / "batch.json").read_text())
    assert [job["collected"] for job in record["jobs"]] == [False]  # still to collect, not lost

    codes = [run_cli(*args, "--resume").exit_code for _ in range(2)]  # collects, submits relations, upgrades
    assert codes == [EXIT_PENDING, EXIT_PENDING]
    final = run_cli(*args, "--resume")
    assert final.exit_code == EXIT_OK, final.output
    assert len(stub_provider.batches) == 3 and sum(answered_lines(stub_provider).values()) == 12


@pytest.mark.parametrize("wire", ["openai", "anthropic"])
def test_a_batch_the_provider_does_not_know_is_a_clear_error_and_forget_lets_the_run_go_on(
        stub_provider, inputs, tmp_path, wire):
    cfg = write_config(stub_provider, wire, tmp_path)
    out = tmp_path / "out"
    args = ["extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--view", ",".join(VIEWS),
            "--config", str(cfg), "--out", str(out)]
    assert run_cli(*args, "--batch").exit_code == EXIT_PENDING
    record_path = out / "staff_notes" / "state" / "batch.json"
    record = json.loads(record_path.read_text())
    gone = "batch_gone" if wire == "openai" else "msgbatch_gone"
    record["jobs"][0]["id"] = gone
    record_path.write_text(json.dumps(record))

    lost = run_cli(*args, "--resume")
    assert lost.exit_code == EXIT_INPUT
    assert f"does not know batch {gone} (404 not found)" in lost.stderr and "kgkit batch forget" in lost.stderr
    assert "Traceback" not in lost.output
    unknown = run_cli("batch", "status", "batch_never", "--out", str(out), "--config", str(cfg))
    assert unknown.exit_code == EXIT_INPUT and "records batch batch_never" in unknown.stderr
    assert run_cli("batch", "forget", "batch_never", "--out", str(out)).exit_code == EXIT_INPUT

    assert run_cli("batch", "forget", gone, "--out", str(out)).exit_code == EXIT_OK
    resubmitted = run_cli(*args, "--batch")
    assert resubmitted.exit_code == EXIT_PENDING and "entities submitted" in resubmitted.stderr


def test_batch_needs_a_provider_model_and_a_readable_record(tmp_path, inputs, stub_provider):
    offline = run_cli("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--batch",
                      "--out", str(tmp_path / "out"))
    assert offline.exit_code == EXIT_INPUT and "--batch needs llm.model" in offline.stderr
    assert not (tmp_path / "out" / "staff_notes" / "manifest.json").exists()

    cfg = write_config(stub_provider, "openai", tmp_path)
    state = tmp_path / "out" / "staff_notes" / "state"
    state.mkdir(parents=True)
    (state / "batch.json").write_text("{not json")
    broken = run_cli("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--batch",
                     "--config", str(cfg), "--out", str(tmp_path / "out"))
    assert broken.exit_code == EXIT_INPUT and "batch.json is not valid JSON" in broken.stderr
    assert stub_provider.batches == {}


def test_batch_options_that_would_be_ignored_are_refused_before_anything_runs(tmp_path, inputs, stub_provider):
    cfg = write_config(stub_provider, "openai", tmp_path)
    args = ("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--config", str(cfg),
            "--out", str(tmp_path / "out"))
    on_ray = run_cli(*args, "--batch", "--engine", "ray")
    assert on_ray.exit_code == EXIT_INPUT and "--batch cannot run on --engine ray" in on_ray.stderr
    stray = run_cli(*args, "--direct-retries")
    assert stray.exit_code == EXIT_INPUT and "--direct-retries applies to a batch run" in stray.stderr
    assert not (tmp_path / "out").exists() and stub_provider.batches == {} and not stub_provider.requests


def test_a_corpus_goes_through_batches_a_document_each_and_runs_jsonl_says_which_wait(stub_provider, inputs,
                                                                                       tmp_path):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("a.txt", "b.txt"):
        (corpus / name).write_text(inputs["doc"].read_text())
    cfg = config(stub_provider, "openai")

    def run():
        return list(extract_batch(corpus, RunOptions(domain=inputs["domain"], views=VIEWS, out_dir=tmp_path / "out"),
                                  config=cfg))

    first = run()
    assert [w.stage for w in first] == ["entities", "entities"] and len(stub_provider.batches) == 2
    rows = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert [(r["run_folder"], r["status"], r["stage"]) for r in rows] == [("a", "batch", "entities"),
                                                                         ("b", "batch", "entities")]
    for _ in range(2):
        run()
    done = run()
    assert all(r.ok for r in done) and done[0].views == done[1].views
    rows = [json.loads(line) for line in (tmp_path / "out" / "runs.jsonl").read_text().splitlines()]
    assert [r["status"] for r in rows] == ["ok", "ok"] and len(stub_provider.batches) == 6


def test_batch_answers_go_to_the_response_cache_so_a_later_direct_run_pays_nothing(stub_provider, inputs, tmp_path):
    cfg = config(stub_provider, "anthropic", enabled=True, dir=str(tmp_path / "cache"))
    batch_result, _ = batch_rounds(inputs, cfg, tmp_path / "batch")
    sent = len(stub_provider.requests)
    [direct] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=VIEWS, config=cfg,
                             out_dir=tmp_path / "direct")
    assert len(stub_provider.requests) == sent and direct.manifest["calls"]["cache_hits"] == 12
    assert direct.views == batch_result.views


def test_a_line_the_provider_refuses_fails_its_chunk_and_is_not_sent_again(stub_provider, inputs, tmp_path):
    stub_provider.script(Reply.error(400, "stub: content filter"))  # the first line of the first batch
    result, rounds = batch_rounds(inputs, config(stub_provider, "openai"), tmp_path / "out")
    [failure] = result.failures
    assert failure["stage"] == "entities" and "refused" in failure["error"] and "content filter" in failure["error"]
    assert [r.stage for r in rounds[:-1]] == ["entities", "relations", "nary,event"]


def test_ctrl_c_while_a_batch_is_submitted_still_records_it(stub_provider, inputs, tmp_path, monkeypatch):
    import os
    import signal

    from kgkit.engine.batch_wire import BatchClient

    submit = BatchClient.submit

    def submit_then_ctrl_c(self, lines):
        batch_id = submit(self, lines)
        os.kill(os.getpid(), signal.SIGINT)  # the provider has the batch; the user presses Ctrl-C
        return batch_id

    monkeypatch.setattr(BatchClient, "submit", submit_then_ctrl_c)
    cfg = write_config(stub_provider, "openai", tmp_path)
    stopped = run_cli("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--batch",
                      "--config", str(cfg), "--out", str(tmp_path / "out"))
    assert stopped.exit_code == EXIT_INTERRUPTED
    record = json.loads((tmp_path / "out" / "staff_notes" / "state" / "batch.json").read_text())
    assert [job["id"] for job in record["jobs"]] == list(stub_provider.batches)  # not lost, so not paid twice
