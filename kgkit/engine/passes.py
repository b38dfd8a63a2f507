"""Run one pass: reuse it from ``state/`` if it already completed, else ask the backend.

Every answer is cut to the configured limits (:mod:`kgkit.engine.limits`) before it is
stored or handed on, whichever backend gave it; what is left out goes to review.

A failed pass (the backend gave up after its own re-ask, or the provider refused that one
request for good) is recorded as a failure with the raw text in review and returns None;
the stage carries on with the other chunks and the run exits 1, so ``--resume`` can retry
just those passes.
"""
from __future__ import annotations

import dataclasses
import hashlib
from pathlib import Path
from typing import Any, Iterator, Sequence

from kgkit.backends.base import COMBINED, Backend, PassRequest, PassResult
from kgkit.config.model import LimitsConfig
from kgkit.engine.accounting import Accounting, refused
from kgkit.engine.limits import bound_answer, clip
from kgkit.engine.outputs import RunFolder, fingerprint
from kgkit.engine.pool import PassPool
from kgkit.formats.model import content as model_content
from kgkit.errors import ProviderError

_PROMPTS_DIR = Path(__file__).resolve().parent.parent / "prompts"
_SHARED_PROMPTS = ("_chat.j2", "_common.j2")  # every built-in pass template extends or imports them


