"""The pace of requests (issue 11, item 1): ``llm.rpm`` spaces request starts evenly, and a
429 holds back every worker, not only the request retried."""
from __future__ import annotations

import threading
import time

import kgkit
from engine_support import write_inputs
from kgkit.backends.pace import Pace
from stub_provider import Recorded, Reply
from test_engine_concurrency import KEY_ENV, SlowModel, config


class Clock:
    """A clock that only moves when told; sleeps are recorded, not spent."""

    def __init__(self):
        self.now = 100.0
        self.slept: list[float] = []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(round(seconds, 6))


def test_rpm_spaces_starts_evenly_and_a_hold_pushes_every_start_back():
    clock = Clock()
    pace = Pace(rpm=120, clock=clock)  # one start every 0.5 s
    for _ in range(3):
        pace.wait(clock.sleep)  # three threads at the same moment: no burst
    assert clock.slept == [0.5, 1.0]
    clock.now += 1.5
    pace.hold(10)
    pace.wait(clock.sleep)
    assert clock.slept[-1] == 10.0


def test_no_limit_never_waits():
    clock = Clock()
    pace = Pace(clock=clock)
    for _ in range(50):
        pace.wait(clock.sleep)
    assert clock.slept == []


def test_a_429_holds_back_the_other_workers(stub_provider, tmp_path, monkeypatch):
    """Two workers: the first relation request gets 429 with Retry-After 1 while the other is
    in flight (answered after 0.2 s). Without the hold that worker would send its next pass
    0.2 s later; with it, no request leaves until the second is over."""
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=6)
    model = SlowModel(latency=0.2)
    arrivals: list[float] = []
    limited: list[float] = []
    lock = threading.Lock()

    def responder(request: Recorded) -> Reply:
        with lock:
            arrivals.append(time.monotonic())
            if not limited and "binary relations" in request.messages[0]["content"]:
                limited.append(arrivals[-1])
                return Reply.error(429, "slow down", retry_after="1")
        return model(request)

    stub_provider.responder = responder
    kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=config(stub_provider, 2),
                  out_dir=tmp_path / "out", skills=False)
    [at] = limited
    assert not [t for t in arrivals if at + 0.1 < t < at + 0.95]  # held: nothing sent during the hold
    assert len([t for t in arrivals if t >= at + 0.95]) == 5  # the retry and the 4 passes not yet sent


def test_rpm_is_never_exceeded_by_a_stage_in_flight(stub_provider, tmp_path, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=4)
    model, arrivals = SlowModel(latency=0.0), []
    stub_provider.responder = lambda request: arrivals.append(time.monotonic()) or model(request)
    cfg = config(stub_provider, 8)
    cfg.llm.rpm = 600  # one every 0.1 s
    kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=cfg, out_dir=tmp_path / "out",
                  skills=False)
    assert len(arrivals) == 8  # 4 entity passes in flight together, then 4 relation passes
    # Spaced, never a burst: any four consecutive arrivals span at least three intervals
    # (0.3 s), less 0.1 s for the scheduling jitter a loaded machine adds to one request on
    # its way to the server. A burst puts them within milliseconds of each other.
    at = sorted(arrivals)
    assert min(b - a for a, b in zip(at, at[3:])) > 0.2
