"""``llm.timeout`` as a deadline for a whole request, not for each socket read.

httpx's timeout restarts with every byte received, so a server that trickles one byte a
second holds a request forever (issue 10: over 120 s with ``llm.timeout: 3``).

The request runs as a coroutine (litellm's async API) on one event loop that a daemon
thread keeps for the whole process, and the calling thread waits for it. An overdue
request is cancelled on the loop, which closes its connection. Unlike a SIGALRM timer
this works from any thread, so the engine's worker threads (``llm.concurrency``) keep the
same whole-request deadline as the main thread.
"""
from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Awaitable, Callable, Iterator, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()
_refusing = 0  # > 0 while an interrupted run stops (read and written on the provider loop only)


class DeadlineExceeded(BaseException):
    """``llm.timeout`` passed for a whole request. A BaseException, so that no ``except
    Exception`` inside litellm or the SDKs swallows it on its way out."""

    def __init__(self, seconds: float):
        super().__init__(f"Timeout: no complete answer within {seconds:g}s")


def provider_loop() -> asyncio.AbstractEventLoop:
    """The process's event loop for provider requests, started on first use.

    One loop for every request, so litellm's pooled async clients (kept per loop) are
    reused across passes and threads."""
    global _loop
    with _loop_lock:
        if _loop is None or _loop.is_closed():
            loop = asyncio.new_event_loop()
            threading.Thread(target=loop.run_forever, name="kgkit-provider-loop", daemon=True).start()
            _loop = loop
        return _loop


async def _bounded(make: Callable[[], Awaitable[T]], seconds: float | None) -> T:
    """``make()`` awaited in this task, cancelled once ``seconds`` pass (``asyncio.timeout``:
    one timer and no task or wait of its own, a fifth less CPU a trip through the loop, both
    threads counted). Whatever an overdue request ends with, a timeout of the client's own
    included, it is DeadlineExceeded."""
    if _refusing:  # a retry, or a pass that was between requests when the run was interrupted
        raise asyncio.CancelledError
    if not seconds or seconds <= 0:
        return await make()
    timer = asyncio.timeout(seconds)
    try:
        async with timer:  # cancelling closes the connection: the server may keep trickling, we stop reading
            result = await make()
    except BaseException:
        if timer.expired():
            raise DeadlineExceeded(seconds) from None
        raise
    if timer.expired():  # the request swallowed its cancellation
        raise DeadlineExceeded(seconds)
    return result


def run_within(make: Callable[[], Awaitable[T]], seconds: float | None) -> T:
    """Await ``make()`` on the provider loop from this (any) thread, within ``seconds``.

    Raises :class:`DeadlineExceeded` when the whole request takes longer, or whatever the
    request raised. An interrupt of the waiting thread (Ctrl-C) cancels the request."""
    future = asyncio.run_coroutine_threadsafe(_bounded(make, seconds), provider_loop())
    try:
        return future.result()
    except BaseException:
        future.cancel()
        raise


def _refuse(step: int) -> None:
    """On the loop: count one more (or one fewer) stopping run; starting one cancels every
    request in flight. Both on the loop, so a request is either running when the count
    goes up (and is cancelled) or starts after it (and is refused): none slips between."""
    global _refusing
    _refusing += step
    if step > 0:
        for task in asyncio.all_tasks():
            task.cancel()


@contextlib.contextmanager
def requests_refused() -> Iterator[None]:
    """While an interrupted run waits for its passes to end: every request in flight is
    cancelled and none starts (the threads see a ``CancelledError``), so a pass that was
    between a timeout and its retry pays for no new request. Requests start again after."""
    loop = provider_loop()
    loop.call_soon_threadsafe(_refuse, 1)
    try:
        yield
    finally:
        if not loop.is_closed():
            loop.call_soon_threadsafe(_refuse, -1)
