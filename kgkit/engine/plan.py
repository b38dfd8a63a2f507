"""What a run would cost, before it runs (``kgkit extract --dry-run``): no provider is called.

Documents are loaded and chunked exactly as the run would, and every pass is built as the
run builds it and rendered with its real prompt — system prompt, types, worked examples,
skills, the bounded entity list and the chunk — so the prompt sizes are those the provider
will be sent, up to what the model finds. What it finds is estimated with the offline
entity rules: their answers go through the real merge, so each relation pass lists the
nodes of its chunk and the document-level ones (``limits.document_entities``) and each
upgrade pass its chunk's part of the skeleton, as in the run. The views an earlier run
left in the run folder (kept unless ``replace_views``) are counted; so are the passes
``upgrades.skip_idle_chunks`` skips and those ``upgrades.combine`` folds into one.

Without a model for the core, the offline backend is the run's core, so the plan is not an
estimate: its relation answers are the run's too, and it counts the passes that run sends
and skips (no relation pass on a document where the rules find no entity, no pass of a
view that can build nothing there). With a model, a relation pass, or a view that needs
entities, is counted even where the offline rules find none: the model may find some.

Tokens in are the rendered prompts at :data:`kgkit.backends.pace.CHARS_PER_TOKEN`
characters a token; tokens out a typical answer per pass; the cost comes from litellm's
price table when a model is configured and the table knows it.
"""
from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

from kgkit.backends.base import ENTITIES, PassRequest
from kgkit.backends.pace import CHARS_PER_TOKEN
from kgkit.config.model import Config
from kgkit.engine.accounting import Accounting
from kgkit.engine.options import RunOptions
from kgkit.engine.document import busy_chunks, chunk, retrieve_skills, upgrade_requests
from kgkit.engine.run import earlier_views, load_domain_and_views, path_list, resolve_config

ANSWER_TOKENS = 250  # a typical JSON answer for one pass
_RUN_ONLY = ("executed", "reused", "cache_hits", "requests", "retries")  # what only a run can count


@dataclass
class DocumentPlan:
    document: str
    path: str
    chunks: int
    views: list[str]  # the views the run will write: those given, then those kept from the run folder
    calls: dict[str, Any]  # {"entities", "relations", "upgrade": {view: n, "combined": n}, "projection": 0, "total",
    #                         "naive", "skipped": {stage: n}, "saved"[, "combined": {view: n}]}, as the manifest says
    prompt_chars: dict[str, int]  # stage -> characters of the rendered prompts of its passes
    tokens: dict[str, int]  # estimated {"in", "out"}
    cost: float | None  # estimated USD; None when unknown (offline: 0.0)

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))


@dataclass
class ProviderPlan:
    """Who a run would call: the model, the client sending its requests and the variable its
    key is read from, with whether that variable is set (the key itself is never read out)."""

    model: str | None  # None: the offline backend, which needs no key
    client: str | None
    key_variable: str | None
    key_set: bool | None

    def as_dict(self) -> dict[str, Any]:
        return dict(vars(self))

    def line(self) -> str:
        if not self.model:
            return "model: none (the offline backend; no key needed)"
        state = "set" if self.key_set else "NOT SET: the run would stop at its first call"
        return f"model: {self.model}, client: {self.client}, key: {self.key_variable} ({state})"


def provider_plan(config: Config) -> ProviderPlan:
    """The :class:`ProviderPlan` of ``config``'s ``llm`` settings (core stage's model)."""
    llm = config.llm
    if not llm.model:
        return ProviderPlan(None, None, None, None)
    from kgkit.backends.clients import key_variable, pick_client

    client = pick_client(llm)
    variable = key_variable(llm, client)
    return ProviderPlan(llm.model, client, variable, bool(os.environ.get(variable)))


def estimate_cost(model: str | None, tokens_in: int, tokens_out: int) -> float | None:
    """USD for these tokens from litellm's local price table; 0 offline, None if unknown."""
    if not model:
        return 0.0
    from kgkit.backends.clients import load_litellm

    litellm = load_litellm()  # the bundled price table, no network, no banners
    try:
        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=tokens_in,
                                                              completion_tokens=tokens_out)
    except Exception:  # litellm raises assorted errors for models it has no price for
        return None
    return round(prompt_cost + completion_cost, 6)


