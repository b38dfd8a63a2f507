"""GGUF files for the local backend's tests: small ones written here, and the real model.

:func:`write_gguf` writes a header llama.cpp would read (magic, version 3, metadata, tensor
entries) followed by as many bytes of tensor data as asked: whole for a well-formed file,
fewer for a truncated one. The real model (tests marked ``model``) is ``$KGKIT_TEST_MODEL``
or the one ``benchmarks/local_model.py`` assembles into the user cache; it is looked up
only when a test asks for it, never at import.
"""
from __future__ import annotations

import os
import struct
from pathlib import Path

from support.optional_parts import require_module, unavailable

MODEL_FILE = "qwen2.5-coder-0.5b-instruct-q4.gguf"
MODEL_SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


def _string(text: str) -> bytes:
    data = text.encode()
    return struct.pack("<Q", len(data)) + data


def write_gguf(path: Path, *, elements: int = 1000, data_bytes: int | None = None, context: int = 512) -> Path:
    """A GGUF file with one F32 tensor of ``elements`` values; ``data_bytes`` of its data (all by default)."""
    metadata = [("general.architecture", 8, _string("qwen2")), ("general.name", 8, _string("test model")),
                ("qwen2.context_length", 4, struct.pack("<I", context))]
    header = b"GGUF" + struct.pack("<IQQ", 3, 1, len(metadata))
    for key, kind, value in metadata:
        header += _string(key) + struct.pack("<I", kind) + value
    header += _string("weights") + struct.pack("<I", 1) + struct.pack("<Q", elements) + struct.pack("<IQ", 0, 0)
    header += b"\0" * (-len(header) % 32)
    size = elements * 4 if data_bytes is None else data_bytes
    path.write_bytes(header + b"\1" * size)
    return path


def real_model() -> Path:
    """The 0.5B model for tests marked ``model``: without llama-cpp-python or the file they skip, and
    fail where ``KGKIT_REQUIRE`` names ``model`` (CI builds the extra and assembles the model)."""
    require_module("llama_cpp", "model")
    given = os.environ.get("KGKIT_TEST_MODEL")
    if given:
        path = Path(given)
    else:
        import platformdirs

        path = Path(platformdirs.user_cache_dir("kgkit")) / "models" / MODEL_FILE
    if not path.is_file():
        unavailable("model", f"no model at {path}: run python benchmarks/local_model.py (or set KGKIT_TEST_MODEL)")
    return path
