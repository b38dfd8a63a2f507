"""kgkit: documents to knowledge graphs, declared in YAML, extracted once, viewed many ways.

The public surface is small and imported lazily so that ``import kgkit`` (and the CLI's
start-up) stays fast; heavy modules load on first use.
"""
from __future__ import annotations

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "extract",
    "load_domain",
    "load_view",
    "load_template",
    "load_config",
    "join_views",
    "evaluate",
    "ask",
]

_LAZY = {
    "extract": ("kgkit.engine.run", "extract"),
    "join_views": ("kgkit.engine.join", "join_views"),
    "load_domain": ("kgkit.catalog.load", "load_domain"),
    "load_view": ("kgkit.catalog.load", "load_view"),
    "load_template": ("kgkit.catalog.load", "load_template"),
    "load_config": ("kgkit.config.loader", "load_config"),
    "evaluate": ("kgkit.eval.run", "evaluate"),
    "ask": ("kgkit.ask", "ask"),
}


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        module, attr = _LAZY[name]
        return getattr(importlib.import_module(module), attr)
    raise AttributeError(f"module 'kgkit' has no attribute {name!r}")
