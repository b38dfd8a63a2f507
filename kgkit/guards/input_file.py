"""Open a file a user named only if it is a regular file of bounded size.

A path on the command line or in a config can name anything: a FIFO (reading it blocks
until someone writes), ``/dev/zero`` (reading never ends), a terminal, a socket, or a
file far larger than any document. Each is refused here with its kind or its size,
before a byte is read: the file is opened non-blocking (so a FIFO cannot hang the open)
and checked with ``fstat`` on that very descriptor (so a swap after the check changes
nothing), and never more than the limit is read.
"""
from __future__ import annotations

import os
import stat
from typing import BinaryIO

from kgkit.errors import InputError

DEFAULT_MAX_BYTES = 200_000_000  # documents: input.max_bytes; a 2,000-page PDF is ~50 MB
YAML_MAX_BYTES = 20_000_000  # domain, view, template, config, gold files: 100x the largest shipped

class UnusableFile(InputError):
    """A special file or one over the size limit; ``reason`` is the message without the path."""

    def __init__(self, source: str, reason: str, *, hint: str | None = None):
        super().__init__(f"{source} {reason}", hint=hint)
        self.reason = reason


_KINDS = ((stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def open_regular(path: str | os.PathLike, max_bytes: int, *, what: str = "a document file",
                 limit_name: str = "input.max_bytes") -> BinaryIO:
    """``path`` opened for binary reading; UnusableFile for a special file or one over ``max_bytes``.

    FileNotFoundError, PermissionError and other OSErrors of the open itself propagate, so
    callers keep their own wording for them.
    """
    source = os.fspath(path)
    fd = os.open(source, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        info = os.fstat(fd)
        if stat.S_ISDIR(info.st_mode):
            raise IsADirectoryError(21, "Is a directory", source)
        for test, kind in _KINDS:
            if test(info.st_mode):
                raise UnusableFile(source, f"is {kind}, not a regular file; expected {what}")
        if not stat.S_ISREG(info.st_mode):
            raise UnusableFile(source, f"is not a regular file; expected {what}")
        if info.st_size > max_bytes:
            raise UnusableFile(source, f"is {info.st_size:,} bytes, over {limit_name} ({max_bytes:,} bytes)",
                               hint=f"raise {limit_name} if this file is meant to be read")
    except BaseException:
        os.close(fd)
        raise
    return os.fdopen(fd, "rb")


def read_bounded(stream: BinaryIO, max_bytes: int, source: str, *, limit_name: str = "input.max_bytes") -> bytes:
    """At most ``max_bytes`` from ``stream``; UnusableFile if there is more (a pipe or a file
    that grew), so an endless stream is refused instead of filling memory."""
    raw = stream.read(max_bytes + 1)
    if len(raw) > max_bytes:
        raise UnusableFile(source, f"is more than {max_bytes:,} bytes, over {limit_name}",
                           hint=f"raise {limit_name} if this input is meant to be read")
    return raw
