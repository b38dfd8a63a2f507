"""Which code runs a view: versioned mode names ("nary.v1") mapped to implementations.

A view file names its mode; the engine asks this registry for it. kgkit's own modes
register through the same door a plugin uses: a module-level ``register_modes(register)``
hook. Built-ins are listed in ``BUILTIN_MODULES``; third-party packages expose the hook
under the ``kgkit.modes`` entry-point group. Discovery runs once, on first lookup, so
importing kgkit stays cheap, and ``KGKIT_NO_PLUGINS=1`` skips third-party hooks (tests).
"""
from __future__ import annotations

import importlib
import os
from typing import Any, Callable

from kgkit.errors import NotFoundError, did_you_mean

BUILTIN_MODULES = (
    "kgkit.modes.projection",
    "kgkit.modes.nary",
    "kgkit.modes.temporal",
    "kgkit.modes.event",
    "kgkit.modes.diy",
)
ENTRY_POINT_GROUP = "kgkit.modes"

_modes: dict[str, Any] = {}
_origins: dict[str, str] = {}
_loaded = False


def register_mode(mode: Any, origin: str = "") -> None:
    """Make ``mode`` available under ``mode.name``; a later registration of a name wins."""
    _modes[mode.name] = mode
    _origins[mode.name] = origin or type(mode).__module__


def _load() -> None:
    global _loaded
    if _loaded:
        return
    _loaded = True
    for module in BUILTIN_MODULES:
        importlib.import_module(module).register_modes(register_mode)
    if os.environ.get("KGKIT_NO_PLUGINS"):
        return
    from importlib.metadata import entry_points

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        hook: Callable = ep.load()
        hook(lambda mode, _ep=ep: register_mode(mode, origin=f"{_ep.value} (plugin {_ep.name})"))


def get_mode(name: str) -> Any:
    """The mode registered under ``name``; NotFoundError naming the close ones otherwise."""
    _load()
    if name in _modes:
        return _modes[name]
    raise NotFoundError(f"unknown view mode {name!r}; registered: {', '.join(sorted(_modes))}",
                        hint=did_you_mean(name, _modes, n=3))


def available_modes() -> dict[str, str]:
    """Registered mode names and where each comes from (answers "which nary am I running?")."""
    _load()
    return dict(sorted(_origins.items()))
