"""What a GGUF model file says about itself, read before llama.cpp is asked to load it.

Loading a 500 MB model to learn that the file is an HTML page, half-copied or some other
model takes seconds and ends in llama.cpp's own log lines. The GGUF header says it in
milliseconds: the magic, the metadata (architecture, trained context length, the model's
name) and each tensor's type, shape and offset, which give the size the file must have.
:func:`inspect` reads that header (and nothing of the weights) and raises
:class:`~kgkit.errors.ProviderConfigError` (exit 2) naming the file and what is wrong with it.

The format: https://github.com/ggml-org/ggml/blob/master/docs/gguf.md
"""
from __future__ import annotations

import hashlib
import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

from kgkit.errors import ProviderConfigError

MAGIC = b"GGUF"
_SCALARS = {0: "<B", 1: "<b", 2: "<H", 3: "<h", 4: "<I", 5: "<i", 6: "<f", 7: "<?", 10: "<Q", 11: "<q", 12: "<d"}
_STRING, _ARRAY = 8, 9
# ggml tensor types: (elements per block, bytes per block); a type not listed skips the size check
_BLOCKS = {0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34), 9: (32, 36),
           10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
           16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
           22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
           29: (256, 56), 30: (1, 2)}
_SKIPPED_ARRAYS = ("tokenizer.ggml.tokens", "tokenizer.ggml.merges", "tokenizer.ggml.token_type",
                   "tokenizer.ggml.scores")  # large, and not needed here: read past, not kept


@dataclass(frozen=True)
class ModelFile:
    """A checked GGUF file: its path, size and the metadata kgkit uses."""

    path: Path
    size: int
    version: int
    metadata: dict[str, Any] = field(repr=False)
    needed: int | None  # bytes the tensors need; None when a tensor type is unknown here

    @property
    def architecture(self) -> str | None:
        return self.metadata.get("general.architecture")

    @property
    def name(self) -> str | None:
        return self.metadata.get("general.name")

    @property
    def context_length(self) -> int | None:
        """The context length the model was trained with (its largest useful window)."""
        value = self.metadata.get(f"{self.architecture}.context_length")
        return int(value) if isinstance(value, int) else None


class _Short(Exception):
    """The file ends inside its own header."""


def inspect(path: Path) -> ModelFile:
    """Read and check ``path``'s GGUF header: missing, not GGUF, or shorter than its tensors say.

    Raises:
        ProviderConfigError: naming the file and what is wrong with it.
    """
    if not path.exists():
        raise ProviderConfigError(f"{path}: no such model file",
                                  hint="give llm.model as local/PATH.gguf, PATH absolute or relative to the "
                                       "working folder")
    if not path.is_file():
        raise ProviderConfigError(f"{path}: not a regular file (a GGUF model file is needed)")
    size = path.stat().st_size
    try:
        with path.open("rb") as handle:
            if handle.read(4) != MAGIC:
                raise ProviderConfigError(f"{path}: not a GGUF model file (it does not begin with 'GGUF')",
                                          hint="llama.cpp reads GGUF files; convert the model or pick its .gguf file")
            version, tensors, entries = struct.unpack("<IQQ", _read(handle, 20))
            if version < 2:
                raise ProviderConfigError(f"{path}: GGUF version {version} is too old for llama.cpp")
            metadata = {key: value for key, value in (_entry(handle) for _ in range(entries))}
            infos = [_tensor(handle) for _ in range(tensors)]
            alignment = int(metadata.get("general.alignment", 32) or 32)
            start = -(-handle.tell() // alignment) * alignment
    except _Short:
        raise _truncated(path, size, None) from None
    except OSError as exc:
        raise ProviderConfigError(f"{path}: cannot read the model file: {exc.strerror or exc}") from None
    needed = _needed(infos, start)
    if needed is not None and size < needed:
        raise _truncated(path, size, needed)
    return ModelFile(path=path, size=size, version=version, metadata=metadata, needed=needed)


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _truncated(path: Path, size: int, needed: int | None) -> ProviderConfigError:
    what = (f"{size:,} bytes where its header needs {needed:,}" if needed is not None
            else f"it ends inside its own header, after {size:,} bytes")
    return ProviderConfigError(f"{path}: the model file is truncated: {what}",
                               hint="copy or assemble the file again (an interrupted download or copy)")


def _needed(infos: list[tuple[int, int, int]], start: int) -> int | None:
    """Bytes from the file's start to the end of its last tensor (None: a type unknown here)."""
    end = start
    for elements, kind, offset in infos:
        if kind not in _BLOCKS:
            return None
        per_block, block_bytes = _BLOCKS[kind]
        end = max(end, start + offset + -(-elements // per_block) * block_bytes)
    return end


def _read(handle: BinaryIO, n: int) -> bytes:
    data = handle.read(n)
    if len(data) < n:
        raise _Short
    return data


def _string(handle: BinaryIO) -> str:
    (length,) = struct.unpack("<Q", _read(handle, 8))
    return _read(handle, length).decode("utf-8", "replace")


def _value(handle: BinaryIO, kind: int, keep: bool = True) -> Any:
    if kind in _SCALARS:
        fmt = _SCALARS[kind]
        return struct.unpack(fmt, _read(handle, struct.calcsize(fmt)))[0]
    if kind == _STRING:
        return _string(handle)
    if kind == _ARRAY:
        item, count = struct.unpack("<IQ", _read(handle, 12))
        if item in _SCALARS and not keep:  # read past in one go
            _read(handle, struct.calcsize(_SCALARS[item]) * count)
            return None
        values = [_value(handle, item, keep) for _ in range(count)]
        return values if keep else None
    raise _Short  # an unknown value type: the rest cannot be read as a header


def _entry(handle: BinaryIO) -> tuple[str, Any]:
    key = _string(handle)
    (kind,) = struct.unpack("<I", _read(handle, 4))
    return key, _value(handle, kind, keep=key not in _SKIPPED_ARRAYS)


def _tensor(handle: BinaryIO) -> tuple[int, int, int]:
    """(elements, ggml type, offset from the data start) of one tensor's entry."""
    _string(handle)
    (dims,) = struct.unpack("<I", _read(handle, 4))
    shape = struct.unpack(f"<{dims}Q", _read(handle, 8 * dims))
    kind, offset = struct.unpack("<IQ", _read(handle, 12))
    elements = 1
    for extent in shape:
        elements *= extent
    return elements, kind, offset
