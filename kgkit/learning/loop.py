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

import dataclasses
import hashlib
import json
import math
import random
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgkit.backends.base import SKILL_HINDSIGHT, SKILL_INDUCTION, Backend, PassRequest, PassResult
from kgkit.canon.names import entity_type_name
from kgkit.config.model import Config, SkillsConfig
from kgkit.documents.types import Chunk
from kgkit.errors import ConfigError
from kgkit.eval.gold import GoldDoc, load_gold
from kgkit.eval.metrics import Score, relation_sets
from kgkit.eval.run import EvalReport, evaluate, read_predictions
from kgkit.formats.model import Domain
from kgkit.skills.controller import apply, plan
from kgkit.learning.diagnosis import DIAGNOSES, diagnose, shared_sentence
from kgkit.skills.library import (KINDS, LABELS, Library, domain_dir, load_library, merge_provenance, normalise_pattern,
                                  save_library, skill_id, today)
from kgkit.skills.retrieve import HEAD_CHARS, rank_skills
from kgkit.learning.vetting import GAZETTEER, Vetter, clean_text

GATES = ("dev", "train+dev", "cv")  # what the acceptance gate scores a change on (Gate)
SKILL_SCHEMA = {
    "type": "object",
    "required": ["skills"],
    "properties": {"skills": {"type": "array", "items": {
        "type": "object",
        "required": ["kind", "target", "pattern", "instruction"],
        "properties": {
            "kind": {"enum": list(KINDS)},
            "target": {"type": "string", "minLength": 1},
            "pattern": {"type": "object", "properties": {
                "phrases": {"type": "array", "items": {"type": "string"}},
                "regex": {"type": "array", "items": {"type": "string"}}}},
            "instruction": {"type": "string"},
            "example": {"type": "string"},
        },
    }}},
}
OFFLINE_NOTE = ("offline backend at temperature 0: rollouts are identical, so every edge is stable or miss "
                "and only hindsight runs")
SAMPLED_NOTE = ("offline backend at temperature > 0: rollouts differ by a simulation of sampling (seeded subsets "
                "of its rules, docs/skills.md), not by a model's distribution")


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


@dataclass(frozen=True)
class EdgeLabel:
    doc: str
    edge: tuple[str, str, str]
    label: str  # stable | unstable | miss
    found_in: int
    diagnosis: str = ""  # misses only: one of kgkit.learning.diagnosis.DIAGNOSES

    def to_dict(self) -> dict[str, Any]:
        out = {"doc": self.doc, "edge": list(self.edge), "label": self.label, "found_in": self.found_in}
        return {**out, "diagnosis": self.diagnosis} if self.diagnosis else out


