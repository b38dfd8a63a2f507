"""The pace of requests (issue 11, item 1): ``llm.rpm`` spaces request starts evenly, and a
429 holds back every worker, not only the request retried."""
from __future__ import annotations

import threading
import time

import kgkit
from support.engine_support import write_inputs
from kgkit.backends.pace import Pace
from support.stub_provider import Recorded, Reply
from engine.test_engine_concurrency import KEY_ENV, SlowModel, config


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
    0.2 s later; with it, no request leaves until the second is over. The 429 is sent only
    once the other relation request has arrived, so a loaded machine that delays that
    request cannot make it look like one sent during the hold."""
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=6)
    model = SlowModel(latency=0.2)
    arrivals: list[float] = []
    limited: list[float] = []
    lock = threading.Lock()
    second_relation_pass = threading.Event()

    def responder(request: Recorded) -> Reply:
        relation = "binary relations" in request.messages[0]["content"]
        with lock:
            arrivals.append(time.monotonic())
            first = relation and not limited
            if first:
                limited.append(None)
            elif relation:
                second_relation_pass.set()
        if first:
            assert second_relation_pass.wait(10)
            limited[0] = time.monotonic()
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


# -- llm.tpm ---------------------------------------------------------------------------------

def window_totals(bookings) -> list[int]:
    """For each booking, the tokens of every booking started in the minute up to its start."""
    return [sum(b.tokens for b in bookings if at.start - 60 < b.start <= at.start) for at in bookings]


def test_tpm_spreads_tokens_evenly_and_a_minute_never_holds_more_than_the_limit():
    clock = Clock()
    pace = Pace(tpm=1000, clock=clock)
    bookings = [pace.wait(clock.sleep, 400) for _ in range(5)]  # five threads at once
    # 400 tokens drain in 24 s (smoothed), and a third request at 48 s would put 1,200 tokens in
    # the minute that began at 0: it waits until that minute is over
    assert [round(b.start - 100, 6) for b in bookings] == [0, 24, 60, 84, 120]
    assert max(window_totals(bookings)) <= 1000


def test_a_booking_corrected_to_the_usage_reported_lets_the_next_request_go_sooner():
    clock = Clock()
    pace = Pace(tpm=600, clock=clock)
    first = pace.wait(clock.sleep, 300)  # estimate: drains in 30 s
    pace.settle(first, 60)  # the provider counted 60: drains in 6 s
    second = pace.wait(clock.sleep, 300)
    assert round(second.start - first.start, 6) == 6.0


def test_tpm_holds_over_any_minute_whatever_the_sizes_and_corrections():
    import random

    rng = random.Random(11)
    clock = Clock()
    pace = Pace(rpm=500, tpm=5000, clock=clock)
    bookings = []
    for _ in range(300):
        clock.now += rng.choice([0, 0, 0.5, 3])
        booking = pace.wait(clock.sleep, rng.randint(100, 2500))
        bookings.append(booking)
        if rng.random() < 0.7:
            pace.settle(booking, rng.randint(0, booking.tokens))  # usage at most the estimate
    assert max(window_totals(bookings)) <= 5000
    assert bookings[-1].start - bookings[0].start > 60  # it did have to wait: more than a minute's tokens


def test_tpm_against_the_stub_no_minute_holds_more_tokens_than_the_limit(stub_provider, tmp_path, monkeypatch):
    """A run whose requests carry more tokens than the limit allows in a minute, on a clock that
    moves only when the backend sleeps: every request the stub receives, together with those
    it received in the minute before, stays within llm.tpm, counted in the tokens it reported."""
    from kgkit.backends import pace as pace_module
    from kgkit.backends.llm import LLMBackend

    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=6)
    clock, model, seen = Clock(), SlowModel(latency=0.0), []

    def responder(request: Recorded) -> Reply:
        reply = model(request)
        reply.tokens_in = sum(len(m["content"]) for m in request.messages) // 4  # what a provider would count
        reply.tokens_out = 30
        seen.append((clock.now, reply.tokens_in + reply.tokens_out))
        return reply

    stub_provider.responder = responder
    cfg = config(stub_provider, 1)
    cfg.llm.tpm, cfg.llm.max_tokens = 1500, 100
    pace = pace_module.Pace(cfg.llm.rpm, cfg.llm.tpm, clock=clock)
    monkeypatch.setitem(pace_module._PACES, (cfg.llm.model, cfg.llm.api_base, None, 1500), pace)

    def sleep(seconds):
        clock.slept.append(seconds)
        clock.now += seconds

    backend = LLMBackend(cfg.llm, sleep=sleep)
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "nary"], config=cfg,
                             out_dir=tmp_path / "out", skills=False, backend=backend)
    assert result.ok and len(seen) == 18  # 6 chunks: entities, relations, nary
    tokens = sum(n for _, n in seen)
    assert tokens > 3 * 1500  # more than three minutes' worth: the limit had to act
    for at, _ in seen:
        assert sum(n for t, n in seen if at - 60 < t <= at) <= 1500
    assert seen[-1][0] - seen[0][0] >= 60 * (tokens - 1500) / 1500  # and no slower than it must be, near enough
