"""A learning run's settings (skills.* of the configuration, and what only a run has) and its split of the gold."""
from __future__ import annotations

import dataclasses
import math
import random
from dataclasses import dataclass
from typing import Any

from kgkit.config.model import SkillsConfig
from kgkit.errors import ConfigError


GATES = ("dev", "train+dev", "cv")  # what the acceptance gate scores a change on (Gate)


_SKILLS = SkillsConfig()  # the defaults of the settings a run shares with config skills.*


@dataclass(frozen=True)
class LearnSettings:
    """One learning run's settings: ``skills.*`` of the configuration (defaults declared there,
    in kgkit/config/model.py) and what only a run has (its split, seed and held-out source)."""

    rollouts: int = _SKILLS.rollouts
    temperature: float = _SKILLS.temperature
    holdout: float = 0.3
    dev: float = 0.25  # share of the non-held-out documents used by the acceptance gate
    top_k: int = _SKILLS.top_k
    seed: int = 0
    jaccard_merge: float = _SKILLS.jaccard_merge
    jaccard_modify: float = _SKILLS.jaccard_modify
    min_gain: float = _SKILLS.min_gain  # the gate wants relation F1 to rise by at least this (equal is a rejection)
    min_precision: float = _SKILLS.min_precision
    # of the relations a change adds to train as extraction applies it, the share right at least
    applied_precision: float = _SKILLS.applied_precision
    min_support: int = _SKILLS.min_support
    gazetteer_cap: int = _SKILLS.gazetteer_cap
    gazetteer_share: float = _SKILLS.gazetteer_share  # names are folded last, and at most this share of a run's items
    heldout_from: tuple[str, ...] | None = None  # documents the held-out share is drawn from (None: all)
    # the skill passes are asked about at most this many unstable or missed edges (None: all of them):
    # with a model on a CPU each is a request of minutes, and each candidate it proposes more extractions
    max_edges: int | None = None
    gate: str = _SKILLS.gate  # "cv" (folds of the learning documents: Gate), "dev" or "train+dev"
    folds: int = _SKILLS.folds  # gate "cv": the learning documents dealt into this many folds
    typed_cues: bool = _SKILLS.typed_cues  # offline skill passes: a nearest cue typed to the edge's ends
    join: bool = _SKILLS.join  # a relation cue joins its relation's skill rather than being added beside it

    @classmethod
    def from_config(cls, skills: SkillsConfig, **overrides: Any) -> "LearnSettings":
        """Every setting ``config.skills`` has; ``overrides`` (not None) win."""
        shared = {f.name for f in dataclasses.fields(SkillsConfig)}
        base = {f.name: getattr(skills, f.name) for f in dataclasses.fields(cls) if f.name in shared}
        return cls(**{**base, **{k: v for k, v in overrides.items() if v is not None}})


def split_docs(doc_ids: list[str], holdout: float, dev: float, seed: int,
               heldout_from: tuple[str, ...] | None = None) -> dict[str, list[str]]:
    """Seeded split into held-out, dev and train (each sorted); small sets keep at least one train doc.

    With ``heldout_from``, the held-out share (of those documents) is drawn from them only,
    and the rest of them take no part: train and dev come from the other documents — so
    skills are learned on one half of a set and scored on the other.
    """
    if not 0 <= holdout < 1 or not 0 <= dev < 1:
        raise ConfigError("--holdout and the dev share must be fractions in [0, 1)")
    if heldout_from is not None:
        pool = [d for d in sorted(doc_ids) if d in set(heldout_from)]
        if not pool:
            raise ConfigError("none of the documents named for the held-out share is in the gold folder")
        random.Random(seed).shuffle(pool)
        held = pool[:max(1, math.ceil(len(pool) * holdout))] if holdout > 0 else []
        rest = [d for d in sorted(doc_ids) if d not in set(pool)]
        random.Random(seed).shuffle(rest)
        n_dev = min(len(rest) - 1, math.ceil(len(rest) * dev)) if dev > 0 and len(rest) > 1 else 0
        return {"train": sorted(rest[n_dev:]), "dev": sorted(rest[:n_dev]), "heldout": sorted(held)}
    order = sorted(doc_ids)
    random.Random(seed).shuffle(order)
    n = len(order)
    n_hold = min(n - 1, math.ceil(n * holdout)) if holdout > 0 else 0
    rest = order[n_hold:]
    n_dev = min(len(rest) - 1, math.ceil(len(rest) * dev)) if dev > 0 and len(rest) > 1 else 0
    return {"train": sorted(rest[n_dev:]), "dev": sorted(rest[:n_dev]), "heldout": sorted(order[:n_hold])}
