"""What serving the graph over MCP adds to a question: each tool called over stdio through the
SDK's client against the same question asked of the library in this process.

    python benchmarks/mcp_calls.py [--docs 1000] [--runs 20] [--store PATH]

The store: synthetic documents as benchmarks/graph_store.py builds them (30 nodes + 70 binary
edges each, names drawn Zipf-like from a pool of 100,000). ``kgkit serve --mcp`` is started as
a subprocess (the command a host starts); per question, after a warm-up call each way,
``--runs`` rounds of the library call (:class:`kgkit.query.Query`, or
:class:`kgkit.serve.corpus.Corpus` for evidence and documents) and the same tool call over
stdio, interleaved so both meet the same load on a shared machine: median wall times, and CPU
per call (the library's in this process; over stdio the server's, read from /proc, and the
client's together), which load on a shared machine stretches less than wall time. Also:
the server's start (spawn to tools listed), the first corpus calls in this process and the
first over stdio (an evidence call finds its item by the store's index of answer-level item
ids, kgkit/graph/item_ids.py: the first costs what later ones do).

Goal: serving over stdio adds at most 20 ms of CPU per call to any tool's answer.
"""
from __future__ import annotations

import argparse
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from graph_store import RELATIONS, document, name_pool  # noqa: E402

from kgkit.graph import GraphStore  # noqa: E402
from kgkit.query import Query  # noqa: E402
from kgkit.serve.corpus import Corpus  # noqa: E402

GOAL_MS = 20.0


def build(path: str, n: int) -> None:
    pool = name_pool(100_000)
    with GraphStore(path) as store:
        for i in range(n):
            store.add_contribution(document(i, pool, 30, 70))


def cases(names: list[str], items: list[str]) -> list[tuple[str, str, object]]:
    """(label, tool, r -> arguments): each question as a tool call."""
    return [
        ("find (exact name)", "find", lambda r: {"mention": names[r]}),
        ("neighbours, 1 hop", "neighbours", lambda r: {"seeds": [names[r]], "hops": 1}),
        ("match, one named end", "match",
         lambda r: {"pattern": f'* -{RELATIONS[r % len(RELATIONS)]}-> *{{name: "{names[r]}"}}'}),
        ("evidence of an item", "evidence", lambda r: {"item": items[r]}),
        ("document summary", "document", lambda r: {"document": f"doc{r:05d}"}),
        ("documents, 50", "documents", lambda r: {}),
    ]


def direct(q: Query, corpus: Corpus, tool: str, args: dict):
    """The library call that answers what ``tool`` answers for ``args``."""
    if tool == "find":
        return q.find(args["mention"]).to_json()
    if tool == "neighbours":
        return q.neighbours(args["seeds"], hops=args["hops"]).to_json()
    if tool == "match":
        return q.match(args["pattern"]).to_json()
    if tool == "evidence":
        return corpus.evidence(args["item"])
    if tool == "document":
        return corpus.document(args["document"])
    return corpus.documents(50)


def server_cpu_ms() -> float:
    """CPU (user + system) the server subprocess has used so far: the child of this process
    whose command line runs ``serve``, read from /proc (Linux)."""
    ticks = os.sysconf("SC_CLK_TCK")
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[1]) == os.getpid() and b"serve" in (stat.parent / "cmdline").read_bytes():
                return (int(fields[11]) + int(fields[12])) * 1000 / ticks
        except (OSError, IndexError, ValueError):
            continue
    raise RuntimeError("the server subprocess was not found in /proc")


