"""The skill loop with a real model: ``kgkit skills learn`` with a local GGUF model on a small sample.

A real-model run of the whole tune half is several hundred passes (hours each on a CPU), so
this runs the loop (:func:`kgkit.learning.loop.learn_skills`, what ``kgkit skills learn``
calls) on a sample said in its output: the ``--tune N`` shortest documents of the set's tune
half to learn from (rollouts, skill passes, vetting, the cross-validated gate), and the
``--report M`` shortest of its report half held out and scored before and after. The domain
is scaffolded from the tune half (as ``skills_heldout.py`` does); ``--max-edges`` bounds the
skill passes. Every model request is counted by stage and kind from the backends' own answers
(requests, tokens, seconds, and what became of each answer: first time, re-asked, constrained,
cut, held back), since the loop's scratch run folders do not outlive it.

    python benchmarks/local_model.py
    python benchmarks/local_model_skills.py --tune 3 --report 2 --rollouts 2 --max-edges 3 \\
        --out /tmp/skills-model [--offline] [--json]

The answers are cached in ``--out``/cache: a second run with the same ``--out`` learns the
same library without generating. ``--offline`` runs the same sample with the offline backend.
"""
from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

from kgkit.engine.accounting import CONSTRAINED
from local_model_bench import default_model, gold_folder
from offline_figures import scaffolded_domain
from split_folder import DEFAULT_DATA, read_list


class Tally:
    """Every pass the loop sends, counted by (stage, kind): what the manifest's calls and answers say."""

    def __init__(self) -> None:
        self.rows: dict[str, dict[str, Any]] = {}
        self.lock = threading.Lock()

    def factory(self, inner):
        def make(config, stage):
            return Counted(inner(config, stage), self)
        return make

    def add(self, kind: str, result, seconds: float) -> None:
        with self.lock:
            row = self.rows.setdefault(kind, {"passes": 0, "cached": 0, "requests": 0, "tokens_in": 0,
                                              "tokens_out": 0, "seconds": 0.0, "first_time": 0, "reasked": 0,
                                              "constrained": 0, "cut": 0, "held_back": 0})
            row["passes"] += 1
            row["cached"] += int(result.cached)
            if not result.requests:  # the cache or the offline rules answered
                return
            row["requests"] += result.requests
            row["tokens_in"] += result.usage.tokens_in
            row["tokens_out"] += result.usage.tokens_out
            row["seconds"] = round(row["seconds"] + seconds, 1)
            row["first_time"] += int(result.ok and not result.reasked and not result.cut)
            row["reasked"] += int(result.reasked)
            row["constrained"] += int(result.output_format in CONSTRAINED)
            row["cut"] += int(result.cut)
            row["held_back"] += int(not result.ok)


class Counted:
    """A backend whose every answer is added to a :class:`Tally`."""

    def __init__(self, inner, tally: Tally):
        self.inner, self.tally, self.name = inner, tally, inner.name

    def run(self, request):
        start = time.perf_counter()
        result = self.inner.run(request)
        self.tally.add(f"{request.stage}/{request.kind}", result, time.perf_counter() - start)
        return result

    def describe(self):
        return self.inner.describe()


def sample(data: Path, name: str, split: str, n: int) -> list[str]:
    """The ``n`` shortest documents of one half (by characters; ties in list order)."""
    ids = read_list(name, split)
    return sorted(ids, key=lambda i: (data / name / f"{i}.txt").stat().st_size)[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--set", default="conll04", choices=["conll04", "scierc"])
    parser.add_argument("--tune", type=int, default=3, help="the N shortest tune documents to learn from")
    parser.add_argument("--report", type=int, default=2, help="the M shortest report documents, held out")
    parser.add_argument("--rollouts", type=int, default=2)
    parser.add_argument("--temperature", type=float, default=0.7)
    parser.add_argument("--max-edges", type=int, default=3, help="skill passes asked at most (kgkit skills learn)")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: benchmarks/local_model.py's)")
    parser.add_argument("--offline", action="store_true", help="the offline backend instead of the model")
    parser.add_argument("--out", type=Path, required=True, help="gold sample, library and the answer cache")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from kgkit.config.model import CacheConfig, Config, LLMConfig
    from kgkit.learning.loop import learn_skills
    from kgkit.learning.rollouts import default_backend
    from kgkit.learning.settings import LearnSettings
    from kgkit.skills.library import load_library

    tune, report = sample(args.data, args.set, "tune", args.tune), sample(args.data, args.set, "report", args.report)
    out = args.out.resolve()
    which = "offline" if args.offline else "model"
    gold = out / "gold"
    if not gold.exists():
        gold_folder(args.data, args.set, tune + report, gold)
    domain = out / f"{args.set}.yaml"
    if not domain.exists():
        scaffolded_domain(args.data, args.set, out)
    model = (args.model or default_model()).resolve()
    llm = LLMConfig() if args.offline else LLMConfig(model=f"local/{model}")
    config = Config(llm=llm, cache=CacheConfig(dir=out / "cache"))
    settings = LearnSettings.from_config(config.skills, rollouts=args.rollouts, temperature=args.temperature,
                                         holdout=0.999, heldout_from=tuple(report), max_edges=args.max_edges)
    tally = Tally()
    start = time.perf_counter()
    learned = learn_skills(gold, domain, config=config, settings=settings, library_dir=out / f"library-{which}",
                           backend=tally.factory(default_backend))
    wall = round(time.perf_counter() - start, 1)
    lib = load_library(args.set, out / f"library-{which}")
    requests = sum(r["requests"] for r in tally.rows.values())
    seconds = sum(r["seconds"] for r in tally.rows.values())
    result = {"set": args.set, "backend": which, "model": None if args.offline else str(model),
              "tune": tune, "report": report, "settings": {"rollouts": args.rollouts, "temperature": args.temperature,
                                                           "max_edges": args.max_edges, "gate": settings.gate},
              "report_card": learned.to_dict(), "skills": list(lib.skills.values()), "gazetteer": lib.gazetteer,
              "passes": tally.rows, "requests": requests,
              "seconds_per_request": round(seconds / requests, 1) if requests else None, "wall_seconds": wall}
    if args.json:
        print(json.dumps(result, indent=2, default=str))
        return 0
    print(f"{args.set}: learn on the {len(tune)} shortest tune documents {tune}; held out: the {len(report)} "
          f"shortest report documents {report}; backend {which}; wall {wall}s")
    print(learned.format_text())
    print("\npasses by stage/kind: " + json.dumps(tally.rows, indent=1))
    print(f"requests {requests}, seconds a request {result['seconds_per_request']}")
    for skill in lib.skills.values():
        print(f"skill {skill['id']} {skill['kind']} {skill['target']}: {skill['pattern']} -- {skill['instruction']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