@dataclass
class LearnReport:
    domain: str
    gold_dir: str
    backend: str
    settings: LearnSettings
    split: dict[str, list[str]]
    library_dir: str = ""
    labels: list[EdgeLabel] = field(default_factory=list)
    actions: list[dict[str, Any]] = field(default_factory=list)
    invalid_candidates: int = 0
    already_learned: int = 0  # unstable/missed edges skipped because the library records a decision on them
    before: EvalReport | None = None
    after: EvalReport | None = None
    version_before: int = 0
    version_after: int = 0
    changed: bool = False
    notes: list[str] = field(default_factory=list)

    def label_counts(self) -> dict[str, int]:
        return {k: sum(1 for x in self.labels if x.label == k) for k in LABELS}

    def diagnosis_counts(self) -> dict[str, int]:
        """Misses by diagnosis (what the domain lacks)."""
        return {d: n for d in DIAGNOSES if (n := sum(1 for x in self.labels if x.diagnosis == d))}

    def accepted(self) -> dict[str, int]:
        """Accepted changes: skills (add, merge, modify, join; ``joined``: of them, cues that joined a
        skill already there) and gazetteer entries, counted apart."""
        ok = [a for a in self.actions if a["outcome"] == "accepted" and a["action"] != "keep"]
        return {"skills": sum(1 for a in ok if a["action"] != "gazetteer"),
                "joined": sum(1 for a in ok if a["action"] == "join"),
                "gazetteer": sum(1 for a in ok if a["action"] == "gazetteer"),
                "induction": sum(1 for a in ok if a["action"] != "gazetteer" and "unstable" in a["labels"])}

    def action_counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for a in self.actions:
            key = a["action"] if a["outcome"] == "accepted" else a["outcome"]
            counts[key] = counts.get(key, 0) + 1
        return dict(sorted(counts.items()))

    def heldout(self, which: str) -> dict[str, float]:
        rep = self.before if which == "before" else self.after
        micro = rep.total.categories["relations"].micro if rep and "relations" in rep.total.categories else None
        if micro is None:
            return {"precision": 0.0, "recall": 0.0, "f1": 0.0}
        return {"precision": round(micro.precision, 4), "recall": round(micro.recall, 4), "f1": round(micro.f1, 4)}

    def to_dict(self) -> dict[str, Any]:
        return {
            "domain": self.domain, "gold": self.gold_dir, "backend": self.backend,
            "settings": dataclasses.asdict(self.settings), "split": self.split, "library": self.library_dir,
            "labels": self.label_counts(), "diagnoses": self.diagnosis_counts(), "actions": self.action_counts(),
            "accepted": self.accepted(),
            "invalid_candidates": self.invalid_candidates, "already_learned": self.already_learned,
            "heldout_relations": {"before": self.heldout("before"), "after": self.heldout("after")},
            "library_version": {"before": self.version_before, "after": self.version_after},
            "changed": self.changed, "notes": self.notes,
            "edges": [x.to_dict() for x in self.labels], "action_log": self.actions,
        }

    def format_text(self) -> str:
        s = self.settings
        lines = [
            f"skills learn: domain {self.domain}, gold {self.gold_dir}, backend {self.backend}",
            f"split (seed {s.seed}): {len(self.split['train'])} train, {len(self.split['dev'])} dev, "
            f"{len(self.split['heldout'])} held-out; {s.rollouts} rollouts at temperature {s.temperature}; "
            f"gate {s.gate}" + (f" ({min(s.folds, len(self.split['train']))} folds of the train documents)"
                                if s.gate == "cv" else ""),
            "edges: " + ", ".join(f"{v} {k}" for k, v in self.label_counts().items()),
            "misses by diagnosis: " + (", ".join(f"{v} {k}" for k, v in self.diagnosis_counts().items()) or "none"),
            self._accepted_line(),
            "actions: " + (", ".join(f"{v} {k}" for k, v in self.action_counts().items()) or "none")
            + (f"; {self.invalid_candidates} invalid candidates dropped" if self.invalid_candidates else "")
            + (f"; {self.already_learned} edges already learned from" if self.already_learned else ""),
        ]
        b, a = self.heldout("before"), self.heldout("after")
        lines.append("held-out relations   P      R      F1")
        lines.append(f"  before            {b['precision']:.3f}  {b['recall']:.3f}  {b['f1']:.3f}")
        lines.append(f"  after             {a['precision']:.3f}  {a['recall']:.3f}  {a['f1']:.3f}")
        if self.changed:
            lines.append(f"library {self.library_dir}: version {self.version_before} -> {self.version_after}")
        else:
            lines.append(f"library {self.library_dir}: unchanged (version {self.version_after})")
        lines += [f"note: {n}" for n in self.notes]
        return "\n".join(lines + self._edge_lines())

    def _accepted_line(self) -> str:
        n = self.accepted()
        joined = f"; {n['joined']} of them cues joined to their relation's skill" if n["joined"] else ""
        return (f"accepted: {n['skills']} skills ({n['induction']} from path induction{joined}), "
                f"{n['gazetteer']} gazetteer entries")

    def _edge_lines(self) -> list[str]:
        """One line per gold edge of the train split: label, samples that found it, what was done."""
        if not self.labels:
            return []
        done: dict[tuple, list[str]] = {}
        for a in self.actions:
            for doc, edge in zip(a["docs"], a["edges"]):
                done.setdefault((doc, tuple(edge)), []).append(f"{a['action']} {a['skill']} {a['outcome']}")
        k = self.settings.rollouts
        lines = ["edges (label, found in, document, edge, actions):"]
        for x in self.labels:
            acts = "; ".join(done.get((x.doc, x.edge), [])) or "-"
            why = f" [{x.diagnosis}]" if x.diagnosis else ""
            lines.append(f"  {x.label:<8} {x.found_in}/{k}  {x.doc}  {x.edge[0]} --{x.edge[1]}--> {x.edge[2]}{why}  {acts}")
        return lines


