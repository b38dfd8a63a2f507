"""The offline answer to a combined upgrade pass (``upgrades.combine``): each view's part
answered by the rules its own pass uses, on the same context, so the views come out
identical to separate passes'."""
from __future__ import annotations

from typing import Any

from kgkit.backends.base import COMBINED, UPGRADE, PassRequest, part_requests
from kgkit.backends.offline.handlers import HANDLERS, register_handler


def _combined(request: PassRequest) -> dict[str, Any]:
    return {part.stage: HANDLERS[UPGRADE](part) for part in part_requests(request)}


register_handler(COMBINED, _combined)
