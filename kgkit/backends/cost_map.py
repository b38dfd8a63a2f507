"""litellm's bundled model table, read without importing litellm.

The direct client (:mod:`kgkit.backends.direct`) needs two facts litellm keeps in its
local price table (``model_prices_and_context_window_backup.json``): whether a model takes
a strict JSON Schema, and what its tokens cost. Importing litellm for them would cost the
seconds of start-up the direct client exists to save, so the file is located through the
import system (no litellm code runs) and parsed once, on first need: a run whose answers
all come from the cache or ``state/`` never reads it.
"""
from __future__ import annotations

import importlib.util
import json
import threading
from pathlib import Path
from typing import Any

TABLE = "model_prices_and_context_window_backup.json"
_table: dict[str, Any] | None = None
_lock = threading.Lock()


def _load() -> dict[str, Any]:
    global _table
    with _lock:
        if _table is None:
            spec = importlib.util.find_spec("litellm")
            folders = list(spec.submodule_search_locations or []) if spec else []
            path = next((Path(f) / TABLE for f in folders if (Path(f) / TABLE).is_file()), None)
            try:
                _table = json.loads(path.read_text(encoding="utf-8")) if path else {}
            except (OSError, ValueError):
                _table = {}
        return _table


def model_info(model: str, provider: str = "openai") -> dict[str, Any] | None:
    """The table's entry for ``model`` served by ``provider`` (looked up as litellm does for
    a provider-prefixed model: the bare name, then ``provider/name``), or None."""
    table = _load()
    for key in (model, f"{provider}/{model}"):
        entry = table.get(key)
        if isinstance(entry, dict) and entry.get("litellm_provider", provider) == provider:
            return entry
    return None


def supports_response_schema(model: str, provider: str = "openai") -> bool:
    return bool((model_info(model, provider) or {}).get("supports_response_schema"))


def cost(model: str, tokens_in: int, tokens_out: int, tokens_cached: int = 0, provider: str = "openai"
         ) -> float | None:
    """USD for one answer at the table's prices (cached input at the cache-read price where the
    table has one), or None when the table does not price the model."""
    info = model_info(model, provider)
    if not info or info.get("input_cost_per_token") is None or info.get("output_cost_per_token") is None:
        return None
    cached = min(tokens_cached, tokens_in)
    read = info.get("cache_read_input_token_cost")
    read = info["input_cost_per_token"] if read is None else read
    return ((tokens_in - cached) * info["input_cost_per_token"] + cached * read
            + tokens_out * info["output_cost_per_token"])