class PassRunner:
    def __init__(self, backend: Backend, folder: RunFolder, accounting: Accounting,
                 limits: LimitsConfig | None = None, pool: PassPool | None = None):
        self.backend = backend
        self.pool = pool or PassPool(1)
        self.folder = folder
        self.accounting = accounting
        self.limits = limits or LimitsConfig()
        self.failures: list[dict[str, Any]] = []
        self.review: list[dict[str, Any]] = []
        self.held: dict[str, dict[str, int]] = {}  # stage -> reason -> items the limits left out
        self._digests: dict[int, str] = {}
        self._prompt_digests: dict[str, str] = {}
        self._describe = backend.describe()

    def _digest(self, value: Any) -> Any:
        """Domain, view and template objects enter the fingerprint as a hash of their content.

        Where a file was found is left out (``source``), and a view's prompt enters by its
        content: the same built-in domain read from a checkout or from an installed wheel must
        give the same fingerprint, or ``--resume`` from another directory would pay again. A
        setting most domains leave unset enters only when set (:func:`kgkit.formats.model.content`),
        so adding one leaves every other domain's fingerprints, and run folders, as they were.
        """
        if dataclasses.is_dataclass(value) and not isinstance(value, type):
            key = id(value)
            if key not in self._digests:
                self._digests[key] = fingerprint(self._located_by_content(model_content(value)))
            return self._digests[key]
        return value

    def _parts_digest(self, parts: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """A combined pass's parts (kgkit/modes/combined.py) with their views and contexts by content."""
        return [{k: ({ck: self._digest(cv) for ck, cv in v.items()} if k == "context" else self._digest(v))
                 for k, v in part.items()} for part in parts]

    def _located_by_content(self, data: Any) -> Any:
        if isinstance(data, dict):
            return {k: self._prompt_digest(str(v)) if k == "prompt" and v else self._located_by_content(v)
                    for k, v in data.items() if k != "source"}
        if isinstance(data, (list, tuple)):
            return [self._located_by_content(v) for v in data]
        return data

    def _prompt_digest(self, prompt: str) -> str:
        """A prompt template by its content and that of the built-in files it may build on."""
        if prompt not in self._prompt_digests:
            path = Path(prompt) if Path(prompt).is_absolute() else _PROMPTS_DIR / prompt
            if not path.is_file():
                self._prompt_digests[prompt] = prompt
            else:
                digest = hashlib.sha256(path.read_bytes())
                for name in _SHARED_PROMPTS:
                    digest.update((_PROMPTS_DIR / name).read_bytes())
                self._prompt_digests[prompt] = digest.hexdigest()
        return self._prompt_digests[prompt]

    def key(self, request: PassRequest) -> str:
        return fingerprint({
            "kind": request.kind, "stage": request.stage, "chunk": request.chunk.id,
            "text": hashlib.sha256(request.chunk.text.encode()).hexdigest(), "schema": request.schema,
            "context": {k: self._parts_digest(v) if k == "parts" and request.kind == COMBINED else self._digest(v)
                        for k, v in request.context.items()},
            "prompt": self._prompt_digest(request.prompt), "sample": request.sample,
            "temperature": request.temperature, "backend": self._describe,
        })

    def __call__(self, request: PassRequest) -> dict[str, Any] | None:
        return next(self.run_all([request]))

    def run_all(self, requests: Sequence[PassRequest]) -> Iterator[dict[str, Any] | None]:
        """The answers to ``requests``, in their order (None for a failed pass), each as soon
        as it and those before it are in.

        Passes not in ``state/`` go to the backend together, on the run's pool
        (``llm.concurrency`` at once). Each is stored in ``state/`` as soon as it completes,
        so a kill loses only those in flight; everything the run folder shows of them
        (accounting, failures, review) is recorded here in request order, so the outputs are
        the same whatever the concurrency. A provider failure that ends the run waits for
        the passes in flight (their answers are kept) and cancels the rest; so does a
        consumer that stops early."""
        keys = [self.key(r) for r in requests]
        stored = [self.folder.load_pass(r.stage, r.chunk.id, k) for r, k in zip(requests, keys)]
        check = getattr(self.backend, "check_requests", None)  # e.g. a prompt over a local model's window
        if check is not None:
            check([r for r, s in zip(requests, stored) if s is None])
        futures = {i: self.pool.submit(self._execute, r, k)
                   for i, (r, k, s) in enumerate(zip(requests, keys, stored)) if s is None}
        last = len(requests) - 1
        try:
            for i, request in enumerate(requests):
                if i not in futures:
                    self.accounting.count(request.stage, None)
                    answer = stored[i]
                else:
                    answer = self._record(request, *futures[i].result())
                if i == last:  # every answer of the stage stored (kept through a kill already): durable once,
                    self.folder.sync_state()  # before the last yield, as callers that zip never resume us
                yield answer
        except BaseException as exc:
            self.pool.stop(futures.values(), interrupted=isinstance(exc, KeyboardInterrupt))
            raise

    def _execute(self, request: PassRequest, key: str) -> tuple[PassResult, dict[str, Any] | None, list]:
        """In a worker: ask the backend, bound the answer, store it -> (result, data, items left out)."""
        try:
            result = self.backend.run(request)
        except ProviderError as exc:
            if not exc.request_specific:
                raise  # auth, outage, unknown model: every other pass would fail the same way
            # The provider refuses this one request for good (content filter, too long):
            # fail its chunk like an unusable answer, so the rest of the batch completes.
            result = refused(exc)
        if not result.ok or result.data is None:
            return result, None, []
        if request.kind == COMBINED:  # each view's answer bounded as its own pass's would be
            data, left_out = {}, []
            for stage, part in result.data.items():
                data[stage], out = bound_answer(part, self.limits) if isinstance(part, dict) else (part, [])
                left_out += [(stage, *item) for item in out]
        elif isinstance(result.data, dict):
            data, out = bound_answer(result.data, self.limits)
            left_out = [(request.stage, *item) for item in out]
        else:
            data, left_out = result.data, []
        self.folder.save_pass(request.stage, request.chunk.id, key, data, result.model)
        return result, data, left_out

    def _record(self, request: PassRequest, result: PassResult, data: dict[str, Any] | None,
                left_out: list) -> dict[str, Any] | None:
        """What the run folder says of one executed pass; its answer, or None when it failed.
        Items the limits left out are reviewed and counted as held back, under the stage
        (the view, for a combined pass's part) they were left out of."""
        self.accounting.count(request.stage, result)
        if data is None:
            error = result.error or "the backend returned no answer"
            self.failures.append({"chunk": request.chunk.id, "stage": request.stage, "error": error})
            self.review.append({"stage": request.stage, "chunk": request.chunk.id,
                                "item": {"raw": clip(result.raw, self.limits.answer_chars)},
                                "reason": f"{'unparsable answer' if result.raw is not None else 'no answer'}: {error}"})
            return None
        self.review += [{"stage": request.stage, "chunk": request.chunk.id, "item": {"regex": w.get("regex")},
                         "reason": w.get("reason")} for w in result.warnings]
        if isinstance(data, dict):
            self.held.setdefault(request.stage, {})
        for stage, item, reason, detail in left_out:
            held = self.held.setdefault(stage, {})
            held[reason] = held.get(reason, 0) + 1
            self.review.append({"stage": stage, "chunk": request.chunk.id,
                                "item": clip(item, self.limits.name_chars), "reason": f"held back ({reason}): {detail}"})
        return data
