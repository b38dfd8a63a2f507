"""Export files appear whole or not at all, and only inside the output folder.

Each file is written to a hidden temporary file beside its final name, inside ``out``;
only when every file of the export is complete are they renamed into place. A failure
part-way removes the temporaries (and ``out`` itself if this export created it), so a
reader never finds half a GraphML file or a Neo4j import missing its relationships. A
sub-folder of ``out`` that is a symbolic link (``OUT/neo4j`` pointing elsewhere) is refused
before anything is written: nothing leaves ``out``.
"""
from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TextIO

from kgkit.errors import InputError


class StagedOutput:
    """Open files by name with :meth:`open`; :meth:`commit` moves them all into place."""

    def __init__(self, out: str | os.PathLike):
        self.out = Path(out)
        if self.out.exists() and not self.out.is_dir():
            raise InputError(f"export output {self.out} exists and is not a folder",
                             hint="give -o a folder; each format writes its own file names into it")
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
        target = self.out / name
        below = [d for d in reversed(target.parents) if d.is_relative_to(self.out) and d != self.out]
        for folder in below:  # OUT/neo4j a link to elsewhere: nothing is written through it
            if folder.is_symlink() or (folder.exists() and not folder.is_dir()):
                raise InputError(f"export output {folder} is {'a symbolic link' if folder.is_symlink() else 'a file'}"
                                 ", not a folder of this export; nothing was written",
                                 hint="remove it, or give -o another folder")
        missing = [d for d in reversed(target.parents) if not d.exists()]
        target.parent.mkdir(parents=True, exist_ok=True)
        self._dirs += missing
        fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
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
            os.replace(tmp, self.out / name)
            written.append(self.out / name)
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
