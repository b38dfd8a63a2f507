"""The weight-frozen skill loop: rollout, classify, induce, fold, gate — against gold.

``learn_skills`` improves a domain's skill library from 10–20 gold documents without
touching model weights (docs/skills.md):

1. **split** the gold documents, by ``seed``, into held-out (scored before and after,
   never learned from), dev (the acceptance gate) and train;
2. **rollout**: K samples of the core extraction per train document at temperature T,
   each sample its own cache key (``PassRequest.sample``);
3. **classify** every gold relation: *stable* (found in all K), *unstable* (some), *miss*
   (none, with a diagnosis: :mod:`kgkit.learning.diagnosis`);
4. **induce**: a ``skill_induction`` pass per unstable edge and a ``skill_hindsight`` pass
   per missed one (Jinja2 prompts for an LLM; lexical rules offline), each answering
   candidate skills that get the edge as provenance;
5. **vet** each candidate on the train gold (:mod:`kgkit.learning.vetting`): a pattern that
   generalises and is precise, or a literal name for the capped gazetteer; else refused;
6. **fold** it with the deterministic controller (add/modify/merge/keep), then **apply**
   it to the train documents: it must raise train relation F1, with ``applied_precision``
   on the relations it adds (vetting reads gold mentions; this reads what extraction does);
7. **gate**: a change is kept only if relation F1 rises by at least ``min_gain`` (> 0;
   equal is a rejection) on documents it was not learned from: by default ("cv") the mean
   over folds of the learning documents, each fold scored by a learner that vetted and
   applied the change without it (:class:`Gate`); or on the dev split ("dev"), or on train
   and dev together ("train+dev", not a development gain). The same candidate proposed for
   several edges is gated once, with all of them as provenance; one turned down before
   later changes were accepted is tried once more. Turn-downs are remembered in the library
   with their reason.
   Gazetteer names come after all skills, at most ``gazetteer_share`` of the run's
   accepted items;
8. **write** the library (version + 1 and a changelog entry, turn-downs included) only
   if its skills or gazetteer changed.

Everything is ordered (documents by id, edges in gold order), so the same gold, seed and
starting library always give the same library. An edge whose candidates were accepted
(its provenance is in a skill or gazetteer entry) or turned down (in ``rejected``) is
learned from once: a relearn on the same gold skips it, so a second run with the same
gold and seed changes nothing.
"""
from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

from kgkit.backends.base import SKILL_HINDSIGHT, SKILL_INDUCTION, Backend
from kgkit.config.model import Config
from kgkit.errors import ConfigError
from kgkit.eval.gold import load_gold
from kgkit.skills.library import Library, domain_dir, load_library, save_library, today
from kgkit.learning.vetting import GAZETTEER, Vetter


from kgkit.learning.settings import GATES, LearnSettings, split_docs
from kgkit.learning.report import OFFLINE_NOTE, SAMPLED_NOTE, EdgeLabel, LearnReport
from kgkit.learning.gate import Gate
from kgkit.learning.folding import fold_candidate, candidate_key, group_candidates, unreject
from kgkit.learning.rollouts import Extractor, default_backend


