"""Call accounting: the budget the design promises, shown beside what it saves.

For n chunks and M views the core costs 2n passes, each upgrade view n, each projection
0; running the whole pipeline once per view would cost ``naive = n·2·M``. Passes served
from the run folder's ``state/`` count in the plan (``core``, ``upgrade``) but are not
executed again; ``executed`` says how many went to the backend this time, ``requests``
how many HTTP requests that took (0 for the offline backend and for cache hits).
"""
from __future__ import annotations

import time
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from kgkit.backends.base import PassResult, Usage
from kgkit.errors import ProviderError


# What became of the model's answers (manifest "answers"): usable as first written; asked again; decoded under the
# pass's JSON Schema; cut (a runaway, or at max_tokens) at the last complete item; held back for review, unusable.
ANSWER_COUNTS = ("first_time", "reasked", "constrained", "cut", "held_back")
CONSTRAINED = ("json_schema", "json_object_schema")


def answer_counts() -> dict[str, int]:
    """Each of :data:`ANSWER_COUNTS` at 0: what :func:`count_answer` adds to."""
    return dict.fromkeys(ANSWER_COUNTS, 0)


def count_answer(counts: dict[str, int], result: PassResult) -> None:
    """Count one pass's ``result`` in ``counts`` (:func:`answer_counts`) when a model answered
    it; the cache and the offline rules send no request, so they give no model answer to count.
    Extraction's manifest and ``kgkit ask`` both count this way."""
    if not result.requests:
        return
    counts["first_time"] += int(result.ok and not result.reasked and not result.cut)
    counts["reasked"] += int(result.reasked)
    counts["constrained"] += int(result.output_format in CONSTRAINED)
    counts["cut"] += int(result.cut)
    counts["held_back"] += int(not result.ok)


def answers_text(counts: dict[str, int]) -> str:
    """``counts`` in words, for a report: "model answers: 2 first time, 1 re-asked, ..."."""
    words = {"first_time": "first time", "reasked": "re-asked", "held_back": "held back"}
    return "model answers: " + ", ".join(f"{counts[k]} {words.get(k, k)}" for k in ANSWER_COUNTS)


def refused(exc: ProviderError) -> PassResult:
    """The result of a request the provider refused for good (``exc.request_specific``: a
    content filter, a prompt too long): an unusable answer, counted as held back."""
    return PassResult(data=None, ok=False, error=exc.message, requests=exc.requests, retries=exc.retries)


def naive_calls(n_chunks: int, n_views: int) -> int:
    """What extracting each view from scratch would cost: both core passes per view."""
    return n_chunks * 2 * n_views


@dataclass
class Accounting:
    n_chunks: int
    views: list[str]
    upgrade_views: list[str]
    core: int = 0
    upgrade: dict[str, int] = field(default_factory=dict)
    executed: int = 0
    reused: int = 0
    cache_hits: int = 0
    requests: int = 0
    retries: int = 0
    skipped: dict[str, int] = field(default_factory=dict)  # stage -> passes not sent: nothing to work on
    usage: Usage = field(default_factory=Usage)
    timings: dict[str, float] = field(default_factory=dict)
    output_formats: dict[str, str] = field(default_factory=dict)  # stage -> json_schema | json_object | plain
    combined: dict[str, int] = field(default_factory=dict)  # view -> its passes answered inside combined ones
    combined_passes: int = 0  # passes that answered several views at once (upgrades.combine)
    answers: dict[str, int] = field(default_factory=answer_counts)

    def count(self, stage: str, result: PassResult | None) -> None:
        """One pass of ``stage``: ``result`` is the backend's answer, None when reused."""
        if stage in ("entities", "relations"):
            self.core += 1
        else:
            self.upgrade[stage] = self.upgrade.get(stage, 0) + 1
        if result is None:
            self.reused += 1
            return
        self.executed += 1
        self.cache_hits += int(result.cached)
        self.requests += result.requests
        self.retries += result.retries
        self.usage.add(result.usage)
        if result.output_format:
            self.output_formats[stage] = result.output_format
        count_answer(self.answers, result)

    def skip(self, stage: str, n: int) -> None:
        """``n`` passes of ``stage`` not sent because they had nothing to work on (not in ``total``)."""
        if n:
            self.skipped[stage] = self.skipped.get(stage, 0) + n

    def combine(self, views: tuple[str, ...]) -> None:
        """One pass planned to answer ``views`` together: one call where they would take one each."""
        self.combined_passes += 1
        for view in views:
            self.combined[view] = self.combined.get(view, 0) + 1

    @contextmanager
    def timed(self, stage: str):
        start = time.perf_counter()
        try:
            yield
        finally:
            self.timings[stage] = round(self.timings.get(stage, 0.0) + time.perf_counter() - start, 4)

    def calls(self) -> dict[str, Any]:
        upgrade = {view: self.upgrade.get(view, 0) for view in self.upgrade_views}
        if self.combined_passes:  # the combined passes, one call each (kgkit/modes/combined.py)
            upgrade["combined"] = self.upgrade.get("combined", 0)
        saved = sum(self.skipped.values()) + sum(self.combined.values()) - self.combined_passes
        combined = {"combined": dict(self.combined)} if self.combined else {}
        return {
            "core": self.core,
            "upgrade": upgrade,
            "projection": 0,
            "total": self.core + sum(upgrade.values()),
            "naive": naive_calls(self.n_chunks, len(self.views)),
            "executed": self.executed,
            "reused": self.reused,
            "cache_hits": self.cache_hits,
            "requests": self.requests,
            "retries": self.retries,
            "skipped": dict(self.skipped),
            "saved": saved,  # passes not sent: skipped ones, and those combined passes stood for
            **combined,
        }

    def tokens(self) -> dict[str, int]:
        return {"in": self.usage.tokens_in, "out": self.usage.tokens_out, "cached_in": self.usage.tokens_cached}

    def cost(self) -> float | None:
        """USD spent by this run: the backends' price-table figures; 0.0 when no request
        was sent (offline, cache, state); None when requests went out at an unknown price."""
        if self.usage.cost is not None:
            return round(self.usage.cost, 6)
        return 0.0 if self.requests == 0 else None
