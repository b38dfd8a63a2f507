"""Crash and resume: ``kgkit extract`` killed at random points, then ``--resume``.

The child is the real CLI in its own process, talking to the stub provider over HTTP.
For 20 seeds it is SIGKILLed either while a chosen request is in flight (the stub holds
that answer back) or a random few milliseconds after a chosen request arrived (so the
kill can land in the middle of writing state or the run folder). After each kill the run
folder may only hold complete files; ``kgkit extract --resume`` must then produce
byte-identical outputs while paying the stub for no pass twice. Ctrl-C (SIGINT) must stop
with exit 130 and say how to resume.
"""
from __future__ import annotations

import json
import random
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

from kgkit.cli import main
from support.reliability_support import (FAKE_KEY, KEY_ENV, GoldModel, child_env, copy_corpus, extract_args,
                                 kgkit_command, output_files, write_config)
from support.stub_provider import Recorded, Reply, StubProvider

SEEDS = range(20)
CLEAN_REQUESTS = 27  # 3 documents, 9 chunks, 3 passes each (see test_reliability_faults)
CONCURRENCY = 4  # llm.concurrency: the passes of a stage in flight at once, so at most this many lost to a kill


class KillSwitch:
    """The stub's model, plus a trap: when request ``at`` arrives, tell the test; if ``hold``,
    keep that answer back until the test has killed the child. Requests after ``at`` wait
    for the kill in either case, so a child fast enough to finish within the test's few
    milliseconds cannot exit before it is killed."""

    def __init__(self, model: GoldModel, at: int, hold: bool):
        self.model, self.at, self.hold = model, at, hold
        self.seen = 0
        self.reached = threading.Event()
        self.released = threading.Event()

    def __call__(self, request: Recorded) -> Reply:
        number, self.seen = self.seen, self.seen + 1
        if number == self.at:
            self.reached.set()
            if self.hold:
                self.released.wait(30)
        elif number > self.at:
            self.released.wait(30)
        return self.model(request)


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    root = tmp_path_factory.mktemp("resume")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(KEY_ENV, FAKE_KEY)
        mp.setenv("KGKIT_CONFIG_DIR", str(root / "config-home"))
        stub = StubProvider().start()
        model = GoldModel()
        docs = copy_corpus(root / "docs")
        # A held answer must not time out and be asked again before the test's signal lands
        # (a loaded machine can take seconds): only the interrupt may end it.
        config = write_config(root, stub.openai_base, concurrency=CONCURRENCY, timeout=60.0)
        stub.responder = model
        with pytest.raises(SystemExit) as done:
            main(extract_args(docs, config, root / "clean"))
        assert done.value.code == 0 and len(stub.requests) == CLEAN_REQUESTS
        yield {"stub": stub, "model": model, "docs": docs, "config": config, "root": root,
               "clean": output_files(root / "clean")}
        stub.stop()


def start_child(world, out: Path, tmp: Path) -> subprocess.Popen:
    args = extract_args(world["docs"], world["config"], out)
    return subprocess.Popen([*kgkit_command(), *args], env=child_env(tmp), cwd=tmp,
                            stdout=(tmp / "stdout.txt").open("wb"), stderr=(tmp / "stderr.txt").open("wb"))


def interrupt(world, switch: KillSwitch, tmp: Path, signum: int, delay: float = 0.0) -> tuple[Path, int | None]:
    """Start the child on the stub answering through ``switch``; once its trap is reached
    (and ``delay`` seconds more), send ``signum``. -> (the run root, the child's exit code)."""
    stub = world["stub"]
    stub.requests.clear()
    stub.responder = switch
    out = tmp / "out"
    child = start_child(world, out, tmp)
    try:
        assert switch.reached.wait(60), (tmp / "stderr.txt").read_text()
        if delay:
            time.sleep(delay)
        child.send_signal(signum)
        return out, child.wait(30)
    finally:
        switch.released.set()
        if child.poll() is None:
            child.kill()


