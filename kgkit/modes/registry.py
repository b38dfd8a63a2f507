"""Which code runs a view: versioned mode names ("nary.v1") mapped to implementations.

A view file names its mode; the engine asks this registry for it. kgkit's own modes
register through the same door a plugin uses: a module-level ``register_modes(register)``
hook. Built-ins are listed by name in ``BUILTIN_MODES`` and a built-in name imports only its
own module, on first lookup (a run of the binary view imports no n-ary, temporal, event or
DIY code, and reads no package metadata: start-up is what a run pays before its first
request). Third-party packages expose the hook under the ``kgkit.modes`` entry-point group;
they are looked for once, when a name that is no built-in is asked for or the whole list
is (:func:`available_modes`), and add modes under names of their own: a built-in name
always means the built-in. ``KGKIT_NO_PLUGINS=1`` skips third-party hooks (tests).
"""
from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any, Callable, Literal, Protocol, Union

from kgkit.errors import NotFoundError, did_you_mean

if TYPE_CHECKING:
    from kgkit.backends.contexts import UpgradeContext
    from kgkit.documents.types import Chunk
    from kgkit.formats.model import Domain, View
    from kgkit.modes.base import Scope, Skeleton


class ProjectionStrategy(Protocol):
    """A mode that builds its view from the skeleton alone: no pass, no call."""

    name: str
    strategy: Literal["projection"]

    def project(self, view: View, skeleton: Skeleton, domain: Domain) -> dict[str, Any]: ...


class UpgradeStrategy(Protocol):
    """A mode that asks one pass per chunk and builds its view from the answers
    (:class:`kgkit.modes.upgrade.UpgradeMode` is the base the built-ins share)."""

    name: str
    strategy: Literal["upgrade"]

    def context(self, view: View, domain: Domain, chunk: Chunk, skeleton: Skeleton) -> UpgradeContext: ...

    def unserved(self, domain: Domain) -> str | None: ...

    def can_build(self, view: View, domain: Domain, skeleton: Skeleton) -> bool: ...

    def can_contribute(self, view: View, domain: Domain, chunk: Chunk, skeleton: Skeleton) -> bool: ...

    def normalise(self, answer: dict[str, Any], scope: Scope) -> list[dict[str, Any]]: ...

    def payload(self, view: View, items: list[dict[str, Any]]) -> dict[str, Any]: ...


#: What the registry holds: the engine tells the two apart by ``strategy``.
Mode = Union[ProjectionStrategy, UpgradeStrategy]

BUILTIN_MODES = {  # name -> the module whose register_modes registers it
    "projection.v1": "kgkit.modes.projection",
    "nary.v1": "kgkit.modes.nary",
    "temporal.v1": "kgkit.modes.temporal",
    "event.v1": "kgkit.modes.event",
    "diy.v1": "kgkit.modes.diy",
}
ENTRY_POINT_GROUP = "kgkit.modes"

_modes: dict[str, Mode] = {}
_origins: dict[str, str] = {}
_plugins_loaded = False


def register_mode(mode: Mode, origin: str = "") -> None:
    """Make ``mode`` available under ``mode.name``; a later registration of a name wins."""
    _modes[mode.name] = mode
    _origins[mode.name] = origin or type(mode).__module__


def _load_builtin(name: str) -> None:
    """Import the built-in module that registers ``name`` (a no-op once it has)."""
    if name in BUILTIN_MODES and name not in _modes:
        importlib.import_module(BUILTIN_MODES[name]).register_modes(register_mode)


def _load_plugins() -> None:
    """Every built-in, then the third-party hooks (once), each mode under a name no built-in has."""
    global _plugins_loaded
    for name in BUILTIN_MODES:
        _load_builtin(name)
    if _plugins_loaded:
        return
    _plugins_loaded = True
    if os.environ.get("KGKIT_NO_PLUGINS"):
        return
    from importlib.metadata import entry_points

    def plugin(mode: Mode, origin: str) -> None:
        if mode.name not in BUILTIN_MODES:
            register_mode(mode, origin)

    for ep in entry_points(group=ENTRY_POINT_GROUP):
        hook: Callable = ep.load()
        hook(lambda mode, _ep=ep: plugin(mode, f"{_ep.value} (plugin {_ep.name})"))


def is_mode(name: str) -> bool:
    """Whether ``name`` is a registered mode (plugins looked for only for a name no built-in has)."""
    if name in _modes or name in BUILTIN_MODES:
        return True
    _load_plugins()
    return name in _modes


def get_mode(name: str) -> Mode:
    """The mode registered under ``name``; NotFoundError naming the close ones otherwise."""
    _load_builtin(name)
    if name not in _modes:
        _load_plugins()
    if name in _modes:
        return _modes[name]
    raise NotFoundError(f"unknown view mode {name!r}; registered: {', '.join(sorted(_modes))}",
                        hint=did_you_mean(name, _modes, n=3))


def get_upgrade_mode(name: str) -> UpgradeStrategy:
    """The upgrade mode registered under ``name`` (an upgrade view's); NotFoundError otherwise."""
    mode = get_mode(name)
    if mode.strategy != "upgrade":
        raise NotFoundError(f"view mode {name!r} builds from the skeleton alone; expected an upgrade mode")
    return mode


def available_modes() -> dict[str, str]:
    """Registered mode names and where each comes from (answers "which nary am I running?")."""
    _load_plugins()
    return dict(sorted(_origins.items()))
