"""The run's bound on passes in flight: ``llm.concurrency`` worker threads for the whole run.

A provider answers in seconds and holds many requests at once, so the passes of one stage
(every chunk's entity pass, every chunk's relation pass, every upgrade view's passes) go
out together instead of one after another. Threads, not asyncio: the backends, the cache
and the run folder are synchronous, and the provider request itself already runs on the
event loop of :mod:`kgkit.backends.deadline`, which bounds each one. One pool serves every
document of a run, so its size bounds the whole run.

With one worker nothing runs on another thread: a pass runs when its answer is needed,
so a failure that ends the run stops it before the next pass is paid for, as before.
"""
from __future__ import annotations

import concurrent.futures
import contextlib
import heapq
import itertools
import threading
from typing import Any, Callable, Iterable, Iterator

_local = threading.local()  # .rank: the rank of the passes this thread sends (0 unless set)


@contextlib.contextmanager
def ranked(rank: int) -> Iterator[None]:
    """Passes this thread submits in the block start after those of any lower rank."""
    before = getattr(_local, "rank", 0)
    _local.rank = rank
    try:
        yield
    finally:
        _local.rank = before


class RankedExecutor:
    """``size`` worker threads taking the pending call of lowest (rank, arrival) first;
    ``concurrent.futures`` futures and ``shutdown`` as in ThreadPoolExecutor. Threads start
    as calls need them. :meth:`backlog` says how many calls wait for a thread."""

    def __init__(self, size: int, thread_name_prefix: str = "kgkit-pass"):
        self.size = size
        self._prefix = thread_name_prefix
        self._queue: list[tuple[int, int, concurrent.futures.Future, Callable[..., Any], tuple]] = []
        self._arrival = itertools.count()
        self._cond = threading.Condition()
        self._threads: list[threading.Thread] = []
        self._idle = 0
        self._shut = False
        self.ranks_sent: set[int] = set()  # ranks that have submitted a call (the window reads it)

    def submit(self, fn: Callable[..., Any], *args: Any) -> concurrent.futures.Future:
        future: concurrent.futures.Future = concurrent.futures.Future()
        rank = getattr(_local, "rank", 0)
        with self._cond:
            if self._shut:
                raise RuntimeError("cannot schedule new futures after shutdown")
            heapq.heappush(self._queue, (rank, next(self._arrival), future, fn, args))
            self.ranks_sent.add(rank)
            if self._idle < len(self._queue) and len(self._threads) < self.size:
                thread = threading.Thread(target=self._work, name=f"{self._prefix}_{len(self._threads)}",
                                          daemon=True)
                self._threads.append(thread)
                thread.start()
            self._cond.notify()
        return future

    def backlog(self) -> int:
        """Calls submitted that no thread has taken yet."""
        return len(self._queue)

    def _work(self) -> None:
        while True:
            with self._cond:
                while not self._queue and not self._shut:
                    self._idle += 1
                    self._cond.wait()
                    self._idle -= 1
                if not self._queue:
                    return
                _, _, future, fn, args = heapq.heappop(self._queue)
            if not future.set_running_or_notify_cancel():
                continue
            try:
                result = fn(*args)
            except BaseException as exc:  # noqa: BLE001 - handed to whoever reads the future, as ThreadPoolExecutor does
                future.set_exception(exc)
            else:
                future.set_result(result)
            del future, fn, args

    def shutdown(self, wait: bool = True, cancel_futures: bool = False) -> None:
        with self._cond:
            self._shut = True
            if cancel_futures:
                for _, _, future, _, _ in self._queue:
                    future.cancel()
                self._queue.clear()
            self._cond.notify_all()
            threads = list(self._threads)
        if wait:
            for thread in threads:
                if thread is not threading.current_thread():
                    thread.join()


class _Later:
    """A pass run in the caller's thread when its result is asked for (a pool of one)."""

    def __init__(self, fn: Callable[..., Any], args: tuple):
        self.fn, self.args = fn, args

    def result(self) -> Any:
        return self.fn(*self.args)

    def cancel(self) -> bool:
        return True


def _refused(interrupted: bool) -> contextlib.AbstractContextManager[None]:
    """The provider's requests refused in the block when the run was interrupted."""
    if not interrupted:
        return contextlib.nullcontext()
    from kgkit.backends.deadline import requests_refused

    return requests_refused()


class PassPool:
    def __init__(self, size: int = 1):
        self.size = max(1, int(size))
        self._executor = RankedExecutor(self.size) if self.size > 1 else None

    def submit(self, fn: Callable[..., Any], *args: Any):
        """Start ``fn(*args)`` (or, in a pool of one, defer it); ``.result()`` gives its value."""
        if self._executor is None:
            return _Later(fn, args)
        return self._executor.submit(fn, *args)

    def backlog(self) -> int:
        """Passes submitted and not started yet (0 in a pool of one, which starts none ahead)."""
        return self._executor.backlog() if self._executor is not None else 0

    def has_sent(self, rank: int) -> bool:
        """Whether passes of ``rank`` have been submitted (a pool of one: always)."""
        return self._executor is None or rank in self._executor.ranks_sent

    def stop(self, futures: Iterable[Any], interrupted: bool) -> None:
        """After a failure that ends the run: cancel the passes not started and wait for
        those in flight, so none writes to the run folder after the run has let it go. An
        interrupt (Ctrl-C) also cancels the provider requests in flight and refuses new ones
        while it waits; a provider failure lets them finish, so their answers are kept and
        never paid for again."""
        # Only those cancel() cannot stop: a future cancelled before it ran is never "done"
        # to concurrent.futures.wait() once the pool has dropped it (halted), so it is not waited for.
        started = [f for f in futures if not f.cancel()]
        if self._executor is None:
            return
        with _refused(interrupted):
            concurrent.futures.wait(started)

    @contextlib.contextmanager
    def halted(self, interrupted: bool) -> Iterator[None]:
        """Stop the whole run's passes (a document failed, or Ctrl-C) while the block waits
        for the documents running: none not yet started will start, and every document
        waiting for one sees it cancelled. An interrupt also cancels the provider requests
        in flight and refuses new ones until the block ends."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
        with _refused(interrupted and self._executor is not None):
            yield

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "PassPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
