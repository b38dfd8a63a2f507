"""Pick the backend for a stage from configuration — the only place that decides.

No ``llm.model`` (the default) means the offline pattern backend: deterministic,
free, no network. A model means :class:`~kgkit.backends.llm.LLMBackend`, with the
stage's overrides from ``llm.stages`` applied (a cheap model for upgrades, a
stronger one for skills…), wrapped in the response cache unless ``cache.enabled`` is
off. The offline backend is never cached: recomputing it is cheaper than a lookup.
"""
from __future__ import annotations

import dataclasses

from kgkit.backends.base import Backend
from kgkit.config.model import Config, LLMConfig

STAGES = ("core", "upgrades", "skills")


def create_backend(config: Config, stage: str = "core") -> Backend:
    """The backend for ``stage`` ("core", "upgrades" or "skills")."""
    llm = stage_llm(config.llm, stage)
    if not llm.model:
        from kgkit.backends.offline import OfflineBackend

        return OfflineBackend(regex_timeout=config.input.regex_timeout)
    from kgkit.backends.llm import LLMBackend

    backend: Backend = LLMBackend(llm, limits=config.limits, max_response_bytes=config.limits.max_response_bytes)
    if config.cache.enabled:
        from kgkit.backends.cache import CachedBackend, shared_cache

        backend = CachedBackend(backend, shared_cache(config.cache))
    return backend


def stage_llm(llm: LLMConfig, stage: str) -> LLMConfig:
    """``llm`` with the stage's overrides (``llm.stages[stage]``) applied."""
    if stage not in STAGES:
        raise ValueError(f"unknown stage {stage!r}; expected one of {', '.join(STAGES)}")
    override = llm.stages.get(stage)
    if override is None:
        return llm
    return dataclasses.replace(
        llm,
        model=override.model or llm.model,
        temperature=llm.temperature if override.temperature is None else override.temperature,
        max_tokens=llm.max_tokens if override.max_tokens is None else override.max_tokens,
        stages={},
    )