def leftovers(run_root: Path) -> tuple[list[str], list[str]]:
    """(temp files, files that are not complete JSON) under the run root."""
    temps, broken = [], []
    for path in sorted(p for p in run_root.rglob("*") if p.is_file()):
        rel = str(path.relative_to(run_root))
        if path.name.startswith(".") or path.name.endswith(".tmp"):
            temps.append(rel)
            continue
        text = path.read_text(encoding="utf-8")
        try:
            if path.suffix == ".jsonl":
                [json.loads(line) for line in text.splitlines()]
            else:
                json.loads(text)
        except ValueError:
            broken.append(rel)
    return temps, broken


@pytest.mark.parametrize("seed", SEEDS)
def test_killed_at_a_random_point_then_resumed_matches_an_uninterrupted_run(world, tmp_path, monkeypatch, seed):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    rng = random.Random(seed)
    hold = seed % 2 == 0  # even seeds: kill with a request in flight; odd: a few ms after one arrived
    switch = KillSwitch(world["model"], at=rng.randrange(1, CLEAN_REQUESTS), hold=hold)
    stub = world["stub"]
    out, code = interrupt(world, switch, tmp_path, signal.SIGKILL, delay=0.0 if hold else rng.uniform(0, 0.08))
    assert code == -signal.SIGKILL, (tmp_path / "stderr.txt").read_text()
    crashed = len(stub.requests)

    temps, broken = leftovers(out)
    assert broken == [], f"half-written files after the kill: {broken}"
    stub.requests.clear()
    stub.responder = world["model"]
    with pytest.raises(SystemExit) as done:
        main(extract_args(world["docs"], world["config"], out, "--resume"))

    assert done.value.code == 0
    assert output_files(out) == world["clean"]
    # No completed pass paid for twice: only the requests in flight at the kill may repeat.
    assert CLEAN_REQUESTS <= crashed + len(stub.requests) <= CLEAN_REQUESTS + CONCURRENCY
    assert leftovers(out) == ([], []), f"left after resume (after the kill: {temps})"


def test_a_temp_file_left_by_a_kill_is_cleared_by_the_resume(world, tmp_path, monkeypatch):
    """A kill between creating a temp file and renaming it leaves ``.name.XXXX.kgkit-tmp``; the
    random kills above rarely land there, so this places one where a kill would."""
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    out = tmp_path / "out"
    world["stub"].responder = world["model"]
    with pytest.raises(SystemExit):
        main(extract_args(world["docs"], world["config"], out))
    run = out / "news_000"
    (run / ".nodes.json.k1ll3d.kgkit-tmp").write_text('{"doc_id": "d_1", "nod')
    (run / "state" / "entities" / ".c_0000000000000000.json.x7.kgkit-tmp").write_text('{"fingerprint": ')

    with pytest.raises(SystemExit) as done:
        main(extract_args(world["docs"], world["config"], out, "--resume"))

    assert done.value.code == 0
    assert leftovers(out) == ([], [])
    assert output_files(out) == world["clean"]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM], ids=["ctrl-c", "sigterm"])
def test_ctrl_c_or_sigterm_stops_with_exit_130_and_says_how_to_resume(world, tmp_path, monkeypatch, signum):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    switch = KillSwitch(world["model"], at=14, hold=True)
    stub = world["stub"]
    out, code = interrupt(world, switch, tmp_path, signum)

    stderr = (tmp_path / "stderr.txt").read_text()
    assert code == 130, stderr
    assert "Interrupted" in stderr and "--resume" in stderr
    assert "Traceback" not in stderr
    assert leftovers(out) == ([], [])
    crashed = len(stub.requests)
    stub.requests.clear()
    stub.responder = world["model"]
    with pytest.raises(SystemExit) as done:
        main(extract_args(world["docs"], world["config"], out, "--resume"))
    assert done.value.code == 0 and output_files(out) == world["clean"]
    # the interrupted requests (the held one, and any other of its stage still in flight) are asked again
    assert CLEAN_REQUESTS + 1 <= crashed + len(stub.requests) <= CLEAN_REQUESTS + CONCURRENCY
