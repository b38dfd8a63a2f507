"""The ray engine (``engine: ray``, ``kgkit extract --engine ray``): the documents of a
corpus run in shares, each share a Ray task, on the cluster ``ray.address`` names or on a
small local cluster started for the run and stopped after it.

A task runs its share through the local engine's pipe (:meth:`DocumentJob.outcomes`, in
kgkit/engine/run.py: one pass pool and one set of backends for the share, its documents
admitted as keep ``llm.concurrency`` full), so a worker keeps its requests in flight across
documents instead of waiting on one document's stages, and each run folder is the local
engine's byte for byte. Shares are small enough that the workers end together
(:func:`shares`). This process, the driver, keeps what there is one of per corpus: the
input order, ``runs.jsonl``, the progress display (a task's stage events come back through
a Ray queue) and the exit code. An unreadable input comes back as its InputError (skipped
and counted, as locally); any other failure stops the run and is raised with the
document's path in its message.

Where files go (the design call): the tasks write their run folders themselves, ``state/``
pass by pass, so a task that dies loses only its passes in flight and ``--resume`` pays
for nothing twice; sending whole results back for the driver to write would lose that.
They share the response cache (diskcache: SQLite, safe for several processes). On one
machine nothing more is needed. On a cluster of several machines the inputs, ``--out``
and ``cache.dir`` must be on a filesystem that every node mounts at the same path, named
by absolute paths (a task's working directory is not the driver's), and the provider key's
variable set on every node: Ray does not carry the driver's environment to other machines.

Ray is imported only here, and this module only when the engine is ray; without the
``ray`` extra the run stops with exit 2 before anything runs. (The names DocumentJob,
RunResult, Progress (kgkit.engine.document), Backend and BackendFactory in annotations are kgkit.engine.run's,
which imports this module: they are not imported back.)
"""
from __future__ import annotations

import dataclasses
import logging
import os
import signal
import socket
import threading
from collections import deque
from typing import TYPE_CHECKING, Any, Generator, Sequence

from kgkit.engine.corpus import CorpusInput
from kgkit.engine.window import MEMORY_BUDGET, footprint
from kgkit.errors import EXIT_PROVIDER, ConfigError, InputError, KgkitError

if TYPE_CHECKING:  # names for annotations only: kgkit.engine.run imports this module when it runs
    from kgkit.backends.base import Backend
    from kgkit.engine.document import BackendFactory, Progress, RunResult
    from kgkit.engine.run import DocumentJob

LOCAL_WORKERS = 2  # a local cluster's CPUs (and tasks at once) when ray.workers is not set
OBJECT_STORE_BYTES = 100 * 1024 * 1024  # a local cluster's object store: results only, a share's at a time
TASK_RETRIES = 2  # times Ray reruns a task lost with its worker or node
SHARES_PER_WORKER = 2  # a corpus is cut into about this many shares a worker: see shares
INTERRUPT_GRACE = 2.0  # seconds a cancelled task has to stop by itself after Ctrl-C or SIGTERM
POLL_SECONDS = 0.2  # how often the driver passes the tasks' stage events to the progress display
CONNECT_SECONDS = 5.0  # for ray.address to answer at all


class RayTaskFailed(KgkitError):
    """A task was lost to the cluster (a worker or node died, the task was cancelled):
    a failure of the machinery, like a provider's, so exit 3; completed passes are kept."""

    exit_code = EXIT_PROVIDER


def import_ray():
    """The ``ray`` module, or a ConfigError (exit 2) saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ConfigError("engine: ray needs Ray, which is not installed",
                          hint="pip install 'kgkit[ray]' (or run with --engine local)") from None
    return ray


def ray_outcomes(inputs: list[CorpusInput], job: DocumentJob, backend: Backend | BackendFactory | None,
                 progress: Progress | None) -> Generator[tuple[CorpusInput, RunResult | InputError], None, None]:
    """``(input, its RunResult or InputError)`` in input order, the documents running in
    shares, one Ray task a share (at most ``ray.workers`` at once). Raises ConfigError
    before anything runs when Ray is missing or an input is stdin."""
    ray = import_ray()
    if any(str(item.path) == "-" for item in inputs):
        raise InputError("the ray engine reads files, not stdin", hint="save the text to a file, or use --engine local")
    job = dataclasses.replace(job, config=shared_cache(job.config))
    return _outcomes(ray, inputs, job, backend, progress)


def shared_cache(config):
    """``config`` with its cache directory decided here, once: every task uses the
    driver's, whatever its own environment says (``$KGKIT_CACHE_DIR``, the user cache)."""
    if not config.cache.enabled:
        return config
    from kgkit.backends.cache import cache_dir

    return dataclasses.replace(config, cache=dataclasses.replace(config.cache, dir=cache_dir(config)))


