"""The offline backend's speed against document size, and a corpus run's peak memory (issue 11 goals).

Two measurements, each printed as a Markdown table for benchmarks/RESULTS.md:

1. **Linearity and KB/s.** Texts of doubling size (``--sizes`` in KB, 50 .. 1,600 by
   default) from this script's own generator: news-like sentences in which almost every
   person, company and town is new (names built from syllables, so the number of distinct
   entities grows with the text, which is what made the offline run superlinear). Each
   text goes through the whole ``kgkit extract`` command (a child process, offline, no
   cache, no skills) with ``--view binary`` (core + binary) and with ``--view all``; the
   table gives wall and CPU seconds (the child's ``ru_utime + ru_stime``), KB/s on each,
   and the ratio of CPU seconds to the previous size (2.0 is linear). Two figures that do
   not move with the neighbours' load sit beside it: the CPU seconds of the entity merge
   alone (``kgkit.canon.merge.merge_entities``, the stage that grew with the square of the
   number of names, timed on its own thread inside the child) and, with
   ``--instructions``, the instructions the whole child executes under ``valgrind
   --tool=callgrind`` (sizes up to ``--instructions-max-kb``: callgrind runs ~50x slower).
2. **Peak memory on a corpus** (``--corpus 1000``): that many generated documents (sizes
   spread up to the largest) through one ``kgkit extract DIR`` against ``kgkit extract``
   of the largest alone, each a child process's peak RSS (``ru_maxrss``).

    python benchmarks/offline_speed.py [--sizes 50 100 200 400 800 1600 3200] [--views binary all]
    python benchmarks/offline_speed.py --views binary --skip memory --instructions --sizes 50 100 200 400
    python benchmarks/offline_speed.py --skip speed --corpus 1000
    python benchmarks/offline_speed.py --write DIR --sizes 50 200   # only write the texts

CPU seconds are less noisy than wall time on a shared machine; both are printed, with the
load average before each row.
"""
from __future__ import annotations

import argparse
import os
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SYLLABLES = ("ka", "lo", "mi", "ren", "tor", "vas", "quin", "bel", "dra", "sho", "fen", "gal", "zu", "pim",
             "rak", "nel", "os", "tev", "ul", "wix", "yan", "cor", "dum", "hal")
FIRST = ("Anna", "Boris", "Carla", "Dmitri", "Elena", "Farid", "Greta", "Hiro", "Ines", "Jonas", "Kemal", "Lucia",
         "Marek", "Nadia", "Oskar", "Priya", "Rafael", "Sofia", "Tomas", "Ursula", "Viktor", "Wanda", "Yusuf", "Zora")
# ``--names wide``: 85 syllables (consonant and vowel) instead of the 24 of SYLLABLES, to see whether
# near-duplicate names (which the fuzzy merge must score) grow with the square of the names in any
# finite name space or only in a small one (RESULTS.md: in both).
WIDE_SYLLABLES = tuple(c + v for c in "bcdfghjklmnprstvz" for v in "aeiou")
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")


class Names:
    """Distinct capitalised words, one per call, from a seeded syllable generator."""

    def __init__(self, seed: int, syllables: tuple[str, ...] = SYLLABLES):
        self.rng = random.Random(seed)
        self.syllables = syllables
        self.seen: set[str] = set()

    def word(self) -> str:
        while True:
            w = "".join(self.rng.choice(self.syllables) for _ in range(self.rng.randint(2, 4))).capitalize()
            if w not in self.seen:
                self.seen.add(w)
                return w


def paragraph(rng: random.Random, names: Names, recent: list[str]) -> str:
    """Four sentences: new people, companies and towns, dates, money, relation cues; now and
    then a person named before (so names recur across chunks, as in real text)."""
    person = f"{rng.choice(FIRST)} {names.word()}"
    company = f"{names.word()} {names.word()} {rng.choice(('Inc.', 'Corp.', 'Ltd.', 'LLC'))}"
    town = f"{names.word()}ville"
    date = f"{rng.choice(MONTHS)} {rng.randint(1, 28)}, {rng.randint(1990, 2024)}"
    money = f"${rng.randint(2, 900)} million"
    old = rng.choice(recent) if recent else person
    recent.append(person)
    del recent[:-50]
    return (f"{person}, the chairman of {company}, said on {date} that the company, which is based in {town}, "
            f"bought {names.word()} Holdings Ltd. for {money}. "
            f"Mr. {person.split()[1]} joined the firm in {rng.randint(1990, 2024)} after {rng.randint(2, 20)} years "
            f"at {names.word()} Systems Corp. "
            f"{old} met {rng.choice(FIRST)} {names.word()} in {town} to discuss a {rng.randint(2, 40)} percent stake. "
            f"The deal, announced by {person}, is expected to close within {rng.randint(2, 12)} months.")