class SampledBackend:
    """Sends every pass as rollout ``sample`` at ``temperature``, so each sample has its own cache key."""

    def __init__(self, inner: Backend, sample: int, temperature: float):
        self.inner = inner
        self.sample = sample
        self.temperature = temperature
        self.name = inner.name

    def run(self, request: PassRequest) -> PassResult:
        return self.inner.run(dataclasses.replace(request, sample=self.sample, temperature=self.temperature))

    def describe(self) -> dict[str, Any]:
        return {**self.inner.describe(), "sample": self.sample, "temperature": self.temperature}


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
    """
    from kgkit.catalog.load import load_domain
    from kgkit.engine.run import resolve_config

    cfg = resolve_config(config)
    if settings is None:
        settings = LearnSettings.from_config(cfg.skills)
    if settings.rollouts < 1:
        raise ConfigError("--rollouts must be at least 1")
    if settings.gate not in GATES:
        raise ConfigError(f"skills.gate must be one of {', '.join(GATES)}, not {settings.gate!r}")
    if settings.gate == "cv" and settings.folds < 2:
        raise ConfigError(f"skills.folds must be at least 2 for the cross-validated gate, not {settings.folds}")
    dom = load_domain(domain)
    docs = {d.doc_id: d for d in load_gold(gold_dir)}  # undeclared gold types: misses, as in eval
    # the cross-validated gate folds every learning document: no separate dev split
    dev_share = 0.0 if settings.gate == "cv" else settings.dev
    split = split_docs(list(docs), settings.holdout, dev_share, settings.seed, settings.heldout_from)
    factory = backend or _default_factory
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

    with tempfile.TemporaryDirectory(prefix="kgkit-learn-") as tmp:
        loop = _Loop(Path(tmp), dom, docs, cfg, settings, factory, gold_dir)
        report.before = loop.evaluate(lib, split["heldout"])
        labels, samples = loop.rollout(lib, split["train"])
        report.labels = labels
        date = today()
        learned = lib.learned_edges()
        proposed: list[tuple[EdgeLabel, list[dict[str, Any]]]] = []
        for label in labels:
            if label.label == "stable":
                continue
            if (label.doc, label.edge) in learned:  # decided in an earlier run: each edge is learned from once
                report.already_learned += 1
                continue
            kind = SKILL_INDUCTION if label.label == "unstable" else SKILL_HINDSIGHT
            candidates, invalid = loop.candidates(skill_backend, kind, label, samples[label.doc])
            report.invalid_candidates += invalid
            proposed.append((label, candidates))
        groups = group_candidates(proposed)
        names: list[str] = []  # gazetteer candidates: folded after the skills
        tried: set[str] = set()
        held: set[tuple[str, tuple[str, ...], str]] = set()  # (doc, edge, relation) an accepted or kept cue covers
        again: list[tuple[str, int]] = []  # turned down as applied or at the gate, with the changes accepted by then

        def fold(key: str) -> None:
            nonlocal lib
            cand, by = groups[key]
            lib = _fold(report, loop, lib, dict(cand), by, vetter, gate, split, date)
            last = report.actions[-1]
            if last["outcome"] == "accepted" and cand["kind"] == "relation":
                held.update((x.doc, x.edge, cand["target"]) for x in by)
            if last["action"] != "vet" and last["outcome"] != "accepted":
                again.append((key, changes()))

        def changes() -> int:
            return sum(report.accepted()[k] for k in ("skills", "gazetteer"))

        def covered(key: str) -> bool:
            cand, by = groups[key]
            return cand["kind"] == "relation" and all((x.doc, x.edge, cand["target"]) in held for x in by)

        for label, candidates in proposed:
            for cand in candidates:
                key = candidate_key(cand)
                if key in tried or covered(key):
                    # folded once for every edge that proposed it; or a shorter or looser cue where
                    # the longer one held
                    continue
                tried.add(key)
                if vetter.vet(cand).verdict == GAZETTEER:
                    names.append(key)
                    continue
                fold(key)
        # a change's worth depends on the skills beside it: one turned down (as applied on train or
        # at the gate) before later changes were accepted is tried once more, against the library
        # as the run left it; its first turn-down stays in the action log
        for key, seen in list(again):
            if seen < changes() and not covered(key):
                fold(key)
                unreject(lib, report.actions[-1])
        for key in names:
            lib = _fold(report, loop, lib, *groups[key], vetter, gate, split, date)
        report.after = loop.evaluate(lib, split["heldout"])

    # turn-downs alone are not written: an edge that this run's skills made regress would
    # otherwise be new to every run, and relearning would never reach a fixed point
    report.changed = (lib.skills, lib.gazetteer) != (start.skills, start.gazetteer)
    if report.changed:
        lib.version += 1
        lib.changelog.append({
            "version": lib.version, "date": date, "gold": str(gold_dir), "seed": settings.seed,
            "rollouts": settings.rollouts, "temperature": settings.temperature, "holdout": settings.holdout,
            "backend": report.backend, "actions": report.action_counts(),
            "heldout_relation_f1": {"before": report.heldout("before")["f1"], "after": report.heldout("after")["f1"]},
        })
        save_library(lib, root)
    report.version_after = lib.version
    return report


def unreject(lib: Library, action: dict[str, Any]) -> None:
    """An accepted change's edges are decided: out of ``rejected`` (a retried turn-down)."""
    if action["outcome"] == "accepted":
        edges = set(zip(action["docs"], map(tuple, action["edges"])))
        lib.rejected = [r for r in lib.rejected if (r["doc"], tuple(r["edge"])) not in edges]


