"""A vault's graph written as a run folder, the same contract ``kgkit extract`` keeps.

``manifest.json`` (the vault's content hash as its input), ``nodes.json`` (articles,
topics, sources, and what the model layer added), ``views/wiki.json`` (every edge with its
weight and evidence, and the reading tour), ``review.jsonl`` (each broken or ambiguous
link, for ``kgkit graph review``) and ``wiki_report.json`` (counts, warnings, the merge's
figures). ``kgkit graph add`` takes the folder like any other; every file is written
atomically under the folder's lock, the manifest last.
"""
from __future__ import annotations

import datetime
import hashlib
import json
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgkit import __version__
from kgkit.documents.load import safe_name
from kgkit.engine.outputs import RunFolder
from kgkit.wiki.baseline import DOMAIN, Graph, link_cycles
from kgkit.wiki.vault import Vault, note_bytes

VIEW = "wiki"
REPORT = "wiki_report.json"


@dataclass
class WikiRun:
    run_dir: Path
    manifest: dict[str, Any]
    report: dict[str, Any]
    graph: Graph


def vault_digest(vault: Vault) -> str:
    """sha256 over every note's path and bytes and every file's path and size: the vault's identity."""
    digest = hashlib.sha256()
    for note in sorted(vault.notes, key=lambda n: n.path):
        digest.update(note.path.encode() + b"\0")
        try:
            digest.update(hashlib.sha256(note_bytes(vault.root, note.path)).digest() if note.scanned
                          else str(note.bytes).encode())
        except OSError:  # gone since the scan: its size stands for it
            digest.update(str(note.bytes).encode())
    for src in vault.sources:
        digest.update(f"{src.path}\0{src.bytes}".encode())
    return digest.hexdigest()


def baseline_report(vault: Vault, graph: Graph) -> dict[str, Any]:
    """What the scan found, counted: the figures a curator checks first."""
    statuses = Counter(link.status for link in vault.links)
    self_links = sum(1 for link in vault.links if link.status == "resolved" and link.target == link.source)
    on_cycles, cycles = link_cycles(vault)
    relations = Counter(e["relation"] for e in graph.edges)
    return {
        "vault": str(vault.root),
        "articles": len(vault.notes),
        "index_notes": vault.index_notes,
        "links": len(vault.links),
        "links_by_status": dict(sorted(statuses.items())),
        "links_by_kind": dict(sorted(Counter(link.kind for link in vault.links).items())),
        "broken_links": statuses.get("broken", 0),
        "ambiguous_links": statuses.get("ambiguous", 0),
        "missing_files": statuses.get("missing_file", 0),
        "self_links": self_links + statuses.get("self", 0),
        "name_collisions": [{"name": name, "notes": same} for name, same in vault.collisions],
        "notes_on_link_cycles": on_cycles,
        "link_cycles": cycles,
        "topics": len(vault.categories),
        "sources": len(vault.sources),
        "edges": dict(sorted(relations.items())),
        "reading_tour": graph.tour,
        "model_calls": 0,
        "warnings": [p.format() for p in vault.problems],
    }


def review_entries(vault: Vault) -> list[dict[str, Any]]:
    """Broken and ambiguous links, one review entry each: a person decides, nothing is guessed."""
    out = []
    for link in vault.links:
        if link.status in ("broken", "ambiguous", "missing_file"):
            reason = {"broken": "broken link", "ambiguous": "ambiguous link",
                      "missing_file": "link to a missing file"}[link.status]
            out.append({"stage": VIEW, "chunk": f"{link.file}:{link.line}", "reason": reason,
                        "item": {"link": link.written, "file": link.file, "line": link.line,
                                 "candidates": link.candidates}})
    return out


def _domain_ref() -> dict[str, Any]:
    """The knowledge_base domain as every manifest names a domain: name, version, file, hash."""
    from kgkit.engine.manifest import file_ref
    from kgkit.catalog.load import load_domain

    domain = load_domain(DOMAIN)
    return {"name": domain.name, "version": domain.version, "lineage": list(domain.lineage),
            **file_ref(domain.source)}


def write_run(vault: Vault, graph: Graph, out_dir: str | Path, *, report: dict[str, Any],
              model: dict[str, Any] | None = None, usage: dict[str, Any] | None = None,
              seconds: float = 0.0) -> WikiRun:
    """Write the run folder ``out_dir/<vault name>`` and return what it holds."""
    started = datetime.datetime.now(datetime.timezone.utc)
    sha = vault_digest(vault)
    doc_id = "d_" + sha[:16]
    name = safe_name(vault.root.resolve().name)
    folder = RunFolder(Path(out_dir) / name)
    usage = usage or {"calls": 0, "requests": 0, "tokens_in": 0, "tokens_out": 0, "cost": 0.0, "failed": []}
    payload = {"view": VIEW, "mode": "wiki.v1", "doc_id": doc_id, "edges": graph.edges, "tour": graph.tour}
    manifest = {
        "kgkit_version": __version__,
        "created": started.isoformat(timespec="seconds"),
        "reader": "wiki",
        "input": {"path": str(vault.root), "sha256": sha, "doc_id": doc_id, "media_type": "inode/directory",
                  "title": name, "pages": 0, "chunks": len(vault.notes), "characters": 0,
                  "notes": len(vault.notes)},
        "domain": _domain_ref(),
        "views": [{"name": VIEW, "mode": "wiki.v1", "strategy": "reader", "output": f"views/{VIEW}.json"}],
        "view_files": [f"views/{VIEW}.json"],
        "model": model or {"core": {"backend": "none"}, "upgrades": {"backend": "none"}},
        "skills": [],
        "calls": {"core": usage["calls"], "upgrade": {}, "projection": 0, "total": usage["calls"],
                  "naive": usage["calls"], "executed": usage["calls"], "reused": 0, "cache_hits": 0,
                  "requests": usage["requests"], "retries": 0, "skipped": {}, "saved": 0},
        "tokens": {"in": usage["tokens_in"], "out": usage["tokens_out"]},
        "cost": usage["cost"],
        "timings": {"wiki": round(seconds, 3)},
        "counts": {"nodes": len(graph.nodes), "edges": {VIEW: len(graph.edges)},
                   "review": 0},
        "warnings": report["warnings"],
        "failures": usage["failed"],
    }
    review = review_entries(vault)
    manifest["counts"]["review"] = len(review)
    with folder.locked():
        folder.remove_temp_files()
        folder.remove_stale_views({f"{VIEW}.json"})
        folder.write_json("nodes.json", {"doc_id": doc_id, "nodes": graph.nodes})
        folder.write_json(f"views/{VIEW}.json", payload)
        folder.write_jsonl("review.jsonl", review)
        folder.write_json(REPORT, report)
        folder.write_json("manifest.json", manifest)  # last: a folder with a manifest is complete
    return WikiRun(folder.path, manifest, report, graph)


def dumps_report(report: dict[str, Any]) -> str:
    return json.dumps(report, indent=2, ensure_ascii=False)
