"""kgkit at provider speed (issue 11, items 5 and 8), against the stub provider over real HTTP.

The stub runs in a child process of its own (``--serve``), so the CPU time this process
spends is kgkit's alone (and its provider client's); the stub answers each request in one
write with TCP_NODELAY, so it adds no delay beyond ``--latency``. Every section runs for
each ``--client`` (``direct``: kgkit's OpenAI-compatible client; ``litellm``).

Measurements, each printed as a Markdown table for benchmarks/RESULTS.md, with the load
average beside them:

1. **Wall time against the ideal.** A synthetic corpus (``--docs`` documents of ``--chunks``
   chunks each; its own text, no gold data) through ``binary,nary`` with the stub answering
   every request after ``--latency`` seconds, at each ``--concurrency``. The ideal of one
   document is its stage depth (entities, relations, nary: 3) x latency when the concurrency
   covers a stage, else its calls x latency / concurrency; "docs in turn" sums them (no
   overlap of documents), the corpus ideal allows any overlap (all calls x latency /
   concurrency, at least the depth). CPU per request is this process's CPU time (user +
   system, ``getrusage``) over the run divided by the requests sent: kgkit and its provider
   client, not the stub. Calls per document are shown beside n*(2+upgrades) and
   the naive n*2*views. The server counts the most requests it held at once.
2. **Prompt size per relation call against document length** (1, 10, 50 pages of ~3,000
   characters, every page naming new people): characters of the relation requests as the
   stub received them, with ``limits.document_entities`` at its default and with a bound so
   large that every entity of the document is listed (the behaviour before issue 11).
3. **Start-up and exit**: ``kgkit extract`` (one chunk, two requests) in a child process:
   from its start until the stub sees the first request, and from the stub's last answer
   until the child has exited; with the child's CPU seconds (load-independent). And
   ``kgkit --help``, the median of five.

4. **One pipe for the corpus, real-sized answers** (only with ``--pipe-docs``): corpora of
   that many documents of 13 chunks of ~1,500 characters (~20 KB), each chunk naming ``--items`` / 3 people who
   joined one of 7 organisations, so the scripted model answers ~``--items`` items a chunk (two
   entities and one relation a sentence), through ``binary`` at each ``--pipe-concurrency``,
   the response cache on (a fresh one each run: every pass is paid for, and keyed).
   Each measurement runs in a child process of its own (so CPU, imports and memory are its
   own), and with ``--baseline DIR`` (another kgkit checkout) the two alternate run by run, so
   their ratio is paired under the same load. Ideal = max(depth x latency, requests x latency /
   concurrency), depth 2 (entities, relations); the stub counts the most requests it held at
   once. Where the CPU goes: ``--stages`` adds, per measurement, the CPU time of each stage
   of :data:`STAGES` a request: each stage's functions wrapped, every thread's own CPU clock
   read around its outermost call (so waiting for the GIL, a lock or the provider counts for
   nothing, and a nested stage is inside its enclosing one too). The wrappers cost CPU of
   their own (a few microseconds a call): compare stages, and read the totals without them.

    python benchmarks/provider_speed.py --concurrency 1 8 32 64
    python benchmarks/provider_speed.py --client direct --skip wall prompt startup --pipe-docs 10 100 \\
        [--pipe-concurrency 16 64 256] [--runs 5] [--baseline DIR] [--stages]
    python benchmarks/provider_speed.py [--docs 10] [--chunks 20] [--latency 0.2] [--client direct litellm]
        [--skip wall prompt startup]
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

import kgkit  # noqa: E402
from support.engine_support import DOMAIN_YAML, ScriptedBackend  # noqa: E402
from support.fault_script import chunk_text, stage_of  # noqa: E402
from kgkit.config.model import CacheConfig, Config, LimitsConfig, LLMConfig  # noqa: E402
from support.stub_provider import Recorded, Reply, StubProvider  # noqa: E402

KEY_ENV = "KGKIT_BENCH_KEY"
VIEWS = ["binary", "nary"]
CHUNK = 220  # characters: one paragraph per chunk
PAGE = 3000
LETTERS = "abcdefghijklmnopqrstuvwxyz"


def name(i: int) -> str:
    """A distinct capitalised word per number (the scripted model reads ``Xxx Yyy joined``)."""
    word = ""
    i += 26 * 27
    while i:
        i, r = divmod(i, 26)
        word = LETTERS[r] + word
    return word.capitalize()


def paragraph(i: int) -> str:
    text = f"Ann {name(i)} joined Org {name(i % 7)} on March {i % 28 + 1}, 2020 as an engineer. "
    return text + "The team met weekly. " * ((CHUNK - len(text)) // 21)


class Model:
    """The scripted model behind a latency; counts requests in flight and relation prompt sizes,
    and when the first request came and the last answer left (``time.monotonic``, one clock
    for every process on Linux)."""

    def __init__(self, latency: float):
        self.latency = latency
        self.lock = threading.Lock()
        self.in_flight = self.most = self.requests = 0
        self.relation_chars: list[int] = []
        self.first: float | None = None
        self.last: float | None = None

    def __call__(self, request: Recorded) -> Reply:
        with self.lock:
            self.first = self.first or time.monotonic()
            self.in_flight += 1
            self.requests += 1
            self.most = max(self.most, self.in_flight)
        try:
            time.sleep(self.latency)
            stage = stage_of(request)
            if stage == "relations":
                with self.lock:
                    self.relation_chars.append(sum(len(m.get("content") or "") for m in request.messages))
            fake = SimpleNamespace(stage=stage, chunk=SimpleNamespace(text=chunk_text(request), index=-1))
            return Reply.answer(ScriptedBackend().run(fake).data)
        finally:
            with self.lock:
                self.in_flight -= 1
                self.last = time.monotonic()

    def stats(self) -> dict:
        with self.lock:
            return {"most": self.most, "requests": self.requests, "first": self.first, "last": self.last,
                    "relation_chars": self.relation_chars}


def serve(latency: float) -> None:
    """The child process: the stub with a :class:`Model`; prints its base URL, then answers
    ``stats`` lines on stdin with the model's counters (``reset`` starts them again)."""
    stub = StubProvider().start()
    stub.responder = model = Model(latency)
    print(stub.openai_base, flush=True)
    for line in sys.stdin:
        if line.strip() == "reset":
            stub.responder = model = Model(latency)
            stub.requests.clear()
        print(json.dumps(model.stats()), flush=True)
    stub.stop()


