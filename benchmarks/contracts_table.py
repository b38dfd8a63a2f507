"""Contracts nobody tuned for, one row each: what ``kgkit eval`` gives per CUAD contract.

Extracts one split of CUAD offline with the legal_contracts domain (the ``binary`` view)
and scores it with the library's own :func:`kgkit.eval.run.evaluate`, exactly as
``kgkit eval`` does (every predicted edge counts, also of relations CUAD does not
annotate). Per contract: relation precision, recall and F1, HAS_PARTY precision, and
whether a governing law CUAD's gold names was found (GOVERNING_LAW tp > 0); then the
totals, with the goals beside them. The report half by default: the rules were written
against the tune half only (``benchmarks/splits/cuad.tune.txt``).

    python benchmarks/contracts_table.py [--data ../shared/data] [--split report|tune] [--json]
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from split_folder import DEFAULT_DATA, evaluate_split

GOALS = {"relation_f1": 0.50, "relation_precision": 0.70, "has_party_precision": 0.75, "governing_law_found": 0.85}


def _counts(score, relation: str | None = None):
    cat = score.categories["relations"]
    return cat.micro if relation is None else cat.counts(relation)


def rows(report) -> list[dict]:
    out = []
    for doc, score in sorted(report.per_doc.items()):
        rel, party, law = _counts(score), _counts(score, "HAS_PARTY"), _counts(score, "GOVERNING_LAW")
        out.append({"contract": doc.removeprefix("cuad_"), "precision": rel.precision, "recall": rel.recall,
                    "f1": rel.f1, "has_party_precision": party.precision if party.tp + party.fp else None,
                    "gold_law": law.tp + law.fn > 0, "law_found": law.tp > 0})
    return out


def totals(report, table: list[dict]) -> dict:
    rel, party = _counts(report.total), _counts(report.total, "HAS_PARTY")
    with_law = [r for r in table if r["gold_law"]]
    return {"contracts": len(table), "relation_f1": rel.f1, "relation_precision": rel.precision,
            "relation_recall": rel.recall, "has_party_precision": party.precision,
            "governing_law_found": sum(r["law_found"] for r in with_law) / len(with_law) if with_law else 0.0,
            "contracts_with_gold_law": len(with_law),
            "document_nodes_matched": dict(sorted(report.total.document_match.items()))}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder (holds cuad/)")
    parser.add_argument("--split", choices=("report", "tune"), default="report")
    parser.add_argument("--json", action="store_true", help="print the table and totals as JSON")
    args = parser.parse_args(argv)

    from kgkit.catalog.load import load_domain

    report = evaluate_split(args.data, "cuad", args.split, load_domain("legal_contracts"), ["binary"])
    table = rows(report)
    summary = totals(report, table)
    if args.json:
        print(json.dumps({"split": args.split, "contracts": table, "totals": summary}, indent=2))
        return 0
    width = max(len(r["contract"]) for r in table)
    print(f"offline backend, legal_contracts, binary view, {len(table)} CUAD {args.split} contracts\n")
    print(f"{'contract':<{width}}  {'P':>5} {'R':>5} {'F1':>5}  {'HAS_PARTY P':>11}  governing law")
    for r in table:
        party = "-" if r["has_party_precision"] is None else f"{r['has_party_precision']:.2f}"
        law = ("found" if r["law_found"] else "MISSED") if r["gold_law"] else "(none in gold)"
        print(f"{r['contract']:<{width}}  {r['precision']:5.2f} {r['recall']:5.2f} {r['f1']:5.2f}  {party:>11}  {law}")
    print()
    for key, goal in GOALS.items():
        print(f"{key:<22} {summary[key]:.3f}  (goal >= {goal:.2f}: {'met' if summary[key] >= goal else 'NOT met'})")
    print(f"{'document nodes matched':<22} {summary['document_nodes_matched']}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
