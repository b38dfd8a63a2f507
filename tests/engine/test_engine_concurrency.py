"""Concurrent passes (issue 11, item 1): the passes of a stage go to the provider together,
and the run folder is the same byte for byte whatever ``llm.concurrency``.

The stub answers like :class:`engine_support.ScriptedBackend` would, for the chunk text it
was sent, after a latency; it counts how many requests it holds at once (on the server side,
so the client cannot fool it)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

import kgkit
from support.engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs
from support.fault_script import chunk_text, stage_of
from kgkit.backends import deadline as provider_deadline
from kgkit.backends.deadline import DeadlineExceeded, run_within
from kgkit.config.model import CacheConfig, Config, LLMConfig
from kgkit.engine.pool import PassPool
from support.stub_provider import Recorded, Reply

KEY_ENV = "KGKIT_TEST_CONCURRENCY_KEY"
VIEWS = ["binary", "nary", "temporal", "event"]
VOLATILE = ("created", "timings")  # when and how long: the only manifest keys a clock decides


class SlowModel:
    """The scripted model behind a latency, counting requests in flight.

    With ``gather`` set, requests are held until that many are in flight at once (then the
    hold ends for good), so a test of how many requests overlap counts them instead of
    hoping that a loaded machine sends them within one latency. If they never gather,
    the first to wait gives up after ``patience`` seconds, and no later request waits:
    the count stays short and the test fails."""

    def __init__(self, latency: float, gather: int = 0, patience: float = 30.0):
        self.latency = latency
        self.gather, self.patience = gather, patience
        self.lock = threading.Condition()
        self.in_flight = self.most = 0

    def __call__(self, request: Recorded) -> Reply:
        with self.lock:
            self.in_flight += 1
            self.most = max(self.most, self.in_flight)
            self.lock.notify_all()
            if self.gather:
                self.lock.wait_for(lambda: not self.gather or self.in_flight >= self.gather, self.patience)
                self.gather = 0
                self.lock.notify_all()
        try:
            time.sleep(self.latency)
            stage = stage_of(request)
            fake = SimpleNamespace(stage="diy:x" if stage == "diy" else stage,
                                   chunk=SimpleNamespace(text=chunk_text(request), index=-1))
            return Reply.answer(ScriptedBackend().run(fake).data)
        finally:
            with self.lock:
                self.in_flight -= 1


@pytest.fixture
def inputs(tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config-home"))
    return write_inputs(tmp_path / "in", paragraphs=8)


def config(stub, concurrency: int) -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0,
                    timeout=60.0, concurrency=concurrency)
    return Config(llm=llm, cache=CacheConfig(enabled=False), chunk_size=CHUNK_SIZE, chunk_overlap=0)


def run_folder(root: Path) -> dict[str, bytes]:
    """Every file under ``root``, the manifest without its clock readings."""
    files = {}
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        if path.name == "manifest.json":
            manifest = json.loads(data)
            for key in VOLATILE:
                manifest.pop(key, None)
            data = json.dumps(manifest, indent=2).encode()
        files[str(path.relative_to(root))] = data
    return files


def extract(inputs, stub, concurrency: int, out: Path):
    return kgkit.extract(inputs["doc"], domain=inputs["domain"], views=VIEWS, config=config(stub, concurrency),
                         out_dir=out, skills=False)


def test_passes_of_a_stage_are_in_flight_together_and_the_run_folder_is_the_same(stub_provider, inputs, tmp_path):
    model = SlowModel(latency=0.1)
    stub_provider.responder = model

    [one] = extract(inputs, stub_provider, 1, tmp_path / "c1")
    assert model.most == 1
    sent = len(stub_provider.requests)
    model.most, model.gather = 0, 8  # a stage of 8 chunks: all 8 at once

    [eight] = extract(inputs, stub_provider, 8, tmp_path / "c8")

    assert model.most == 8  # the stub held several requests at once, and never more than llm.concurrency
    assert len(stub_provider.requests) == 2 * sent
    n = one.manifest["input"]["chunks"]
    assert n == 8 and one.manifest["calls"]["total"] == n * (2 + 3)  # core + nary, temporal, event
    assert one.views["binary"]["edges"] and one.views["nary"]["hyperedges"]
    assert run_folder(tmp_path / "c8") == run_folder(tmp_path / "c1")
    assert eight.manifest["calls"] == one.manifest["calls"]


def test_a_provider_failure_at_concurrency_keeps_the_answers_in_flight_and_resume_pays_nothing_twice(
        stub_provider, inputs, tmp_path):
    """A 401 on one relation pass ends the run (exit 3); the passes that completed meanwhile
    are kept in state/, so the resume asks only for what no earlier request answered."""
    model = SlowModel(latency=0.05)
    refused = []

    def responder(request: Recorded) -> Reply:
        if stage_of(request) == "relations" and not refused:
            refused.append(request)
            return Reply.error(401, "key revoked")
        return model(request)

    stub_provider.responder = responder
    out = tmp_path / "out"
    with pytest.raises(kgkit.errors.ProviderConfigError):
        extract(inputs, stub_provider, 8, out)
    first = len(stub_provider.requests)
    answered = {(p.parent.name, p.name) for p in (out / "staff_notes" / "state").rglob("*.json")}
    assert len(answered) == first - 1  # every answered request stored, the refused one not

    stub_provider.requests.clear()
    stub_provider.responder = model
    [resumed] = extract(inputs, stub_provider, 8, out)
    assert resumed.manifest["calls"]["reused"] == len(answered)
    assert len(stub_provider.requests) == resumed.manifest["calls"]["total"] - len(answered)
    clean = tmp_path / "clean"
    extract(inputs, stub_provider, 1, clean)
    folder = {k: v for k, v in run_folder(out).items()}
    assert {k: v for k, v in folder.items() if not k.endswith("manifest.json")} == \
        {k: v for k, v in run_folder(clean).items() if not k.endswith("manifest.json")}


def test_a_trickling_server_meets_the_deadline_in_a_worker_thread(stub_provider, inputs, tmp_path):
    """``llm.timeout`` bounds the whole request off the main thread too (no SIGALRM there)."""
    stub_provider.responder = lambda request: Reply.answer({"entities": []}, delay=30)
    cfg = config(stub_provider, 4)
    cfg.llm.timeout, cfg.llm.retries = 0.5, 0
    # the answer comes after 30 s: a timeout named after one attempt is the deadline cutting it
    with pytest.raises(kgkit.errors.ProviderError, match=r"within llm.timeout=0.5s \(1 attempt\)"):
        kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=cfg,
                      out_dir=tmp_path / "out", skills=False)


def test_documents_overlap_and_each_run_folder_is_the_same(stub_provider, tmp_path, monkeypatch):
    """Three four-chunk documents at concurrency 8: more than one document's passes are in
    flight at once (no stage of one document has more than 4), and every run folder, and
    runs.jsonl, equal those of the one-at-a-time run."""
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    docs = [write_inputs(tmp_path / f"in{i}", paragraphs=4) for i in range(3)]
    model = SlowModel(latency=0.1)
    stub_provider.responder = model

    def run(concurrency: int, out: Path):
        return kgkit.extract([d["doc"] for d in docs], domain=docs[0]["domain"], views=["binary", "nary"],
                             config=config(stub_provider, concurrency), out_dir=out, skills=False)

    one = run(1, tmp_path / "c1")
    model.most, model.gather = 0, 5  # one more than a stage of one document holds
    eight = run(8, tmp_path / "c8")

    assert [r.run_dir.name for r in eight] == [r.run_dir.name for r in one] == \
        ["in0__staff_notes", "in1__staff_notes", "in2__staff_notes"]
    assert 4 < model.most <= 8
    assert run_folder(tmp_path / "c8") == run_folder(tmp_path / "c1")


def test_passes_from_every_document_share_the_pool_and_each_run_folder_is_the_same(stub_provider, tmp_path,
                                                                                   monkeypatch):
    """Six four-chunk documents at concurrency 16: the stub holds more requests at once than
    two documents' stages could send (8), and every run folder equals the one-at-a-time run's."""
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    docs = [write_inputs(tmp_path / f"in{i}", paragraphs=4) for i in range(6)]
    model = SlowModel(latency=0.3)
    stub_provider.responder = model

    def run(concurrency: int, out: Path):
        return kgkit.extract([d["doc"] for d in docs], domain=docs[0]["domain"], views=["binary"],
                             config=config(stub_provider, concurrency), out_dir=out, skills=False)

    run(1, tmp_path / "c1")
    model.most, model.gather = 0, 9  # more than two documents' stages could send
    sixteen = run(16, tmp_path / "c16")

    assert [r.run_dir.name for r in sixteen] == [f"in{i}__staff_notes" for i in range(6)]
    assert 8 < model.most <= 16
    assert run_folder(tmp_path / "c16") == run_folder(tmp_path / "c1")


def test_an_interrupt_stops_a_pass_retrying_after_a_timeout_without_a_new_request():
    """A pass whose request timed out retries; if the run is interrupted while it waits to
    retry, the retry is refused, not sent (the provider would bill it and the answer be lost)."""
    timed_out, sent = threading.Event(), []
    go_on = threading.Event()

    def request():  # what goes on the wire: made only when a request starts
        sent.append(1)
        return asyncio.sleep(30)

    def a_pass() -> str:
        for _ in range(3):  # the backend's retry loop, in short
            try:
                return run_within(request, 0.05)
            except DeadlineExceeded:
                timed_out.set()
                go_on.wait(60)  # between the timeout and the retry when the interrupt comes
        return "gave up"

    def once_refusing() -> None:  # the retry comes while the stop waits: once the loop refuses requests
        deadline = time.monotonic() + 60
        while not provider_deadline._refusing and time.monotonic() < deadline:
            time.sleep(0.01)
        go_on.set()

    with PassPool(2) as pool:
        future = pool.submit(a_pass)
        assert timed_out.wait(60)
        threading.Thread(target=once_refusing, daemon=True).start()
        pool.stop([future], interrupted=True)
    assert sent == [1]
    with pytest.raises(concurrent.futures.CancelledError):
        future.result()
