"""The run folder a user keeps: manifest, node table, one file per view, review, state.

Every file is written atomically — a temp file in the same folder, fsync, ``os.replace``
— so an interrupted run leaves either the old file or the new one, never half of one.
``state/`` holds each completed pass's answer under a fingerprint of everything that
shaped it; a later run (``--resume``, or one adding a view) reuses it instead of calling
the backend again, and a changed input, schema or model simply misses.
"""
from __future__ import annotations

import hashlib
import json
import os
import tempfile
from pathlib import Path
from typing import Any, Iterable

from kgkit.errors import InputError


def view_file_name(view_name: str) -> str:
    """``diy:contract_review`` -> ``diy.contract_review.json`` (no ':' in file names;
    view and template names cannot contain '.', so the mapping is one-to-one)."""
    return view_name.replace(":", ".") + ".json"


def atomic_write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def dumps(data: Any) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False) + "\n"


def fingerprint(parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


class RunFolder:
    def __init__(self, path: Path):
        self.path = Path(path)
        if self.path.exists() and not self.path.is_dir():
            raise InputError(f"output path {self.path} exists and is not a folder")

    @property
    def views_dir(self) -> Path:
        return self.path / "views"

    def write_json(self, relative: str, data: Any) -> Path:
        target = self.path / relative
        atomic_write(target, dumps(data))
        return target

    def write_jsonl(self, relative: str, rows: Iterable[Any]) -> Path:
        target = self.path / relative
        atomic_write(target, "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows))
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
        """Delete temp files that a killed run left before its ``os.replace`` (``.name.XXXX.tmp``):
        the real file is either the old one or absent, so the temp copy is never needed."""
        if self.path.is_dir():
            for path in self.path.rglob(".*.tmp"):
                if path.is_file():
                    path.unlink()

    def remove_stale_views(self, keep: set[str]) -> None:
        """Drop view files of an earlier run that this run does not produce."""
        if self.views_dir.is_dir():
            for path in self.views_dir.glob("*.json"):
                if path.name not in keep:
                    path.unlink()

    # -- state: one file per completed pass ------------------------------------------------

    def _state_path(self, stage: str, chunk_id: str) -> Path:
        return self.path / "state" / stage.replace(":", ".") / f"{chunk_id}.json"

    def load_pass(self, stage: str, chunk_id: str, key: str) -> dict[str, Any] | None:
        """The stored answer of a completed pass with this fingerprint, else None."""
        path = self._state_path(stage, chunk_id)
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, json.JSONDecodeError):
            return None
        return record["data"] if record.get("fingerprint") == key else None

    def save_pass(self, stage: str, chunk_id: str, key: str, data: dict[str, Any], model: str) -> None:
        atomic_write(self._state_path(stage, chunk_id),
                     json.dumps({"fingerprint": key, "model": model, "data": data}, ensure_ascii=False))