def synthetic_text(kilobytes: int, seed: int = 11, names: str = "narrow") -> str:
    """About ``kilobytes`` KB of the generator's text (whole paragraphs, blank-line separated);
    ``names``: ``narrow`` (24 syllables, the default every recorded figure used) or ``wide``."""
    rng, recent, parts, size = random.Random(seed), [], [], 0
    names = Names(seed, WIDE_SYLLABLES if names == "wide" else SYLLABLES)
    while size < kilobytes * 1000:
        parts.append(paragraph(rng, names, recent))
        size += len(parts[-1]) + 2
    return "\n\n".join(parts) + "\n"


# The child: the kgkit CLI, with the merge stage's CPU (its own thread's) written at exit
# to the file named by KGKIT_BENCH_MERGE_CPU, so the table can show that stage alone.
CHILD = """
import atexit, os, time
from kgkit import canon
spent = [0.0]
merge = canon.merge_entities
def timed(*args, **kwargs):
    start = time.thread_time()
    try:
        return merge(*args, **kwargs)
    finally:
        spent[0] += time.thread_time() - start
canon.merge_entities = timed
atexit.register(lambda: open(os.environ["KGKIT_BENCH_MERGE_CPU"], "w").write(repr(spent[0])))
from kgkit.cli import main
main()
"""


def child_run(args: list[str], env: dict[str, str], log: Path,
              wrap: list[str] = ()) -> tuple[float, float, int, int, float]:
    """(wall s, CPU s, peak RSS in KB, exit code, merge CPU s) of one ``kgkit`` child
    process, from its own rusage (``os.wait4``), so earlier children's peaks do not count.
    ``wrap``: a command the child runs under (valgrind)."""
    merge_cpu = log.with_suffix(".merge")
    start = time.perf_counter()
    with log.open("w") as out:
        proc = subprocess.Popen([*wrap, sys.executable, "-c", CHILD, *args], stdout=out, stderr=subprocess.STDOUT,
                                env={**env, "KGKIT_BENCH_MERGE_CPU": str(merge_cpu)})
        _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        sys.stderr.write(log.read_text()[-2000:])
    merged = float(merge_cpu.read_text()) if merge_cpu.exists() else float("nan")
    return wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss, code, merged


def instructions(args: list[str], env: dict[str, str], work: Path) -> int:
    """Instructions the whole child executes, counted by callgrind (independent of load)."""
    out = work / "callgrind.out"
    child_run(args, env, work / "log.txt", ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}"])
    totals = [line for line in out.read_text().splitlines() if line.startswith("totals:")]
    return int(totals[0].split()[1])


def near_pairs(nodes_file: Path, threshold: float = 90.0) -> int:
    """Pairs of output nodes of one type whose token-sorted names reach the fuzzy threshold:
    names the merge had to score against each other and kept apart. Their number is work
    no exact candidate filter can skip, so it says whether the merge *must* grow faster than
    the text (quadratic in this count's growth), or only did."""
    import json
    from collections import defaultdict

    from kgkit.text.ratio_index import RatioIndex

    by_type = defaultdict(list)
    for node in json.loads(nodes_file.read_text())["nodes"]:
        by_type[node["type"]].append(" ".join(sorted(node["name"].lower().split())))
    pairs = 0
    for names in by_type.values():  # each name against the ones before it: every pair once, exactly
        index = RatioIndex(names, threshold)
        for i, name in enumerate(names):
            pairs += len(index.matches(name, ("",)))
            index.add(name, i, ("",))
    return pairs


def load() -> str:
    return " / ".join(f"{x:.1f}" for x in os.getloadavg())


def extract_args(inputs: list[Path], out: Path, view: str, domain: str) -> list[str]:
    return ["extract", *map(str, inputs), "--domain", domain, "--view", view, "--no-cache", "--no-skills",
            "--out", str(out)]


def ratio(value: float, previous: float | None) -> str:
    return f"{value / previous:.2f}" if previous else ""