def learn_skills(
    gold_dir: str | Path,
    domain: str | Path,
    *,
    config: Config | None = None,
    settings: LearnSettings | None = None,
    library_dir: str | Path | None = None,
    backend: Any = None,
) -> LearnReport:
    """Run the skill loop on ``gold_dir`` for ``domain`` and write the library if it changed.

    ``config`` gives the model (none: the offline backend) and the controller thresholds;
    ``settings`` overrides rollouts, temperature, split, top-k and seed (defaults from
    ``config.skills``). ``library_dir`` is the library root (default: where the domain's
    library is found, :func:`kgkit.skills.library.library_roots`).
    ``backend`` is an optional factory ``(config, stage) -> Backend`` (default: the
    configured one). Returns a :class:`LearnReport`; raises KgkitError subclasses for bad
    gold, domain or configuration.

    The orchestration only: rollouts and skill passes are :class:`~kgkit.learning.rollouts.Extractor`'s,
    folding a candidate in is :mod:`kgkit.learning.folding`'s, the gate
    :class:`~kgkit.learning.gate.Gate`'s, the report :class:`~kgkit.learning.report.LearnReport`'s.
    """
    from kgkit.catalog.load import load_domain
    from kgkit.engine.run import resolve_config

    cfg = resolve_config(config)
    settings = _checked(settings or LearnSettings.from_config(cfg.skills))
    dom = load_domain(domain)
    docs = {d.doc_id: d for d in load_gold(gold_dir)}  # undeclared gold types: misses, as in eval
    # the cross-validated gate folds every learning document: no separate dev split
    dev_share = 0.0 if settings.gate == "cv" else settings.dev
    split = split_docs(list(docs), settings.holdout, dev_share, settings.seed, settings.heldout_from)
    factory = backend or default_backend
    root = domain_dir(dom.name, library_dir).parent
    lib = load_library(dom.name, root)
    start = lib.copy()
    skill_backend = factory(cfg, "skills")
    report = LearnReport(dom.name, str(gold_dir), skill_backend.name, settings, split, library_dir=str(root / dom.name),
                         version_before=lib.version)
    if skill_backend.name == "offline":
        report.notes.append(OFFLINE_NOTE if settings.temperature == 0 else SAMPLED_NOTE)
    vetter = Vetter(dom, [docs[d] for d in split["train"]], min_support=settings.min_support,
                    min_precision=settings.min_precision)
    gate = Gate.build(settings, split, dom, docs)
    date = today()
    with tempfile.TemporaryDirectory(prefix="kgkit-learn-") as tmp:
        loop = Extractor(Path(tmp), dom, docs, cfg, settings, factory, gold_dir)
        report.before = loop.evaluate(lib, split["heldout"])
        labels, samples = loop.rollout(lib, split["train"])
        report.labels = labels
        proposed = _propose(report, loop, skill_backend, lib, samples)
        folding = _Folding(report, loop, lib, group_candidates(proposed), vetter, gate, split, date)
        lib = folding.run(proposed)
        report.after = loop.evaluate(lib, split["heldout"])
    _write(report, lib, start, root, date)
    return report


def _checked(settings: LearnSettings) -> LearnSettings:
    if settings.rollouts < 1:
        raise ConfigError("--rollouts must be at least 1")
    if settings.max_edges is not None and settings.max_edges < 1:
        raise ConfigError(f"--max-edges must be at least 1, not {settings.max_edges}")
    if settings.gate not in GATES:
        raise ConfigError(f"skills.gate must be one of {', '.join(GATES)}, not {settings.gate!r}")
    if settings.gate == "cv" and settings.folds < 2:
        raise ConfigError(f"skills.folds must be at least 2 for the cross-validated gate, not {settings.folds}")
    return settings


def _propose(report: LearnReport, loop: Extractor, skill_backend: Backend, lib: Library,
             samples: dict[str, Any]) -> list[tuple[EdgeLabel, list[dict[str, Any]]]]:
    """The candidates the skill passes propose for each unstable (induction) or missed
    (hindsight) edge not decided in an earlier run."""
    learned = lib.learned_edges()
    pending = []
    for label in report.labels:
        if label.label == "stable":
            continue
        if (label.doc, label.edge) in learned:  # decided in an earlier run: each edge is learned from once
            report.already_learned += 1
            continue
        pending.append(label)
    asked = bounded(pending, report.settings.max_edges)
    report.unasked = len(pending) - len(asked)  # not recorded as learned from: a later run may ask them
    proposed: list[tuple[EdgeLabel, list[dict[str, Any]]]] = []
    for label in asked:
        kind = SKILL_INDUCTION if label.label == "unstable" else SKILL_HINDSIGHT
        candidates, invalid = loop.candidates(skill_backend, kind, label, samples[label.doc])
        report.invalid_candidates += invalid
        proposed.append((label, candidates))
    return proposed


def bounded(labels: list[EdgeLabel], limit: int | None) -> list[EdgeLabel]:
    """At most ``limit`` of ``labels``, spread over their documents: every document's first
    edge, then every document's second, and so on (so a bounded run does not learn from one
    document alone); kept in their original order. ``None``: all of them."""
    if limit is None or len(labels) <= limit:
        return labels
    nth: dict[str, int] = {}
    ranks = []
    for i, label in enumerate(labels):
        ranks.append((nth.get(label.doc, 0), i))
        nth[label.doc] = nth.get(label.doc, 0) + 1
    keep = {i for _, i in sorted(ranks)[:limit]}
    return [label for i, label in enumerate(labels) if i in keep]


