"""Typed retrieval's embedding list: the index's texts ranked by the cosine of their
embedding with the query's.

Where ``embeddings.model`` is set, :func:`kgkit.query.search.search` adds one ranked list,
``embedding``, to its BM25 lists before the fusion (its weight: ``query.search.weights``
key ``embedding``, 1 when not given). The texts are the full-text index's (entity names with
aliases, evidence quotes): every one of the tenant's when it has at most ``embeddings.texts``
of them, else the full-text hits' of the query (so on a large store the list re-ranks what
BM25 found, and the answer reports the texts left out as the cut ``embeddings``).

Embeddings come from litellm's embedding API (``litellm.embedding``: any provider litellm
speaks, an OpenAI-compatible server at ``embeddings.api_base``), in batches of
``embeddings.batch``; nothing is downloaded and no model runs in this process. Each text is
embedded once per process (an in-memory cache of ``embeddings.cache`` entries, keyed by
model and text). A provider that fails leaves the BM25 lists alone, with the reason in the
answer's note.
"""
from __future__ import annotations

import math
import os
from collections import OrderedDict
from typing import Any

from kgkit.errors import ProviderConfigError, ProviderError
from kgkit.query import text as fulltext
from kgkit.query.reader import Reader

LIST = "embedding"


class Embedder:
    """``settings``: :class:`kgkit.config.model.EmbeddingsConfig` with a model."""

    def __init__(self, settings) -> None:
        if not settings.model:
            raise ValueError("Embedder needs embeddings.model")
        self.settings = settings
        self._cache: OrderedDict[str, list[float]] = OrderedDict()
        self.requests = 0

    @property
    def model(self) -> str:
        return str(self.settings.model)

    def embed(self, texts: list[str]) -> list[list[float]]:
        """One vector per text, from the cache or from the provider (ProviderError when it fails)."""
        missing = list(dict.fromkeys(t for t in texts if t not in self._cache))
        for i in range(0, len(missing), self.settings.batch):
            part = missing[i:i + self.settings.batch]
            for t, vector in zip(part, self._request(part)):
                self._cache[t] = vector
                if len(self._cache) > self.settings.cache:
                    self._cache.popitem(last=False)
        found = {t: self._cache[t] for t in texts if t in self._cache}
        return [found[t] if t in found else self._request([t])[0] for t in texts]

    def _request(self, texts: list[str]) -> list[list[float]]:
        from kgkit.backends.llm import load_litellm

        litellm = load_litellm()  # the bundled price table: no fetch at start-up
        s = self.settings
        kwargs: dict[str, Any] = {"model": s.model, "input": texts, "timeout": s.timeout}
        if s.api_base:
            kwargs["api_base"] = s.api_base
        if s.api_key_env:
            key = os.environ.get(s.api_key_env)
            if not key:
                raise ProviderConfigError(f"embeddings.api_key_env names {s.api_key_env}, which is not set",
                                          hint=f"export {s.api_key_env}=... (the key itself never goes in kgkit.yaml)")
            kwargs["api_key"] = key
        self.requests += 1
        try:
            response = litellm.embedding(**kwargs)
        except Exception as exc:  # litellm maps every provider's failure to its own exceptions
            raise ProviderError(f"embedding model {s.model}: {type(exc).__name__}: {str(exc)[:300]}") from None
        rows = sorted(response.data, key=lambda d: _get(d, "index"))
        vectors = [list(map(float, _get(d, "embedding"))) for d in rows]
        if len(vectors) != len(texts) or any(not v for v in vectors):
            raise ProviderError(f"embedding model {s.model}: {len(vectors)} embeddings for {len(texts)} texts")
        return vectors

    def ranked(self, reader: Reader, query: str, found: list[fulltext.TextHit],
               depth: int) -> tuple[list[fulltext.TextHit], int]:
        """The ``embedding`` list (best first, at most ``depth``) and how many texts were not
        embedded: the tenant's texts, or ``found`` (the full-text hits) when it has more
        than ``embeddings.texts``."""
        limit = self.settings.texts
        rows = reader.store.db.query("SELECT ref, kind, type, doc, view, text FROM qx_text WHERE tenant = ? "
                                     "ORDER BY id LIMIT ?", (reader.tenant, limit + 1))
        if len(rows) <= limit:
            candidates = [fulltext.TextHit(ref, kind, type_, doc, view, text, 0.0)
                          for ref, kind, type_, doc, view, text in rows]
            cut = 0
        else:
            [(total,)] = reader.store.db.query("SELECT COUNT(*) FROM qx_text WHERE tenant = ?", (reader.tenant,))
            candidates = list({(h.kind, h.ref, h.doc, h.view): h for h in found}.values())[:limit]
            cut = total - len(candidates)
        if not candidates:
            return [], cut
        vectors = self.embed([query] + [h.text for h in candidates])
        q = vectors[0]
        scored = sorted(((cosine(q, v), n) for n, v in enumerate(vectors[1:])), key=lambda s: (-s[0], s[1]))
        out = [fulltext.TextHit(h.ref, h.kind, h.type, h.doc, h.view, h.text, round(score, 6))
               for score, n in scored[:depth] for h in [candidates[n]]]
        return out, cut


def cosine(a: list[float], b: list[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b))
    norm = math.sqrt(sum(x * x for x in a)) * math.sqrt(sum(y * y for y in b))
    return dot / norm if norm else 0.0


def _get(row: Any, key: str) -> Any:
    return row[key] if isinstance(row, dict) else getattr(row, key)
