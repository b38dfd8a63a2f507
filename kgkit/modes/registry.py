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

BUILTIN_MODULES = (
    "kgkit.modes.projection",
    "kgkit.modes.nary",
    "kgkit.modes.temporal",
    "kgkit.modes.event",
    "kgkit.modes.diy",
)
ENTRY_POINT_GROUP = "kgkit.modes"

_modes: dict[str, Mode] = {}
_origins: dict[str, str] = {}
_loaded = False


def register_mode(mode: Mode, origin: str = "") -> None:
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


def get_mode(name: str) -> Mode:
    """The mode registered under ``name``; NotFoundError naming the close ones otherwise."""
    _load()
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
    _load()
    return dict(sorted(_origins.items()))
