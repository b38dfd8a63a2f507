"""A vault in, a run folder out: the scan, the baseline, the model layer when a model is set.

Without ``llm.model`` the run makes no call at all and the baseline is the whole graph.
With one, the model layer adds entities, claims and implicit edges; a failed batch is a
warning and the baseline stands.
"""
from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path

from kgkit.config.model import Config
from kgkit.wiki.baseline import build_baseline
from kgkit.wiki.enrich import make_batches
from kgkit.wiki.run_folder import WikiRun, baseline_report, vault_digest, write_run
from kgkit.wiki.vault import read_vault


@dataclass(frozen=True)
class WikiPlan:
    vault: str
    notes: int
    batches: int
    calls: int

    def as_dict(self) -> dict[str, object]:
        return {"document": self.vault, "reader": "wiki", "notes": self.notes, "batches": self.batches,
                "calls": {"total": self.calls}}


def plan_vault(path: str | Path, config: Config) -> WikiPlan:
    vault = read_vault(path)
    batches = len(make_batches(vault)) if config.llm.model else 0
    return WikiPlan(str(path), len(vault.notes), batches, batches)


def extract_vault(path: str | Path, *, config: Config, out_dir: str | Path | None = None) -> WikiRun:
    """Read the vault at ``path`` and write its run folder under ``out_dir`` (default: the config's)."""
    start = time.perf_counter()
    vault = read_vault(path)
    graph = build_baseline(vault)
    report = baseline_report(vault, graph)
    usage = model = None
    if config.llm.model:
        from kgkit.wiki.enrich import enrich_vault

        done = enrich_vault(vault, config, graph, doc_id="d_" + vault_digest(vault)[:16])
        usage, model = done.usage, done.model
        report["model_calls"] = done.usage["calls"]
        report["model_layer"] = done.report.as_dict()
        report["warnings"] = report["warnings"] + done.report.warnings
    return write_run(vault, graph, out_dir or config.out_dir, report=report, model=model, usage=usage,
                     seconds=time.perf_counter() - start)