async def compare(path: str, q: Query, corpus: Corpus, questions, runs: int) -> dict[str, object]:
    """Start the server, then per question ``runs`` rounds of (the library call, the same call
    over stdio), interleaved so both meet the same load on a shared machine. Per question:
    median wall ms each way, and CPU ms per call each way (the library call's in this process;
    over stdio, the server's and this client's together: load on a shared machine stretches wall
    time, not CPU)."""
    from mcp import Client, StdioServerParameters

    started = time.perf_counter()
    params = StdioServerParameters(command=sys.executable,
                                   args=["-c", "from kgkit.cli import run; run()", "serve", "--mcp", path])
    out: dict[str, object] = {}
    async with Client(params) as client:
        await client.list_tools()
        out["start"] = (time.perf_counter() - started) * 1000
        t = time.perf_counter()
        await client.call_tool("documents", {})
        out["cold"] = (time.perf_counter() - t) * 1000
        t = time.perf_counter()
        await client.call_tool("evidence", questions[-3][2](0) if questions[-3][1] == "evidence" else {})
        out["cold_evidence"] = (time.perf_counter() - t) * 1000
        for label, tool, make in questions:
            here, served, cpu_here, cpu_served = [], [], 0.0, 0.0
            direct(q, corpus, tool, make(0))
            await client.call_tool(tool, make(0))
            for r in range(1, runs + 1):
                t, c = time.perf_counter(), time.process_time()
                direct(q, corpus, tool, make(r))
                here.append((time.perf_counter() - t) * 1000)
                cpu_here += (time.process_time() - c) * 1000
                t, c, sc = time.perf_counter(), time.process_time(), server_cpu_ms()
                result = await client.call_tool(tool, make(r))
                served.append((time.perf_counter() - t) * 1000)
                cpu_served += (time.process_time() - c) * 1000 + server_cpu_ms() - sc
                assert not result.is_error, result.content[0].text
            out[label] = (statistics.median(here), statistics.median(served), cpu_here / runs, cpu_served / runs)
    return out


def main() -> int:
    import anyio

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--docs", type=int, default=1000)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--store", help="an existing store built by an earlier run (skips building)")
    args = ap.parse_args()
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"load average {os.getloadavg()[0]:.1f}")
    path = args.store or os.path.join(tempfile.mkdtemp(), "mcp.sqlite")
    if not args.store:
        t = time.perf_counter()
        build(path, args.docs)
        print(f"built {args.docs} documents in {time.perf_counter() - t:.0f} s", flush=True)
    store = GraphStore(path)
    snap = store.snapshot()
    print(f"store: {len(snap.nodes)} nodes, {len(snap.edges)} edges, {len(snap.evidence)} evidence rows, "
          f"{len(snap.documents)} documents")
    rng = random.Random(1)
    names = [rng.choice(snap.nodes)["name"] for _ in range(args.runs + 1)]
    items = [rng.choice(snap.edges)["id"] for _ in range(args.runs + 1)]
    del snap
    q, corpus = Query(store), Corpus(store)
    for label, call in (("documents, 50", lambda: corpus.documents(50)), ("document", lambda: corpus.document("doc00000")),
                        ("evidence", lambda: corpus.evidence(items[0]))):
        t, c = time.perf_counter(), time.process_time()
        call()
        print(f"first {label} call in this process: {(time.perf_counter() - t) * 1000:.0f} ms wall, "
              f"{(time.process_time() - c) * 1000:.0f} ms CPU")
    questions = cases(names, items)
    out = anyio.run(compare, path, q, corpus, questions, args.runs)
    print(f"server start (spawn to tools listed): {out['start']:.0f} ms; documents at once after it: "
          f"{out['cold']:.0f} ms; the first evidence call: {out['cold_evidence']:.0f} ms")
    print(f"{'question':<26}{'wall: direct':>14}{'over stdio':>12}{'CPU: direct':>13}{'over stdio':>12}{'added':>10}"
          f"   goal: CPU added <= {GOAL_MS:.0f} ms")
    worst = 0.0
    for label, _, _ in questions:
        here, served, cpu_here, cpu_served = out[label]
        worst = max(worst, cpu_served - cpu_here)
        print(f"{label:<26}{here:>11.1f} ms{served:>9.1f} ms{cpu_here:>10.1f} ms{cpu_served:>9.1f} ms"
              f"{cpu_served - cpu_here:>7.1f} ms")
    print(f"most CPU added per call: {worst:.1f} ms: goal {'met' if worst <= GOAL_MS else 'NOT met'}")
    store.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
