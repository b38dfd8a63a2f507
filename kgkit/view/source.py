"""What ``kgkit view`` is pointed at, opened as a graph store.

A store (a SQLite file or a ``postgresql://`` URL) is read as it is. Run folders (one, or
the ``--out`` folder of a corpus run) are loaded into a throwaway SQLite store first, with
the same checks and cross-document resolution as ``kgkit graph add``, so the page of a run
folder and of a corpus are one kind of page, and a broken folder is refused the same way.
"""
from __future__ import annotations

import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Iterator

from kgkit.errors import InputError

if TYPE_CHECKING:
    from kgkit.graph import GraphStore


def is_store_url(target: str) -> bool:
    return target.startswith(("postgresql://", "postgres://"))


@contextmanager
def open_target(target: str, *, tenant: str | None = None, config=None) -> Iterator["GraphStore"]:
    """The store ``target`` names; for run folders a temp store, gone on exit (nothing is
    written outside the temp folder)."""
    from kgkit.graph import DEFAULT_TENANT, GraphStore
    from kgkit.graph.run_folders import expand_run_folders, is_run_folder

    def store(url: str, tenant_: str | None) -> GraphStore:
        if config is not None:
            return GraphStore.from_config(config, url=url, tenant=tenant_)
        return GraphStore(url, tenant_ or DEFAULT_TENANT)

    path = Path(target)
    if is_store_url(target) or path.is_file():
        with store(target, tenant) as graph:
            yield graph
        return
    if not path.is_dir():
        raise InputError(f"{target}: no such run folder or graph store",
                         hint="give a run folder, a corpus --out folder, a .sqlite store or a postgresql:// URL")
    runs = expand_run_folders([path])
    if not all(is_run_folder(r) for r in runs):
        raise InputError(f"{target}: not a run folder (no nodes.json) and holds none",
                         hint="give what `kgkit extract` wrote, or a graph store")
    if tenant:
        raise InputError("--tenant names a tenant of a graph store; a run folder has none")
    with tempfile.TemporaryDirectory(prefix="kgkit-view-") as tmp:
        with store(str(Path(tmp) / "view.sqlite"), None) as graph:
            graph.add(runs)
            yield graph
