"""``kgkit extract --batch``: every stage of every document as a provider batch, at the batch price.

A document's stages depend on each other (entities -> merge -> relations -> upgrades), so a
batch run goes a stage per round. Each round replays the document through the very same
engine a direct run uses (:func:`kgkit.engine.document.extract_document`) with two stand-ins:

* :class:`BatchBackend` answers a pass from what earlier batches brought back (kept in
  ``state/batch.json``), from the response cache, or not at all: it raises, and
* :class:`BatchPool` — the engine hands every pass of a stage to its pool before it reads
  the first answer — gathers the unanswered passes of the stage and stops the round
  (:class:`StagePending`) when the engine asks for the first of them.

Those passes go to the provider as one batch (:mod:`kgkit.engine.batch_wire`), its id is
recorded in ``state/batch.json`` (:mod:`kgkit.engine.batch_state`) and the run exits 75 (:data:`kgkit.errors.EXIT_PENDING`):
come back later. The next run polls the batch; once it has ended, its answers are kept, the
round is replayed (the merge runs on them) and the next stage is submitted. When no pass is
left unanswered the round completes and writes the run folder a direct run writes: the
same pass answers through the same code give the same nodes and views, and the manifest
differs only in ``cost`` (the batch price), ``timings``, ``created`` and its ``batch`` key
(mode, batch ids, price basis).

Nothing is paid twice: an answer is stored the moment its batch is read, before anything
else happens; a pass answered once is never sent again (it also goes to the response
cache). A line the provider failed (an expired batch, a server error on some lines) is sent
again in the next batch of the stage, up to ``llm.retries`` times, or directly when asked
(``direct_retries``); a line it refused (400, 413, 422) fails its chunk, as a direct run
does. An answer that does not fit the pass schema is re-asked once, in the next batch, as
the direct backend re-asks it at once.

State writes of a round are held back until the round completes (:class:`StagedFolder`), so
the passes answered by batches count as executed in the final manifest, as in a direct run.
"""
from __future__ import annotations

import contextlib
import datetime
import os
import signal
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Iterator, Sequence

from kgkit.backends.base import Backend, PassRequest, PassResult, Usage
from kgkit.backends.budget import answer_items
from kgkit.backends.failures import REFUSAL_STATUS
from kgkit.backends.cache import CachedBackend
from kgkit.config.model import Config
from kgkit.engine.batch_state import BatchStore
from kgkit.engine.options import RunOptions
from kgkit.engine.outputs import RunFolder
from kgkit.engine.pool import PassPool
from kgkit.errors import ConfigError, InputError


# -- answering passes from batches ------------------------------------------------------------

class _Unanswered(Exception):
    """A pass no batch has answered yet: what to send for it (litellm completion kwargs)."""

    def __init__(self, backend: "BatchBackend", request: PassRequest, key: str, kwargs: dict[str, Any]):
        super().__init__(request.stage)
        self.backend, self.request, self.key, self.kwargs = backend, request, key, kwargs


class StagePending(Exception):
    """A stage has passes no batch has answered: they go out as the next batch."""

    def __init__(self, passes: list[_Unanswered]):
        super().__init__(f"{len(passes)} pass(es) of {passes[0].request.stage} to submit")
        self.passes = passes


