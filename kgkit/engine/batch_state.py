"""``state/batch.json``: what a ``--batch`` run submitted and what came back, and the
``kgkit batch`` commands that read it (status, forget).

Kept in the run folder beside the other pass records, so a run folder carries its own batch
history: the next run (any process, any day) finds its batches there.
"""
from __future__ import annotations

import json
import os
import time
from pathlib import Path
from typing import Any, Callable, Sequence

from kgkit.config.model import Config
from kgkit.engine.outputs import RunFolder
from kgkit.errors import InputError, NotFoundError

STATE_FILE = "state/batch.json"
STATE_VERSION = 1

_STRING = {"type": "string"}
# What BatchStore and the batch backend read of the file: a file of another shape (hand-edited, another
# program's, truncated to `[]`) is refused by name instead of failing somewhere inside a resume
SHAPE: dict[str, Any] = {
    "type": "object", "required": ["jobs", "passes"],
    "properties": {
        "jobs": {"type": "array", "items": {
            "type": "object", "required": ["id", "wire", "model", "stage", "lines"],
            "properties": {"id": _STRING, "wire": _STRING, "model": _STRING, "stage": _STRING,
                           "lines": {"type": "array", "items": _STRING}, "collected": {"type": "boolean"},
                           "status": {"type": ["string", "null"]}}}},
        "passes": {"type": "object", "additionalProperties": {
            "type": "object", "required": ["answers", "errors"],
            "properties": {
                "answers": {"type": "array", "items": {
                    "type": "object", "required": ["text", "finish", "usage"],
                    "properties": {"text": _STRING, "finish": {"type": ["string", "null"]},
                                   "usage": {"type": "object"}}}},
                "errors": {"type": "array", "items": {
                    "type": "object", "required": ["status", "error"],
                    "properties": {"status": {"type": ["integer", "null"]}, "error": _STRING}}},
                "direct": {"type": "object", "additionalProperties": False,
                           "required": ["data", "ok", "error", "raw", "requests", "retries", "model",
                                        "output_format", "usage"],
                           "properties": {"data": {}, "ok": {"type": "boolean"}, "error": {}, "raw": {},
                                          "requests": {"type": "integer"}, "retries": {"type": "integer"},
                                          "model": {}, "output_format": {}, "usage": {"type": "object"}}}}}}}}


def _shape_problem(data: Any) -> str | None:
    """Where and how ``data`` is not a batch record of SHAPE, or None."""
    import jsonschema_rs

    error = next(iter(jsonschema_rs.Draft202012Validator(SHAPE).iter_errors(data)), None)
    if error is None:
        return None
    place = "/".join(str(p) for p in error.instance_path) or "the top level"
    return f"{place}: {error.message[:200]}"


class BatchStore:
    """``state/batch.json`` of one run folder: the batches submitted and every line's outcome.

    ``jobs``: one per batch (id, wire, model, stage, the pass keys it carries, whether it
    was collected). ``passes``: per pass key (the response cache's key, which holds
    everything the answer depends on), the answers batches brought back (the first ask,
    then the re-ask) and the errors of lines that brought none; ``direct`` for a pass
    answered directly after its batch failed it.
    """

    def __init__(self, folder: RunFolder):
        self.folder = folder
        self.path = folder.path / STATE_FILE
        self.data: dict[str, Any] = {"version": STATE_VERSION, "jobs": [], "passes": {}}
        if self.path.is_file() and not self.path.is_symlink():
            try:
                self.data = json.loads(self.path.read_text(encoding="utf-8"))
            except ValueError as exc:
                raise InputError(f"{self.path} is not valid JSON ({exc})",
                                 hint="restore it, or remove it to submit the unanswered passes again") from None
            problem = _shape_problem(self.data)
            if problem is not None:
                raise InputError(f"{self.path}: {problem}; not a batch record kgkit wrote",
                                 hint="restore it, or remove it to submit the unanswered passes again")

    @property
    def jobs(self) -> list[dict[str, Any]]:
        return self.data["jobs"]

    def open_jobs(self) -> list[dict[str, Any]]:
        return [job for job in self.jobs if not job.get("collected")]

    def entry(self, key: str) -> dict[str, Any]:
        return self.data["passes"].setdefault(key, {"answers": [], "errors": []})

    def peek(self, key: str) -> dict[str, Any]:
        return self.data["passes"].get(key) or {"answers": [], "errors": []}

    def save(self) -> None:
        self.folder.write_json(STATE_FILE, self.data)

    def collect(self, job: dict[str, Any], status: str, results: dict[str, Any]) -> None:
        """Keep what an ended batch brought back, line by line; a line without a result
        (expired, cancelled) is an error a retry can clear."""
        for key in job["lines"]:
            found = results.get(key)
            entry = self.entry(key)
            if found is not None and found.text is not None:
                entry["answers"].append({"text": found.text, "finish": found.finish, "usage": found.usage})
            else:
                entry["errors"].append({"status": found.status if found else 0,
                                        "error": found.error if found else f"no result (the batch is {status})"})
        job["collected"], job["status"] = True, status

    def manifest_entry(self, price: str | None) -> dict[str, Any]:
        """The manifest's ``batch`` key: the mode, every batch with its stage, the price basis."""
        return {"mode": "batch", "price": price,
                "batches": [{"id": j["id"], "stage": j["stage"], "wire": j["wire"], "lines": len(j["lines"]),
                             "status": j.get("status")} for j in self.jobs]}