class Stub:
    """The stub in its own process (so its CPU is not counted as kgkit's)."""

    def __init__(self, latency: float):
        self.child = subprocess.Popen([sys.executable, __file__, "--serve", str(latency)], stdin=subprocess.PIPE,
                                      stdout=subprocess.PIPE, text=True)
        self.openai_base = self.child.stdout.readline().strip()

    def ask(self, command: str) -> dict:
        self.child.stdin.write(command + "\n")
        self.child.stdin.flush()
        return json.loads(self.child.stdout.readline())

    def stats(self) -> dict:
        return self.ask("stats")

    def reset(self) -> None:
        self.ask("reset")

    def stop(self) -> None:
        self.child.stdin.close()
        self.child.wait(10)

    def __enter__(self) -> "Stub":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def load() -> str:
    return "load average " + " / ".join(f"{x:.1f}" for x in os.getloadavg())


def cpu_self() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def cpu_children() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def config(stub: Stub, concurrency: int, chunk: int = CHUNK, document_entities: int = 10,
           client: str = "direct") -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0,
                    timeout=30.0, concurrency=concurrency, client=client)
    return Config(llm=llm, cache=CacheConfig(enabled=False), chunk_size=chunk, chunk_overlap=0,
                  limits=LimitsConfig(document_entities=document_entities))