class BatchBackend:
    """A stage's backend in a batch run: the answer a batch brought back (checked and re-asked
    exactly as :class:`~kgkit.backends.llm.LLMBackend` checks a direct one), a response-cache
    hit, or — for a pass a batch failed, with ``direct_retries`` — a direct call; otherwise
    the pass is unanswered and goes into the next batch.

    It describes itself as the backend it wraps, so ``state/`` and the manifest cannot tell
    a batch answer from a direct one."""

    def __init__(self, inner: Backend, llm: Any, store: BatchStore, retries: int, direct_retries: bool = False):
        self.inner = inner  # the run's own backend for the stage: the cache, direct retries, describe()
        self.llm = llm  # an LLMBackend of the stage's settings: builds each request, checks each answer
        self.name = inner.name
        self.llm_client = getattr(inner, "llm_client", None)  # as it describes itself: the wrapped backend's
        self.store = store
        self.retries = retries
        self.direct_retries = direct_retries
        self._client = None

    @property
    def client(self):
        from kgkit.engine.batch_wire import BatchClient

        if self._client is None:
            self._client = BatchClient(self.llm)
        return self._client

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def cache_key_parts(self, request: PassRequest) -> dict[str, Any]:
        return self.llm.cache_key_parts(request)

    def key(self, request: PassRequest) -> str:
        from kgkit.backends.cache import cache_key

        return cache_key(self.llm.cache_key_parts(request))

    def run(self, request: PassRequest) -> PassResult:
        from kgkit.backends.llm import REASK

        key = self.key(request)
        entry = self.store.peek(key)
        if "direct" in entry:
            return PassResult(**{**entry["direct"], "usage": Usage(**entry["direct"]["usage"])})
        output_format, response_format = self.llm.response_format_for(
            request.schema, answer_items(request, self.llm.limits), request)
        messages = self.llm.messages(request)
        answers, errors = entry["answers"], entry["errors"]
        if answers:
            data, error = self.llm.check_answer(answers[0]["text"], answers[0]["finish"], request.schema)
            if error is not None and len(answers) == 1:  # re-asked in the next batch, as LLMBackend re-asks
                messages = [*messages, {"role": "assistant", "content": answers[0]["text"]},
                            {"role": "user", "content": REASK.format(error=error)}]
            else:
                if error is not None:
                    first = error
                    data, error = self.llm.check_answer(answers[1]["text"], answers[1]["finish"], request.schema)
                    if error is not None:
                        error = f"{error} (still invalid after one re-ask; first answer: {first})"
                result = self._result(answers[:2], errors, data, error, output_format)
                if isinstance(self.inner, CachedBackend) and result.ok and key not in self.inner.cache:
                    self.inner.remember(request, result, key)  # a later direct run gets it free too
                return result
        elif not errors and isinstance(self.inner, CachedBackend) and self.inner.holds(request):
            return self.inner.run(request)  # a cache hit: nothing to send
        if errors and errors[-1]["status"] in REFUSAL_STATUS:  # the provider will never take it as sent
            return self._result(answers, errors, None, f"the provider refused the request: {errors[-1]['error']}",
                                output_format)
        if len(errors) > self.retries:
            return self._result(answers, errors, None, f"no answer after {len(errors)} batch attempt(s): "
                                                       f"{errors[-1]['error']}", output_format)
        if errors and self.direct_retries:
            result = self.inner.run(request)
            result.requests += len(errors)  # the batch lines that failed were requests too
            result.retries += len(errors)
            if result.ok:
                record = {k: getattr(result, k) for k in ("data", "ok", "error", "raw", "requests", "retries",
                                                          "model", "output_format")}
                self.store.entry(key)["direct"] = {**record, "usage": vars(result.usage)}
                self.store.save()
            return result
        kwargs = {"model": self.llm.settings.model, "messages": messages,
                  "temperature": self.llm.temperature_for(request), "max_tokens": self.llm.max_tokens_for(request)}
        if response_format:
            kwargs["response_format"] = response_format
        raise _Unanswered(self, request, key, kwargs)

    def _result(self, answers: list[dict], errors: list[dict], data: Any, error: str | None,
                output_format: str) -> PassResult:
        usage = Usage()
        for answer in answers:
            usage.add(Usage(**answer["usage"]))
        return PassResult(data=self.llm.scrub(data) if error is None else None, ok=error is None,
                          error=self.llm.scrub(error),
                          raw=self.llm.scrub(answers[-1]["text"]) if error is not None and answers else None,
                          usage=usage, requests=len(answers) + len(errors), retries=len(errors),
                          model=self.llm.settings.model, output_format=output_format)


class _Done:
    def __init__(self, value: Any = None, error: BaseException | None = None):
        self.value, self.error = value, error

    def result(self) -> Any:
        if self.error is not None:
            raise self.error
        return self.value

    def cancel(self) -> bool:
        return True


class BatchPool(PassPool):
    """The engine's pass pool in a batch run: a pass runs at once in the caller's thread (its
    answer is already here, or it is not); an unanswered one is noted, and reading any of them
    stops the round with every unanswered pass of the stage (:class:`StagePending`)."""

    def __init__(self) -> None:
        super().__init__(1)
        self.pending: list[_Unanswered] = []

    def submit(self, fn: Callable[..., Any], *args: Any):
        try:
            return _Done(fn(*args))
        except _Unanswered as missing:
            self.pending.append(missing)
            return _Pending(self)
        except Exception as exc:  # noqa: BLE001 - handed to the engine when it reads the pass (Ctrl-C is not held)
            return _Done(error=exc)


