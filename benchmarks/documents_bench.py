"""How long loading and chunking a long PDF takes, and how much memory it holds.

Builds a PDF of N pages by repeating the pages of a real contract from the shared data
(so the text layer is real), then, in a fresh process per size, loads it with
``load_document`` and chunks it with ``chunk_document``. Prints pages, characters,
seconds for each step and the process's peak resident memory, so growth per page can
be read off: memory grows with the text kept, not with pages parsed at once.

    /work/.venv/bin/python benchmarks/documents_bench.py [--pages 500,2000] [--pdf PATH]
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

DEFAULT_PDF = Path(__file__).resolve().parents[2] / "shared" / "data" / "cuad" / "cuad_CCAINDUSTRIESINC_Outsourcing.pdf"

MEASURE = """
import json, resource, sys, time
from kgkit.documents import chunk_document, load_document
t0 = time.perf_counter()
doc = load_document(sys.argv[1])
t1 = time.perf_counter()
chunks = chunk_document(doc, 2000, 200)
t2 = time.perf_counter()
print(json.dumps({"pages": len(doc.pages), "chars": len(doc.text), "chunks": len(chunks),
                  "load_s": round(t1 - t0, 2), "chunk_s": round(t2 - t1, 2),
                  "peak_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)}))
"""


def build(source: Path, pages: int, out: Path) -> None:
    import pypdf

    reader = pypdf.PdfReader(source)
    writer = pypdf.PdfWriter()
    while len(writer.pages) < pages:
        for page in reader.pages[: pages - len(writer.pages)]:
            writer.add_page(page)
    writer.write(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", default="500,2000")
    parser.add_argument("--pdf", type=Path, default=DEFAULT_PDF)
    args = parser.parse_args()
    print(f"{'pages':>6} {'chars':>10} {'chunks':>7} {'load s':>7} {'chunk s':>8} {'peak MB':>8}  (file MB)")
    with tempfile.TemporaryDirectory() as tmp:
        for n in (int(x) for x in args.pages.split(",")):
            pdf = Path(tmp) / f"{n}.pdf"
            build(args.pdf, n, pdf)
            done = subprocess.run([sys.executable, "-c", MEASURE, str(pdf)], capture_output=True, text=True, check=True)
            r = json.loads(done.stdout)
            print(f"{r['pages']:>6} {r['chars']:>10} {r['chunks']:>7} {r['load_s']:>7} {r['chunk_s']:>8} "
                  f"{r['peak_mb']:>8}  ({pdf.stat().st_size / 1e6:.1f})")


if __name__ == "__main__":
    main()
