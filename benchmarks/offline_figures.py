"""The README's figures table: ``kgkit eval`` of the offline backend on every shared set's
report half, in one run.

Each row is what ``kgkit eval --gold <report folder> --domain D --view V…`` prints (see
``benchmarks/split_folder.py`` for the folder and README for the commands): micro
precision, recall and F1 per category, every predicted item counting. Report documents
only: rules, domains and examples were adjusted against the ``tune`` halves. WikiEvents has
no built-in domain for its KAIROS event types, so its domain is scaffolded from the tune
half's gold with ``kgkit domain new wikievents --from-gold`` (no hand edits) and scored on
the report half.

    python benchmarks/offline_figures.py [--data ../shared/data] [--split report|tune]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from split_folder import DEFAULT_DATA, build, evaluate_split

ROWS = (  # set, domain, views, categories
    ("cuad", "legal_contracts", ["binary"], ("entities", "relations")),
    ("conll04", "general", ["binary"], ("entities", "relations")),
    ("scierc", "scholarly", ["binary"], ("entities", "relations")),
    ("wikievents", None, ["nary", "event"], ("entities", "hyperedges", "events")),
)


def scaffolded_domain(data: Path, name: str, out: Path) -> Path:
    """A domain written by ``kgkit domain new NAME --from-gold`` from the set's tune half."""
    from kgkit.catalog import starter

    gold = out / f"{name}-tune"
    build(data, name, "tune", gold)
    path = out / f"{name}.yaml"
    path.write_text(starter.starter_from_gold(name, gold), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--split", choices=("report", "tune"), default="report")
    args = parser.parse_args(argv)
    print(f"| set ({args.split} half) | domain | views | category | P | R | F1 | tp | fp | fn |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory(prefix="kgkit-figures-") as tmp:
        for name, domain, views, categories in ROWS:
            domain = domain or str(scaffolded_domain(args.data, name, Path(tmp)))
            report = evaluate_split(args.data, name, args.split, domain, views)
            label = Path(domain).stem
            for category in categories:
                cat = report.total.categories.get(category)
                if cat is None:
                    continue
                m = cat.micro
                print(f"| {name} ({len(report.per_doc)} docs) | {label} | {','.join(views)} | {category} | "
                      f"{m.precision:.2f} | {m.recall:.2f} | {m.f1:.2f} | {m.tp} | {m.fp} | {m.fn} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