class _Pending:
    def __init__(self, pool: BatchPool):
        self.pool = pool

    def result(self) -> Any:
        raise StagePending(self.pool.pending)

    def cancel(self) -> bool:
        return True


class StagedFolder(RunFolder):
    """A run folder whose pass records (``state/``) are written only when the round completes
    (:meth:`flush`): a round stopped by a pending stage leaves ``state/`` as it was, so the
    final round counts every batch answer as executed, as a direct run counts it. Nothing is
    lost meanwhile: the answers are in ``state/batch.json`` from the moment they arrive."""

    def __init__(self, path: Path):
        super().__init__(path)
        self.staged: list[tuple] = []

    def save_pass(self, stage: str, chunk_id: str, key: str, data: dict[str, Any], model: str) -> None:
        self.staged.append((stage, chunk_id, key, data, model))

    def flush(self) -> None:
        for args in self.staged:
            super().save_pass(*args)
        self.staged = []


# -- the driver ------------------------------------------------------------------------------

@dataclass
class BatchWaiting:
    """A document whose current stage is in a provider batch: come back later."""

    document: str
    run_dir: Path
    batch_id: str
    stage: str
    status: str  # the provider's word, or "submitted"
    submitted: bool  # submitted by this run (else: an earlier one, still running)


def extract_batch(paths: str | os.PathLike | Sequence[str | os.PathLike], options: RunOptions = RunOptions(), *,
                  config: Config | str | os.PathLike | None = None,
                  progress: Callable[[str, str, int, int], None] | None = None,
                  on_start: Callable[[int], None] | None = None) -> Generator[Any, None, None]:
    """:func:`kgkit.engine.run.extract_each` through provider batches: per document, collect
    its batch if it has ended, replay it, and submit the next stage's passes; yields a
    :class:`~kgkit.engine.document.RunResult` for each document that is done, a
    :class:`BatchWaiting` for each that waits on a batch, a
    :class:`~kgkit.engine.run.SkippedInput` for each input that could not be read."""
    from kgkit.documents.load import load_document
    from kgkit.engine.corpus import CorpusManifest, run_row, skipped_row
    from kgkit.engine.run import SkippedInput, earlier_views, prepare_run
    from kgkit.engine.document import extract_document

    cfg, inputs, dom, base_views, root, corpus = prepare_run(paths, options, config)
    runs = CorpusManifest(root) if corpus else None
    given = {v.name for v in base_views}
    backends_of_run = stage_backends(cfg)
    if on_start:
        on_start(len(inputs))
    for item in inputs:
        try:
            doc = load_document(item.path, max_bytes=cfg.input.max_bytes, layout=dom.reading != "text")
        except InputError as exc:
            if runs is None:  # not a corpus run: an unreadable input is the run's error
                raise
            runs.add(skipped_row(item, exc.message))
            yield SkippedInput(str(item.path), item.folder, exc.message)
            continue
        folder = StagedFolder(root / item.folder)
        with folder.locked():
            folder.remove_temp_files()
            store = BatchStore(folder)
            backends = _batch_backends(backends_of_run, store, cfg, options)
            waiting = _collect(store, backends, doc.name, folder.path)
            if waiting is not None:
                if runs is not None:
                    runs.add(_waiting_row(item, waiting))
                yield waiting
                continue
            plan = base_views if options.replace_views else earlier_views(folder, given) + base_views
            try:
                result = extract_document(doc, dom, plan, cfg, backends, folder, options, progress=progress,
                                          pool=BatchPool(),
                                          manifest_extra={"batch": store.manifest_entry(backends[0].client.price_basis)})
            except StagePending as pending:
                waiting = _submit(store, pending, doc.name, folder.path)
                if runs is not None:
                    runs.add(_waiting_row(item, waiting))
                yield waiting
                continue
            folder.flush()
            for entry in store.data["passes"].values():  # passes that gave up: a later run tries them again
                if not entry["answers"] and "direct" not in entry:
                    entry["errors"] = []
            store.save()
        if runs is not None:
            runs.add(run_row(item, result.manifest))
        yield result


