"""How well the offline backend reads news text: ``kgkit eval`` on CoNLL04's report half.

Scores with the library's own :func:`kgkit.eval.run.evaluate` — exactly what ``kgkit eval``
prints: every predicted entity and edge counts (``general`` keeps dates and amounts as values
on edges, not nodes, so none are predicted here), and CoNLL04's ``Other`` entities, which
``general`` has no type for, count as misses. Report documents only by default: the
rules were adjusted against ``benchmarks/splits/conll04.tune.txt``.

    python benchmarks/offline_conll04.py [--data ../shared/data] [--split report|tune] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from score_table import print_score_table
from split_folder import DEFAULT_DATA, evaluate_split


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (holds conll04/)")
    parser.add_argument("--split", choices=("report", "tune"), default="report")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)

    start = time.perf_counter()
    report = evaluate_split(args.data, "conll04", args.split, "general", ["binary"])
    elapsed = time.perf_counter() - start
    if args.json:
        print(json.dumps(report.total.to_dict(), indent=2))
        return 0
    print(f"offline backend, general domain, {len(report.per_doc)} CoNLL04 {args.split} documents in {elapsed:.2f}s")
    print_score_table(report.total, width=18)
    return 0


if __name__ == "__main__":
    sys.exit(main())
