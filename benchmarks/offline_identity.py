"""Byte-identity of offline run folders before and after a speed change.

``run OUT`` extracts a fixed set of inputs with the offline backend and every view that
needs no template (``--view all``) into ``OUT``: the report halves of the shared sets
(CUAD with legal_contracts, CoNLL04 and WikiEvents with general, SciERC with scholarly;
CUAD caveat: every contract not under ``tune`` counts as report) and texts of
``benchmarks/offline_speed.py``'s generator (many distinct names). ``compare A B`` then
compares every file of every run folder, ``state/`` included, and exits 1 on any
difference. Only what differs by nature between two runs is left out of the manifest:
``created``, ``timings`` and the absolute paths of the checkout the inputs, domains, views
and prompts were read from.

    # before: the code to compare against, exported outside the worktree
    git archive main | tar -x -C /tmp/base
    PYTHONPATH=/tmp/base python benchmarks/offline_identity.py run /tmp/before
    python benchmarks/offline_identity.py run /tmp/after
    python benchmarks/offline_identity.py compare /tmp/before /tmp/after
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from offline_speed import synthetic_text  # noqa: E402
from split_folder import DEFAULT_DATA, build  # noqa: E402

SETS = (("cuad", "legal_contracts"), ("conll04", "general"), ("scierc", "scholarly"), ("wikievents", "general"))
SYNTHETIC = ((50, "general"), (200, "general"), (50, "legal_contracts"))
VOLATILE = ("created", "timings")


def run(out: Path, data: Path, sets: list[str]) -> None:
    import kgkit
    from kgkit.config.model import CacheConfig, Config

    config = Config(cache=CacheConfig(enabled=False))
    print(f"kgkit from {Path(kgkit.__file__).parent}", file=sys.stderr)
    with tempfile.TemporaryDirectory(prefix="kgkit-identity-") as tmp:
        jobs = []
        for name, domain in SETS:
            if name in sets:
                folder = Path(tmp) / name
                build(data, name, "report", folder)
                jobs.append((name, domain, sorted(folder.glob("*.txt"))))
        if "synthetic" in sets:
            for kb, domain in SYNTHETIC:
                path = Path(tmp) / f"synthetic{kb}-{domain}.txt"
                path.write_text(synthetic_text(kb), encoding="utf-8")
                jobs.append((path.stem, domain, [path]))
        for label, domain, paths in jobs:
            start = time.process_time()
            kgkit.extract(paths, domain=domain, views="all", config=config, out_dir=out / label, skills=False)
            print(f"{label}: {len(paths)} document(s), {time.process_time() - start:.1f} CPU s", file=sys.stderr)


def _comparable(path: Path) -> bytes:
    """The file's bytes; a manifest, and the corpus's runs.jsonl, without what differs
    between two runs by nature."""
    if path.name == "runs.jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        return json.dumps([{**row, "input": Path(row["input"]).name} for row in rows]).encode()
    if path.name != "manifest.json":
        return path.read_bytes()
    manifest = json.loads(path.read_text(encoding="utf-8"))
    for key in VOLATILE:
        manifest.pop(key, None)

    def strip(value):
        if isinstance(value, dict):
            return {k: (Path(v).name if k in ("file", "path") and isinstance(v, str) else strip(v))
                    for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    return json.dumps(strip(manifest), sort_keys=True).encode()


def compare(a: Path, b: Path) -> int:
    files_a = {p.relative_to(a) for p in a.rglob("*") if p.is_file()}
    files_b = {p.relative_to(b) for p in b.rglob("*") if p.is_file()}
    problems = [f"only in {a}: {p}" for p in sorted(files_a - files_b)]
    problems += [f"only in {b}: {p}" for p in sorted(files_b - files_a)]
    same = 0
    for rel in sorted(files_a & files_b):
        if _comparable(a / rel) == _comparable(b / rel):
            same += 1
        else:
            problems.append(f"differs: {rel}")
    for line in problems[:50]:
        print(line)
    print(f"{same} file(s) identical, {len(problems)} difference(s)")
    return 1 if problems else 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="extract the fixed inputs into OUT")
    r.add_argument("out", type=Path)
    r.add_argument("--data", type=Path, default=DEFAULT_DATA, help="the shared data folder")
    r.add_argument("--sets", nargs="+", default=[n for n, _ in SETS] + ["synthetic"])
    c = sub.add_parser("compare", help="compare two OUT folders")
    c.add_argument("a", type=Path)
    c.add_argument("b", type=Path)
    args = parser.parse_args(argv)
    if args.command == "run":
        run(args.out, args.data, args.sets)
        return 0
    return compare(args.a, args.b)


if __name__ == "__main__":
    sys.exit(main())
