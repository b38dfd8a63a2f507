"""How long merging entity mentions takes, with and without blocking.

Synthetic but messy mentions: people and organisations from small name pools, repeated
(as a long document repeats its entities), with legal-suffix variants, case changes and
one-letter typos. Prints the time per size with blocking and exhaustively, their ratio,
and whether both found the same nodes.

    /work/.venv/bin/python benchmarks/canon_bench.py [--sizes 1000,10000,50000] [--exhaustive-max 10000]

The exhaustive search is quadratic in the number of distinct names per type, so by
default it is skipped above 10,000 mentions (pass a larger --exhaustive-max to wait).
"""
from __future__ import annotations

import argparse
import random
import time

from kgkit.canon import Mention, merge_entities

FIRST = ["John", "Maria", "Wei", "Fatima", "Oliver", "Amara", "Hiroshi", "Elena", "Kwame", "Sofia", "Liam",
         "Priya", "Mateo", "Aisha", "Noah", "Yuki", "Omar", "Chloe", "Ivan", "Zara", "Lucas", "Nia", "Arjun", "Emma"]
LAST = ["Smith", "Gonzalez", "Nakamura", "Okafor", "Ivanova", "Kowalski", "Haddad", "Larsen", "Chen", "Patel",
        "Rossi", "Dubois", "Schmidt", "Silva", "Kim", "Nguyen", "Müller", "O'Brien", "Andersson", "Moreau"]
WORDS = ["Acme", "Globex", "Initech", "Umbrella", "Stark", "Wayne", "Cyberdyne", "Soylent", "Tyrell", "Wonka",
         "Hooli", "Vandelay", "Pied", "Piper", "Aperture", "Black", "Mesa", "Blue", "Sun", "Oscorp", "Massive",
         "Dynamic", "Nakatomi", "Gringotts", "Monarch", "Northwind", "Contoso", "Fabrikam", "Tailspin", "Litware"]
KINDS = ["Holdings", "Systems", "Labs", "Capital", "Pharma", "Logistics", "Media", "Energy", "Foods", "Bank"]
SUFFIXES = ["", " Inc.", " Corp.", " Corporation", ", Inc.", " Ltd", " LLC", " GmbH", " PLC", " S.A."]


def typo(name: str, rng: random.Random) -> str:
    i = rng.randrange(len(name))
    return name[:i] + rng.choice("aeioulnrst") + name[i + 1:]


def synthetic_mentions(n: int, seed: int = 0) -> list[Mention]:
    rng = random.Random(seed)
    people = [f"{f} {m} {l}" for f in FIRST for m in "ABCDEFGHJK" for l in LAST]
    orgs = [f"{a} {b} {k}" for a in WORDS for b in WORDS if a != b for k in KINDS]
    mentions = []
    for i in range(n):
        if rng.random() < 0.5:
            name, etype = rng.choice(people), "Person"
        else:
            name, etype = rng.choice(orgs) + rng.choice(SUFFIXES), "Organization"
        roll = rng.random()
        if roll < 0.1:
            name = typo(name, rng)
        elif roll < 0.2:
            name = name.upper()
        mentions.append(Mention(name, etype, chunk_id=f"c_{i // 20}", span=(i * 50, i * 50 + len(name))))
    return mentions


def timed(mentions: list[Mention], blocking: bool) -> tuple[float, int]:
    start = time.perf_counter()
    result = merge_entities(mentions, blocking=blocking)
    return time.perf_counter() - start, len(result.nodes)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--exhaustive-max", type=int, default=10000)
    args = parser.parse_args()
    print(f"{'mentions':>9} {'distinct':>9} {'nodes':>7} {'blocked s':>10} {'exhaustive s':>13} {'ratio':>7}  same")
    for n in (int(s) for s in args.sizes.split(",")):
        mentions = synthetic_mentions(n)
        distinct = len({(m.type, m.name) for m in mentions})
        blocked, nodes = timed(mentions, blocking=True)
        if n <= args.exhaustive_max:
            exhaustive, nodes_ex = timed(mentions, blocking=False)
            print(f"{n:>9} {distinct:>9} {nodes:>7} {blocked:>10.3f} {exhaustive:>13.3f} "
                  f"{exhaustive / blocked:>6.1f}x  {'yes' if nodes == nodes_ex else f'no ({nodes_ex} nodes)'}")
        else:
            print(f"{n:>9} {distinct:>9} {nodes:>7} {blocked:>10.3f} {'skipped':>13} {'-':>7}  -")


if __name__ == "__main__":
    main()
