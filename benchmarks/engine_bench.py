"""Where an extraction's time goes: the backend versus the engine around it.

Runs ``kgkit.extract`` with the offline backend on a long document (the CUAD contract
texts repeated) and splits the wall time into the backend's own time (measured by a
timing wrapper around it) and the engine's: building requests and fingerprints, the
merge, normalising answers and the fsync'd writes of ``state/`` and the run folder.
A second run into the same folder shows the cost of reusing every pass from ``state/``.

    /work/.venv/bin/python benchmarks/engine_bench.py [--copies 3] [--views binary,nary,temporal]
"""
from __future__ import annotations

import argparse
import tempfile
import time
from pathlib import Path

import kgkit
from kgkit.backends.factory import create_backend

CUAD = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "cuad"


class Timed:
    """Forwards every pass and adds up the time the wrapped backend took."""

    def __init__(self, inner):
        self.inner, self.name, self.seconds, self.calls = inner, inner.name, 0.0, 0

    def describe(self):
        return self.inner.describe()

    def run(self, request):
        start = time.perf_counter()
        try:
            return self.inner.run(request)
        finally:
            self.seconds += time.perf_counter() - start
            self.calls += 1


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--copies", type=int, default=3, help="how many times the CUAD texts are repeated")
    parser.add_argument("--views", default="binary,nary,temporal")
    args = parser.parse_args()
    text = "\n\n".join(p.read_text(encoding="utf-8") for p in sorted(CUAD.glob("*.txt"))) + "\n\n"
    with tempfile.TemporaryDirectory() as tmp:
        doc = Path(tmp) / "long_contracts.txt"
        doc.write_text(text * args.copies, encoding="utf-8")
        backends: list[Timed] = []

        def factory(config, stage):
            backends.append(Timed(create_backend(config, stage)))
            return backends[-1]

        for label in ("first run", "rerun (all passes from state/)"):
            backends.clear()
            start = time.perf_counter()
            [result] = kgkit.extract(doc, domain="legal_contracts", views=args.views.split(","),
                                     out_dir=Path(tmp) / "out", backend=factory, skills=False)
            wall = time.perf_counter() - start
            calls = result.manifest["calls"]
            backend_s = sum(b.seconds for b in backends)
            print(f"{label}: {len(doc.read_text()):,} chars, {result.manifest['input']['chunks']} chunks, "
                  f"{calls['total']} passes ({calls['executed']} executed, naive {calls['naive']})")
            print(f"  wall {wall:.2f}s = backend {backend_s:.2f}s + engine {wall - backend_s:.2f}s "
                  f"({1000 * (wall - backend_s) / max(calls['total'], 1):.1f} ms per pass)")


if __name__ == "__main__":
    main()
