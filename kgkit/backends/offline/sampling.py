"""A simulation of sampling for the offline backend, so the skill loop's rollouts can differ.

A model sampled at temperature > 0 answers the same prompt differently from one sample
to the next: it notices a cue in one run and not in the next, keeps a doubtful item in
one and drops it in another. The offline backend has no distribution to sample from, so
at temperature T > 0 it *simulates* one. Each rollout (``PassRequest.sample``) draws,
from a seed made of the sample index and the rule or item itself:

* a **subset of the rules** that could fire — each pattern phrase and regex of an entity
  type, relation trigger and skill is left out with probability ``rule_drop × T``;
* a **threshold per found item** — each entity or relation found is kept only if its
  confidence clears a threshold drawn for it, so it is dropped with probability
  ``item_drop × T × (1 − confidence)``: the offline rules give weaker guesses lower
  confidence (a capitalised-name guess 0.4–0.5, a relation read off the only pair in a
  sentence without a trigger 0.5, a declared pattern 0.8), and weak guesses come and go.

Probabilities are capped at 1. The seed never depends on the chunk, so a rule left out of
rollout k is left out of all of rollout k. At temperature 0 nothing is drawn and the
backend answers exactly as without this module.

What it is not: it is not a model's distribution, and it can only *lose* what the
deterministic rules find — an edge the rules never find stays missed in every rollout.
So it shows which edges the rules find *robustly* (stable), *fragilely* (unstable: one
rule or one doubtful item carries them) or *not at all* (miss), which is what path
induction needs to run offline. The knobs are ``skills.sample_*`` in kgkit.yaml.
"""
from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import hashlib
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Mapping, Sequence, TypeVar

from kgkit.formats.model import Patterns

T = TypeVar("T")


@dataclass(frozen=True)
class SamplingKnobs:
    """Strengths at temperature 1 (each is multiplied by the request's temperature).

    Not user configuration: they shape a simulation, not an extraction; a benchmark or test
    that studies them passes its own to :class:`~kgkit.backends.offline.OfflineBackend`.
    """

    rule_drop: float = 0.2  # chance that a pattern phrase or regex is left out of a rollout
    item_drop: float = 0.3  # chance that a found item of confidence 0 is dropped (scaled by 1 - confidence)


class Sampler:
    """The draws of one rollout: which rules fire, which found items stay."""

    def __init__(self, sample: int, temperature: float, knobs: SamplingKnobs):
        self.sample = sample
        self.rule_p = min(1.0, knobs.rule_drop * temperature)
        self.item_p = min(1.0, knobs.item_drop * temperature)

    def draw(self, *key: str) -> float:
        """A number in [0, 1) fixed by the sample index and ``key``."""
        digest = hashlib.sha256("\x1f".join((str(self.sample), *key)).encode("utf-8")).digest()
        return int.from_bytes(digest[:8], "big") / 2 ** 64

    def patterns(self, patterns: Patterns) -> Patterns:
        """The phrases and regexes of ``patterns`` this rollout keeps."""
        return Patterns(regex=tuple(r for r in patterns.regex if self.draw("regex", r) >= self.rule_p),
                        phrases=tuple(p for p in patterns.phrases if self.draw("phrase", p.lower()) >= self.rule_p))

    def entity_types(self, types: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(dataclasses.replace(t, patterns=self.patterns(t.patterns)) for t in types)

    def relation_types(self, types: Sequence[Any]) -> tuple[Any, ...]:
        return tuple(dataclasses.replace(t, triggers=self.patterns(t.triggers)) for t in types)

    def skills(self, skills: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for sk in skills:
            pattern = sk.get("pattern") or {}
            kept = self.patterns(Patterns(regex=tuple(pattern.get("regex", ())),
                                          phrases=tuple(pattern.get("phrases", ()))))
            out.append({**sk, "pattern": {"phrases": list(kept.phrases), "regex": list(kept.regex)}})
        return out

    def items(self, items: Sequence[T], key: Callable[[T], str]) -> list[T]:
        """The found items this rollout keeps: each clears a threshold drawn for it (weak guesses drop more)."""
        return [x for x in items if self.draw("item", key(x)) >= self.item_p * (1 - getattr(x, "confidence", 1.0))]


class _Identity:
    """Temperature 0: every rule and item as found (no draws)."""

    def entity_types(self, types):
        return types

    relation_types = entity_types

    def skills(self, skills):
        return skills

    def items(self, items, key):
        return items


IDENTITY = _Identity()
_CURRENT: contextvars.ContextVar[Sampler | _Identity] = contextvars.ContextVar("kgkit_offline_sampler",
                                                                               default=IDENTITY)


@contextlib.contextmanager
def sampling(sample: int, temperature: float, knobs: SamplingKnobs) -> Iterator[None]:
    """Make the rollout's draws visible to the rule hooks while one pass is answered."""
    token = _CURRENT.set(Sampler(sample, temperature, knobs) if temperature > 0 else IDENTITY)
    try:
        yield
    finally:
        _CURRENT.reset(token)


def current() -> Sampler | _Identity:
    """The sampler of the pass being answered (the identity outside one, or at temperature 0)."""
    return _CURRENT.get()
