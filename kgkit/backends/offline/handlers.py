"""The offline backend's table of pass handlers, keyed by ``PassRequest.kind``.

Why a module of its own: the backend (``kgkit.backends.offline``) registers the core
kinds and imports the modules that register the others (skill passes, combined
upgrades); those modules register through this table, so none of them imports the
package that imports them.
"""
from __future__ import annotations

from typing import Any, Callable

from kgkit.backends.base import PassRequest

Handler = Callable[[PassRequest], dict[str, Any]]
HANDLERS: dict[str, Handler] = {}


def register_handler(kind: str, handler: Handler) -> None:
    """Answer passes of ``kind`` with ``handler(request) -> answer dict`` (last registration wins)."""
    HANDLERS[kind] = handler