def write_corpus(folder: Path, docs: int, chunks: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in range(docs):
        path = folder / f"doc{d:03d}.txt"
        path.write_text("\n\n".join(paragraph(d * chunks + i) for i in range(chunks)) + "\n")
        paths.append(path)
    return paths


def wall_time(args, work: Path, domain: Path) -> None:
    docs = write_corpus(work / "corpus", args.docs, args.chunks)
    print(f"\n### Wall time: {args.docs} documents x {args.chunks} chunks, views {','.join(VIEWS)}, "
          f"latency {args.latency * 1000:.0f} ms ({load()})\n")
    print("| client | concurrency | wall s | ideal s (docs in turn) | wall / ideal | corpus ideal s | wall / corpus ideal "
          "| most in flight (server) | calls / doc | n*(2+upgrades) | naive n*2*views | kgkit CPU / request |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    with Stub(args.latency) as stub:
        for client in args.client:
            if client == "litellm":
                from kgkit.backends.llm import load_litellm

                load_litellm()  # its import (seconds) is start-up, measured below, not CPU per call
            kgkit.extract(docs[:1], domain=domain, views=VIEWS, config=config(stub, 8, client=client),
                          out_dir=work / f"warm-{client}", skills=False)  # imports and compiled templates: not per call
            for c in args.concurrency:
                stub.reset()
                cpu, start = cpu_self(), time.monotonic()
                results = kgkit.extract(docs, domain=domain, views=VIEWS, config=config(stub, c, client=client),
                                        out_dir=work / f"out-{client}-{c}", skills=False)
                wall, cpu = time.monotonic() - start, cpu_self() - cpu
                most = stub.stats()["most"]
                ideal = 0.0  # documents one after another: each its own stage depth, or its calls spread
                for r in results:
                    n, calls = r.manifest["input"]["chunks"], r.manifest["calls"]["total"]
                    ideal += 3 * args.latency if c >= n else calls * args.latency / c
                requests = sum(r.manifest["calls"]["requests"] for r in results)
                corpus = max(3 * args.latency, requests * args.latency / c)  # any overlap of documents allowed
                calls = results[0].manifest["calls"]
                n = results[0].manifest["input"]["chunks"]
                assert results[0].manifest["model"]["client"]["core"] == client
                print(f"| {client} | {c} | {wall:.1f} | {ideal:.1f} | {wall / ideal:.2f} | {corpus:.1f} | "
                      f"{wall / corpus:.2f} | {most} | {calls['total']} | {n * 3} | {calls['naive']} | "
                      f"{cpu / requests * 1000:.2f} ms |", flush=True)
    print(f"\n({load()} at the end)")


def prompt_size(args, work: Path, domain: Path) -> None:
    print("\n### Relation prompt size against document length (characters sent per relation call)\n")
    print("| pages | chunks | entities | mean chars, default bound | max | mean chars, every entity listed | max |")
    print("|---|---|---|---|---|---|---|")
    chunk = 1500
    per_page = PAGE // CHUNK
    for pages in (1, 10, 50):
        path = work / f"pages{pages}.txt"
        path.write_text("\n\n".join(paragraph(i) for i in range(pages * per_page)) + "\n")
        row = [str(pages)]
        for bound in (10, 10**6):
            with Stub(0.0) as stub:
                [r] = kgkit.extract(path, domain=domain, views=["binary"], config=config(stub, 16, chunk, bound),
                                    out_dir=work / f"p{pages}-{bound}", skills=False)
                sizes = stub.stats()["relation_chars"]
            if bound == 10:
                row += [str(r.manifest["input"]["chunks"]), str(r.manifest["counts"]["nodes"])]
            row += [f"{sum(sizes) / len(sizes):,.0f}", f"{max(sizes):,}"]
        print("| " + " | ".join(row) + " |")


# The child of the start-up measurement: kgkit's CLI, telling on stderr the CPU seconds it had spent
# (user + system, imports included) when its first request was about to go out (wall time to
# the first request grows with the machine's load; this much less).
FIRST_REQUEST_CPU = """
import os, sys
from kgkit.backends import direct, llm
def told(method):
    def first(*args, **kwargs):
        if not told.done:
            told.done = True
            times = os.times()
            print(f"first-request-cpu {times.user + times.system:.4f}", file=sys.stderr, flush=True)
        return method(*args, **kwargs)
    return first
told.done = False
direct.OpenAICompatible.complete = told(direct.OpenAICompatible.complete)
llm.litellm_sender = told(llm.litellm_sender)  # built just before its first attempt
from kgkit.cli import run
run()
"""


def start_up(args, work: Path, domain: Path) -> None:
    doc = work / "startup.txt"
    doc.write_text(paragraph(1) + "\n")
    # As an installed kgkit starts: with its bytecode (pip compiles it at install), kept here in a
    # folder of the run's own, written by an untimed first run.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}, KEY_ENV: "sk-bench",
           "KGKIT_CONFIG_DIR": str(work / "home"), "PYTHONPYCACHEPREFIX": str(work / "pycache")}
    print(f"\n### Start-up and exit: `kgkit extract` of one chunk (2 requests), median of {args.repeat} ({load()})\n")
    print("| client | first request after start | exit after the last answer | whole run | child CPU s (user + sys) "
          "| child CPU s before the first request |")
    print("|---|---|---|---|---|---|")
    for client in args.client:
        cfg = work / f"kgkit-{client}.yaml"
        rows = []
        with Stub(0.0) as stub:
            cfg.write_text(f"llm:\n  model: openai/stub-model\n  api_base: {stub.openai_base}\n  api_key_env: {KEY_ENV}\n"
                           f"  client: {client}\ncache: {{enabled: false}}\nskills: {{enabled: false}}\n")
            for i in range(-1, args.repeat):  # run -1 writes the bytecode
                stub.reset()
                cpu, start = cpu_children(), time.monotonic()
                child = subprocess.run([sys.executable, "-c", FIRST_REQUEST_CPU, "extract", str(doc),
                                        "--config", str(cfg), "--domain", str(domain), "--view", "binary",
                                        "--out", str(work / f"su-{client}-{i}")], env=env, capture_output=True, text=True,
                                       cwd=work)  # not the checkout's folder: `-c` puts the cwd before PYTHONPATH
                end, cpu = time.monotonic(), cpu_children() - cpu
                seen = stub.stats()
                if child.returncode != 0 or seen["first"] is None:
                    print(child.stderr)
                    return
                before = float(child.stderr.rsplit("first-request-cpu ", 1)[1].split()[0])
                if i >= 0:
                    rows.append((seen["first"] - start, end - seen["last"], end - start, cpu, before))
        first, exit_, whole, cpu, before = (statistics.median(column) for column in zip(*rows))
        print(f"| {client} | {first:.2f} s | {exit_:.2f} s | {whole:.2f} s | {cpu:.2f} | {before:.3f} |")
    rows = []
    for _ in range(args.repeat):  # the bytecode is there already
        cpu, start = cpu_children(), time.monotonic()
        subprocess.run([sys.executable, "-c", "from kgkit.cli import run; run()", "--help"], env=env,
                       capture_output=True, check=True, cwd=work)
        rows.append((time.monotonic() - start, cpu_children() - cpu))
    wall, cpu = (statistics.median(column) for column in zip(*rows))
    bare = []
    for _ in range(args.repeat):  # the interpreter alone, for scale
        before = cpu_children()
        subprocess.run([sys.executable, "-c", "pass"], env=env, check=True)
        bare.append(cpu_children() - before)
    print(f"\n`kgkit --help`: {wall:.2f} s (child CPU {cpu:.2f} s; `python -c pass` {statistics.median(bare):.2f} s)")


PIPE_CHUNK = 1500  # characters a chunk: ~13 chunks in a 20 KB document
PIPE_CHUNKS = 13


def pipe_paragraph(doc: int, chunk: int, sentences: int) -> str:
    """One chunk: ``sentences`` people (distinct in the corpus) joining one of 7 organisations, padded to
    ~PIPE_CHUNK characters, so the scripted model answers 3 items a sentence."""
    base = (doc * PIPE_CHUNKS + chunk) * sentences
    text = "".join(f"Ann {name(base + i)} joined Org {name((base + i) % 7)} on March {(base + i) % 28 + 1}, 2020 "
                   f"as an engineer. " for i in range(sentences))
    return text + "The team met weekly. " * max(0, (PIPE_CHUNK - 40 - len(text)) // 21)


def write_pipe_corpus(folder: Path, docs: int, items: int) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for d in range(docs):
        path = folder / f"news{d:03d}.txt"
        path.write_text("\n\n".join(pipe_paragraph(d, c, max(1, items // 3)) for c in range(PIPE_CHUNKS)) + "\n")
        paths.append(path)
    return paths


#: (stage, module, function) timed by ``--stages``: the three kinds of thread, then parts of their work.
STAGES = [
    ("document threads (all of a document's own work)", "kgkit.engine.run", "DocumentJob.run"),
    ("pass threads (a request's work around its answer)", "kgkit.engine.passes", "PassRunner._execute"),
    ("provider loop (HTTP: send, read, parse the JSON)", "asyncio.base_events", "BaseEventLoop._run_once"),
    ("merge (document)", "kgkit.canon.merge", "merge_entities"),
    ("answers into mentions and edges (document)", "kgkit.engine.core", "mentions_from"),
    ("answers into mentions and edges (document)", "kgkit.engine.core", "edges_from"),
    ("run folder outputs (document)", "kgkit.engine.document", "_write"),
    ("resume key (document)", "kgkit.engine.passes", "PassRunner.key"),
    ("prompt rendering for the cache key", "kgkit.backends.llm", "LLMBackend.cache_key_parts"),
    ("cache key hash", "kgkit.backends.cache", "cache_key"),
    ("response cache reads (SQLite)", "diskcache.core", "Cache.get"),
    ("response cache reads (SQLite)", "diskcache.core", "Cache.__contains__"),
    ("response cache writes (SQLite)", "diskcache.core", "Cache.set"),
    ("state file a pass (pass)", "kgkit.engine.outputs", "RunFolder.save_pass"),
    ("answer read and checked (pass)", "kgkit.backends.llm", "LLMBackend._complete"),
    ("answer bounded by the limits (pass)", "kgkit.engine.passes", "bound_answer"),
]


def time_stages() -> dict[str, int]:
    """Wrap :data:`STAGES`; the returned mapping fills with each stage's thread CPU (ns)."""
    import importlib

    spent: dict[str, int] = {}
    local = threading.local()

    def wrapped(stage: str, fn):
        def timed(*args, **kwargs):
            inside = local.__dict__.setdefault("inside", set())
            if stage in inside:  # a stage's own nested call (or its sibling function) is counted once
                return fn(*args, **kwargs)
            inside.add(stage)
            start = time.thread_time_ns()
            try:
                return fn(*args, **kwargs)
            finally:
                spent[stage] = spent.get(stage, 0) + time.thread_time_ns() - start
                inside.discard(stage)
        return timed

    for stage, module, qualname in STAGES:
        owner: object = importlib.import_module(module)
        *path, name = qualname.split(".")
        for part in path:
            owner = getattr(owner, part, None)
        if getattr(owner, name, None) is not None:  # a baseline checkout may not have it: its stage reads 0
            setattr(owner, name, wrapped(stage, getattr(owner, name)))
    return spent


def measure(spec: dict) -> dict:
    """The child of a pipe measurement: a warm-up run of one document (imports, compiled
    templates and the first connection are start-up, not CPU per call), then, once the
    parent has read the stub's first-request time and reset it, the corpus, timed here."""
    import hashlib

    import kgkit as kit  # from the checkout on PYTHONPATH (the baseline's, or this one's)

    llm = LLMConfig(model="openai/stub-model", api_base=spec["base"], api_key_env=KEY_ENV, backoff=0.0,
                    timeout=60.0, concurrency=spec["concurrency"], client="direct")
    cfg = Config(llm=llm, cache=CacheConfig(dir=spec["out"] + "-cache"), chunk_size=PIPE_CHUNK, chunk_overlap=0)
    corpus = sorted(Path(spec["corpus"]).glob("*.txt"))
    warm = Config(llm=llm, cache=CacheConfig(dir=spec["out"] + "-warm-cache"), chunk_size=PIPE_CHUNK, chunk_overlap=0)
    kit.extract(corpus[:1], domain=spec["domain"], views=spec["views"], config=warm, out_dir=spec["out"] + "-warm")
    spent = time_stages() if spec.get("stages") else {}
    print("warm", flush=True)
    sys.stdin.readline()
    start, cpu = time.monotonic(), cpu_self()
    results = kit.extract(corpus, domain=spec["domain"], views=spec["views"], config=cfg, out_dir=spec["out"])
    wall, cpu = time.monotonic() - start, cpu_self() - cpu
    from offline_identity import _comparable  # clock readings and the checkout's paths aside

    digest = hashlib.sha256()
    for path in sorted(p for p in Path(spec["out"]).rglob("*") if p.is_file()):  # runs.jsonl too
        digest.update(str(path.relative_to(spec["out"])).encode() + b"\0" + _comparable(path) + b"\0")
    return {"wall": wall, "cpu": cpu, "kgkit": str(Path(kit.__file__).parent),
            "requests": sum(r.manifest["calls"]["requests"] for r in results),
            "chunks": sum(r.manifest["input"]["chunks"] for r in results),
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, "folders": digest.hexdigest(),
            "stages": spent}


def pipe_run(stub: Stub, checkout: Path, spec: dict) -> dict:
    """One measurement in a child process with ``checkout`` first on its path."""
    stub.reset()
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    spawned = time.monotonic()
    child = subprocess.Popen([sys.executable, __file__, "--measure", json.dumps(spec)], env=env, text=True,
                             stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if child.stdout.readline().strip() != "warm":
        raise SystemExit(child.communicate()[1])
    first = stub.stats()["first"] - spawned
    stub.reset()
    out, err = child.communicate("go\n")
    if child.returncode != 0:
        raise SystemExit(err)
    got = json.loads(out.strip().splitlines()[-1])
    return {**got, "most": stub.stats()["most"], "first": first}


def pipe(args, work: Path, domain: Path) -> None:
    """Section 4: wall, CPU, requests, most in flight and wall / ideal, this checkout (and a baseline)."""
    checkouts = [("this", ROOT)] + ([("baseline", Path(args.baseline).resolve())] if args.baseline else [])
    print(f"\n### One pipe: documents of {PIPE_CHUNKS} chunks x ~{PIPE_CHUNK} characters, ~{args.items} items a "
          f"chunk, views binary, latency {args.latency * 1000:.0f} ms, {args.runs} interleaved run(s), "
          f"medians ({load()})\n")
    print("| checkout | docs | concurrency | wall s | ideal s | wall / ideal | most in flight | requests | CPU s "
          "| CPU / request | first request s (process start) | peak MB | folders |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    ratios: dict[tuple[int, int], list[float]] = {}
    with Stub(args.latency) as stub:
        for docs in args.pipe_docs:
            corpus = write_pipe_corpus(work / f"pipe{docs}", docs, args.items)[0].parent
            for c in args.pipe_concurrency:
                rows: dict[str, list[dict]] = {label: [] for label, _ in checkouts}
                for run in range(args.runs):
                    order = checkouts if run % 2 == 0 else checkouts[::-1]
                    for label, checkout in order:
                        out = work / f"pipe-out-{label}-{docs}-{c}-{run}"
                        spec = {"base": stub.openai_base, "corpus": str(corpus), "domain": str(domain),
                                "views": ["binary"], "concurrency": c, "out": str(out), "stages": args.stages}
                        rows[label].append(pipe_run(stub, checkout, spec))
                        shutil.rmtree(out, ignore_errors=True)
                        shutil.rmtree(f"{out}-warm", ignore_errors=True)
                        shutil.rmtree(f"{out}-cache", ignore_errors=True)
                        shutil.rmtree(f"{out}-warm-cache", ignore_errors=True)
                    if args.baseline:
                        ratios.setdefault((docs, c), []).append(rows["baseline"][-1]["wall"] / rows["this"][-1]["wall"])
                digests = {r["folders"] for label in rows for r in rows[label]}
                for label, _ in checkouts:
                    med = {k: statistics.median(r[k] for r in rows[label])
                           for k in ("wall", "cpu", "most", "requests", "first", "peak_mb")}
                    ideal = max(2 * args.latency, med["requests"] * args.latency / c)
                    print(f"| {label} | {docs} | {c} | {med['wall']:.2f} | {ideal:.2f} | {med['wall'] / ideal:.2f} "
                          f"| {med['most']:.0f} | {med['requests']:.0f} | {med['cpu']:.2f} "
                          f"| {med['cpu'] / med['requests'] * 1000:.2f} ms | {med['first']:.2f} | {med['peak_mb']:.0f} "
                          f"| {'identical' if len(digests) == 1 else 'DIFFER'} |", flush=True)
                if args.stages:
                    stage_table(rows, docs, c)
    if ratios:
        print("\nPaired wall ratio baseline / this (each run's pair, then the median):\n")
        for (docs, c), values in ratios.items():
            print(f"- {docs} docs, concurrency {c}: " + ", ".join(f"{v:.2f}" for v in values)
                  + f" -> **{statistics.median(values):.2f}x**")
    print(f"\n({load()} at the end)")


def stage_table(rows: dict[str, list[dict]], docs: int, concurrency: int) -> None:
    """Each checkout's CPU a request by stage (medians over the runs), after its pipe rows."""
    for label, runs in rows.items():
        print(f"\nCPU a request by stage, {label}, {docs} docs at concurrency {concurrency} (thread CPU, "
              f"median of {len(runs)}; the first three rows are the threads, the rest parts of their work):\n")
        print("| stage | ms / request |\n|---|---|")
        for stage in dict.fromkeys(stage for stage, _, _ in STAGES):
            per = statistics.median(r["stages"].get(stage, 0) / 1e6 / r["requests"] for r in runs)
            print(f"| {stage} | {per:.3f} |")
        total = statistics.median(r["cpu"] / r["requests"] * 1000 for r in runs)
        print(f"| the process, all threads | {total:.3f} |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64])
    parser.add_argument("--client", nargs="+", default=["direct", "litellm"], choices=["direct", "litellm"])
    parser.add_argument("--repeat", type=int, default=5, help="runs of the start-up measurement (median)")
    parser.add_argument("--skip", nargs="*", default=[], choices=["wall", "prompt", "startup"])
    parser.add_argument("--pipe-docs", type=int, nargs="+", help="run the pipe section on corpora of these sizes")
    parser.add_argument("--pipe-concurrency", type=int, nargs="+", default=[16, 64, 256])
    parser.add_argument("--items", type=int, default=55, help="items a chunk's answers hold (pipe)")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs of each pipe measurement")
    parser.add_argument("--baseline", help="another kgkit checkout to pair the pipe runs with")
    parser.add_argument("--stages", action="store_true", help="the pipe's CPU a request by stage (STAGES)")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # a pipe measurement's child process
    parser.add_argument("--serve", type=float, help=argparse.SUPPRESS)  # the stub's child process
    args = parser.parse_args()
    if args.serve is not None:
        return serve(args.serve)
    if args.measure is not None:
        print(json.dumps(measure(json.loads(args.measure))))
        return None
    os.environ[KEY_ENV] = "sk-bench"
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["KGKIT_CONFIG_DIR"] = str(work / "home")
        domain = work / "staff.yaml"
        domain.write_text(DOMAIN_YAML)
        if "wall" not in args.skip:
            wall_time(args, work, domain)
        if "prompt" not in args.skip:
            prompt_size(args, work, domain)
        if "startup" not in args.skip:
            start_up(args, work, domain)
        if args.pipe_docs:
            pipe(args, work, domain)


if __name__ == "__main__":
    main()
