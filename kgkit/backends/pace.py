"""The pace of requests to one provider, shared by every worker thread of the process.

``llm.rpm`` spaces request starts evenly, one every 60/rpm seconds, so a stage that puts
many passes in flight at once never bursts past the provider's limit (smoothed: no burst
followed by a wait). ``llm.tpm`` does the same for tokens: each request is booked before it
leaves with an estimate of what it will count against the limit — its prompt at
:data:`CHARS_PER_TOKEN` characters a token plus ``llm.max_tokens`` for the answer, which is
what providers reserve — and starts no earlier than the tokens before it have drained at
tpm/60 a second (smoothed), nor while the requests started in the last 60 seconds and it
would hold more than tpm together (never exceeded). When the answer reports its usage, the
booking is corrected to the tokens actually counted, so the next requests wait for what was
really spent and not for the estimate. A 429 holds every worker back for the delay the
provider asked for (or the backoff), not only the request that is retried: the others would
hit the same limit. One pace per provider account and limit (model, ``api_base``, rpm, tpm),
so the core and upgrade backends of a run share it.
"""
from __future__ import annotations

import collections
import math
import threading
import time
from dataclasses import dataclass
from typing import Callable, Iterable, Mapping

_PACES: dict[tuple, "Pace"] = {}
_PACES_LOCK = threading.Lock()

CHARS_PER_TOKEN = 4  # a prompt's characters per token, for estimates (English text runs about 4)
WINDOW = 60.0  # seconds: rpm and tpm are per minute


@dataclass
class Booking:
    """One request's place in the token window: when it starts and the tokens it counts for."""

    start: float
    tokens: int


def estimate_tokens(messages: Iterable[Mapping[str, object]], max_tokens: int) -> int:
    """What a request may count against a token limit, before it is sent: its prompt at
    :data:`CHARS_PER_TOKEN` characters a token (rounded up), and the answer's ``max_tokens``."""
    chars = sum(len(str(m.get("content") or "")) for m in messages)
    return math.ceil(chars / CHARS_PER_TOKEN) + max_tokens


class Pace:
    def __init__(self, rpm: int | None = None, tpm: int | None = None, *,
                 clock: Callable[[], float] = time.monotonic):
        self.interval = WINDOW / rpm if rpm else 0.0
        self.tpm = tpm
        self._clock = clock
        self._next = 0.0  # the earliest moment the next request may start
        self._drained = 0.0  # the moment the tokens booked so far have drained at tpm/60 a second
        self._window: collections.deque[Booking] = collections.deque()  # tpm: bookings of the last minute
        self._lock = threading.Lock()

    def wait(self, sleep: Callable[[float], None], tokens: int = 0) -> Booking:
        """Book the next start for this thread's request (of ``tokens``, for ``llm.tpm``) and
        ``sleep`` until it; the booking is for :meth:`settle`."""
        with self._lock:
            now = self._clock()
            start = max(now, self._next)
            booking = Booking(start, 0)
            if self.tpm:
                booking = self._book_tokens(start, min(tokens, self.tpm))  # a larger request waits for a whole minute
                start = booking.start
            self._next = start + self.interval
        if start > now:
            sleep(start - now)
        return booking

    def _book_tokens(self, start: float, tokens: int) -> Booking:
        tpm = self.tpm
        assert tpm, "booked only under llm.tpm"
        start = max(start, self._drained)
        while True:  # the last minute's bookings and this one fit in tpm (the window slides to the start)
            while self._window and self._window[0].start <= start - WINDOW:
                self._window.popleft()
            if sum(b.tokens for b in self._window) + tokens <= tpm or not self._window:
                break
            start = self._window.popleft().start + WINDOW  # popped here: (a + 60) - 60 may round below a
        booking = Booking(start, tokens)
        self._window.append(booking)
        self._drained = start + tokens * WINDOW / tpm
        return booking

    def settle(self, booking: Booking, tokens: int) -> None:
        """The request of ``booking`` counted ``tokens`` (its reported usage): later requests
        wait for those rather than the estimate."""
        if not self.tpm:
            return
        with self._lock:
            tokens = min(tokens, self.tpm)
            latest = self._window[-1].start if self._window else 0.0  # starts stay in order: the window is a queue
            self._drained = max(latest, self._drained + (tokens - booking.tokens) * WINDOW / self.tpm)
            booking.tokens = tokens  # the window holds this object

    def hold(self, seconds: float) -> None:
        """The provider said "too many requests": no request starts for ``seconds``."""
        with self._lock:
            self._next = max(self._next, self._clock() + seconds)


def pace_for(model: str, api_base: str | None, rpm: int | None, tpm: int | None = None) -> Pace:
    """The process's pace for this provider account and limits (created on first use)."""
    key = (model, api_base, rpm, tpm)
    with _PACES_LOCK:
        return _PACES.setdefault(key, Pace(rpm, tpm))
