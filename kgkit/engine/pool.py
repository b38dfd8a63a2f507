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
from typing import Any, Callable, Iterable


class _Later:
    """A pass run in the caller's thread when its result is asked for (a pool of one)."""

    def __init__(self, fn: Callable[..., Any], args: tuple):
        self.fn, self.args = fn, args

    def result(self) -> Any:
        return self.fn(*self.args)

    def cancel(self) -> bool:
        return True


class PassPool:
    def __init__(self, size: int = 1):
        self.size = max(1, int(size))
        self._executor = (concurrent.futures.ThreadPoolExecutor(self.size, thread_name_prefix="kgkit-pass")
                          if self.size > 1 else None)

    def submit(self, fn: Callable[..., Any], *args: Any):
        """Start ``fn(*args)`` (or, in a pool of one, defer it); ``.result()`` gives its value."""
        if self._executor is None:
            return _Later(fn, args)
        return self._executor.submit(fn, *args)

    def stop(self, futures: Iterable[Any], interrupted: bool) -> None:
        """After a failure that ends the run: cancel the passes not started and wait for
        those in flight, so none writes to the run folder after the run has let it go. An
        interrupt (Ctrl-C) also cancels the provider requests in flight; a provider failure
        lets them finish, so their answers are kept and never paid for again."""
        # Only those cancel() cannot stop: a future cancelled before it ran is never "done"
        # to concurrent.futures.wait() once the pool has dropped it (halt), so it is not waited for.
        started = [f for f in futures if not f.cancel()]
        if self._executor is None:
            return
        if interrupted:
            from kgkit.backends.deadline import cancel_requests

            cancel_requests()
        concurrent.futures.wait(started)

    def halt(self, interrupted: bool) -> None:
        """Stop the whole run's passes (a document failed, or Ctrl-C): none not yet started
        will start, and every document waiting for one sees it cancelled. An interrupt also
        cancels the provider requests in flight."""
        if self._executor is not None:
            self._executor.shutdown(wait=False, cancel_futures=True)
            if interrupted:
                from kgkit.backends.deadline import cancel_requests

                cancel_requests()

    def close(self) -> None:
        if self._executor is not None:
            self._executor.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> "PassPool":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()