def speed(args, work: Path, env: dict[str, str]) -> None:
    print(f"\n### Offline speed against document size (domain {args.domain}, generated text, "
          f"{args.names} name space)\n")
    counted = args.instructions
    print("| view | KB | chunks | nodes | near pairs | wall s | CPU s | KB/s (wall) | KB/s (CPU) | "
          "CPU ratio to half size | merge CPU s | merge ratio |" + (" instructions (G) | ratio |" if counted else "")
          + " load avg |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if counted else "") + "---|")
    texts = {}
    for kb in args.sizes:
        path = work / f"text{kb}.txt"
        path.write_text(synthetic_text(kb, names=args.names), encoding="utf-8")
        texts[kb] = path
    for view in args.views:
        previous = previous_merge = previous_ir = None
        for kb in args.sizes:
            path = texts[kb]
            before = load()
            out = work / f"out-{view}-{kb}"
            wall, cpu, _, code, merge_cpu = child_run(extract_args([path], out, view, args.domain), env,
                                                      work / "log.txt")
            manifest = next(out.glob("*/manifest.json"), None)
            chunks = nodes = pairs = "?"
            if manifest is not None:
                import json

                data = json.loads(manifest.read_text())
                chunks, nodes = data["input"]["chunks"], data["counts"]["nodes"]
                pairs = near_pairs(manifest.parent / "nodes.json")
            size = path.stat().st_size / 1000
            row = (f"| {view} | {size:,.0f} | {chunks} | {nodes} | {pairs} | {wall:.2f} | {cpu:.2f} | {size / wall:.0f} | "
                   f"{size / cpu:.0f} | {ratio(cpu, previous)} | {merge_cpu:.2f} | "
                   f"{ratio(merge_cpu, previous_merge)} |")
            previous, previous_merge = cpu, merge_cpu
            if counted:
                if kb <= args.instructions_max_kb:
                    ir = instructions(extract_args([path], work / f"cg-{view}-{kb}", view, args.domain), env, work)
                    row += f" {ir / 1e9:.2f} | {ratio(ir, previous_ir)} |"
                    previous_ir = ir
                else:
                    row += " | |"
            print(row + f" {before} |" + ("" if code == 0 else f" exit {code}"), flush=True)


def corpus(args, work: Path, env: dict[str, str]) -> None:
    """Peak RSS of one corpus run against the largest document's run alone."""
    folder = work / "corpus"
    folder.mkdir()
    rng = random.Random(7)
    largest = args.corpus_max_kb
    sizes = [largest] + [rng.randint(2, largest) for _ in range(args.corpus - 1)]
    for i, kb in enumerate(sizes):
        (folder / f"doc{i:04d}.txt").write_text(synthetic_text(kb, seed=100 + i), encoding="utf-8")
    total = sum(p.stat().st_size for p in folder.iterdir()) / 1e6
    print(f"\n### Peak memory: {args.corpus} documents ({total:.1f} MB, largest {largest} KB), view {args.corpus_view}\n")
    print("| run | wall s | CPU s | peak RSS MB | exit | load avg |")
    print("|---|---|---|---|---|---|")
    rows = {}
    for label, inputs in (("largest document alone", [folder / "doc0000.txt"]), (f"corpus DIR ({args.corpus} docs)", [folder])):
        before = load()
        wall, cpu, rss, code, _ = child_run(extract_args(inputs, work / f"out-{len(inputs)}-{label[:6]}",
                                                        args.corpus_view, args.domain), env, work / "log.txt")
        rows[label] = rss
        print(f"| {label} | {wall:.1f} | {cpu:.1f} | {rss / 1024:.1f} | {code} | {before} |", flush=True)
    single, whole = rows.values()
    print(f"\ncorpus / single peak RSS: {whole / single:.2f} (goal <= 1.5)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400, 800, 1600, 3200], help="KB")
    parser.add_argument("--views", nargs="+", default=["binary", "all"])
    parser.add_argument("--domain", default="general")
    parser.add_argument("--corpus", type=int, default=1000, help="documents in the memory run")
    parser.add_argument("--corpus-max-kb", type=int, default=50, help="the largest corpus document, KB")
    parser.add_argument("--corpus-view", default="binary")
    parser.add_argument("--skip", nargs="*", default=[], choices=["speed", "memory"])
    parser.add_argument("--instructions", action="store_true",
                        help="also count the child's instructions with valgrind --tool=callgrind (slow)")
    parser.add_argument("--instructions-max-kb", type=int, default=400, help="the largest size counted, KB")
    parser.add_argument("--names", choices=["narrow", "wide"], default="narrow",
                        help="the generator's name space: narrow (24 syllables, fills up as the text grows) or wide")
    parser.add_argument("--write", type=Path, help="only write the generated texts of --sizes into this folder")
    args = parser.parse_args()
    if args.write:
        args.write.mkdir(parents=True, exist_ok=True)
        for kb in args.sizes:
            (args.write / f"synthetic{kb}.txt").write_text(synthetic_text(kb, names=args.names), encoding="utf-8")
        return
    with tempfile.TemporaryDirectory(prefix="kgkit-offline-speed-") as tmp:
        work = Path(tmp)
        env = {**os.environ, "KGKIT_CONFIG_DIR": str(work / "home")}
        print(f"machine: {os.cpu_count()} CPUs, Python {sys.version.split()[0]}")
        if "speed" not in args.skip:
            speed(args, work, env)
        if "memory" not in args.skip:
            corpus(args, work, env)


if __name__ == "__main__":
    main()
