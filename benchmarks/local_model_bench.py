"""Quality with a real model: a local GGUF model against the offline backend on the same report documents.

Runs ``kgkit eval``'s own scoring (:func:`kgkit.eval.run.evaluate`) twice on the first N
documents of a set's report half (``benchmarks/splits/<set>.report.txt``, in list order: not
chosen): once with ``llm.model: local/MODEL`` in this process, once offline. Prints P/R/F1
side by side, and from the model run's manifests the passes, tokens, seconds per pass and
what became of the answers (parsed first time, re-asked, constrained, cut, held back).

    python benchmarks/local_model.py                       # the 0.5B model into the user cache
    nice -n 19 python benchmarks/local_model_bench.py --set conll04 --docs 6 [--out /tmp/bench] [--json]
    nice -n 19 python benchmarks/local_model_bench.py --set cuad --docs 1 --shortest

``--shortest`` takes the N shortest documents of the report half instead of the first N (by
characters; ties in list order): a chosen subset, said so in the output, for sets whose documents
take hours each with a small model on a CPU (CUAD's contracts). ``--chars N`` goes further:
each document's first N characters, scored against the gold stated in them (:func:`opening`),
beside the offline backend on the same openings.

The model's answers are cached in ``--out``/cache: a second run with the same ``--out``
scores again without generating (its seconds per pass are then the first run's, from the
manifests it kept).
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from split_folder import DEFAULT_DATA, read_list

HERE = Path(__file__).resolve().parent
SETS = {  # set -> (domain, views, categories), as benchmarks/offline_figures.py scores them
    "conll04": ("general", ["binary"], ("entities", "relations")),
    "scierc": ("scholarly", ["binary"], ("entities", "relations")),
    "cuad": ("legal_contracts", ["binary"], ("entities", "relations")),
    "wikievents": (None, ["nary", "event"], ("entities", "hyperedges", "events")),
}


def default_model() -> Path:
    from local_model import MODELS, models_dir

    return models_dir() / MODELS["qwen2.5-coder-0.5b"].file


def gold_folder(data: Path, name: str, ids: list[str], target: Path, chars: int | None = None) -> Path:
    """Links to the documents and their gold; with ``chars``, each document's opening instead (:func:`opening`)."""
    target.mkdir(parents=True, exist_ok=True)
    for doc_id in ids:
        if chars is not None:
            text, gold = opening((data / name / f"{doc_id}.txt").read_text(encoding="utf-8"),
                                 json.loads((data / name / f"{doc_id}.gold.json").read_text(encoding="utf-8")), chars)
            (target / f"{doc_id}.txt").write_text(text, encoding="utf-8")
            (target / f"{doc_id}.gold.json").write_text(json.dumps(gold, ensure_ascii=False), encoding="utf-8")
            continue
        for suffix in (".txt", ".gold.json"):
            (target / f"{doc_id}{suffix}").symlink_to((data / name / f"{doc_id}{suffix}").resolve())
    return target


def opening(text: str, gold: dict, chars: int) -> tuple[str, dict]:
    """A document's first ``chars`` characters (cut back to a line break or space) and the gold
    items stated there, for a contract that takes hours whole: an entity with a span inside (one
    the gold gives no span: whose name or an alias is written there); a relation between two of them whose evidence, when
    the gold gives one, lies there. The binary view's figures only: n-ary, event and temporal
    gold is left out."""
    cut = text[:chars]
    if len(text) > chars:
        cut = cut[:max(cut.rfind("\n"), cut.rfind(" "), 1)]
    lowered = " ".join(cut.split()).casefold()
    entities = []
    for e in gold["entities"]:
        spans = [s for s in e.get("spans", []) if s[1] <= len(cut)]
        # the gold gives most entities spans; one it gives none counts where its name is written
        written = not e.get("spans") and any(" ".join(n.split()).casefold() in lowered
                                             for n in [e["name"], *e.get("aliases", [])])
        if spans or written:
            entities.append({**e, "spans": spans})
    kept = {e["name"] for e in entities}
    relations = [r for r in gold["relations"] if r["head"] in kept and r["tail"] in kept
                 and (not r.get("evidence") or " ".join(r["evidence"].split()).casefold() in lowered)]
    return cut, {**gold, "entities": entities, "relations": relations, "hyperedges": [], "events": [], "temporal": []}


