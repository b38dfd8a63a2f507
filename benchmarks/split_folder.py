"""Build a gold folder holding one split of a shared set, so ``kgkit eval`` scores only it.

``../shared/data/splits.json`` divides each set into ``tune`` documents (rules are written
against these) and ``report`` documents (figures are published from these). ``kgkit eval``
scores a whole folder, so this script makes a folder of symlinks to one split's ``.txt`` and
``.gold.json`` files. The document lists are kept in ``benchmarks/splits/<set>.<split>.txt``
(written by ``--write-lists`` from splits.json), so a published figure names its documents.

CUAD caveat: splits.json names only some of the contracts in ``cuad/``. Every CUAD contract
that is not listed under ``tune`` counts as ``report`` (it was never tuned on).

    python benchmarks/split_folder.py cuad report /tmp/cuad-report   # then:
    kgkit eval --gold /tmp/cuad-report --domain legal_contracts --view binary
    python benchmarks/split_folder.py --write-lists                     # refresh the lists
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
LISTS = HERE / "splits"
DEFAULT_DATA = HERE.parents[1] / "shared" / "data"
SETS = ("conll04", "cuad", "scierc", "wikievents")


def split_ids(data: Path, name: str, split: str) -> list[str]:
    """The doc ids of one split of one set, as splits.json assigns them (CUAD: report = not tune)."""
    sets = json.loads((data / "splits.json").read_text(encoding="utf-8"))["sets"]
    present = sorted(p.name[: -len(".gold.json")] for p in (data / name).glob("*.gold.json"))
    tune = set(sets[name]["tune"])
    if split == "tune":
        return [d for d in present if d in tune]
    if name == "cuad":
        return [d for d in present if d not in tune]
    report = set(sets[name]["report"])
    return [d for d in present if d in report]


def read_list(name: str, split: str) -> list[str]:
    """The committed document list of one split."""
    path = LISTS / f"{name}.{split}.txt"
    return [line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def build(data: Path, name: str, split: str, target: Path) -> list[str]:
    """Symlink the split's documents (as listed in benchmarks/splits) into ``target``."""
    ids = read_list(name, split)
    target.mkdir(parents=True, exist_ok=True)
    for doc_id in ids:
        for suffix in (".txt", ".gold.json"):
            link = target / f"{doc_id}{suffix}"
            if not link.exists():
                link.symlink_to((data / name / f"{doc_id}{suffix}").resolve())
    return ids


def evaluate_split(data: Path, name: str, split: str, domain, views: list[str]):
    """``kgkit eval``'s own scoring (every predicted item counts) of one split, offline."""
    import tempfile

    from kgkit.config.model import Config
    from kgkit.eval.run import evaluate

    with tempfile.TemporaryDirectory(prefix=f"kgkit-{name}-{split}-") as tmp:
        build(data, name, split, Path(tmp))
        return evaluate(tmp, domain=domain, views=views, config=Config())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("set", nargs="?", choices=SETS)
    parser.add_argument("split", nargs="?", choices=("tune", "report"))
    parser.add_argument("target", nargs="?", type=Path)
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    parser.add_argument("--write-lists", action="store_true", help="rewrite benchmarks/splits/*.txt from splits.json")
    args = parser.parse_args(argv)
    if args.write_lists:
        LISTS.mkdir(exist_ok=True)
        for name in SETS:
            for split in ("tune", "report"):
                ids = split_ids(args.data, name, split)
                (LISTS / f"{name}.{split}.txt").write_text("".join(f"{d}\n" for d in ids), encoding="utf-8")
        return 0
    if not (args.set and args.split and args.target):
        parser.error("give SET SPLIT TARGET, or --write-lists")
    ids = build(args.data, args.set, args.split, args.target)
    print(f"{len(ids)} {args.set} {args.split} documents linked in {args.target}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
