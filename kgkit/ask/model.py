"""The model roles of ``kgkit ask`` (route, reason): one request each through the same
backend an extraction run uses (the direct client or litellm, the real HTTP client), with
the role's own settings (``ask.route`` / ``ask.reason``) and never past the question's
deadline. Back-offs are jittered, so questions retrying together never retry in lockstep.
"""
from __future__ import annotations

import random
import time
from dataclasses import replace
from typing import Any, Callable

from kgkit.config.model import AskRole, Config
from kgkit.errors import InputError


def jittered(jitter: float, rng: random.Random, sleep: Callable[[float], None] = time.sleep) -> Callable[[float], None]:
    """A sleep that stretches each back-off by a random share up to ``jitter``."""
    return lambda delay: sleep(delay * (1.0 + rng.uniform(0.0, jitter)))


class Role:
    """One role's backend, built per request so its timeout is what the deadline leaves."""

    def __init__(self, name: str, config: Config, settings: AskRole, *, max_temperature: float | None = None,
                 sleep: Callable[[float], None] = time.sleep):
        if max_temperature is not None and settings.temperature > max_temperature:
            raise InputError(f"ask.{name}.temperature is {settings.temperature}: at most {max_temperature}",
                             hint="an answer from evidence is not sampled; set it to 0")
        self.name, self.config, self.settings = name, config, settings
        self.rng = random.Random()
        self.sleep = sleep

    @property
    def model(self) -> str:
        return self.config.llm.model or "offline"

    def ask(self, request, remaining: float) -> Any:
        """The backend's PassResult for ``request`` (kgkit.backends.base.PassRequest)."""
        from kgkit.backends.llm import LLMBackend

        s = self.settings
        llm = replace(self.config.llm, temperature=s.temperature, max_tokens=s.max_tokens,
                      timeout=max(0.05, min(s.timeout, remaining)), retries=s.retries, backoff=s.backoff, stages={})
        backend = LLMBackend(llm, limits=self.config.limits, sleep=jittered(s.jitter, self.rng, self.sleep),
                             max_response_bytes=self.config.limits.max_response_bytes)
        return backend.run(replace(request, temperature=s.temperature))
