"""The run folder a user keeps: manifest, node table, one file per view, review, state.

Every file is written atomically — a temp file in the same folder, fsync, ``os.replace``
— so an interrupted run leaves either the old file or the new one, never half of one.
Files are created with mode 0666 less the process umask, as any other tool's would be.

A run folder is a place other people can write to, so a run trusts nothing in it: it
refuses a run folder that is a symbolic link or holds one (a link in ``views/`` or
``state/`` would send writes, deletions and reads outside ``--out``), and it holds an
exclusive lock (``flock`` on ``.kgkit.lock`` inside the folder) from before the first
call to the last write, so a second run into the same folder stops at once (exit 2)
instead of paying for the same passes and clearing the first one's temp files.
``state/`` holds each completed pass's answer under a fingerprint of everything that
shaped it; a later run (``--resume``, or one adding a view) reuses it instead of calling
the backend again, and a changed input, schema or model simply misses. A state file is
renamed into place as soon as its pass completes, so a killed run (SIGKILL, Ctrl-C) loses
only the passes in flight: the kernel keeps what was written. What only a power cut could
lose is made durable once per stage (:meth:`RunFolder.sync_state`, in the background)
rather than by an fsync per pass, which cost more CPU than the pass's own request.
"""
from __future__ import annotations

import atexit
import fcntl
import functools
import hashlib
import json
import os
import sys
import threading
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from kgkit.errors import InputError
from kgkit.guards.atomic import TEMP_SUFFIX, atomic_write


def view_file_name(view_name: str) -> str:
    """``diy:contract_review`` -> ``diy.contract_review.json`` (no ':' in file names;
    view and template names cannot contain '.', so the mapping is one-to-one)."""
    return view_name.replace(":", ".") + ".json"


LOCK_FILE = ".kgkit.lock"


class _Syncer:
    """Makes written files durable in the background, a batch at a time: one ``syncfs`` of
    their file system where Linux has it, else an fsync of each. Pending files are flushed
    at exit too, so a finished run leaves nothing only in memory."""

    def __init__(self) -> None:
        self._pending: set[Path] = set()
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._thread: threading.Thread | None = None

    def add(self, paths: Iterable[Path]) -> None:
        with self._lock:
            self._pending.update(paths)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="kgkit-sync", daemon=True)
                self._thread.start()
                atexit.register(self.flush)
        self._wake.set()

    def _run(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()
            self.flush()

    def flush(self) -> None:
        with self._lock:
            paths, self._pending = self._pending, set()
        if paths:
            _make_durable(paths)


def _make_durable(paths: set[Path]) -> None:
    folders = {p.parent for p in paths}
    syncfs = _syncfs()
    for target in (folders if syncfs else paths | folders):
        try:
            fd = os.open(target, os.O_RDONLY | os.O_CLOEXEC)
        except OSError:
            continue  # removed since (--replace-views, a cleared folder): nothing to keep
        try:
            if syncfs:
                syncfs(fd)
                break  # one file system under one run folder: one call covers them all
            os.fsync(fd)
        except OSError:
            pass
        finally:
            os.close(fd)


@functools.lru_cache(maxsize=1)
def _syncfs():
    """libc's ``syncfs`` (Linux), or None."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).syncfs
    except (OSError, AttributeError):
        return None


_SYNCER = _Syncer()


def sync_later(paths: Iterable[Path]) -> None:
    """Make ``paths`` (written with ``durable=False``) durable soon, off the caller's thread."""
    _SYNCER.add(paths)


def dumps(data: Any) -> bytes:
    """JSON as the run folder holds it, UTF-8; NaN or Infinity is an error, never invalid JSON.

    The text is ``json.dumps``'s (indent 2, no escapes beyond JSON's own), written by
    orjson where :func:`_orjson_text` shows it is the same: ``json``'s indenting encoder
    runs in Python and was a tenth of an offline run with every view.
    """
    text = _orjson_text(data)
    if text is None:
        text = (json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False, allow_nan=False) + "\n").encode()
    return text


_STATE = json.JSONEncoder(ensure_ascii=False, allow_nan=False)  # a state file, one line: json.dumps with these
_COMPACT = json.JSONEncoder(ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":"))


def _orjson_text(data: Any) -> bytes | None:
    """``json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False)`` and a newline,
    written by orjson, or None where it could differ.

    Both indent alike, so the texts are equal when their tokens are: orjson's compact text
    must be ``json``'s compact text (``json``'s encoder in C), or ``json`` writes. That
    catches every difference — a number orjson writes otherwise (``0.00001`` for
    ``1e-05``), NaN (orjson writes null, ``json`` refuses it), a value one of them refuses
    (a dataclass, a date, an integer beyond 64 bits, a key that is not a string) — and
    ``json`` then writes the text or raises its own error.
    """
    import orjson

    if not isinstance(data, (dict, list)):
        return None  # a bare value: nothing to gain
    try:
        compact = orjson.dumps(data)
        if compact.decode() != _COMPACT.encode(data):
            return None
    except (TypeError, ValueError, RecursionError):  # orjson.JSONEncodeError is a TypeError
        return None
    return orjson.dumps(data, option=orjson.OPT_INDENT_2 | orjson.OPT_APPEND_NEWLINE)


