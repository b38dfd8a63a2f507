"""Does the skill loop help? Held-out relation F1 before and after ``kgkit skills learn``.

For each gold set (CoNLL04 and SciERC by default) it scaffolds a domain from the gold
types (``kgkit domain new NAME --from-gold``: the gold types, plus the patterns and triggers
of the built-in general domain for types and relations that look like its own — CoNLL04's
Peop/Org/Loc and Live_In/Work_For/Kill; nothing for SciERC — and no gold names), runs
the skill loop with the offline backend (sampled rollouts at temperature 0.7) into a fresh library, and prints the held-out
relation P/R/F1 before and after learning, the edge labels and the controller actions.
The same seed gives the same split and the same library; the figures are whatever they
are (the offline backend's entity recall bounds them: a relation needs both ends found).

    python benchmarks/skills_heldout.py [--data ../shared/data] [--set conll04 --set scierc --set wikievents]
        [--holdout 0.3] [--seed 0 --seed 1 --seed 2] [--top-k 3] [--temperature 0.7] [--rollouts 3]
        [--gate cv|dev|train+dev] [--folds 5] [--applied-precision 0.33] [--min-precision 0.5] [--no-typed-cues]
        [--no-join]
        [--tune] [--json]

Which documents: skills are learned (train and dev) on the set's ``tune`` half in
``splits.json`` only; the held-out share (0.3 of the ``report`` half, drawn by the seed) is
scored before and after; the rest of the report half takes no part. With ``--tune`` the
report half takes no part at all: the tune half alone is split into train, dev and held-out
(CoNLL04: 18 documents to learn on, 9 to score) — the figure a loop variant is chosen on.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def run_set(data: Path, name: str, holdout: float, seed: int, top_k: int, work: Path, temperature: float = 0.7,
            rollouts: int = 3, gate: str | None = None, tune: bool = False,
            applied_precision: float | None = None, folds: int | None = None,
            min_precision: float | None = None, typed_cues: bool | None = None, join: bool | None = None) -> dict:
    from kgkit.config.model import Config
    from kgkit.catalog.starter import starter_from_gold
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills
    from kgkit.skills.library import load_library

    domain_file = work / f"{name}.yaml"
    domain_file.write_text(starter_from_gold(name, data / name), encoding="utf-8")
    gold = data / name
    if tune:  # the tune half alone: held-out drawn from it, the report half unread
        from split_folder import build

        gold = work / "tune"
        build(data, name, "tune", gold)
        heldout_from = None
    else:
        heldout_from = tuple(json.loads((data / "splits.json").read_text())["sets"][name]["report"])
    started = time.perf_counter()
    settings = LearnSettings.from_config(Config().skills, holdout=holdout, seed=seed, top_k=top_k,
                                         temperature=temperature, rollouts=rollouts, heldout_from=heldout_from,
                                         gate=gate, applied_precision=applied_precision, folds=folds,
                                         min_precision=min_precision, typed_cues=typed_cues, join=join)
    report = learn_skills(gold, domain_file, config=Config(), settings=settings, library_dir=work / "lib")
    seconds = time.perf_counter() - started
    entities = {w: getattr(report, w).total.categories["entities"].micro.to_dict() for w in ("before", "after")}
    lib = load_library(name, work / "lib")
    accepted = [a for a in report.actions if a["outcome"] == "accepted" and a["action"] != "keep"]
    by_kind: dict[str, int] = {}
    for a in accepted:
        by_kind[shape(a)] = by_kind.get(shape(a), 0) + 1
    return {"set": name, "seed": seed, "seconds": round(seconds, 1), "split": {k: len(v) for k, v in report.split.items()},
            "labels": report.label_counts(), "diagnoses": report.diagnosis_counts(), "actions": report.action_counts(),
            "accepted": report.accepted(), "accepted_by_kind": dict(sorted(by_kind.items())),
            # every accepted change, every skill and every phrase or regex in a skill: its development gain
            "all_gains_recorded": all("dev_gain" in a for a in accepted)
            and all("dev_gain" in s and set(s.get("cue_gains") or {}) == {*s["pattern"]["phrases"], *s["pattern"]["regex"]}
                    for s in lib.skills.values()),
            "skills": len(lib.skills), "gazetteer": len(lib.gazetteer),
            "heldout_relations": {"before": report.heldout("before"), "after": report.heldout("after")},
            "heldout_entities": entities}


def shape(action: dict) -> str:
    """What kind of item an accepted change is, read off its pattern (for the report only)."""
    from kgkit.skills.cues import cue_ends
    from kgkit.backends.offline.skills import juxtaposition_cue, role_cue

    if action["action"] == "gazetteer":
        return "gazetteer name"
    pattern = action["pattern"]
    if action["kind"] == "relation":
        if pattern["phrases"]:
            return "relation cue"
        if pattern["regex"] in ([juxtaposition_cue(True)], [juxtaposition_cue(False)]):
            return "juxtaposition cue"
        if pattern["regex"] == [role_cue()]:
            return "role cue"
        if pattern["regex"] and all(cue_ends(r) for r in pattern["regex"]):
            return "typed cue"
        return "nearest cue" if all(r.startswith("(?#nearest)") for r in pattern["regex"]) else "tight cue"
    if pattern["regex"] and all(r.startswith(r"(?<![\w.])(?P<name>(?-i:") for r in pattern["regex"]):
        return "title pattern"
    return "entity type cue" if pattern["regex"] else "entity phrase"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--set", dest="sets", action="append", default=None)
    parser.add_argument("--holdout", type=float, default=0.3)
    parser.add_argument("--seed", dest="seeds", type=int, action="append", default=None)
    parser.add_argument("--top-k", type=int, default=3)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--rollouts", type=int, default=3)
    parser.add_argument("--gate", choices=("dev", "train+dev", "cv"), default=None, help="default: config skills.gate")
    parser.add_argument("--applied-precision", type=float, default=None, help="default: config skills.applied_precision")
    parser.add_argument("--min-precision", type=float, default=None,
                        help="vetting precision on train (default: config skills.min_precision)")
    parser.add_argument("--typed-cues", action=argparse.BooleanOptionalAction, default=None,
                        help="offline skill passes also propose cues typed to the edge's ends (config skills.typed_cues)")
    parser.add_argument("--join", action=argparse.BooleanOptionalAction, default=None,
                        help="a relation cue joins its relation's skill instead of a new skill (config skills.join)")
    parser.add_argument("--folds", type=int, default=None, help="gate cv: folds (default: config skills.folds)")
    parser.add_argument("--tune", action="store_true", help="learn and score on the tune half only")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    for name in args.sets or ["conll04", "scierc", "wikievents"]:
        for seed in args.seeds or [0, 1, 2]:
            with tempfile.TemporaryDirectory(prefix=f"kgkit-bench-{name}-") as tmp:
                results.append(run_set(args.data, name, args.holdout, seed, args.top_k, Path(tmp),
                                       args.temperature, args.rollouts, args.gate, args.tune,
                                       args.applied_precision, args.folds, args.min_precision,
                                       typed_cues=args.typed_cues, join=args.join))
    if args.json:
        print(json.dumps(results, indent=2))
        return
    for r in results:
        b, a = r["heldout_relations"]["before"], r["heldout_relations"]["after"]
        print(f"{r['set']} seed {r['seed']}: split {r['split']}, {r['seconds']}s; library: {r['skills']} skills, "
              f"{r['gazetteer']} gazetteer names; every accepted change has a dev gain: {r['all_gains_recorded']}")
        print(f"  edges {r['labels']}; misses by diagnosis {r['diagnoses']}")
        print(f"  actions {r['actions']}; accepted {r['accepted']}; by kind {r['accepted_by_kind']}")
        print(f"  held-out relations  before P {b['precision']:.3f} R {b['recall']:.3f} F1 {b['f1']:.3f}"
              f"  ->  after P {a['precision']:.3f} R {a['recall']:.3f} F1 {a['f1']:.3f}")
        eb, ea = r["heldout_entities"]["before"], r["heldout_entities"]["after"]
        print(f"  held-out entities   before P {eb['precision']:.3f} R {eb['recall']:.3f} F1 {eb['f1']:.3f}"
              f"  ->  after P {ea['precision']:.3f} R {ea['recall']:.3f} F1 {ea['f1']:.3f}")
    for name in dict.fromkeys(r["set"] for r in results):
        rs = [r for r in results if r["set"] == name]
        gain = sum(r["heldout_relations"]["after"]["f1"] - r["heldout_relations"]["before"]["f1"] for r in rs) / len(rs)
        acc = {k: sum(r["accepted"][k] for r in rs) for k in ("skills", "gazetteer", "induction", "joined")}
        share = acc["gazetteer"] / (acc["skills"] + acc["gazetteer"]) if acc["skills"] + acc["gazetteer"] else 0.0
        print(f"{name}: mean held-out relation F1 gain {gain:+.4f} over {len(rs)} seeds; unstable edges "
              f"{sum(r['labels']['unstable'] for r in rs)}; accepted {acc['skills']} skills "
              f"({acc['induction']} from path induction, {acc['joined']} joined to a skill of their relation) and "
              f"{acc['gazetteer']} gazetteer names ({share:.0%})")


if __name__ == "__main__":
    main()
