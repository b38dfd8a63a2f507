"""The offline backend: every extraction pass answered from patterns declared in YAML.

It is the default when no model is configured, and what the tests use. It reads the
domain's entity patterns, relation triggers, n-ary/event types and qualifiers (or a DIY
template's), plus generic rules for literals, company names and defined terms, and
answers each pass in exactly the JSON shape an LLM must return (docs/design.md, "Pass
answers"). The engine checks every extraction answer against its schema (core and view
passes, ``kgkit.modes.base.validate_answer``), so those are returned as built: a second
check here was ~15% of an offline run. Answers the engine does not check (the skill
passes) are checked here before they are returned.

Pass kinds are dispatched through the table of :mod:`kgkit.backends.offline.handlers`.
Other modules add kinds with :func:`register_handler` (the skill passes live in
``kgkit.backends.offline.skills``, imported at the end of this module); a handler takes
the :class:`~kgkit.backends.base.PassRequest` and returns the answer dict.
"""
from __future__ import annotations

import dataclasses
import json
from typing import Any, Mapping

from kgkit.guards import safe_regex
from kgkit.backends.base import COMBINED, ENTITIES, RELATIONS, UPGRADE, PassRequest, PassResult, pass_validator
from kgkit.backends.offline import sampling, upgrades
from kgkit.backends.offline.handlers import HANDLERS, register_handler
from kgkit.backends.offline.entities import find_entities
from kgkit.text.page_breaks import reading_text

__all__ = ["OfflineBackend", "register_handler", "VERSION"]

VERSION = "8"  # bump when a rule change alters answers (it is part of the engine's pass key)

ENGINE_CHECKED = frozenset({ENTITIES, RELATIONS, UPGRADE, COMBINED})  # validated once, by the engine


class _Unsupported(Exception):
    """A request the offline rules cannot answer (an unknown view mode): a failed pass, not a crash."""


def _quote(evidence: str, reading: str, text: str) -> str:
    """The document's own words for a quote taken from ``reading`` (:func:`reading_text`,
    the same length as ``text``): a page break joined there is quoted as written."""
    if reading is text:
        return evidence
    at = reading.find(evidence)
    return text[at:at + len(evidence)] if at >= 0 else evidence


def _entities(request: PassRequest) -> dict[str, Any]:
    domain, draws = request.context["domain"], sampling.current()
    text = request.chunk.text
    reading = reading_text(text)
    found = find_entities(reading, draws.entity_types(domain.entity_types),
                          draws.skills(request.context.get("skills") or ()))
    found = draws.items(found, key=lambda f: f"{f.type}:{f.name}")
    with_aliases = _allows_key(request.schema, "entities", "aliases")
    out = []
    for f in found:
        item: dict[str, Any] = {"name": f.name, "type": f.type, "evidence": _quote(f.evidence, reading, text),
                                "confidence": f.confidence}
        if with_aliases and f.aliases:
            item["aliases"] = list(f.aliases)
        out.append(item)
    return {"entities": out}


def _relations(request: PassRequest) -> dict[str, Any]:
    domain, draws = request.context["domain"], sampling.current()
    text = request.chunk.text
    reading = reading_text(text)
    found = _skills.relations_with_skills(reading, request.context.get("entities") or [],
                                          domain.entity_types, draws.relation_types(domain.relation_types),
                                          draws.skills(request.context.get("skills") or ()))
    found = draws.items(found, key=lambda r: f"{r.head}:{r.relation}:{r.tail}")
    return {"relations": [{"head": r.head, "relation": r.relation, "tail": r.tail,
                           "evidence": _quote(r.evidence, reading, text), "confidence": r.confidence} for r in found]}


def _upgrade(request: PassRequest) -> dict[str, Any]:
    ctx = request.context
    view = ctx["view"]
    mode = view.mode.split(".")[0]
    text = request.chunk.text
    entities = ctx.get("entities") or []
    skeleton = ctx.get("skeleton") or []
    if mode == "nary":
        return upgrades.nary_answer(text, ctx["domain"], entities, skeleton, request.chunk)
    if mode == "temporal":
        return upgrades.temporal_answer(text, ctx["domain"], entities, skeleton, request.chunk)
    if mode == "event":
        return upgrades.event_answer(text, ctx["domain"], entities, skeleton, request.chunk)
    if mode == "diy":
        shared = upgrades.context_entities(entities, skeleton, ctx["domain"].relation_types) if "domain" in ctx else entities
        return upgrades.diy_answer(text, ctx.get("template") or view.template, shared)
    raise _Unsupported(f"the offline backend has no rules for view mode {view.mode!r}")


register_handler(ENTITIES, _entities)
register_handler(RELATIONS, _relations)
register_handler(UPGRADE, _upgrade)


def _schema_error(schema: Mapping[str, Any], data: Any) -> Any:
    """jsonschema's best error for an answer the engine does not check (a skill pass's), or None."""
    import jsonschema  # not at import: an extraction run checks its answers in compiled code

    return jsonschema.exceptions.best_match(pass_validator(schema).iter_errors(data))


def _allows_key(schema: Any, list_key: str, key: str) -> bool:
    """Whether items of ``schema.properties[list_key]`` may carry ``key``."""
    try:
        items = schema["properties"][list_key]["items"]
    except (KeyError, TypeError):
        return False
    return key in items.get("properties", {}) or items.get("additionalProperties", True) is not False


class OfflineBackend:
    """Deterministic pattern backend: same request, same answer.

    At temperature 0 nothing is random. At temperature > 0 the core passes *simulate*
    sampling (:mod:`kgkit.backends.offline.sampling`): rollout ``sample`` keeps a seeded
    subset of the rules and items, so the skill loop's rollouts differ. No network, no
    cost; a 2,000-character chunk takes a few milliseconds.
    """

    name = "offline"

    def __init__(self, regex_timeout: float = safe_regex.DEFAULT_SECONDS,
                 knobs: sampling.SamplingKnobs | None = None):
        self.regex_timeout = regex_timeout  # input.regex_timeout: per domain/skill regex, per chunk
        self.knobs = knobs or sampling.SamplingKnobs()

    def run(self, request: PassRequest) -> PassResult:
        handler = HANDLERS.get(request.kind)
        if handler is None:
            return PassResult(data=None, ok=False, error=f"the offline backend cannot answer {request.kind!r} passes "
                              f"(known: {', '.join(sorted(HANDLERS))})")
        try:
            with safe_regex.chunk_budget(self.regex_timeout) as budget, \
                    sampling.sampling(request.sample, request.temperature, self.knobs):
                data = handler(request)
        except _Unsupported as exc:
            return PassResult(data=None, ok=False, error=str(exc))
        warnings = [{"regex": rx, "reason": why} for rx, why in budget.skipped.items()]
        error = None if request.kind in ENGINE_CHECKED else _schema_error(request.schema, data)
        if error is not None:
            # A rule produced an off-schema answer: a bug here, reported like a bad model answer.
            return PassResult(data=None, ok=False, raw=json.dumps(data, ensure_ascii=False),
                              error=f"offline answer does not match the pass schema: {error.message}")
        return PassResult(data=data, model="offline", warnings=warnings)

    def describe(self) -> dict[str, Any]:
        described: dict[str, Any] = {"backend": "offline", "version": VERSION}
        if self.knobs != sampling.SamplingKnobs():  # the default knobs are part of VERSION
            described["sampling"] = dataclasses.asdict(self.knobs)
        return described


from kgkit.backends.offline import skills as _skills  # noqa: E402,F401 - registers the skill passes
from kgkit.backends.offline import combined as _combined  # noqa: E402,F401 - registers combined upgrade passes
