"""Folding one candidate into the library: vet it, plan the change, check it as applied on train, gate it, log it."""
from __future__ import annotations

import hashlib
import json
from typing import Any

from kgkit.skills.controller import apply, plan
from kgkit.skills.library import Library, merge_provenance, normalise_pattern, skill_id
from kgkit.learning.vetting import GAZETTEER, Vetter, clean_text


from kgkit.learning.report import EdgeLabel, LearnReport
from kgkit.learning.gate import Gate
from kgkit.learning.rollouts import Extractor


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


def fold_candidate(report: LearnReport, loop: "Extractor", lib: Library, cand: dict[str, Any], by: list[EdgeLabel],
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
        action, changed, done = _name_change(report, lib, trial, cand, entry, turned_down)
    else:
        cand, action, changed, done = _skill_change(report, lib, trial, cand, entry, vetter, loop, date)
    if done is not None:
        return done
    assert changed is not None  # no library to end with: a change to gate
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


def _name_change(report: LearnReport, lib: Library, trial: Library, cand: dict[str, Any], entry: dict[str, Any],
                 turned_down: list[dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any] | None, Library | None]:
    """A gazetteer name into ``trial``: (the action, the entry to gate, None), or with a
    known name (more provenance, nothing to gate) or a full gazetteer, the library the fold ends with."""
    s = report.settings
    names = normalise_pattern(cand["pattern"])["phrases"]
    action = {"action": "gazetteer", "skill": gazetteer_id(names[0], cand["target"])}
    known = next((g for g in trial.gazetteer if g["id"] == action["skill"]), None)
    if known is not None:  # the same name again: more provenance, nothing to gate
        known["provenance"] = merge_provenance(known["provenance"], cand["provenance"])
        report.actions.append({**entry, **action, "action": "keep", "outcome": "accepted"})
        return action, None, trial
    acc = report.accepted()
    over_share = not room_for_a_name(acc, s.gazetteer_share)
    if len(trial.gazetteer) >= s.gazetteer_cap or over_share:
        reason = (f"gazetteer full ({s.gazetteer_cap} names)" if not over_share else
                  f"gazetteer share: {acc['gazetteer'] + 1} names of {acc['skills'] + acc['gazetteer'] + 1} "
                  f"accepted items would exceed {s.gazetteer_share:.0%}")
        report.actions.append({**entry, **action, "outcome": "refused", "reason": reason})
        lib.rejected.extend({**t, "reason": reason} for t in turned_down)
        return action, None, lib
    trial.gazetteer.append({"id": action["skill"], "name": names[0], "type": cand["target"],
                            "provenance": cand["provenance"], "dev_gain": 0.0})
    return action, trial.gazetteer[-1], None


def _skill_change(report: LearnReport, lib: Library, trial: Library, cand: dict[str, Any], entry: dict[str, Any],
                  vetter: Vetter, loop: "Extractor", date: str
                  ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any] | None, Library | None]:
    """A skill change into ``trial`` as the controller plans it: (the candidate with its text
    cleaned, the action, the skill to gate, None), or for a change extraction would not
    notice ("keep"), the library the fold ends with."""
    s = report.settings
    cand = clean_text(cand, vetter, cand.pop("evidence", None), loop.domain)
    planned = plan(lib, cand, merge=s.jaccard_merge, modify=s.jaccard_modify, join=s.join)
    action = {"action": planned.action, "skill": planned.skill, "similarity": round(planned.similarity, 4)}
    apply(trial, planned, date)
    if planned.action == "keep":  # no change to what extraction does: nothing to gate
        report.actions.append({**entry, **action, "outcome": "accepted"})
        return cand, action, None, trial
    return cand, action, trial.skills[planned.skill], None


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


def room_for_a_name(accepted: dict[str, int], share: float) -> bool:
    """Whether one more gazetteer name keeps names at most ``share`` of a run's accepted items.

    A literal name is not a skill: names are folded after the run's skills, and only as
    many as the skills accepted leave room for (share 0.2: one name per four skills).
    """
    names, total = accepted["gazetteer"] + 1, accepted["skills"] + accepted["gazetteer"] + 1
    return names <= share * total + 1e-9


def gazetteer_id(name: str, type_name: str) -> str:
    return "gz_" + hashlib.sha256(f"{type_name}\x1f{' '.join(name.lower().split())}".encode("utf-8")).hexdigest()[:12]
