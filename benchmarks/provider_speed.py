"""kgkit at provider speed (issue 11, item 8), against the stub provider over real HTTP.

Three measurements, each printed as a Markdown table for benchmarks/RESULTS.md:

1. **Wall time against the ideal.** A synthetic corpus (``--docs`` documents of ``--chunks``
   chunks each; its own text, no gold data) through ``binary,nary`` with the stub answering
   every request after ``--latency`` seconds, at each ``--concurrency``. The ideal of one
   document is its stage depth (entities, relations, nary: 3) x latency when the concurrency
   covers a stage, else its calls x latency / concurrency; "docs in turn" sums them (no
   overlap of documents), the corpus ideal allows any overlap (all calls x latency /
   concurrency, at least the depth). CPU per request is the whole process's (kgkit, litellm,
   and the stub server, which runs in this process too). Calls per document are shown beside n*(2+upgrades) and
   the naive n*2*views. The server counts the most requests it held at once.
2. **Prompt size per relation call against document length** (1, 10, 50 pages of ~3,000
   characters, every page naming new people): characters of the relation requests as the
   stub received them, with ``limits.document_entities`` at its default and with a bound so
   large that every entity of the document is listed (the behaviour before issue 11).
3. **Start-up to first request**: ``kgkit extract`` in a child process until the stub sees
   its first request.

    python benchmarks/provider_speed.py [--docs 10] [--chunks 20] [--latency 0.2] [--concurrency 1 8 32]
"""
from __future__ import annotations

import argparse
import os
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
from engine_support import DOMAIN_YAML, ScriptedBackend  # noqa: E402
from fault_script import chunk_text, stage_of  # noqa: E402
from kgkit.config.model import CacheConfig, Config, LimitsConfig, LLMConfig  # noqa: E402
from stub_provider import Recorded, Reply, StubProvider  # noqa: E402

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
    """The scripted model behind a latency; counts requests in flight and relation prompt sizes."""

    def __init__(self, latency: float):
        self.latency = latency
        self.lock = threading.Lock()
        self.in_flight = self.most = 0
        self.relation_chars: list[int] = []
        self.first: float | None = None

    def __call__(self, request: Recorded) -> Reply:
        with self.lock:
            self.first = self.first or time.monotonic()
            self.in_flight += 1
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


def config(stub: StubProvider, concurrency: int, chunk: int = CHUNK, document_entities: int = 10) -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0,
                    timeout=30.0, concurrency=concurrency)
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
    from kgkit.backends.llm import load_litellm

    load_litellm()  # its import (seconds) is start-up, measured below, not wall time per call
    print(f"\n### Wall time: {args.docs} documents x {args.chunks} chunks, views {','.join(VIEWS)}, "
          f"latency {args.latency * 1000:.0f} ms\n")
    print("| concurrency | wall s | ideal s (docs in turn) | wall / ideal | corpus ideal s | wall / corpus ideal "
          "| most in flight (server) | calls / doc | n*(2+upgrades) | naive n*2*views | CPU / request |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for c in args.concurrency:
        stub = StubProvider().start()
        model = Model(args.latency)
        stub.responder = model
        try:
            cpu, start = time.process_time(), time.monotonic()
            results = kgkit.extract(docs, domain=domain, views=VIEWS, config=config(stub, c), out_dir=work / f"out{c}",
                                    skills=False)
            wall, cpu = time.monotonic() - start, time.process_time() - cpu
        finally:
            stub.stop()
        ideal = 0.0  # documents one after another: each its own stage depth, or its calls spread
        for r in results:
            n, calls = r.manifest["input"]["chunks"], r.manifest["calls"]["total"]
            ideal += 3 * args.latency if c >= n else calls * args.latency / c
        requests = sum(r.manifest["calls"]["requests"] for r in results)
        corpus = max(3 * args.latency, requests * args.latency / c)  # any overlap of documents allowed
        calls = results[0].manifest["calls"]
        n = results[0].manifest["input"]["chunks"]
        print(f"| {c} | {wall:.1f} | {ideal:.1f} | {wall / ideal:.2f} | {corpus:.1f} | {wall / corpus:.2f} | "
              f"{model.most} | {calls['total']} | {n * 3} | {calls['naive']} | {cpu / requests * 1000:.1f} ms |")


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
            stub = StubProvider().start()
            model = Model(0.0)
            stub.responder = model
            try:
                [r] = kgkit.extract(path, domain=domain, views=["binary"], config=config(stub, 16, chunk, bound),
                                    out_dir=work / f"p{pages}-{bound}", skills=False)
            finally:
                stub.stop()
            if bound == 10:
                row += [str(r.manifest["input"]["chunks"]), str(r.manifest["counts"]["nodes"])]
            sizes = model.relation_chars
            row += [f"{sum(sizes) / len(sizes):,.0f}", f"{max(sizes):,}"]
        print("| " + " | ".join(row) + " |")


def start_up(work: Path, domain: Path) -> None:
    stub = StubProvider().start()
    model = Model(0.0)
    stub.responder = model
    cfg = work / "kgkit.yaml"
    cfg.write_text(f"llm:\n  model: openai/stub-model\n  api_base: {stub.openai_base}\n  api_key_env: {KEY_ENV}\n"
                   "cache: {enabled: false}\nskills: {enabled: false}\n")
    doc = work / "startup.txt"
    doc.write_text(paragraph(1) + "\n")
    env = {**os.environ, KEY_ENV: "sk-bench", "KGKIT_CONFIG_DIR": str(work / "home")}
    try:
        start = time.monotonic()
        child = subprocess.run([sys.executable, "-c", "from kgkit.cli import main; main()", "extract", str(doc), "--config", str(cfg),
                                "--domain", str(domain), "--view", "binary", "--out", str(work / "su")],
                               env=env, capture_output=True, text=True)
        end = time.monotonic()
    finally:
        stub.stop()
    if child.returncode != 0 or model.first is None:
        print(child.stderr)
        return
    print(f"\n### Start-up\n\nfirst request {model.first - start:.2f} s after the child started; "
          f"the whole run (2 requests) {end - start:.2f} s\n")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=20)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32])
    parser.add_argument("--skip", nargs="*", default=[], choices=["wall", "prompt", "startup"])
    args = parser.parse_args()
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
            start_up(work, domain)


if __name__ == "__main__":
    main()