def _batch_backends(stages: list[tuple[Backend, Any]], store: BatchStore, cfg: Config,
                    options: RunOptions) -> tuple[BatchBackend, BatchBackend]:
    """The core and upgrade stages' backends for one run folder, answering from its batches."""
    core, upgrades = (BatchBackend(inner, llm, store, cfg.llm.retries, options.direct_retries)
                      for inner, llm in stages)
    return core, upgrades


def stage_backends(cfg: Config) -> list[tuple[Backend, Any]]:
    """Per stage (core, upgrades): the backend a direct run would use, and an LLMBackend of
    the stage's settings, which builds the batch lines and checks their answers. ConfigError
    without a model: the offline backend has no batches (it answers at once)."""
    from kgkit.backends.factory import stage_llm
    from kgkit.backends.llm import LLMBackend
    from kgkit.engine.run import make_backends

    settings = [stage_llm(cfg.llm, stage) for stage in ("core", "upgrades")]
    if not all(s.model for s in settings):
        raise ConfigError("--batch needs llm.model: batches go to a provider, and the offline backend answers "
                          "at once", hint="set llm.model (or --model), or run without --batch")
    return list(zip(make_backends(None, cfg), (LLMBackend(s) for s in settings)))


def _client_for(job: dict[str, Any], backends: tuple[BatchBackend, BatchBackend]):
    """The client that speaks to the model a job was submitted to."""
    for backend in backends:
        if backend.llm.settings.model == job["model"]:
            return backend.client
    raise ConfigError(f"batch {job['id']} went to {job['model']}, which this run's config no longer names",
                      hint=f"run with the model it was submitted with, or `kgkit batch forget {job['id']}`")


def _collect(store: BatchStore, backends, document: str, run_dir: Path) -> BatchWaiting | None:
    """Poll the document's open batch; keep its results when it has ended, else say it waits."""
    from kgkit.engine.batch_wire import ENDED

    for job in store.open_jobs():
        client = _client_for(job, backends)
        status = client.poll(job["id"])
        if status.state != ENDED:
            job["status"] = status.detail
            store.save()
            return BatchWaiting(document, run_dir, job["id"], job["stage"], status.detail, submitted=False)
        store.collect(job, status.detail, client.results(job["id"], status))
        store.save()  # before anything else: what the provider answered is never asked again
    return None


def _submit(store: BatchStore, pending: StagePending, document: str, run_dir: Path) -> BatchWaiting:
    backend = pending.passes[0].backend
    client = backend.client
    passes = list({p.key: p for p in pending.passes}.values())
    lines = [client.line(p.key, p.kwargs) for p in passes]
    stage = ",".join(dict.fromkeys(p.request.stage for p in passes))  # the upgrade views' passes go together
    with _interrupt_held():  # a batch the provider has taken is recorded before Ctrl-C can stop the run
        batch_id = client.submit(lines)
        store.jobs.append({"id": batch_id, "wire": client.wire, "model": backend.llm.settings.model, "stage": stage,
                           "lines": [p.key for p in passes], "collected": False, "status": "submitted",
                           "submitted": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")})
        store.save()
    return BatchWaiting(document, run_dir, batch_id, stage, "submitted", submitted=True)


@contextlib.contextmanager
def _interrupt_held() -> Iterator[None]:
    """Hold Ctrl-C (SIGINT) and SIGTERM until the block ends, then deliver them to the
    handlers they would have met: between the provider taking a batch and its id reaching
    ``state/batch.json`` an interrupt would lose a paid batch."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    held = (signal.SIGINT, signal.SIGTERM)
    previous = {signum: signal.signal(signum, lambda signum, frame: caught.append(signum)) for signum in held}
    try:
        yield
    finally:
        for signum in held:
            signal.signal(signum, previous[signum])
    for number in dict.fromkeys(caught):
        signal.raise_signal(number)


def _waiting_row(item, waiting: BatchWaiting) -> dict[str, Any]:
    return {"input": str(item.path), "run_folder": item.folder, "status": "batch", "batch": waiting.batch_id,
            "stage": waiting.stage}
