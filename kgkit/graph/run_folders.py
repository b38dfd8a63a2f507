"""Which run folders a user means by the paths given to ``kgkit graph add``.

A user gives what ``kgkit extract`` wrote: run folders, the ``--out`` folder of a corpus
run (its run folders sit inside it, beside ``runs.jsonl``), or a shell glob of that folder,
which names ``runs.jsonl`` too. Everything else is left to :func:`kgkit.graph.runs.read_run`,
whose errors name the file that is wrong.
"""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from kgkit.engine.corpus import CORPUS_MANIFEST


def is_run_folder(path: Path) -> bool:
    return (path / "nodes.json").is_file()


def expand_run_folders(paths: Iterable[str | Path]) -> list[Path]:
    """Run folders in the order given; a corpus ``--out`` folder stands for its run folders
    (sorted by name), a corpus run's ``runs.jsonl`` for nothing; each folder once."""
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.name == CORPUS_MANIFEST and path.is_file():
            continue
        inner = [] if is_run_folder(path) or not path.is_dir() else sorted(
            p for p in path.iterdir() if p.is_dir() and is_run_folder(p))
        found.extend(inner or [path])
    return list(dict.fromkeys(found))  # each folder once, in the order given
