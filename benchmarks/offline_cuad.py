"""How well the offline backend reads contracts: ``kgkit eval`` on CUAD's report contracts.

Scores with the library's own :func:`kgkit.eval.run.evaluate` — exactly what ``kgkit eval``
prints: every predicted node and edge counts, including types CUAD does not annotate
(defined terms, jurisdictions, initial terms). Report contracts only by default: the
offline rules were written against the ``tune`` ones (``benchmarks/splits/cuad.tune.txt``).
CUAD caveat: ``splits.json`` names only some of the contracts in ``cuad/``; every contract
not under ``tune`` is treated as ``report``.

    python benchmarks/offline_cuad.py [--data ../shared/data] [--split report|tune] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from score_table import print_score_table
from split_folder import DEFAULT_DATA, evaluate_split, read_list


def entity_pass_ms(texts: list[str], domain) -> float:
    """Mean wall time of one offline entities pass on a 2,000-character chunk (after warm-up)."""
    from kgkit.backends.base import ENTITIES, PassRequest
    from kgkit.backends.offline import OfflineBackend
    from kgkit.documents.types import Chunk
    from kgkit.engine.core import ENTITIES_SCHEMA

    backend = OfflineBackend()
    chunks = [t[i:i + 2000] for t in texts for i in range(0, len(t) - 2000, 2000)]
    requests = [PassRequest(ENTITIES, "entities", Chunk(f"c{i}", "d", i, c, 0, len(c)), ENTITIES_SCHEMA,
                            {"domain": domain}, "entities.j2") for i, c in enumerate(chunks)]
    backend.run(requests[0])
    start = time.perf_counter()
    for request in requests:
        backend.run(request)
    return (time.perf_counter() - start) * 1000 / len(requests)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (holds cuad/)")
    parser.add_argument("--split", choices=("report", "tune"), default="report")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)

    from kgkit.catalog.load import load_domain

    domain = load_domain("legal_contracts")
    start = time.perf_counter()
    report = evaluate_split(args.data, "cuad", args.split, domain, ["binary"])
    elapsed = time.perf_counter() - start
    texts = [(args.data / "cuad" / f"{d}.txt").read_text(encoding="utf-8") for d in read_list("cuad", args.split)]
    per_chunk = entity_pass_ms(texts, domain)
    if args.json:
        print(json.dumps({**report.total.to_dict(), "entity_pass_ms_per_2000_chars": per_chunk}, indent=2))
        return 0
    print(f"offline backend, legal_contracts domain, {len(texts)} CUAD {args.split} contracts, "
          f"{sum(map(len, texts))} characters in {elapsed:.2f}s (extraction and scoring); "
          f"entities pass alone: {per_chunk:.1f} ms per 2,000-character chunk")
    print_score_table(report.total, width=36)
    return 0


if __name__ == "__main__":
    sys.exit(main())
