"""The per-type P/R/F1 table the offline benchmarks print (one copy, shared by them)."""
from __future__ import annotations


def print_score_table(score, width: int, categories=("entities", "relations")) -> None:
    """Print each category's per-type and micro rows; ``width`` is the label column's width."""
    for category in categories:
        cat = score.categories[category]
        print(f"\n{category:<{width + 2}} {'P':>6} {'R':>6} {'F1':>6} {'tp':>4} {'fp':>4} {'fn':>4}")
        rows = [(name, cat.per_type[name]) for name in sorted(cat.per_type)] + [("micro", cat.micro)]
        for name, c in rows:
            print(f"  {name:<{width}} {c.precision:6.2f} {c.recall:6.2f} {c.f1:6.2f} {c.tp:4d} {c.fp:4d} {c.fn:4d}")