def run_figures(out: Path) -> dict[str, object]:
    """Passes, tokens, seconds and answer counts summed over the model run's manifests."""
    totals = {"documents": 0, "passes": 0, "requests": 0, "tokens_in": 0, "tokens_out": 0, "seconds": 0.0,
              "answers": {}, "output_format": {}, "failures": 0}
    for path in sorted(out.glob("*/manifest.json")):
        manifest = json.loads(path.read_text())
        totals["documents"] += 1
        totals["passes"] += manifest["calls"]["executed"]
        totals["requests"] += manifest["calls"]["requests"]
        totals["tokens_in"] += manifest["tokens"]["in"]
        totals["tokens_out"] += manifest["tokens"]["out"]
        totals["seconds"] += sum(v for k, v in manifest["timings"].items() if k != "write")
        totals["failures"] += len(manifest["failures"])
        for key, n in manifest.get("answers", {}).items():
            totals["answers"][key] = totals["answers"].get(key, 0) + n
        for stage, fmt in manifest["model"]["output_format"].items():
            totals["output_format"][stage] = fmt
    totals["seconds_per_pass"] = round(totals["seconds"] / totals["requests"], 1) if totals["requests"] else None
    totals["seconds"] = round(totals["seconds"], 1)
    return totals


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--set", choices=sorted(SETS), default="conll04")
    parser.add_argument("--docs", type=int, default=6, help="the first N documents of the report half")
    parser.add_argument("--shortest", action="store_true", help="the N shortest report documents, not the first N")
    parser.add_argument("--chars", type=int, default=None,
                        help="each document's first N characters only, scored against the gold stated there")
    parser.add_argument("--model", type=Path, default=None, help="a GGUF file (default: benchmarks/local_model.py's)")
    parser.add_argument("--out", type=Path, default=None, help="keep run folders and the answer cache here")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    from kgkit.config.model import CacheConfig, Config, LLMConfig
    from kgkit.eval.run import evaluate

    model = (args.model or default_model()).resolve()
    domain, views, categories = SETS[args.set]
    ids = read_list(args.set, "report")
    if args.shortest:
        ids = sorted(ids, key=lambda i: (args.data / args.set / f"{i}.txt").stat().st_size)
    ids = ids[: args.docs]
    with tempfile.TemporaryDirectory(prefix="kgkit-local-bench-") as tmp:
        out = args.out or Path(tmp) / "out"
        gold = gold_folder(args.data, args.set, ids, Path(tmp) / "gold", args.chars)
        if domain is None:  # as offline_figures.py: scaffolded from the tune half's gold
            from offline_figures import scaffolded_domain

            domain = str(scaffolded_domain(args.data, args.set, Path(tmp)))
        offline = evaluate(gold, domain=domain, views=views, config=Config())
        config = Config(llm=LLMConfig(model=f"local/{model}"), cache=CacheConfig(dir=out / "cache"))
        start = time.perf_counter()
        real = evaluate(gold, domain=domain, views=views, config=config, out_dir=out / "runs")
        wall = time.perf_counter() - start
        figures = run_figures(out / "runs")
    rows = {category: {"model": _prf(real.total.categories[category].micro),
                       "offline": _prf(offline.total.categories[category].micro)} for category in categories}
    result = {"set": args.set, "split": "report", "selection": "shortest" if args.shortest else "first",
              "chars": args.chars,
              "documents": ids, "model": str(model), "domain": Path(domain).stem,
              "views": views, "scores": rows, "run": figures, "wall_seconds": round(wall, 1)}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(f"{args.set}, report half, {result['selection']} {len(ids)} documents"
          + (f" (their first {args.chars} characters)" if args.chars else "")
          + f", domain {result['domain']}, views {','.join(views)}")
    print(f"model {model.name}; wall {wall:.0f}s")
    print(f"\n{'category':<12} {'backend':<8} {'P':>6} {'R':>6} {'F1':>6} {'tp':>4} {'fp':>4} {'fn':>4}")
    for category, pair in rows.items():
        for backend, s in pair.items():
            print(f"{category:<12} {backend:<8} {s['p']:6.3f} {s['r']:6.3f} {s['f1']:6.3f} {s['tp']:4d} {s['fp']:4d} "
                  f"{s['fn']:4d}")
    print("\n" + json.dumps(figures))
    return 0


def _prf(counts) -> dict[str, float | int]:
    return {"p": round(counts.precision, 3), "r": round(counts.recall, 3), "f1": round(counts.f1, 3),
            "tp": counts.tp, "fp": counts.fp, "fn": counts.fn}


if __name__ == "__main__":
    sys.exit(main())
