"""The deterministic controller: fold one candidate skill into a library.

The candidate is compared with the library's skills of the same kind and target by the
Jaccard similarity of pattern tokens (:func:`kgkit.skills.library.pattern_tokens`); the
most similar wins, ties to the smallest id. Then, with ``config.skills`` thresholds:

* **keep** — every candidate phrase and regex is already in that skill: only its
  provenance (and the support counts derived from it) grows; no new version;
* **merge** — similarity >= ``jaccard_merge``: a near-duplicate; its phrases and regexes
  join the skill, whose instruction stays; version + 1;
* **modify** — ``jaccard_modify`` <= similarity < ``jaccard_merge``: related but not the
  same; the patterns join and the instruction and example are replaced by the
  candidate's, the newer evidence; version + 1;
* **join** — with ``join`` (``skills.join``, the default), a *relation* cue below
  ``jaccard_modify`` whose relation already has a skill: the cue joins that skill (its
  patterns join, its instruction is added to the skill's, the example stays); version + 1.
  One skill per relation, several trigger cues each with its own recorded gain
  (``cue_gains``), so retrieval's few places (top k) hold more of what was learned;
* **add** — below ``jaccard_modify`` (an entity skill, or ``join`` off), or no skill with
  that kind and target: a new skill.

No randomness and no LLM: the same library and candidates in the same order always give
the same result.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kgkit.skills.library import (Library, make_skill, merge_provenance, normalise_pattern, pattern_tokens,
                                  support_of)

ACTIONS = ("add", "modify", "merge", "join", "keep")


@dataclass(frozen=True)
class Action:
    action: str  # one of ACTIONS
    skill: str  # id of the skill added or changed
    similarity: float  # Jaccard with the closest skill of the same kind and target (0 when none)
    candidate: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        edge = [p.get("edge") for p in self.candidate.get("provenance", ())]
        return {"action": self.action, "skill": self.skill, "similarity": round(self.similarity, 4),
                "kind": self.candidate["kind"], "target": self.candidate["target"],
                "pattern": normalise_pattern(self.candidate["pattern"]), "edges": edge}


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a | b else 1.0


def closest(library: Library, candidate: dict[str, Any]) -> tuple[dict[str, Any] | None, float]:
    tokens = pattern_tokens(candidate["pattern"])
    best: tuple[float, str] | None = None
    for sid, skill in library.skills.items():
        if skill["kind"] != candidate["kind"] or skill["target"] != candidate["target"]:
            continue
        score = jaccard(tokens, pattern_tokens(skill["pattern"]))
        if best is None or (score, _neg(sid)) > (best[0], _neg(best[1])):
            best = (score, sid)
    if best is None:
        return None, 0.0
    return library.skills[best[1]], best[0]


def _neg(sid: str) -> tuple[int, ...]:
    """Order key that prefers the smaller id when similarity ties."""
    return tuple(-ord(c) for c in sid)


def plan(library: Library, candidate: dict[str, Any], *, merge: float, modify: float, join: bool = False) -> Action:
    """Decide what folding ``candidate`` would do, without changing the library (``join``: a
    relation cue joins its relation's closest skill rather than being added beside it)."""
    skill, score = closest(library, candidate)
    cand = normalise_pattern(candidate["pattern"])
    if skill is not None:
        have = skill["pattern"]
        if set(cand["phrases"]) <= set(have["phrases"]) and set(cand["regex"]) <= set(have["regex"]):
            return Action("keep", skill["id"], score, candidate)
        if score >= merge:
            return Action("merge", skill["id"], score, candidate)
        if score >= modify:
            return Action("modify", skill["id"], score, candidate)
        if join and candidate["kind"] == "relation":
            return Action("join", skill["id"], score, candidate)
    new = make_skill(candidate["kind"], candidate["target"], cand, "", "", [], "")
    return Action("add", new["id"], score, candidate)


def apply(library: Library, action: Action, date: str) -> bool:
    """Carry out ``action`` on ``library`` in place; True when a skill file changes."""
    cand = action.candidate
    if action.action == "add":
        if action.skill in library.skills:  # the same pattern was added under another action: record provenance
            return _record(library.skills[action.skill], cand, date)
        library.skills[action.skill] = make_skill(cand["kind"], cand["target"], cand["pattern"], cand["instruction"],
                                                  cand.get("example", ""), cand.get("provenance", []), date)
        return True
    skill = library.skills[action.skill]
    if action.action == "keep":
        return _record(skill, cand, date)
    pattern = normalise_pattern({
        "phrases": skill["pattern"]["phrases"] + list(cand["pattern"].get("phrases", ())),
        "regex": skill["pattern"]["regex"] + list(cand["pattern"].get("regex", ())),
    })
    skill["pattern"] = pattern
    if action.action == "modify":
        skill["instruction"] = cand["instruction"]
        skill["example"] = cand.get("example", "")
    elif action.action == "join" and cand["instruction"] not in skill["instruction"]:
        # each joined cue keeps its own sentence in the prompt; the first cue's example stays
        skill["instruction"] = f"{skill['instruction']} {cand['instruction']}".strip()
    skill["provenance"] = merge_provenance(skill["provenance"], cand.get("provenance", []))
    skill["support"] = support_of(skill["provenance"])
    skill["version"] += 1
    skill["updated"] = date
    return True


def _record(skill: dict[str, Any], cand: dict[str, Any], date: str) -> bool:
    provenance = merge_provenance(skill["provenance"], cand.get("provenance", []))
    if provenance == skill["provenance"]:
        return False
    skill["provenance"] = provenance
    skill["support"] = support_of(provenance)
    skill["updated"] = date
    return True


def fold(library: Library, candidate: dict[str, Any], *, merge: float, modify: float, date: str,
         join: bool = False) -> Action:
    """Plan and apply in one step (the controller without an acceptance gate)."""
    action = plan(library, candidate, merge=merge, modify=modify, join=join)
    apply(library, action, date)
    return action
