"""The corpus window (kgkit/engine/window.py) and the ranked pass pool (kgkit/engine/pool.py):
documents are admitted while the pool has room and the memory budget allows, passes start
by their document's rank, and outcomes come back in input order."""
from __future__ import annotations

import threading
import time

import pytest

from kgkit.engine import window
from kgkit.engine.corpus import CorpusInput
from kgkit.engine.pool import PassPool, RankedExecutor, ranked
from kgkit.errors import InputError


def test_a_lower_rank_starts_first_whatever_the_order_of_arrival():
    executor = RankedExecutor(1)
    gate, holding, started = threading.Event(), threading.Event(), []
    executor.submit(lambda: holding.set() or gate.wait())  # holds the only thread while the others queue
    assert holding.wait(60)
    futures = []
    for rank in (3, 1, 2, 1):
        with ranked(rank):
            futures.append(executor.submit(started.append, rank))
    assert executor.backlog() == 4
    gate.set()
    for future in futures:
        future.result(timeout=60)
    assert started == [1, 1, 2, 3]
    executor.shutdown()


def test_shutdown_cancels_what_has_not_started_and_refuses_more():
    executor = RankedExecutor(1)
    gate, holding = threading.Event(), threading.Event()
    running = executor.submit(lambda: holding.set() or gate.wait())
    assert holding.wait(60)
    waiting = executor.submit(lambda: "never")
    executor.shutdown(wait=False, cancel_futures=True)
    assert waiting.cancelled()
    with pytest.raises(RuntimeError):
        executor.submit(lambda: None)
    gate.set()
    assert running.result(timeout=60) is True


def fake_documents(tmp_path, n: int) -> list[CorpusInput]:
    inputs = []
    for i in range(n):
        path = tmp_path / f"d{i}.txt"
        path.write_text("x" * 1000)
        inputs.append(CorpusInput(path, f"d{i}"))
    return inputs


class Gate:
    """What the fake documents' passes wait on, so how many documents run at once is counted,
    not left to how fast a loaded machine runs them: each pass holds until ``opens(running)``
    says so (``running``: documents running now, ``looks``: how often the window has looked
    for room since), or ``patience`` seconds have passed once (then none waits again, and the
    count comes out short)."""

    def __init__(self, opens, patience: float = 30.0):
        self.opens, self.patience = opens, patience
        self.cond = threading.Condition()
        self.running: set[str] = set()
        self.at_once: list[int] = []
        self.looks = 0
        self.open = False

    def look(self) -> None:
        with self.cond:
            self.looks += 1
            self.cond.notify_all()

    def enter(self, folder: str) -> None:
        with self.cond:
            self.running.add(folder)
            self.at_once.append(len(self.running))
            self.cond.notify_all()

    def leave(self, folder: str) -> None:
        with self.cond:
            self.running.discard(folder)

    def pass_(self) -> None:
        with self.cond:
            self.cond.wait_for(lambda: self.open or self.opens(self), self.patience)
            self.open = True


def test_documents_fill_the_pool_and_come_back_in_input_order(tmp_path):
    """Each document sends 2 passes: with 8 threads, 4 documents run at once (never only the
    two a fixed window allowed), and outcomes keep the input order. The passes hold until 4
    documents run (a window that admits fewer fails the count after the gate's patience)."""
    inputs = fake_documents(tmp_path, 12)
    gate = Gate(lambda g: len(g.running) >= 4)

    with PassPool(8) as pool:
        def run_one(item: CorpusInput) -> str:
            gate.enter(item.folder)
            futures = [pool.submit(gate.pass_) for _ in range(2)]
            for future in futures:
                future.result()
            gate.leave(item.folder)
            if item.folder == "d5":
                raise InputError("unreadable")
            return item.folder

        outcomes = list(window.admitted(inputs, run_one, pool))
    assert [item.folder for item, _ in outcomes] == [f"d{i}" for i in range(12)]
    assert [o for _, o in outcomes if not isinstance(o, InputError)] == [f"d{i}" for i in range(12) if i != 5]
    assert isinstance(outcomes[5][1], InputError)
    assert max(gate.at_once) >= 4


def test_the_memory_budget_bounds_the_documents_running_at_once(tmp_path, monkeypatch):
    """Three documents fit the budget. Their passes hold until all three run and the window
    has looked for room 20 times more, every look finding none, so a fourth document would
    have been admitted by then if the budget let it; then they go on."""
    monkeypatch.setattr(window, "MEMORY_BUDGET", 3 * window.LEAST)
    inputs = fake_documents(tmp_path, 9)
    seen: dict[str, int] = {}
    gate = Gate(lambda g: len(g.running) >= 3 and g.looks - seen.setdefault("full", g.looks) >= 20)
    footprint = window.footprint
    monkeypatch.setattr(window, "footprint", lambda item: gate.look() or footprint(item))
    with PassPool(16) as pool:
        def run_one(item: CorpusInput) -> str:
            gate.enter(item.folder)
            pool.submit(gate.pass_).result()
            gate.leave(item.folder)
            return item.folder

        assert [o for _, o in window.admitted(inputs, run_one, pool)] == [i.folder for i in inputs]
    assert max(gate.at_once) == 3 and gate.looks > 20


def test_a_failure_stops_the_pool_and_is_raised(tmp_path):
    inputs = fake_documents(tmp_path, 6)
    with PassPool(4) as pool:
        def run_one(item: CorpusInput) -> str:
            pool.submit(time.sleep, 0.02).result()
            if item.folder == "d1":
                raise RuntimeError("boom")
            return item.folder

        with pytest.raises(RuntimeError, match="boom"):
            list(window.admitted(inputs, run_one, pool))
        with pytest.raises(RuntimeError):
            pool.submit(time.sleep, 0)
