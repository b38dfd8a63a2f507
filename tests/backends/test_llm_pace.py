"""The pace of requests (issue 11, item 1): ``llm.rpm`` spaces request starts evenly, and a
429 holds back every worker, not only the request retried."""
from __future__ import annotations

import threading

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


def _paced_backend(cfg, monkeypatch, pace):
    """A backend whose pace is ``pace`` (the process's, for this config) and whose sleeps
    are recorded, not spent, with the thread that slept: a clock that moves only when told
    decides every wait, so what is checked is what was booked, not what a loaded machine
    managed to do in time."""
    from kgkit.backends import pace as pace_module
    from kgkit.backends.llm import LLMBackend

    monkeypatch.setitem(pace_module._PACES, (cfg.llm.model, cfg.llm.api_base, cfg.llm.rpm, cfg.llm.tpm), pace)
    slept: list[tuple[str, float]] = []
    backend = LLMBackend(cfg.llm, sleep=lambda s: slept.append((threading.current_thread().name, round(s, 6))))
    return backend, slept


def test_a_429_holds_back_the_other_workers(stub_provider, tmp_path, monkeypatch):
    """Two workers: the first relation request gets 429 with Retry-After 1 while the other is
    in flight. The 429 is sent only once the other relation request has arrived, and that one
    is answered only once the hold is in place, so its worker's next pass comes after the
    429 however a loaded machine orders the threads. On a clock that stands still, every
    start after the hold waits it out: the 4 passes not yet sent, from both workers, and
    the retry (which waits for its own Retry-After instead of booking again)."""
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=6)
    held = threading.Event()

    class HeldPace(Pace):
        def hold(self, seconds: float) -> None:
            super().hold(seconds)
            held.set()

    model, limited, lock = SlowModel(latency=0.0), [], threading.Lock()
    second_relation_pass = threading.Event()

    def responder(request: Recorded) -> Reply:
        relation = "binary relations" in request.messages[0]["content"]
        with lock:
            first = relation and not limited
            second = relation and not first and not second_relation_pass.is_set()
            if first:
                limited.append(request)
            elif second:
                second_relation_pass.set()
        if first:
            assert second_relation_pass.wait(60)
            return Reply.error(429, "slow down", retry_after="1")
        if second:
            assert held.wait(60), "the 429 set no hold"
        return model(request)

    stub_provider.responder = responder
    cfg = config(stub_provider, 2)
    backend, slept = _paced_backend(cfg, monkeypatch, HeldPace(clock=Clock()))
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=cfg,
                             out_dir=tmp_path / "out", skills=False, backend=backend)
    assert result.ok and len(stub_provider.requests) == 13  # 6 entity passes, 6 relation passes, 1 retry
    assert [s for _, s in slept] == [1.0] * 5  # nothing started before the hold ended: no shorter wait
    assert len({thread for thread, _ in slept}) == 2  # the worker that got no 429 was held back too


def test_rpm_is_never_exceeded_by_a_stage_in_flight(stub_provider, tmp_path, monkeypatch):
    """Four passes in flight together at llm.rpm 600 (one every 0.1 s), on a clock that stands
    still: each request's start is booked 0.1 s after the one before, never two at once."""
    monkeypatch.setenv(KEY_ENV, "sk-test-concurrency")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "home"))
    inputs = write_inputs(tmp_path / "in", paragraphs=4)
    stub_provider.responder = SlowModel(latency=0.0)
    cfg = config(stub_provider, 8)
    cfg.llm.rpm = 600
    clock = Clock()
    backend, slept = _paced_backend(cfg, monkeypatch, Pace(rpm=600, clock=clock))
    kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=cfg, out_dir=tmp_path / "out",
                  skills=False, backend=backend)
    assert len(stub_provider.requests) == 8  # 4 entity passes in flight together, then 4 relation passes
    assert sorted(s for _, s in slept) == [round(0.1 * k, 6) for k in range(1, 8)]  # spaced, never a burst


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