def resumes_batch(paths: str | os.PathLike | Sequence[str | os.PathLike], out_dir: str | os.PathLike,
                  include: Sequence[str] = (), exclude: Sequence[str] = ()) -> bool:
    """Whether the run folder of one of these inputs records a batch not yet collected: then
    ``--resume`` goes on through batches (running those passes directly would pay twice)."""
    from kgkit.engine.corpus import collect_inputs
    from kgkit.engine.run import path_list

    try:
        inputs = collect_inputs(path_list(paths), include, exclude)
    except InputError:
        return False  # the run itself says what is wrong with the inputs
    for item in inputs:
        folder = Path(out_dir) / item.folder
        if (folder / STATE_FILE).is_file() and BatchStore(RunFolder(folder)).open_jobs():
            return True
    return False


def run_folders_with_batches(root: Path) -> list[Path]:
    """The run folders under ``root`` (or ``root`` itself) that record batches."""
    return sorted(p.parent.parent for p in Path(root).rglob(STATE_FILE.split("/")[-1])
                  if p.parent.name == "state" and p.is_file())


def batch_status(root: str | os.PathLike, config: Config | str | os.PathLike | None = None,
                 ids: Sequence[str] = (), wait: bool = False, every: float = 60.0,
                 sleep: Callable[[float], None] = time.sleep) -> list[dict[str, Any]]:
    """One row per batch recorded under ``root`` (``ids``: only those): its run folder,
    stage, lines and the provider's status, polled now for those not yet collected. With
    ``wait``, polls every ``every`` seconds until none is still running.

    Raises NotFoundError (exit 2) for an id no run folder records, and
    :class:`~kgkit.engine.batch_wire.BatchNotFound` (exit 2) when the provider does not know one."""
    import dataclasses

    from kgkit.backends.llm import LLMBackend
    from kgkit.engine.batch_wire import ENDED, BatchClient
    from kgkit.engine.run import resolve_config

    cfg = resolve_config(config)
    clients: dict[str, Any] = {}
    while True:
        rows = []
        for run_dir in run_folders_with_batches(Path(root)):
            store = BatchStore(RunFolder(run_dir))
            for job in store.jobs:
                if ids and job["id"] not in ids:
                    continue
                state = ENDED if job.get("collected") else None
                detail = job.get("status")
                if state is None:
                    if job["model"] not in clients:
                        settings = dataclasses.replace(cfg.llm, model=job["model"], stages={})
                        clients[job["model"]] = BatchClient(LLMBackend(settings))
                    status = clients[job["model"]].poll(job["id"])
                    state, detail = status.state, status.detail
                rows.append({"run_dir": str(run_dir), "batch": job["id"], "stage": job["stage"],
                             "lines": len(job["lines"]), "status": detail, "ended": state == ENDED,
                             "collected": bool(job.get("collected"))})
        missing = sorted(set(ids) - {row["batch"] for row in rows})
        if missing:
            raise NotFoundError(f"no run folder under {root} records batch {', '.join(missing)}",
                                hint="`kgkit batch status --out DIR` lists the batches recorded there")
        if not wait or all(row["ended"] for row in rows):
            return rows
        sleep(every)


def forget_batch(root: str | os.PathLike, batch_id: str) -> Path:
    """Drop a batch from its run folder's record, so the next run submits its unanswered
    passes again (answers already collected stay). Returns the run folder."""
    for run_dir in run_folders_with_batches(Path(root)):
        folder = RunFolder(run_dir)
        with folder.locked():
            store = BatchStore(folder)
            kept = [job for job in store.jobs if job["id"] != batch_id]
            if len(kept) != len(store.jobs):
                store.data["jobs"] = kept
                store.save()
                return run_dir
    raise NotFoundError(f"no run folder under {root} records batch {batch_id}",
                        hint="`kgkit batch status --out DIR` lists the batches recorded there")
