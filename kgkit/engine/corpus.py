"""A corpus run: folders and files in, one run folder per document, one line per document
in ``runs.jsonl``.

Folders are walked recursively (links not followed, hidden entries skipped) and their
files kept by ``--include`` globs (default: the formats the loader reads) less
``--exclude`` ones, matched against the path below the folder. Documents are then loaded,
extracted and written one at a time (two overlap when a model answers, see
:func:`kgkit.engine.run.overlapped`), so memory is bounded by the largest documents, not
the corpus. Two inputs with the same name in different folders get distinct run folders
(the differing folders are prefixed: ``a__notes`` and ``b__notes``).
"""
from __future__ import annotations

import fnmatch
import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

from kgkit.guards.atomic import TEMP_SUFFIX, atomic_write
from kgkit.errors import InputError

DEFAULT_INCLUDE = ("*.txt", "*.text", "*.md", "*.markdown", "*.html", "*.htm", "*.xhtml", "*.pdf", "*.docx")
CORPUS_MANIFEST = "runs.jsonl"


@dataclass(frozen=True)
class CorpusInput:
    """One document of a corpus run: where it is read from, which run folder it gets."""

    path: str | os.PathLike  # "-" for stdin
    folder: str  # the run folder's name under --out


def collect_inputs(paths: Sequence[str | os.PathLike], include: Sequence[str] = (),
                   exclude: Sequence[str] = ()) -> list[CorpusInput]:
    """The documents ``paths`` name, folders expanded, each with a distinct run folder name.

    A file named on the command line is always taken (globs filter folders only); one that
    does not exist is an InputError (exit 2) before anything runs."""
    from kgkit.documents.load import safe_name

    found: list[tuple[str | os.PathLike, tuple[str, ...]]] = []  # (path, name parts: folders + stem)
    for given in paths:
        if str(given) == "-":
            found.append(("-", ("stdin",)))
            continue
        path = Path(given)
        if path.is_dir():
            for file in walk(path, include or DEFAULT_INCLUDE, exclude):
                rel = file.relative_to(path)
                found.append((file, (*path.parts[-8:], *rel.parent.parts, file.stem)))
        elif not path.exists() and not path.is_symlink():
            raise InputError(f"{given}: no such file")
        else:
            found.append((given, (*path.parent.parts[-8:], path.stem)))
    seen: set[str] = set()  # a file named twice (or inside two given folders) runs once
    found = [(p, parts) for p, parts in found if str(p) == "-" or _first_time(seen, str(Path(p).resolve()))]
    names = distinct_names([parts for _, parts in found], safe_name)
    return [CorpusInput(path, name) for (path, _), name in zip(found, names)]


def _first_time(seen: set[str], key: str) -> bool:
    """True the first time ``key`` is met (and from then on it is in ``seen``)."""
    if key in seen:
        return False
    seen.add(key)
    return True


def walk(folder: Path, include: Sequence[str], exclude: Sequence[str]) -> list[Path]:
    """Files under ``folder`` matching an ``include`` glob and no ``exclude`` one, sorted;
    hidden files and folders skipped, links not followed."""
    out = []
    for top, dirs, files in os.walk(folder, followlinks=False):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        for name in sorted(files):
            path = Path(top, name)
            rel = path.relative_to(folder).as_posix()
            if name.startswith(".") or path.is_symlink():
                continue
            if _matches(rel, include) and not _matches(rel, exclude):
                out.append(path)
    return out


def _matches(rel: str, globs: Sequence[str]) -> bool:
    """``rel`` (posix, below the folder) matches a glob by its whole path or its file name."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatch(rel, g) or fnmatch.fnmatch(name, g) for g in globs)


def distinct_names(parts: list[tuple[str, ...]], safe_name) -> list[str]:
    """A run folder name per input: its file's stem, prefixed by as many of its folders as
    tell it apart from the others with that stem; a digest of the whole path if nothing does."""
    names = [safe_name(p[-1]) for p in parts]
    for depth in range(1, 9):
        clashes = {n for n, count in Counter(names).items() if count > 1}
        if not clashes:
            return names
        names = [safe_name("__".join(p[-1 - depth:])) if n in clashes else n for n, p in zip(names, parts)]
    clashes = {n for n, count in Counter(names).items() if count > 1}
    return [f"{n}-{hashlib.sha256('/'.join(p).encode()).hexdigest()[:8]}" if n in clashes else n
            for n, p in zip(names, parts)]


class CorpusManifest:
    """``runs.jsonl`` in --out: one line per document of the last corpus run, written as each
    document ends, so it is complete up to the document in progress.

    The first line replaces the file atomically (a new run's lines never mix with the last
    run's); each later one is appended with one write and synced, so a corpus of n documents
    writes n lines, not the n²/2 a rewrite per document cost (15 GB at 10,000 documents)."""

    def __init__(self, out_dir: Path):
        self.path = Path(out_dir) / CORPUS_MANIFEST
        self._started = False
        for stale in Path(out_dir).glob(f".{CORPUS_MANIFEST}.*{TEMP_SUFFIX}"):  # left by a killed run
            if stale.is_file() and not stale.is_symlink():
                stale.unlink()

    def add(self, row: dict[str, Any]) -> None:
        line = (json.dumps(row, ensure_ascii=False, allow_nan=False) + "\n").encode("utf-8")
        if not self._started:
            atomic_write(self.path, line)
            self._started = True
            return
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC)
        try:
            written = os.write(fd, line)
            while written < len(line):
                written += os.write(fd, memoryview(line)[written:])
            os.fsync(fd)
        finally:
            os.close(fd)


def run_row(document: CorpusInput, manifest: dict[str, Any]) -> dict[str, Any]:
    """The ``runs.jsonl`` line of a document that ran (``ok``, or ``partial``: some passes failed)."""
    return {"input": str(document.path), "run_folder": document.folder,
            "status": "partial" if manifest["failures"] else "ok",
            "calls": manifest["calls"]["total"], "requests": manifest["calls"]["requests"],
            "tokens": manifest["tokens"], "cost": manifest["cost"], "failures": len(manifest["failures"])}


def skipped_row(document: CorpusInput, error: str) -> dict[str, Any]:
    """The ``runs.jsonl`` line of an input that could not be read (nothing was called for it)."""
    return {"input": str(document.path), "run_folder": document.folder, "status": "unreadable",
            "calls": 0, "requests": 0, "tokens": {"in": 0, "out": 0, "cached_in": 0}, "cost": 0.0,
            "error": error}