def fingerprint(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class RunFolder:
    def __init__(self, path: Path):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"output path {self.path} exists and is not a folder")
        self._lock: int | None = None
        self._unsynced: list[Path] = []  # state files written since the last sync_state()
        self._created: list[Path] = []  # folders open() made, deepest first: removed again if left empty

    @contextmanager
    def locked(self) -> Iterator["RunFolder"]:
        """Hold the folder for one run: created if needed, checked, locked; released after.

        Raises InputError (exit 2) before any call when the folder cannot be written, is or
        holds a symbolic link, or another run holds it.
        """
        self.open()
        try:
            yield self
        finally:
            self.release()

    def open(self) -> None:
        """Create the folder if needed, refuse links in it, take its lock (see :meth:`locked`)."""
        if self.path.is_symlink():
            raise InputError(f"run folder {self.path} is a symbolic link; kgkit does not write through links",
                             hint="choose another --out")
        self._created = [p for p in (self.path, *self.path.parents) if not os.path.lexists(p)]
        try:
            self.path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise InputError(f"cannot create the run folder {self.path}: {exc.strerror or exc}",
                             hint="--out must name a folder you can write to") from None
        if self.path.is_symlink() or not self.path.is_dir():
            raise InputError(f"output path {self.path} is not a folder", hint="choose another --out")
        self.refuse_links()
        lock = self.path / LOCK_FILE
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o666)
        except OSError as exc:
            raise InputError(f"cannot write to the run folder {self.path}: {exc.strerror or exc}",
                             hint="--out must name a folder you can write to") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            # the file may have been removed by the run that just released it: then ours is stale
            held = os.fstat(fd)
            now = os.stat(lock, follow_symlinks=False)
            if (held.st_dev, held.st_ino) != (now.st_dev, now.st_ino):
                raise BlockingIOError
        except (BlockingIOError, FileNotFoundError):
            os.close(fd)
            raise InputError(f"another kgkit run is writing to {self.path}",
                             hint="wait for it to finish, or choose another --out") from None
        self._lock = fd

    def release(self) -> None:
        """Remove the lock file and let go (removed while still held, so no run can take a stale one).

        A run that stopped before writing anything (a missing key, a refused first call)
        leaves no empty folder behind: the folders :meth:`open` created go again while empty."""
        if self._lock is not None:
            (self.path / LOCK_FILE).unlink(missing_ok=True)
            os.close(self._lock)
            self._lock = None
        for folder in self._created:
            try:
                folder.rmdir()  # only succeeds on an empty folder
            except OSError:
                break
        self._created = []

    def refuse_links(self) -> None:
        """InputError naming the first symbolic link in the folder: kgkit follows none."""
        for top, dirs, files in os.walk(self.path, followlinks=False):
            for name in sorted(dirs + files):
                if os.path.islink(os.path.join(top, name)):
                    raise InputError(f"{os.path.join(top, name)} is a symbolic link inside the run folder; "
                                     "kgkit never follows links there", hint="remove it, or choose another --out")

    def _inside(self, relative: str) -> Path:
        """``relative`` under the folder, refusing a link on the way (one made since the run began)."""
        at = str(self.path)
        for part in Path(relative).parts:
            at = os.path.join(at, part)
            if os.path.islink(at):
                raise InputError(f"{at} is a symbolic link inside the run folder; "
                                 "kgkit never follows links there", hint="remove it, or choose another --out")
        return Path(at)

    @property
    def views_dir(self) -> Path:
        return self.path / "views"

    def write_json(self, relative: str, data: Any) -> Path:
        target = self._inside(relative)
        atomic_write(target, dumps(data))
        return target

    def write_jsonl(self, relative: str, rows: Iterable[Any]) -> Path:
        target = self._inside(relative)
        atomic_write(target, "".join(json.dumps(r, ensure_ascii=False, default=str, allow_nan=False) + "\n"
                                     for r in rows))
        return target

    def read_manifest(self) -> dict[str, Any] | None:
        path = self.path / "manifest.json"
        if not path.is_file():
            return None
        try:
            return json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            raise InputError(f"{path} is not valid JSON ({exc}); remove the run folder or choose another --out")

    def remove_temp_files(self) -> None:
        """Delete the temp files a killed run left before its ``os.replace``: ours only (named
        ``*.kgkit-tmp``), regular files only, and only while this run holds the lock, so no
        other run can be writing them."""
        assert self._lock is not None, "lock the run folder first"
        for path in self.path.rglob(f"*{TEMP_SUFFIX}"):
            if path.is_file() and not path.is_symlink():
                path.unlink()

    def remove_stale_views(self, keep: set[str]) -> None:
        """Drop view files of an earlier run that this run does not produce."""
        if self.views_dir.is_dir():
            for path in self.views_dir.glob("*.json"):
                if path.name not in keep:
                    path.unlink()

    # -- state: one file per completed pass ------------------------------------------------

    @staticmethod
    def _state_file(stage: str, chunk_id: str) -> str:
        """A pass's state file, relative to the run folder."""
        return f"state/{stage.replace(':', '.')}/{chunk_id}.json"

    def load_pass(self, stage: str, chunk_id: str, key: str) -> dict[str, Any] | None:
        """The stored answer of a completed pass with this fingerprint, else None."""
        try:  # never through a link (refuse_links has refused the run already); most are not stored yet
            fd = os.open(os.path.join(self.path, self._state_file(stage, chunk_id)),
                         os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC)
        except OSError:
            return None
        try:
            with open(fd, encoding="utf-8") as fh:
                record = json.loads(fh.read())
        except (OSError, json.JSONDecodeError):
            return None
        return record["data"] if record.get("fingerprint") == key else None

    def save_pass(self, stage: str, chunk_id: str, key: str, data: dict[str, Any], model: str) -> None:
        path = self._inside(self._state_file(stage, chunk_id))
        atomic_write(path, _STATE.encode({"fingerprint": key, "model": model, "data": data}), durable=False)
        self._unsynced.append(path)  # list.append is atomic: worker threads save at once

    def sync_state(self) -> None:
        """The end of a stage: make its state files durable, in the background."""
        done, self._unsynced = self._unsynced, []
        if done:
            sync_later(done)
