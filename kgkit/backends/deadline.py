"""``llm.timeout`` as a deadline for a whole request, not for each socket read.

httpx's timeout restarts with every byte received, so a server that trickles one byte a
second holds a request forever (issue 10: over 120 s with ``llm.timeout: 3``).
"""
from __future__ import annotations

import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class DeadlineExceeded(BaseException):
    """``llm.timeout`` passed for a whole request. A BaseException, so that no ``except
    Exception`` inside litellm or the SDKs swallows it on its way out (their ``finally``
    blocks and context managers still close the connection)."""

    def __init__(self, seconds: float):
        super().__init__(f"Timeout: no complete answer within {seconds:g}s")


@contextmanager
def deadline(seconds: float) -> Iterator[None]:
    """Bound a whole request by ``seconds``, not each socket read.

    httpx's timeout restarts with every byte, so a server trickling one byte a second
    holds a request forever. A real-time interval timer raises :class:`DeadlineExceeded`
    in the waiting thread instead. Signals reach only the main thread, and only where
    SIGALRM exists; elsewhere (or when something else owns the timer) the per-read
    timeout is all there is."""
    usable = (hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()
              and seconds > 0 and signal.getitimer(signal.ITIMER_REAL)[0] == 0)
    if not usable:
        yield
        return

    def expire(signum, frame):
        raise DeadlineExceeded(seconds)

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
