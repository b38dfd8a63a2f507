"""What a learning run reports: each train edge's label, the action log, held-out scores before and after."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from kgkit.eval.run import EvalReport
from kgkit.learning.diagnosis import DIAGNOSES
from kgkit.skills.library import LABELS


from kgkit.learning.settings import LearnSettings


OFFLINE_NOTE = ("offline backend at temperature 0: rollouts are identical, so every edge is stable or miss "
                "and only hindsight runs")


SAMPLED_NOTE = ("offline backend at temperature > 0: rollouts differ by a simulation of sampling (seeded subsets "
                "of its rules, docs/skills.md), not by a model's distribution")


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
    unasked: int = 0  # unstable/missed edges the skill passes were not asked about (settings.max_edges)
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
            "unasked": self.unasked,
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
            + (f"; {self.already_learned} edges already learned from" if self.already_learned else "")
            + (f"; {self.unasked} edges not asked about (--max-edges {s.max_edges})" if self.unasked else ""),
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
