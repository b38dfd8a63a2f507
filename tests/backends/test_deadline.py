"""The provider loop's whole-request deadline, and how an interrupted run stops its requests.

An interrupt cancels the requests in flight; a pass that was between a timeout and its retry
must not start a new one while the run stops (it would be paid for and thrown away)."""
from __future__ import annotations

import asyncio
import concurrent.futures
import threading

import pytest

from kgkit.backends.deadline import DeadlineExceeded, requests_refused, run_within


def test_a_request_over_its_deadline_is_cut():
    with pytest.raises(DeadlineExceeded):
        run_within(lambda: asyncio.sleep(30), 0.05)


def test_while_refused_no_request_starts_and_those_in_flight_are_cancelled():
    started = threading.Event()
    made = []

    async def slow() -> str:
        started.set()
        await asyncio.sleep(30)
        return "late"

    def make():
        made.append(1)
        return slow()

    with concurrent.futures.ThreadPoolExecutor(1) as worker:
        in_flight = worker.submit(run_within, make, None)
        assert started.wait(60)
        with requests_refused():
            with pytest.raises(concurrent.futures.CancelledError):
                in_flight.result(60)
            with pytest.raises(concurrent.futures.CancelledError):
                run_within(make, None)  # the retry: refused before its coroutine is even made
        assert made == [1]
    assert run_within(lambda: asyncio.sleep(0, result="after"), 60) == "after"