def shares(inputs: list[CorpusInput], workers: int) -> list[list[CorpusInput]]:
    """The corpus cut into shares of consecutive documents, one task each: about
    :data:`SHARES_PER_WORKER` a worker. Fewer, larger shares keep each worker's pipe full for
    longer (a share ends with its last documents' stages, fewer requests in flight); more,
    smaller ones let a worker whose documents ran short take another, so the workers end
    together. A task holds its share's results until it ends, so a share is also cut where
    its documents would hold more than the local engine's memory budget together
    (:func:`kgkit.engine.window.footprint`)."""
    size = max(1, -(-len(inputs) // (max(workers, 1) * SHARES_PER_WORKER)))
    out: list[list[CorpusInput]] = []
    held = 0
    for item in inputs:
        weight = footprint(item)
        if not out or len(out[-1]) >= size or held + weight > MEMORY_BUDGET:
            out.append([])
            held = 0
        out[-1].append(item)
        held += weight
    return out


def _outcomes(ray, inputs, job, backend, progress):
    owned = not ray.is_initialized()  # else the caller's Ray, used as it is and left running
    if owned:
        connect(ray, job.config)
    try:
        local = owned and not job.config.ray.address
        workers = job.config.ray.workers or (LOCAL_WORKERS if local else int(ray.cluster_resources().get("CPU", 1)))
        queue = stage_queue(ray) if progress else None
        # A task whose worker died is run again (its run folders' locks died with it, its
        # completed passes are in state/); one that raised is not: its error is the outcome.
        task = ray.remote(num_cpus=1, max_retries=TASK_RETRIES)(run_share)
        shared = ray.put(job)
        todo = iter(shares(inputs, workers))
        running: deque = deque()
        interrupted = False
        try:
            while True:
                while len(running) < max(workers, 1) and (share := next(todo, None)) is not None:
                    running.append((share, task.remote(shared, share, backend, queue)))
                if not running:
                    return
                share, ref = running[0]
                while not ray.wait([ref], timeout=POLL_SECONDS if queue else None)[0]:
                    relay(queue, progress)
                relay(queue, progress)
                outcomes = result(ray, share, ref)
                running.popleft()
                yield from zip(share, outcomes)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: stop now, not when the requests in flight end
            interrupted = True
            raise
        finally:  # a failure, an interrupt or a consumer that stops early: stop the tasks still running
            stop(ray, [ref for _, ref in running], interrupted)
    finally:
        if owned:
            ray.shutdown()  # a local cluster stops; a remote one stays, this process leaves it


def connect(ray, config) -> None:
    """Join the cluster ``ray.address`` names, or start a small local one (no dashboard, no
    usage statistics sent anywhere)."""
    os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")  # read by ray.init: nothing is reported
    quiet: dict[str, Any] = {"include_dashboard": False, "log_to_driver": False, "logging_level": logging.ERROR}
    address = config.ray.address
    if address:
        check_reachable(address)
    term = signal.getsignal(signal.SIGTERM)
    try:
        if address:
            ray.init(address=address, **quiet)
        else:
            ray.init(num_cpus=config.ray.workers or LOCAL_WORKERS, object_store_memory=OBJECT_STORE_BYTES, **quiet)
    except (ConnectionError, ValueError, RuntimeError) as exc:
        ray.shutdown()  # whatever half started
        raise ConfigError(f"ray.address {address!r}: cannot join the Ray cluster: {exc}" if address
                          else f"cannot start a local Ray cluster: {exc}") from None
    finally:
        # ray.init puts its own crash handler on SIGTERM (a stack dump, then abort): the
        # process's handler (the installed kgkit's: stop as Ctrl-C does, shutting the local
        # cluster down) is put back
        if term is not None and threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, term)


def check_reachable(address: str) -> None:
    """A ``host:port`` (or ``ray://host:port``) address that nothing answers at is a
    ConfigError at once: Ray itself would retry for minutes. ``auto`` is Ray's to resolve."""
    host, colon, port = address.removeprefix("ray://").rpartition(":")
    if not colon or not port.isdigit():
        return
    try:
        socket.create_connection((host, int(port)), timeout=CONNECT_SECONDS).close()
    except OSError as exc:
        raise ConfigError(f"ray.address {address!r}: nothing answers at {host}:{port} ({exc.strerror or exc})",
                          hint="start the cluster (ray start --head) or correct ray.address") from None


def run_share(job: DocumentJob, share: Sequence[CorpusInput], backend: Backend | BackendFactory | None,
              queue) -> list[RunResult | InputError]:
    """A share of documents in a Ray worker, through the local engine's pipe: each
    document's RunResult, or its InputError (skipped by the driver). Any other failure is
    raised with the document it came from named in it."""
    progress = (lambda *event: queue.put(event)) if queue is not None else None
    done: list[RunResult | InputError] = []
    try:
        for _, outcome in job.outcomes(list(share), backend, progress):
            done.append(outcome)
    except Exception as exc:  # outcomes come in input order: the failing document is the next one
        failing = share[min(len(done), len(share) - 1)].path
        if isinstance(exc, KgkitError):
            exc.message = f"{failing}: {exc.message}"
            exc.args = (exc.message,)
        else:
            exc.add_note(f"(in the Ray task of {failing})")
        raise
    return done


def stage_queue(ray):
    """The queue a task's progress events travel by: a Ray actor holding no CPU."""
    from ray.util.queue import Queue

    return Queue(actor_options={"num_cpus": 0})


def relay(queue, progress: Progress | None) -> None:
    """Pass the stage events waiting in ``queue`` to ``progress``, in the order they came."""
    if queue is None or progress is None:  # the queue is made only for a run that reports progress
        return
    waiting = queue.qsize()
    for event in queue.get_nowait_batch(waiting) if waiting else ():
        progress(*event)


def result(ray, share: Sequence[CorpusInput], ref) -> list[RunResult | InputError]:
    """A task's outcomes; its failure raised as it was (:func:`run_share` named the document),
    or, for a task the cluster lost, naming the documents it held."""
    from ray.exceptions import RayError, RayTaskError

    held = str(share[0].path) + (f" (and {len(share) - 1} more documents of its task)" if len(share) > 1 else "")
    try:
        return ray.get(ref)
    except RayTaskError as exc:
        if exc.cause is None:
            raise RayTaskFailed(f"{held}: the Ray task failed: {exc}") from None
        raise exc.cause from None
    except RayError as exc:  # a worker or node died more often than TASK_RETRIES, or the task was cancelled
        raise RayTaskFailed(f"{held}: the Ray task was lost: {type(exc).__name__}",
                            hint="completed passes are kept: rerun with --resume") from None


def stop(ray, refs: list, interrupted: bool = False) -> None:
    """Cancel the tasks still running (each stops its passes as Ctrl-C would, keeping what
    completed) and wait for them, so none writes to its run folder after the run.

    Ray's cancel reaches a task only when it next runs Python, so a task waiting on a
    provider request in flight would finish that request first (up to ``llm.timeout``).
    After an interrupt the user wants the run stopped, as the local engine stops it: a
    task still running after ``INTERRUPT_GRACE`` seconds has its worker killed, which
    loses only its passes in flight (completed ones are in ``state/``, a temp file left
    is cleared by the next run)."""
    for ref in refs:
        ray.cancel(ref)
    if not refs:
        return
    left = ray.wait(refs, num_returns=len(refs), timeout=INTERRUPT_GRACE if interrupted else 60)[1]
    if interrupted and left:
        for ref in left:
            ray.cancel(ref, force=True)
        ray.wait(left, num_returns=len(left), timeout=60)
