"""Export files appear whole or not at all, and only inside the output folder.

Each file is written to a hidden temporary file beside its final name, inside ``out``;
only when every file of the export is complete are they renamed into place. A failure
part-way removes the temporaries (and ``out`` itself if this export created it), so a
reader never finds half a GraphML file or a Neo4j import missing its relationships. A
sub-folder of ``out`` that is a symbolic link (``OUT/neo4j`` pointing elsewhere) is refused
before anything is written: nothing leaves ``out``.

Files get mode 0666 less the umask, as a run folder's do: a ``neo4j-admin import`` running as
another user, or a teammate, reads them. A single-file format may be given the file's own
path (``file=``) instead of a folder.
"""
from __future__ import annotations

import os
import secrets
from pathlib import Path
from typing import TextIO

from kgkit.errors import InputError


class StagedOutput:
    """Open files by name with :meth:`open`; :meth:`commit` moves them all into place.

    With ``file`` set, ``out`` is that file: the one file the format opens is written there,
    whatever name the format gives it."""

    def __init__(self, out: str | os.PathLike, *, file: bool = False):
        self.file = Path(out) if file else None
        self.out = self.file.parent if self.file else Path(out)
        if self.file and self.file.is_dir():
            raise InputError(f"export output {self.file} is a folder, not a file")
        if self.out.exists() and not self.out.is_dir():
            raise InputError(f"export output {self.out} exists and is not a folder",
                             hint="give -o a folder; this format writes several files into it")
        self.created = not self.out.exists()
        try:
            self.out.mkdir(parents=True, exist_ok=True)
        except OSError as exc:  # -o afile/sub, a read-only place
            raise InputError(f"cannot create the export folder {self.out}: {exc.strerror or exc}",
                             hint="give -o a folder that can be created or written") from None
        self._files: dict[str, tuple[str, TextIO]] = {}
        self._dirs: list[Path] = []  # sub-folders this export created, removed again on rollback

    def open(self, name: str, *, csv: bool = False) -> TextIO:
        """A text file that becomes ``out/name`` on commit (UTF-8, ``\\n`` line ends).

        ``csv=True`` opens it the way the csv module needs (no newline translation).
        """
        if name in self._files:
            raise ValueError(f"export file {name} opened twice")
        if self.file and self._files:
            raise ValueError(f"export to the file {self.file} opened a second file, {name}")
        target = self.file or self.out / name
        below = [d for d in reversed(target.parents) if d.is_relative_to(self.out) and d != self.out]
        for folder in below:  # OUT/neo4j a link to elsewhere: nothing is written through it
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                raise InputError(f"export output {folder} is {'a symbolic link' if folder.is_symlink() else 'a file'}"
                                 ", not a folder of this export; nothing was written",
                                 hint="remove it, or give -o another folder")
        missing = [d for d in reversed(target.parents) if not d.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        self._dirs += missing
        tmp = str(target.parent / f".{target.name}.{secrets.token_hex(6)}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        handle = os.fdopen(fd, "w", encoding="utf-8", newline="" if csv else "\n")
        self._files[name] = (tmp, handle)
        return handle

    def commit(self) -> list[Path]:
        for _, handle in self._files.values():
            handle.flush()
            os.fsync(handle.fileno())
            handle.close()
        written = []
        for name, (tmp, _) in sorted(self._files.items()):
            target = self.file or self.out / name
            os.replace(tmp, target)
            written.append(target)
        self._files.clear()
        return written

    def rollback(self) -> None:
        for tmp, handle in self._files.values():
            handle.close()
            Path(tmp).unlink(missing_ok=True)
        self._files.clear()
        for folder in reversed(self._dirs):
            if not any(folder.iterdir()):
                folder.rmdir()
        if self.created and not any(self.out.iterdir()):
            self.out.rmdir()