def group_candidates(proposed: list[tuple[EdgeLabel, list[dict[str, Any]]]]
                     ) -> dict[str, tuple[dict[str, Any], list[EdgeLabel]]]:
    """The same candidate proposed for several edges, once: with every proposing edge's
    provenance, and the edges (in proposal order). A cue that explains several gold edges is
    one candidate with that support, not one per edge; one an unstable edge's path
    induction proposed counts as from path induction, whichever edge proposed it first."""
    groups: dict[str, tuple[dict[str, Any], list[EdgeLabel]]] = {}
    for label, candidates in proposed:
        for cand in candidates:
            key = candidate_key(cand)
            if key not in groups:
                groups[key] = (dict(cand), [label])
            elif label not in groups[key][1]:
                first, by = groups[key]
                first["provenance"] = merge_provenance(first["provenance"], cand["provenance"])
                by.append(label)
    return groups


def candidate_key(cand: dict[str, Any]) -> str:
    return json.dumps([cand["kind"], cand["target"], normalise_pattern(cand["pattern"])], sort_keys=True)


def _fold(report: LearnReport, loop: "_Loop", lib: Library, cand: dict[str, Any], by: list[EdgeLabel],
          vetter: Vetter, gate: "Gate", split: dict[str, list[str]], date: str) -> Library:
    """Vet one candidate (proposed for the edges ``by``), fold it in (skill or gazetteer entry)
    and gate it; the library after."""
    s = report.settings
    verdict = vetter.vet(cand)
    label = by[0]
    entry = {"kind": cand["kind"], "target": cand["target"], "pattern": normalise_pattern(cand["pattern"]),
             "edges": [list(x.edge) for x in by], "docs": [x.doc for x in by], "doc": label.doc,
             "label": label.label, "labels": sorted({x.label for x in by}), "vetting": verdict.to_dict()}
    sid = skill_id(cand["kind"], cand["target"], cand["pattern"])
    turned_down = [{"skill": sid, "doc": x.doc, "edge": list(x.edge)} for x in by]
    if verdict.verdict == "refused":
        report.actions.append({**entry, "action": "vet", "skill": sid, "outcome": "refused", "reason": verdict.reason})
        lib.rejected.extend({**t, "reason": verdict.reason} for t in turned_down)
        return lib
    trial = lib.copy()
    if verdict.verdict == GAZETTEER:
        names = normalise_pattern(cand["pattern"])["phrases"]
        action = {"action": "gazetteer", "skill": gazetteer_id(names[0], cand["target"])}
        known = next((g for g in trial.gazetteer if g["id"] == action["skill"]), None)
        if known is not None:  # the same name again: more provenance, nothing to gate
            known["provenance"] = merge_provenance(known["provenance"], cand["provenance"])
            report.actions.append({**entry, **action, "action": "keep", "outcome": "accepted"})
            return trial
        acc = report.accepted()
        over_share = not room_for_a_name(acc, s.gazetteer_share)
        if len(trial.gazetteer) >= s.gazetteer_cap or over_share:
            reason = (f"gazetteer full ({s.gazetteer_cap} names)" if not over_share else
                      f"gazetteer share: {acc['gazetteer'] + 1} names of {acc['skills'] + acc['gazetteer'] + 1} "
                      f"accepted items would exceed {s.gazetteer_share:.0%}")
            report.actions.append({**entry, **action, "outcome": "refused", "reason": reason})
            lib.rejected.extend({**t, "reason": reason} for t in turned_down)
            return lib
        trial.gazetteer.append({"id": action["skill"], "name": names[0], "type": cand["target"],
                                "provenance": cand["provenance"], "dev_gain": 0.0})
        changed = trial.gazetteer[-1]
    else:
        cand = clean_text(cand, vetter, cand.pop("evidence", None), loop.domain)
        planned = plan(lib, cand, merge=s.jaccard_merge, modify=s.jaccard_modify, join=s.join)
        action = {"action": planned.action, "skill": planned.skill, "similarity": round(planned.similarity, 4)}
        apply(trial, planned, date)
        if planned.action == "keep":  # no change to what extraction does: nothing to gate
            report.actions.append({**entry, **action, "outcome": "accepted"})
            return trial
        changed = trial.skills[planned.skill]
    applied = loop.applied(lib, trial, split["train"])
    entry["vetting"]["applied"] = applied
    if applied["f1_gain"] <= 0 or applied["precision"] < s.applied_precision:
        reason = (f"as applied on train: {applied['new_right']:+d} right, {applied['new_wrong']:+d} wrong relations, "
                  f"F1 {applied['f1_gain']:+.4f} (needs a rise, and precision {s.applied_precision} on what it adds)")
        report.actions.append({**entry, **action, "outcome": "refused", "reason": reason})
        lib.rejected.extend({**t, "reason": reason} for t in turned_down)
        return lib
    gain, figures = gate.gain(loop, lib, trial, cand)
    accepted = gain >= s.min_gain - 1e-9  # equal is a rejection (min_gain > 0)
    report.actions.append({**entry, **action, "outcome": "accepted" if accepted else "rejected", **figures,
                           "dev_gain": round(gain, 4)})
    if not accepted:
        lib.rejected.extend({**t, "reason": f"{s.gate} F1 gain {gain:+.4f} < {s.min_gain}"} for t in turned_down)
        return lib
    changed["dev_gain"] = round(gain, 4)
    record_cue_gains(changed, cand["pattern"], gain)
    return trial


