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
    assert holding.wait(5)
    futures = []
    for rank in (3, 1, 2, 1):
        with ranked(rank):
            futures.append(executor.submit(started.append, rank))
    assert executor.backlog() == 4
    gate.set()
    for future in futures:
        future.result(timeout=5)
    assert started == [1, 1, 2, 3]
    executor.shutdown()


def test_shutdown_cancels_what_has_not_started_and_refuses_more():
    executor = RankedExecutor(1)
    gate, holding = threading.Event(), threading.Event()
    running = executor.submit(lambda: holding.set() or gate.wait())
    assert holding.wait(5)
    waiting = executor.submit(lambda: "never")
    executor.shutdown(wait=False, cancel_futures=True)
    assert waiting.cancelled()
    with pytest.raises(RuntimeError):
        executor.submit(lambda: None)
    gate.set()
    assert running.result(timeout=5) is True


def fake_documents(tmp_path, n: int) -> list[CorpusInput]:
    inputs = []
    for i in range(n):
        path = tmp_path / f"d{i}.txt"
        path.write_text("x" * 1000)
        inputs.append(CorpusInput(path, f"d{i}"))
    return inputs


def test_documents_fill_the_pool_and_come_back_in_input_order(tmp_path):
    """Each document sends 2 passes of 50 ms: with 8 threads, 4 documents run at once (never
    only the two a fixed window allowed), and outcomes keep the input order."""
    inputs = fake_documents(tmp_path, 12)
    lock, at_once = threading.Lock(), []
    running = set()

    with PassPool(8) as pool:
        def run_one(item: CorpusInput) -> str:
            with lock:
                running.add(item.folder)
                at_once.append(len(running))
            futures = [pool.submit(time.sleep, 0.05) for _ in range(2)]
            for future in futures:
                future.result()
            with lock:
                running.discard(item.folder)
            if item.folder == "d5":
                raise InputError("unreadable")
            return item.folder

        outcomes = list(window.admitted(inputs, run_one, pool))
    assert [item.folder for item, _ in outcomes] == [f"d{i}" for i in range(12)]
    assert [o for _, o in outcomes if not isinstance(o, InputError)] == [f"d{i}" for i in range(12) if i != 5]
    assert isinstance(outcomes[5][1], InputError)
    assert max(at_once) >= 4


def test_the_memory_budget_bounds_the_documents_running_at_once(tmp_path, monkeypatch):
    monkeypatch.setattr(window, "MEMORY_BUDGET", 3 * window.LEAST)
    inputs = fake_documents(tmp_path, 9)
    lock, at_once, running = threading.Lock(), [], set()
    with PassPool(16) as pool:
        def run_one(item: CorpusInput) -> str:
            with lock:
                running.add(item.folder)
                at_once.append(len(running))
            pool.submit(time.sleep, 0.05).result()
            with lock:
                running.discard(item.folder)
            return item.folder

        assert [o for _, o in window.admitted(inputs, run_one, pool)] == [i.folder for i in inputs]
    assert max(at_once) == 3


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
