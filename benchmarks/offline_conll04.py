"""How well the offline backend reads news text: P/R/F1 on the CoNLL04 gold set.

Runs the real engine (``kgkit.extract``: chunking, entities pass, merge into V_doc,
relations pass) with the offline backend and the built-in ``general`` domain over each
CoNLL04 ``.txt``, then scores nodes and binary edges with kgkit's own metrics
(:func:`kgkit.eval.metrics.score_document`: names matched exactly, then by alias, then
fuzzily; gold labels such as ``Peop`` read through the domain's type aliases).

Only types that CoNLL04 annotates are scored: general's dates, money and percentages are
not in the gold set, so counting them as errors would measure the gold set's scope, not
the extractor. CoNLL04's ``Other`` type has no counterpart in ``general`` and can only be
missed; its misses are listed but left out of the micro figures (``--with-other`` keeps
them in, as ``kgkit eval`` does).

    python benchmarks/offline_conll04.py [--data /work/shared/data] [--with-other] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from score_table import print_score_table

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "data"


def predictions(run) -> dict:
    names = {n["id"]: n["name"] for n in run.nodes}
    return {
        "entities": [{"name": n["name"], "type": n["type"], "aliases": n.get("aliases", [])} for n in run.nodes],
        "relations": [{"head": names[e["head"]], "relation": e["relation"], "tail": names[e["tail"]]}
                      for e in run.views["binary"]["edges"]],
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (holds conll04/)")
    parser.add_argument("--with-other", action="store_true", help="score CoNLL04's Other entities (always missed)")
    parser.add_argument("--json", action="store_true", help="print the scores as JSON")
    args = parser.parse_args(argv)
    gold_dir = args.data / "conll04"

    import kgkit
    from kgkit.schema.catalog import load_domain
    from kgkit.config.model import Config
    from kgkit.eval.metrics import Score, score_document, type_label

    domain = load_domain("general")
    manifest = json.loads((gold_dir / "manifest.json").read_text(encoding="utf-8"))
    declared = {t.name for t in domain.entity_types}
    ent_types = {type_label(domain, t) for t in manifest["entity_types"]}
    if not args.with_other:
        ent_types &= declared
    total = Score()
    elapsed, chars = 0.0, 0
    gold_paths = sorted(gold_dir.glob("*.gold.json"))
    with tempfile.TemporaryDirectory() as out:
        for gold_path in gold_paths:
            gold = json.loads(gold_path.read_text(encoding="utf-8"))
            gold["entities"] = [e for e in gold["entities"] if type_label(domain, e["type"]) in ent_types]
            text_path = gold_path.with_name(gold_path.name.replace(".gold.json", ".txt"))
            chars += len(text_path.read_text(encoding="utf-8"))
            start = time.perf_counter()
            [run] = kgkit.extract(str(text_path), domain="general", views=["binary"], config=Config(), out_dir=out)
            elapsed += time.perf_counter() - start
            pred = predictions(run)
            pred["entities"] = [e for e in pred["entities"] if e["type"] in ent_types]
            total.add(score_document(gold, pred, domain=domain))

    if args.json:
        print(json.dumps(total.to_dict(), indent=2))
        return 0
    print(f"offline backend, general domain, {len(gold_paths)} CoNLL04 documents, {chars} characters "
          f"in {elapsed:.2f}s; entity types scored: {', '.join(sorted(ent_types))}")
    print_score_table(total, width=18)
    return 0


if __name__ == "__main__":
    sys.exit(main())