def plan(paths: str | os.PathLike | Sequence[str | os.PathLike], options: RunOptions = RunOptions(), *,
         config: Config | str | os.PathLike | None = None) -> list[DocumentPlan]:
    """The passes, prompt sizes, estimated tokens and cost of extracting ``paths`` with
    ``options`` (folders expanded as :func:`kgkit.engine.run.extract` does); nothing is called."""
    from kgkit.documents.load import load_document
    from kgkit.engine.corpus import collect_inputs
    from kgkit.engine.outputs import RunFolder

    cfg = resolve_config(config)
    dom, base_views = load_domain_and_views(options.domain, options.views, cfg)
    root = options.root(cfg)
    given = {v.name for v in base_views}
    plans = []
    for item in collect_inputs(path_list(paths), options.include, options.exclude):
        doc = load_document(item.path, max_bytes=cfg.input.max_bytes, layout=dom.reading != "text")
        loaded = base_views if options.replace_views else earlier_views(RunFolder(root / item.folder), given) + base_views
        chunks = chunk(doc, dom, cfg)
        accounting = Accounting(n_chunks=len(chunks), views=[v.name for v in loaded],
                                upgrade_views=[v.name for v in loaded if v.is_upgrade])
        chars: dict[str, int] = {}
        for request in passes(doc, chunks, dom, loaded, cfg, accounting, options.skills):
            accounting.count(request.stage, None)
            chars[request.stage] = chars.get(request.stage, 0) + prompt_chars(request)
        calls = {k: v for k, v in accounting.calls().items() if k not in _RUN_ONLY}
        calls = {"entities": len(chunks), "relations": accounting.core - len(chunks), **calls}
        del calls["core"]
        tokens_in = sum(math.ceil(c / CHARS_PER_TOKEN) for c in chars.values())
        tokens_out = calls["total"] * ANSWER_TOKENS
        plans.append(DocumentPlan(document=doc.name, path=doc.source, chunks=len(chunks), views=[v.name for v in loaded],
                                  calls=calls, prompt_chars=chars, tokens={"in": tokens_in, "out": tokens_out},
                                  cost=estimate_cost(cfg.llm.model, tokens_in, tokens_out)))
    return plans


def prompt_chars(request: PassRequest) -> int:
    """Characters of the chat messages ``request`` renders to: what the provider is sent."""
    from kgkit.prompts.render import render_request

    return sum(len(m["content"]) for m in render_request(request))


def passes(doc, chunks, domain, views, config: Config, accounting: Accounting, skills: bool) -> Iterator[PassRequest]:
    """Every pass the run would send, built by the run's own code over the estimated core
    (the core itself when it runs offline: see the module docstring)."""
    from kgkit.backends.factory import stage_llm
    from kgkit.backends.offline import OfflineBackend
    from kgkit.engine.combine import combined_requests
    from kgkit.engine.core import CoreSettings, relation_request, run_core
    from kgkit.modes.registry import get_mode

    settings = CoreSettings(
        fuzzy_threshold=config.canon.fuzzy_threshold, legal_suffixes=config.canon.legal_suffixes,
        block_cap=config.canon.block_cap,
        evidence_threshold=config.review.evidence_threshold, confidence_threshold=config.review.confidence_threshold,
        admit_unverified=config.review.admit_unverified, prompts={k: str(v) for k, v in config.prompts.items()},
        skills=retrieve_skills(domain, doc, config, skills), document_entities=config.limits.document_entities)
    offline, sent = OfflineBackend(config.input.regex_timeout), []
    exact = not stage_llm(config.llm, "core").model  # the offline backend is the run's core

    def estimated(requests: list[PassRequest]):  # the offline rules stand for the model's entities
        sent.extend(requests)
        return [offline.run(r).data if exact or r.kind == ENTITIES else {"relations": []} for r in requests]

    skeleton = run_core(doc, chunks, domain, estimated, settings, skip=accounting.skip if exact else None).skeleton
    yield from sent
    if not skeleton.nodes and not exact:  # the model may find entities where the rules found none
        yield from (relation_request(c, domain, settings, doc.title, []) for c in chunks)
    upgrades = []
    for view in (v for v in views if v.is_upgrade):
        mode = get_mode(view.mode)
        if (skeleton.nodes or exact) and mode.strategy == "upgrade" and not mode.can_build(view, domain, skeleton):
            accounting.skip(view.name, len(chunks))  # as the run does (no event type declared, say)
        else:
            upgrades.append(view)
    worked = {v.name: busy_chunks(v, domain, chunks, skeleton, config, accounting) for v in upgrades}
    single = lambda view, cs: upgrade_requests(view, doc, cs, domain, skeleton, config)  # noqa: E731
    if config.upgrades.combine:
        yield from combined_requests(upgrades, worked, chunks, domain, single, accounting)
    else:
        for view in upgrades:
            yield from single(view, worked[view.name])