def record_cue_gains(skill: dict[str, Any], pattern: dict[str, Any], gain: float) -> None:
    """Each phrase and regex a change brought into ``skill`` keeps the development gain it was
    accepted with (``cue_gains``): a skill that several cues joined shows what each one earned."""
    if "pattern" not in skill:  # a gazetteer name: its dev_gain is all there is
        return
    gains = dict(skill.get("cue_gains") or {})
    for cues in normalise_pattern(pattern).values():
        for cue in cues:
            gains.setdefault(cue, round(gain, 4))
    skill["cue_gains"] = dict(sorted(gains.items()))


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

    def gain(self, loop: "_Loop", lib: Library, trial: Library, cand: dict[str, Any]) -> tuple[float, dict[str, Any]]:
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


def room_for_a_name(accepted: dict[str, int], share: float) -> bool:
    """Whether one more gazetteer name keeps names at most ``share`` of a run's accepted items.

    A literal name is not a skill: names are folded after the run's skills, and only as
    many as the skills accepted leave room for (share 0.2: one name per four skills).
    """
    names, total = accepted["gazetteer"] + 1, accepted["skills"] + accepted["gazetteer"] + 1
    return names <= share * total + 1e-9


def gazetteer_id(name: str, type_name: str) -> str:
    return "gz_" + hashlib.sha256(f"{type_name}\x1f{' '.join(name.lower().split())}".encode("utf-8")).hexdigest()[:12]