class _Folding:
    """The candidates folded into the library one at a time, in proposal order: skills first,
    each edge's longer cue before its shorter ones, then one more try for the turn-downs
    later acceptances may have changed, then the gazetteer names."""

    def __init__(self, report: LearnReport, loop: Extractor, lib: Library,
                 groups: dict[str, tuple[dict[str, Any], list[EdgeLabel]]], vetter: Vetter, gate: Gate,
                 split: dict[str, list[str]], date: str):
        self.report, self.loop, self.lib, self.groups = report, loop, lib, groups
        self.vetter, self.gate, self.split, self.date = vetter, gate, split, date
        self.held: set[tuple[str, tuple[str, ...], str]] = set()  # (doc, edge, relation) an accepted cue covers
        self.again: list[tuple[str, int]] = []  # turned down as applied or at the gate, with the changes by then

    def run(self, proposed: list[tuple[EdgeLabel, list[dict[str, Any]]]]) -> Library:
        names = self._skills(proposed)
        # a change's worth depends on the skills beside it: one turned down (as applied on train or
        # at the gate) before later changes were accepted is tried once more, against the library
        # as the run left it; its first turn-down stays in the action log
        for key, seen in list(self.again):
            if seen < self.changes() and not self.covered(key):
                self.fold(key)
                unreject(self.lib, self.report.actions[-1])
        for key in names:
            self.lib = fold_candidate(self.report, self.loop, self.lib, *self.groups[key], self.vetter, self.gate,
                                      self.split, self.date)
        return self.lib

    def _skills(self, proposed: list[tuple[EdgeLabel, list[dict[str, Any]]]]) -> list[str]:
        """Fold every skill candidate once; the gazetteer candidates' keys, to fold after."""
        names: list[str] = []
        tried: set[str] = set()
        for label, candidates in proposed:
            for cand in candidates:
                key = candidate_key(cand)
                if key in tried or self.covered(key):
                    # folded once for every edge that proposed it; or a shorter or looser cue where
                    # the longer one held
                    continue
                tried.add(key)
                if self.vetter.vet(cand).verdict == GAZETTEER:
                    names.append(key)
                    continue
                self.fold(key)
        return names

    def fold(self, key: str) -> None:
        cand, by = self.groups[key]
        self.lib = fold_candidate(self.report, self.loop, self.lib, dict(cand), by, self.vetter, self.gate,
                                  self.split, self.date)
        last = self.report.actions[-1]
        if last["outcome"] == "accepted" and cand["kind"] == "relation":
            self.held.update((x.doc, x.edge, cand["target"]) for x in by)
        if last["action"] != "vet" and last["outcome"] != "accepted":
            self.again.append((key, self.changes()))

    def changes(self) -> int:
        return sum(self.report.accepted()[k] for k in ("skills", "gazetteer"))

    def covered(self, key: str) -> bool:
        cand, by = self.groups[key]
        return cand["kind"] == "relation" and all((x.doc, x.edge, cand["target"]) in self.held for x in by)


def _write(report: LearnReport, lib: Library, start: Library, root: Path, date: str) -> None:
    """The library's next version, written when its skills or gazetteer changed. Turn-downs
    alone are not written: an edge that this run's skills made regress would otherwise be
    new to every run, and relearning would never reach a fixed point."""
    settings = report.settings
    report.changed = (lib.skills, lib.gazetteer) != (start.skills, start.gazetteer)
    if report.changed:
        lib.version += 1
        lib.changelog.append({
            "version": lib.version, "date": date, "gold": report.gold_dir, "seed": settings.seed,
            "rollouts": settings.rollouts, "temperature": settings.temperature, "holdout": settings.holdout,
            "backend": report.backend, "actions": report.action_counts(),
            "heldout_relation_f1": {"before": report.heldout("before")["f1"], "after": report.heldout("after")["f1"]},
        })
        save_library(lib, root)
    report.version_after = lib.version
