"""The pace of requests to one provider, shared by every worker thread of the process.

``llm.rpm`` spaces request starts evenly, one every 60/rpm seconds, so a stage that puts
many passes in flight at once never bursts past the provider's limit (smoothed: no burst
followed by a wait). A 429 holds every worker back for the delay the provider asked for
(or the backoff), not only the request that is retried: the others would hit the same
limit. One pace per provider account and limit (model, ``api_base``, rpm), so the core and
upgrade backends of a run share it.
"""
from __future__ import annotations

import threading
import time
from typing import Callable

_PACES: dict[tuple, "Pace"] = {}
_PACES_LOCK = threading.Lock()


class Pace:
    def __init__(self, rpm: int | None = None, *, clock: Callable[[], float] = time.monotonic):
        self.interval = 60.0 / rpm if rpm else 0.0
        self._clock = clock
        self._next = 0.0  # the earliest moment the next request may start
        self._lock = threading.Lock()

    def wait(self, sleep: Callable[[float], None]) -> None:
        """Book the next start for this thread's request and ``sleep`` until it."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            self._next = start + self.interval
        if start > now:
            sleep(start - now)

    def hold(self, seconds: float) -> None:
        """The provider said "too many requests": no request starts for ``seconds``."""
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)


def pace_for(model: str, api_base: str | None, rpm: int | None) -> Pace:
    """The process's pace for this provider account and limit (created on first use)."""
    key = (model, api_base, rpm)
    with _PACES_LOCK:
        return _PACES.setdefault(key, Pace(rpm))
