"""``manifest.json``: what a run read, which files and model shaped it, what it cost.

Everything needed to audit or reproduce a run folder: the input's hash and document id,
the domain, view, prompt and template files with their hashes, the model and parameters
(as the backend describes them — never credentials), the skills given to the core, the
call budget beside the naive figure, tokens, cost, timings, counts, warnings, failures.
"""
from __future__ import annotations

import datetime
import hashlib
from pathlib import Path
from typing import Any

from kgkit import __version__
from kgkit.backends.base import Backend
from kgkit.documents.types import Document
from kgkit.engine.accounting import Accounting
from kgkit.engine.join import items_of
from kgkit.engine.outputs import view_file_name
from kgkit.formats.model import Domain, View


def file_ref(path: Path | None) -> dict[str, Any]:
    """``{"file", "sha256"}`` of a file the run read (None for in-memory objects)."""
    digest = hashlib.sha256(path.read_bytes()).hexdigest() if path and path.is_file() else None
    return {"file": str(path) if path else None, "sha256": digest}


def clients(backends: tuple[Backend, Backend]) -> dict[str, Any]:
    """``{"client": {"core": ..., "upgrades": ...}}``: who sent each stage's requests (direct
    or litellm), kept out of ``describe()`` because it does not change the answers (a resume
    with the other client pays nothing again); nothing for backends without a client."""
    named = {stage: getattr(b, "llm_client", None) for stage, b in zip(("core", "upgrades"), backends)}
    return {"client": named} if any(named.values()) else {}


def described(backend: Backend) -> dict[str, Any]:
    """``backend.describe()`` for the manifest, its ``backend`` naming the client that sent the
    requests (``direct`` or ``litellm``) where it has one: a manifest reading ``litellm``
    beside ``client: direct`` told a reader the wrong thing. The resume key keeps
    ``describe()`` as it is, so switching clients still pays nothing again."""
    out = backend.describe()
    client = getattr(backend, "llm_client", None)
    return {**out, "backend": client} if client and "backend" in out else out


def build_manifest(*, doc: Document, domain: Domain, views: list[View], backends: tuple[Backend, Backend],
                   skills: list[dict[str, Any]], accounting: Accounting, started: datetime.datetime,
                   counts: dict[str, Any], payloads: dict[str, dict[str, Any]], warnings: list[str],
                   failures: list[dict[str, Any]], view_files: list[str]) -> dict[str, Any]:
    return {
        "kgkit_version": __version__,
        "created": started.isoformat(timespec="seconds"),
        "input": {"path": doc.source, "sha256": doc.sha256, "doc_id": doc.id, "media_type": doc.media_type,
                  "title": doc.title, "pages": len(doc.pages), "chunks": accounting.n_chunks,
                  "characters": len(doc.text)},
        "domain": {"name": domain.name, "version": domain.version, "lineage": list(domain.lineage),
                   **file_ref(domain.source)},
        "views": [{"name": v.name, "mode": v.mode, "strategy": v.strategy, **file_ref(v.source),
                   "prompt": file_ref(v.prompt) if v.prompt else None,
                   "template": {"name": v.template.name, **file_ref(v.template.source)} if v.template else None,
                   "output": f"views/{view_file_name(v.name)}"} for v in views],
        "view_files": [f"views/{name}" for name in view_files],
        "model": {"core": described(backends[0]), "upgrades": described(backends[1]),
                  "output_format": dict(accounting.output_formats), **clients(backends)},
        "skills": [s.get("id") for s in skills],
        "calls": accounting.calls(),
        "tokens": accounting.tokens(),
        "answers": dict(accounting.answers),
        "cost": accounting.cost(),
        "timings": dict(accounting.timings),
        "counts": {**counts, "edges": {name: len(items_of(p)) for name, p in payloads.items()}},
        "warnings": warnings,
        "failures": failures,
    }