def _default_factory(config: Config, stage: str) -> Backend:
    from kgkit.backends.factory import create_backend

    return create_backend(config, stage)


class _Loop:
    """The extraction side of the loop: scoring a library on a split, rollouts, skill passes."""

    def __init__(self, tmp: Path, domain: Domain, docs: dict[str, GoldDoc], config: Config,
                 settings: LearnSettings, factory, gold_dir):
        self.tmp, self.domain, self.docs, self.config = tmp, domain, docs, config
        self.settings, self.factory, self.gold_dir = settings, factory, gold_dir
        self.runs = 0
        self._scores: dict[str, Score] = {}  # (document, skills it retrieves) -> its score
        self._heads: dict[str, tuple[str, str | None]] = {}

    def retrieved(self, lib: Library, doc_ids: list[str]) -> dict[str, list[dict[str, Any]]]:
        """The skills each document retrieves from ``lib``, as the engine will (best first)."""
        return {d: [s for _, s in rank_skills(lib, *self.heads(d), self.settings.top_k)] for d in doc_ids}

    def _config_for(self, lib: Library, doc_ids: list[str]) -> Config:
        """The config with ``lib`` as the skill library, written to a scratch folder.

        Only the skills these documents retrieve are written: retrieval over that subset
        picks exactly the same top k (every other skill ranked below them), and a library
        of hundreds of skills is not rewritten for every trial.
        """
        self.runs += 1
        root = self.tmp / f"library_{self.runs}"
        used = {s["id"] for skills in self.retrieved(lib, doc_ids).values() for s in skills}
        save_library(Library(lib.domain, {sid: lib.skills[sid] for sid in sorted(used) if sid in lib.skills},
                             gazetteer=[g for g in lib.gazetteer if g["id"] in used]), root)
        skills = dataclasses.replace(self.config.skills, library=root, enabled=True, top_k=self.settings.top_k)
        return dataclasses.replace(self.config, skills=skills)

    def heads(self, doc_id: str) -> tuple[str, str | None]:
        """What retrieval reads of a document (as the engine loads it): its first characters and title."""
        if doc_id not in self._heads:
            from kgkit.documents.load import load_document

            doc = load_document(self.docs[doc_id].text_path)
            self._heads[doc_id] = (doc.text[:HEAD_CHARS], doc.title)
        return self._heads[doc_id]

    def evaluate(self, lib: Library, doc_ids: list[str]) -> EvalReport:
        """Relation scores of ``lib`` on these documents, summed from per-document scores.

        Each document's score is memoised on the skills it would retrieve — all extraction
        reads of the library — so a candidate no document retrieves costs no extraction, and
        a document is extracted once per distinct set of skills it retrieves, whichever split
        or fold asks for it (the cross-validated gate reads every learning document's score).
        """
        retrieved = self.retrieved(lib, doc_ids)
        keys = {d: json.dumps([d, [{k: s[k] for k in ("id", "kind", "target", "pattern", "instruction", "example")}
                                   for s in retrieved[d]]], sort_keys=True) for d in doc_ids}
        todo = [d for d in doc_ids if keys[d] not in self._scores]
        if todo:
            cfg = self._config_for(lib, todo)
            run = evaluate(self.gold_dir, domain=self.domain, views=["binary"], config=cfg,
                           out_dir=self.tmp / f"run_{self.runs}", backend=self.factory,
                           docs=[self.docs[d] for d in todo])
            for d in todo:
                self._scores[keys[d]] = run.per_doc[d]
        report = EvalReport(str(self.gold_dir), self.domain.name, ["binary"])
        for d in doc_ids:
            report.add(d, self._scores[keys[d]])
        return report

    def applied(self, lib: Library, trial: Library, doc_ids: list[str]) -> dict[str, Any]:
        """What a change does when the backend applies it to these (train) documents: the
        relations it adds that gold holds (right) and does not (wrong), and their precision.

        Vetting's counts read a pattern against gold mentions; this reads it as extraction
        fires it, with the entities the rules actually find and the pairs they bind.
        """
        old, new = self.evaluate(lib, doc_ids), self.evaluate(trial, doc_ids)
        before, after = old.total.categories.get("relations"), new.total.categories.get("relations")
        right = (after.micro.tp if after else 0) - (before.micro.tp if before else 0)
        wrong = (after.micro.fp if after else 0) - (before.micro.fp if before else 0)
        # of what it adds, the share that is right (a change that only removes wrong relations: 1)
        precision = 1.0 if wrong <= 0 else right / (right + wrong) if right > 0 else 0.0
        return {"new_right": right, "new_wrong": wrong, "precision": round(precision, 4),
                "f1_gain": round(new.f1("relations") - old.f1("relations"), 4)}

    def rollout(self, lib: Library, doc_ids: list[str]) -> tuple[list[EdgeLabel], dict[str, list[dict[str, Any]]]]:
        """K sampled extractions per document; every gold relation labelled by how many found it."""
        from kgkit.engine.run import extract

        samples: dict[str, list[dict[str, Any]]] = {d: [] for d in doc_ids}
        if not doc_ids:
            return [], samples
        cfg = self._config_for(lib, doc_ids)
        for k in range(self.settings.rollouts):
            out = self.tmp / f"rollout_{self.runs}_{k}"

            def sampled(config: Config, stage: str, _k: int = k) -> Backend:
                return SampledBackend(self.factory(config, stage), _k, self.settings.temperature)

            extract([self.docs[d].text_path for d in doc_ids], domain=str(self.domain.source), views=["binary"],
                    config=cfg, out_dir=out, backend=sampled)
            for d in doc_ids:
                folder = out / self.docs[d].text_path.stem
                samples[d].append(read_predictions(folder) if (folder / "nodes.json").is_file() else {"entities": []})
        labels = []
        for d in doc_ids:
            doc = self.docs[d]
            found = [relation_sets(doc, s.get("relations", []), domain=self.domain)[1] for s in samples[d]]
            for rel in doc.relations:
                # the gold edge in the compared form (relation aliases, symmetric ends normalised)
                (triple,) = relation_sets({"entities": doc.entities, "relations": [rel]}, [], domain=self.domain)[0]
                n = sum(1 for f in found if triple in f)
                label = "stable" if n == len(found) else "miss" if n == 0 else "unstable"
                why = diagnose(doc, rel, samples[d], self.domain) if label == "miss" else ""
                labels.append(EdgeLabel(d, (rel["head"], rel["relation"], rel["tail"]), label, n, why))
        return labels, samples

    def candidates(self, backend: Backend, kind: str, label: EdgeLabel,
                   samples: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], int]:
        """Ask the skill pass for candidate skills for one edge; drop those the domain cannot use."""
        doc = self.docs[label.doc]
        rel = next(r for r in doc.relations if (r["head"], r["relation"], r["tail"]) == label.edge)
        head, tail = doc.entity(rel["head"]), doc.entity(rel["tail"])
        evidence = shared_sentence(doc, rel)
        start = doc.text.find(evidence) if evidence else -1
        text, begin = (evidence, start) if start >= 0 else (doc.text, 0)
        chunk = Chunk(id=f"skill:{doc.doc_id}:{begin}", doc_id=doc.doc_id, index=0, text=text, start=begin,
                      end=begin + len(text))
        entities = sorted({e["name"] for s in samples for e in s.get("entities", [])})
        # name -> the types it was extracted as: an end found with the wrong type is not found
        typed: dict[str, set[str]] = {}
        for s in samples:
            for e in s.get("entities", []):
                typed.setdefault(e["name"], set()).add(entity_type_name(self.domain, e.get("type") or "") or "?")
        # names some rollouts found and others did not (what path induction may steady)
        unsteady = sorted(n for n in entities if not all(any(e["name"] == n for e in s.get("entities", []))
                                                         for s in samples))
        context = {
            "domain": self.domain, "title": doc.title, "skills": [], "evidence": evidence or "",
            "typed_cues": self.settings.typed_cues,
            # in the domain's terms: gold "Peop" is general's "Person" by alias; None if undeclared
            "gold_edge": {"head": rel["head"], "relation": rel["relation"], "tail": rel["tail"],
                          "head_type": entity_type_name(self.domain, head["type"]) if head else None,
                          "tail_type": entity_type_name(self.domain, tail["type"]) if tail else None},
            "predictions": {"samples": len(samples), "found_in": label.found_in, "entities": entities,
                            "types": {n: sorted(t) for n, t in sorted(typed.items())}, "unsteady": unsteady},
        }
        prompt = "skill_induction.j2" if kind == SKILL_INDUCTION else "skill_hindsight.j2"
        result = backend.run(PassRequest(kind=kind, stage="skills", chunk=chunk, schema=SKILL_SCHEMA,
                                         context=context, prompt=prompt))
        if not result.ok or not result.data:
            return [], 1
        good, bad = [], 0
        for cand in result.data.get("skills", []):
            if not self._usable(cand):
                bad += 1
                continue
            pattern = cand.get("pattern") or {}
            good.append({"kind": cand["kind"], "target": cand["target"],
                         "pattern": {"phrases": list(pattern.get("phrases", [])), "regex": list(pattern.get("regex", []))},
                         "instruction": cand["instruction"], "example": cand.get("example", ""),
                         "evidence": evidence,  # only to keep the gold passage out of the skill's text
                         "provenance": [{"doc": label.doc, "edge": list(label.edge), "label": label.label,
                                         **({"diagnosis": label.diagnosis} if label.diagnosis else {})}]})
        return good, bad

    def _usable(self, cand: dict[str, Any]) -> bool:
        pattern = cand.get("pattern") or {}
        if not (pattern.get("phrases") or pattern.get("regex")):
            return False
        if cand.get("kind") == "relation":
            return self.domain.relation_type(cand.get("target", "")) is not None
        return self.domain.entity_type(cand.get("target", "")) is not None

