"""What a run would cost, before it runs (``kgkit extract --dry-run``): no backend is called.

Documents are loaded and chunked exactly as the run would, so the chunk count and the
call budget are exact; tokens are an estimate (about four characters a token, plus the
instructions every pass carries), and the cost comes from litellm's price table when a
model is configured and the table knows it.
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Sequence

from kgkit.config.model import Config
from kgkit.engine.accounting import naive_calls
from kgkit.engine.run import chunk, load_domain_and_views, path_list, resolve_config

CHARS_PER_TOKEN = 4
PROMPT_OVERHEAD_TOKENS = 600  # instructions, type lists and examples around each chunk
ANSWER_TOKENS = 250  # a typical JSON answer for one chunk


@dataclass
class DocumentPlan:
    document: str
    path: str
    chunks: int
    calls: dict[str, Any]  # {"entities", "relations", "upgrade": {view: n}, "projection": 0, "total", "naive"}
    tokens: dict[str, int]  # estimated {"in", "out"}
    cost: float | None  # estimated USD; None when unknown (offline: 0.0)

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


def estimate_cost(model: str | None, tokens_in: int, tokens_out: int) -> float | None:
    """USD for these tokens from litellm's local price table; 0 offline, None if unknown."""
    if not model:
        return 0.0
    from kgkit.backends.llm import load_litellm

    litellm = load_litellm()  # the bundled price table, no network, no banners
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=tokens_in,
                                                              completion_tokens=tokens_out)
    except Exception:  # litellm raises assorted errors for models it has no price for
        return None
    return round(prompt_cost + completion_cost, 6)


def plan(paths: str | os.PathLike | Sequence[str | os.PathLike], domain: str | os.PathLike | None = None,
         views: Sequence[str] | str | None = None, config: Config | str | os.PathLike | None = None,
         include: Sequence[str] = (), exclude: Sequence[str] = ()) -> list[DocumentPlan]:
    """The call budget, estimated tokens and cost of extracting ``paths`` (folders expanded
    as :func:`kgkit.engine.run.extract` does); nothing is called."""
    from kgkit.documents.load import load_document
    from kgkit.engine.corpus import collect_inputs

    cfg = resolve_config(config)
    dom, loaded = load_domain_and_views(domain, views, cfg)
    upgrades = [v.name for v in loaded if v.is_upgrade]
    plans = []
    for item in collect_inputs(path_list(paths), include, exclude):
        doc = load_document(item.path, max_bytes=cfg.input.max_bytes)
        chunks = chunk(doc, dom, cfg)
        n = len(chunks)
        passes_per_chunk = 2 + len(upgrades)
        text_tokens = sum(len(c.text) for c in chunks) // CHARS_PER_TOKEN
        tokens_in = passes_per_chunk * (text_tokens + n * PROMPT_OVERHEAD_TOKENS)
        tokens_out = passes_per_chunk * n * ANSWER_TOKENS
        calls = {"entities": n, "relations": n, "upgrade": {v: n for v in upgrades}, "projection": 0,
                 "total": n * passes_per_chunk, "naive": naive_calls(n, len(loaded))}
        plans.append(DocumentPlan(document=doc.name, path=doc.source, chunks=n, calls=calls,
                                  tokens={"in": tokens_in, "out": tokens_out},
                                  cost=estimate_cost(cfg.llm.model, tokens_in, tokens_out)))
    return plans
