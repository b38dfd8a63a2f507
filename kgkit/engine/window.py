"""The documents of a corpus run that run at once: as many as keep the pass pool full.

A document's stages wait on each other (its relation passes on its merge, its upgrade
passes on its skeleton), so a few documents leave ``llm.concurrency`` mostly idle, in
waves. The window admits the next document whenever the pool has room for more work: fewer
passes waiting than it has threads, and every admitted document already sending passes
(one still being loaded and chunked counts as work to come). Admission stops at
``llm.concurrency`` documents (more could only wait) and at :data:`MEMORY_BUDGET`, each
document counted at :func:`footprint` from its input's size until it is handed on.

Passes go to the pool ranked by the order their documents were admitted
(:func:`kgkit.engine.pool.ranked`), so an earlier document's ready passes go first and
documents end about in input order; outcomes are handed on in input order. What each
document writes does not depend on what else runs (a pass's answer is recorded in request
order, :class:`kgkit.engine.passes.PassRunner`), so every run folder is the one a run of
one pass at a time writes.
"""
from __future__ import annotations

import collections
import concurrent.futures
import os
from typing import Callable, Generator, TypeVar

from kgkit.engine.corpus import CorpusInput
from kgkit.engine.pool import PassPool, ranked
from kgkit.errors import InputError

MEMORY_BUDGET = 512 * 2**20  # bytes the documents in the window may hold together
PER_INPUT_BYTE = 60  # bytes a running document holds per byte of its input (text, chunks, answers, nodes, views)
LEAST = 2 * 2**20  # what a document is counted at however small its input (stdin: unknown size)
POLL = 0.01  # seconds between looks for room while documents wait to be admitted


def footprint(item: CorpusInput) -> int:
    """The memory ``item`` is counted at while it runs, from its input's size."""
    try:
        size = os.stat(item.path).st_size if str(item.path) != "-" else 0
    except OSError:
        size = 0  # unreadable: its error comes from the loader
    return max(LEAST, size * PER_INPUT_BYTE)


Outcome = TypeVar("Outcome")


def admitted(inputs: list[CorpusInput], run_one: Callable[[CorpusInput], Outcome],
             pool: PassPool) -> Generator[tuple[CorpusInput, Outcome | InputError], None, None]:
    """``(input, run_one(input) or its InputError)`` in input order, documents admitted as
    the module docstring says (one at a time in a pool of one). Any other failure stops
    the pool (Ctrl-C also cancels the requests in flight, and so does a consumer that
    stops early), waits for the documents running and is raised."""
    def attempt(rank: int, item: CorpusInput) -> Outcome | InputError:
        with ranked(rank):
            try:
                return run_one(item)
            except InputError as exc:
                return exc

    if pool.size <= 1:
        for item in inputs:
            yield item, attempt(0, item)
        return
    todo = collections.deque(enumerate(inputs))
    running: collections.deque = collections.deque()  # (rank, input, future, footprint)
    held = 0

    def room() -> bool:
        if not todo:
            return False
        if not running:
            return True
        if len(running) >= pool.size or pool.backlog() >= pool.size or held + footprint(todo[0][1]) > MEMORY_BUDGET:
            return False
        # a document still loading counts as work to come: its passes are on their way
        return all(future.done() or pool.has_sent(rank) for rank, _, future, _ in running)

    with concurrent.futures.ThreadPoolExecutor(pool.size, thread_name_prefix="kgkit-document") as documents:
        def fill() -> None:
            nonlocal held
            while room():
                rank, item = todo.popleft()
                size = footprint(item)
                held += size
                running.append((rank, item, documents.submit(attempt, rank, item), size))

        try:
            fill()
            while running:
                _, item, future, size = running[0]
                try:
                    outcome = future.result(timeout=POLL if todo else None)
                except concurrent.futures.TimeoutError:
                    fill()
                    continue
                running.popleft()
                held -= size
                yield item, outcome
                fill()
        except BaseException as exc:
            with pool.halted(interrupted=isinstance(exc, (KeyboardInterrupt, GeneratorExit))):
                concurrent.futures.wait([future for _, _, future, _ in running if not future.cancel()])
            raise
