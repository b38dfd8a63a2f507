"""``kgkit extract --batch`` against a direct run (issue 11 item 4), on the stub over real HTTP.

A synthetic corpus (``--docs`` documents of ``--chunks`` chunks; its own text, no gold data)
through ``binary,nary,event``, once directly and once through provider batches, for an
OpenAI and an Anthropic model that litellm's table prices. Printed as a Markdown table for
benchmarks/RESULTS.md: passes, cost of each, their ratio, batches and rounds, HTTP calls to
the batch endpoints, and whether every run folder is the same (all files but the manifest,
and the manifest but cost, timings, created and its batch key).

    python benchmarks/batch_price.py [--docs 10] [--chunks 20]
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import kgkit  # noqa: E402
from support.engine_support import DOMAIN_YAML  # noqa: E402
from kgkit.config.model import CacheConfig, Config, LLMConfig  # noqa: E402
from kgkit.engine.batch import BatchWaiting, extract_batch  # noqa: E402
from kgkit.engine.options import RunOptions  # noqa: E402
from provider_speed import CHUNK, KEY_ENV, Model, write_corpus  # noqa: E402
from support.stub_provider import StubProvider  # noqa: E402

VIEWS = ["binary", "nary", "event"]
MODELS = ("openai/gpt-4o-mini", "anthropic/claude-haiku-4-5")
VOLATILE = ("created", "timings", "cost", "batch")


def folder_state(run_dir: Path) -> dict:
    files = {str(p.relative_to(run_dir)): p.read_bytes() for p in sorted(run_dir.rglob("*"))
             if p.is_file() and p.name not in ("manifest.json", "batch.json", ".kgkit.lock")}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    return {"files": files, "manifest": {k: v for k, v in manifest.items() if k not in VOLATILE}}


def measure(model: str, corpus: Path, domain: Path, work: Path) -> list[str]:
    stub = StubProvider().start()
    try:
        stub.responder = Model(0.0)
        base = stub.openai_base if model.startswith("openai/") else stub.anthropic_base
        cfg = Config(llm=LLMConfig(model=model, api_base=base, api_key_env=KEY_ENV, backoff=0.0),
                     cache=CacheConfig(enabled=False), chunk_size=CHUNK, chunk_overlap=0)
        direct = kgkit.extract(corpus, domain=domain, views=VIEWS, config=cfg, out_dir=work / "direct")
        direct_requests = len(stub.requests)
        rounds, done = 0, []
        while len(done) < len(direct):
            rounds += 1
            done = [r for r in extract_batch(corpus, RunOptions(domain=domain, views=VIEWS, out_dir=work / "batch"), config=cfg)
                    if not isinstance(r, BatchWaiting)]
        same = all(folder_state(d.run_dir) == folder_state(b.run_dir) for d, b in zip(direct, done))
        cost_direct = sum(r.manifest["cost"] for r in direct)
        cost_batch = sum(r.manifest["cost"] for r in done)
        price = done[0].manifest["batch"]["price"]
        return [model, str(sum(r.manifest["calls"]["total"] for r in direct)), str(direct_requests),
                str(len(stub.batch_lines())), f"${cost_direct:.6f}", f"${cost_batch:.6f} ({price})",
                f"{cost_batch / cost_direct:.3f}", str(len(stub.batches)), str(rounds), str(len(stub.batch_calls)),
                "yes" if same else "**no**"]
    finally:
        stub.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--docs", type=int, default=10)
    parser.add_argument("--chunks", type=int, default=20)
    args = parser.parse_args()
    os.environ[KEY_ENV] = "sk-bench"
    rows = [["model", "passes", "direct requests", "batch lines", "direct cost", "batch cost", "ratio", "batches",
             "runs", "batch HTTP calls", "run folders identical"]]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        os.environ["KGKIT_CONFIG_DIR"] = str(work / "home")
        domain = work / "staff.yaml"
        domain.write_text(DOMAIN_YAML)
        corpus = work / "corpus"
        write_corpus(corpus, args.docs, args.chunks)
        for model in MODELS:
            rows.append(measure(model, corpus, domain, work / model.replace("/", "_")))
    print(f"{args.docs} documents x {args.chunks} chunks, views {','.join(VIEWS)}\n")
    print("| " + " | ".join(rows[0]) + " |\n|" + "---|" * len(rows[0]))
    for row in rows[1:]:
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
