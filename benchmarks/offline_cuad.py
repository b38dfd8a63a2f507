"""How well the offline backend reads contracts: P/R/F1 on the CUAD gold set.

Runs the real engine (``kgkit.extract``: chunking, entities pass, merge into V_doc,
relations pass) with the offline backend and the built-in ``legal_contracts`` domain over
each CUAD ``.txt``, then scores nodes and binary edges with kgkit's own metrics
(:func:`kgkit.eval.metrics.score_document`: names matched exactly, then by alias, then
fuzzily at the documented threshold; case-insensitive).

Only the gold schema's types are scored (entity types Agreement, Party, Date, Duration,
Jurisdiction, ClauseType; CUAD's eight relations): the domain's other types (defined terms,
obligations, organisations that are not parties…) are not annotated in CUAD, so counting
them as errors would measure the gold set's scope, not the extractor.

    python benchmarks/offline_cuad.py [--gold /work/shared/data/cuad] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from score_table import print_score_table

DEFAULT_GOLD = Path(__file__).resolve().parents[2] / "shared" / "data" / "cuad"


def predictions(run) -> dict:
    names = {n["id"]: n["name"] for n in run.nodes}
    return {
        "entities": [{"name": n["name"], "type": n["type"], "aliases": n.get("aliases", [])} for n in run.nodes],
        "relations": [{"head": names[e["head"]], "relation": e["relation"], "tail": names[e["tail"]]}
                      for e in run.views["binary"]["edges"]],
    }


def entity_pass_ms(gold_dir: Path, domain) -> float:
    """Mean wall time of one offline entities pass on a 2,000-character chunk (after warm-up)."""
    from kgkit.backends.base import ENTITIES, PassRequest
    from kgkit.backends.offline import OfflineBackend
    from kgkit.documents.types import Chunk
    from kgkit.engine.core import ENTITIES_SCHEMA

    backend = OfflineBackend()
    texts = [p.read_text(encoding="utf-8") for p in sorted(gold_dir.glob("*.txt"))]
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
    parser.add_argument("--gold", type=Path, default=DEFAULT_GOLD)
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)

    import kgkit
    from kgkit.schema.catalog import load_domain
    from kgkit.config.model import Config
    from kgkit.eval.metrics import Score, score_document

    domain = load_domain("legal_contracts")
    manifest = json.loads((args.gold / "manifest.json").read_text(encoding="utf-8"))
    ent_types, rel_types = set(manifest["entity_types"]), set(manifest["relation_types"])
    total = Score()
    elapsed = 0.0
    chars = 0
    with tempfile.TemporaryDirectory() as out:
        for gold_path in sorted(args.gold.glob("*.gold.json")):
            gold = json.loads(gold_path.read_text(encoding="utf-8"))
            text_path = gold_path.with_name(gold_path.name.replace(".gold.json", ".txt"))
            chars += len(text_path.read_text(encoding="utf-8"))
            start = time.perf_counter()
            [run] = kgkit.extract(str(text_path), domain="legal_contracts", views=["binary"], config=Config(),
                                  out_dir=out)
            elapsed += time.perf_counter() - start
            pred = predictions(run)
            pred["entities"] = [e for e in pred["entities"] if e["type"] in ent_types]
            pred["relations"] = [r for r in pred["relations"] if r["relation"] in rel_types]
            total.add(score_document(gold, pred, domain=domain))

    per_chunk = entity_pass_ms(args.gold, domain)
    if args.json:
        print(json.dumps({**total.to_dict(), "entity_pass_ms_per_2000_chars": per_chunk}, indent=2))
        return 0
    print(f"offline backend, legal_contracts domain, {len(list(args.gold.glob('*.gold.json')))} CUAD contracts, "
          f"{chars} characters in {elapsed:.2f}s (whole engine run); "
          f"entities pass alone: {per_chunk:.1f} ms per 2,000-character chunk")
    print_score_table(total, width=36)
    return 0


if __name__ == "__main__":
    sys.exit(main())
