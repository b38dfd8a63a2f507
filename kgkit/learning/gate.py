"""The acceptance gate: what a change must gain, and on which documents (a dev split, or cross-validated folds)."""
from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from kgkit.eval.gold import GoldDoc
from kgkit.formats.model import Domain
from kgkit.skills.library import Library
from kgkit.learning.vetting import Vetter


from kgkit.learning.settings import LearnSettings
from kgkit.learning.rollouts import Extractor


@dataclass
class Gate:
    """What a change must gain before it is kept, and where that gain is measured.

    "dev" and "train+dev" score the change on one set of documents (:func:`gate_docs`).
    "cv" deals the learning documents into ``folds`` folds: for fold k a learner that never
    saw it — vetting and the applied check on the other folds' documents only — decides
    whether it would have learned the candidate, and the change is scored on fold k (a
    gain of 0 where that learner would not have learned it). A fold is not scored when
    the candidate was drawn from its documents alone (its learner would never have proposed
    it); where other folds' edges proposed it too, that learner would have. The gain is the mean over the scored
    folds: a development gain, measured on every learning document, each only by a learner
    that did not learn from it — where a 7-document dev split rejects as "equal" every cue
    it never contains.
    """

    settings: LearnSettings
    docs: list[str]  # the documents scored: the dev split, train and dev, or the learning documents folded
    folds: list[list[str]] = field(default_factory=list)
    vetters: list[Vetter] = field(default_factory=list)  # per fold: vetting without that fold

    @classmethod
    def build(cls, settings: LearnSettings, split: dict[str, list[str]], domain: Domain,
              docs: dict[str, GoldDoc]) -> "Gate":
        if settings.gate != "cv":
            return cls(settings, gate_docs(split, settings.gate))
        folds = cv_folds(split["train"], settings.folds, settings.seed)
        vetters = [Vetter(domain, [docs[d] for d in split["train"] if d not in set(fold)],
                          min_support=settings.min_support, min_precision=settings.min_precision) for fold in folds]
        return cls(settings, list(split["train"]), folds, vetters)

    def gain(self, loop: "Extractor", lib: Library, trial: Library,
             cand: dict[str, Any]) -> tuple[float, dict[str, Any]]:
        """The change's gain on the gate, and the figures to log beside it."""
        if self.settings.gate != "cv":
            before, after = (loop.evaluate(x, self.docs).f1("relations") for x in (lib, trial))
            return after - before, {"dev_f1": round(after, 4), "dev_f1_before": round(before, 4)}
        origin = {p["doc"] for p in cand.get("provenance", ())}
        per_fold: list[float | str] = []
        for fold, vetter in zip(self.folds, self.vetters):
            if origin <= set(fold):  # only this fold's documents proposed it: its learner never would
                per_fold.append("learned from")
                continue
            rest = [d for d in self.docs if d not in set(fold)]
            if vetter.vet(cand).verdict == "refused":
                per_fold.append(0.0)  # that learner would not have learned it
                continue
            applied = loop.applied(lib, trial, rest)
            if applied["f1_gain"] <= 0 or applied["precision"] < self.settings.applied_precision:
                per_fold.append(0.0)
                continue
            before, after = (loop.evaluate(x, fold).f1("relations") for x in (lib, trial))
            per_fold.append(round(after - before, 4))
        scored = [g for g in per_fold if not isinstance(g, str)]
        return (sum(scored) / len(scored) if scored else 0.0), {"fold_gains": per_fold}


def cv_folds(doc_ids: list[str], k: int, seed: int) -> list[list[str]]:
    """The documents shuffled by ``seed`` and dealt into ``k`` folds (each sorted; none empty)."""
    order = sorted(doc_ids)
    random.Random(seed).shuffle(order)
    k = max(1, min(k, len(order)))
    return [sorted(order[i::k]) for i in range(k)]


def gate_docs(split: dict[str, list[str]], gate: str) -> list[str]:
    """The documents the gate scores a change on.

    "dev" alone is a handful of documents (CoNLL04's tune half: 7), so a cue that fires on
    none of them changes nothing there and is rejected as "equal", however well it does on
    train. "train+dev" scores it on both: a cue must still raise relation F1 over all of
    them (equal is still a rejection), but one that helps train and leaves dev as it was
    is kept; the held-out documents stay out either way.
    """
    return sorted(split["train"] + split["dev"]) if gate == "train+dev" else list(split["dev"])
