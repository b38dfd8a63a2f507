"""Writes that are all or nothing: a temp file of our own in the same folder, then ``os.replace``.

A killed process leaves the old file or the new one, never half of either; the run folder,
the skill library and the corpus manifest are all written this way.
"""
from __future__ import annotations

import os
import secrets
from contextlib import suppress
from pathlib import Path

TEMP_SUFFIX = ".kgkit-tmp"  # marks the temp files this module makes, and only those


def atomic_write(path: Path, text: str | bytes, durable: bool = True) -> None:
    """Write ``text`` (bytes: already UTF-8) to ``path`` through a temp file of our own in the same folder.

    The temp file is created exclusively, never through a symbolic link, with mode 0666 less
    the umask (``tempfile.mkstemp`` would force 0600, so a team folder could not read it).
    ``durable=False`` leaves out the fsync: the file still survives a killed process, and
    the caller makes it durable later (:func:`sync_later`). Written with plain system calls
    (the folder made only when it is missing): a run writes one file per pass.
    """
    data = text.encode("utf-8") if isinstance(text, str) else text
    folder = os.path.dirname(path)
    tmp = os.path.join(folder, f".{os.path.basename(path)}.{secrets.token_hex(6)}{TEMP_SUFFIX}")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        fd = os.open(tmp, flags, 0o666)
    except FileNotFoundError:
        os.makedirs(folder, exist_ok=True)
        fd = os.open(tmp, flags, 0o666)
    try:
        try:
            written = os.write(fd, data)
            while written < len(data):
                written += os.write(fd, memoryview(data)[written:])
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
    except BaseException:
        with suppress(FileNotFoundError):
            os.unlink(tmp)
        raise
