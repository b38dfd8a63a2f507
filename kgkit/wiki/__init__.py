"""Markdown knowledge bases (Obsidian, Foam, Dendron vaults; "LLM wikis"): read deterministically first.

:func:`read_vault` scans a vault -- articles, every link resolved Obsidian's way, index
sections, linked files -- with zero model calls. :func:`build_baseline` turns that into a
graph (articles, topics, sources; ``related`` and ``categorized_under`` edges), and
:func:`write_run` writes it as a run folder that ``kgkit graph add`` takes like any other.
:func:`enrich_vault` asks a model only for what links do not say and merges its answers
defensively. See docs/wiki.md.
"""
from __future__ import annotations

from kgkit.wiki.vault import Vault, is_vault, read_vault

__all__ = ["Vault", "is_vault", "read_vault", "build_baseline", "enrich_vault", "write_run"]


def __getattr__(name: str):
    if name == "build_baseline":
        from kgkit.wiki.baseline import build_baseline

        return build_baseline
    if name == "enrich_vault":
        from kgkit.wiki.enrich import enrich_vault

        return enrich_vault
    if name == "write_run":
        from kgkit.wiki.run_folder import write_run

        return write_run
    raise AttributeError(name)
