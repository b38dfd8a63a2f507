"""How long merging entity mentions takes, with and without blocking.

Synthetic but messy mentions: people and organisations from small name pools, repeated
(as a long document repeats its entities), with legal-suffix variants, case changes and
one-letter typos, placed in a document text with spans as the engine passes them (so
the defined-term search is timed too). Prints the time per size with blocking and
exhaustively, their ratio, and whether both found the same nodes.

    /work/.venv/bin/python benchmarks/canon_bench.py [--sizes 1000,10000,50000] [--exhaustive-max 50000]

The exhaustive search compares each name with every cluster of its type (screened in
one vectorised rapidfuzz call); above --exhaustive-max mentions it is skipped.
"""
from __future__ import annotations

import argparse
import random
import time

from kgkit.canon.records import Mention
from kgkit.canon.merge import merge_entities

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
        mentions.append(Mention(name, etype))
    return mentions


def as_document(mentions: list[Mention]) -> tuple[list[Mention], str]:
    """Place the mentions in a document text, one sentence each, as the engine passes them.

    Every tenth organisation gets a contract-style definition ("(the "Buyer")"), so the
    defined-term search runs on real matches too.
    """
    parts, placed, at = [], [], 0
    for i, m in enumerate(mentions):
        definition = ' (the "Buyer")' if m.type == "Organization" and i % 10 == 0 else ""
        sentence = f"{m.name}{definition} signed on page {i // 40 + 1}. "
        placed.append(Mention(m.name, m.type, chunk_id=f"c_{i // 20}", span=(at, at + len(m.name)), page=i // 40 + 1))
        parts.append(sentence)
        at += len(sentence)
    return placed, "".join(parts)


def timed(mentions: list[Mention], text: str, blocking: bool) -> tuple[float, list[str]]:
    start = time.perf_counter()
    result = merge_entities(mentions, text=text, blocking=blocking)
    return time.perf_counter() - start, [n.id for n in result.nodes]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1000,10000,50000")
    parser.add_argument("--exhaustive-max", type=int, default=50000)
    args = parser.parse_args()
    print(f"{'mentions':>9} {'distinct':>9} {'nodes':>7} {'blocked s':>10} {'exhaustive s':>13} {'ratio':>7}  same")
    for n in (int(s) for s in args.sizes.split(",")):
        mentions, text = as_document(synthetic_mentions(n))
        distinct = len({(m.type, m.name) for m in mentions})
        blocked, nodes = timed(mentions, text, blocking=True)
        if n <= args.exhaustive_max:
            exhaustive, nodes_ex = timed(mentions, text, blocking=False)
            same = "yes" if nodes == nodes_ex else f"no ({len(set(nodes) ^ set(nodes_ex))} nodes differ)"
            print(f"{n:>9} {distinct:>9} {len(nodes):>7} {blocked:>10.3f} {exhaustive:>13.3f} "
                  f"{exhaustive / blocked:>6.1f}x  {same}")
        else:
            print(f"{n:>9} {distinct:>9} {len(nodes):>7} {blocked:>10.3f} {'skipped':>13} {'-':>7}  -")


if __name__ == "__main__":
    main()
