"""The longest functions and modules of the kgkit package, against the house goals.

Goals: no function over about 60 lines, no module over about 500 (docs/design.md, *Layers*).
A function's length is its source lines, decorators and docstring included; a module's, its
lines. Exit status 0 always: this reports, the review decides.

    python benchmarks/code_size.py [--top 15] [--functions 60] [--modules 500]
"""
from __future__ import annotations

import argparse
import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "kgkit"


def functions(root: Path = PACKAGE) -> list[tuple[int, str]]:
    """(lines, "path:line name") of every function and method."""
    out = []
    for path in sorted(root.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([node.lineno] + [d.lineno for d in node.decorator_list])
                out.append((node.end_lineno - start + 1, f"{path.relative_to(root.parent)}:{node.lineno} {node.name}"))
    return sorted(out, reverse=True)


def modules(root: Path = PACKAGE) -> list[tuple[int, str]]:
    return sorted(((len(p.read_text(encoding="utf-8").splitlines()), str(p.relative_to(root.parent)))
                   for p in root.rglob("*.py")), reverse=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("--functions", type=int, default=60, help="goal: lines per function")
    parser.add_argument("--modules", type=int, default=500, help="goal: lines per module")
    args = parser.parse_args()
    for title, rows, goal in (("functions", functions(), args.functions), ("modules", modules(), args.modules)):
        over = [r for r in rows if r[0] > goal]
        print(f"{title}: {len(over)} over {goal} lines; longest:")
        for n, where in rows[:args.top]:
            print(f"  {n:5d}  {where}")


if __name__ == "__main__":
    main()
