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
import threading
from typing import Awaitable, Callable, TypeVar

T = TypeVar("T")

_loop: asyncio.AbstractEventLoop | None = None
_loop_lock = threading.Lock()


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
    task = asyncio.ensure_future(make())
    if not seconds or seconds <= 0:
        return await task
    done, _ = await asyncio.wait({task}, timeout=seconds)
    if not done:
        task.cancel()  # closes the connection: the server may keep trickling, we stop reading
        try:
            await task
        except BaseException:  # noqa: BLE001 - the cancelled request's own ending does not matter
            pass
        raise DeadlineExceeded(seconds)
    return task.result()


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


def cancel_requests() -> None:
    """Cancel every request running on the provider loop (the run was interrupted): the
    threads waiting for them see a ``CancelledError`` at once."""
    loop = _loop
    if loop is not None and not loop.is_closed():
        loop.call_soon_threadsafe(lambda: [task.cancel() for task in asyncio.all_tasks(loop)])
