"""The one backend contract: run this extraction pass on this chunk with this schema.

The engine builds a :class:`PassRequest` and hands it to a :class:`Backend`; it never
knows whether an LLM (through litellm) or the offline pattern backend answers.
"""
from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Mapping, Protocol, runtime_checkable

from kgkit.documents.types import Chunk

# Pass kinds. Core passes build the skeleton; upgrade passes feed upgrade views;
# skill passes serve the learning loop.
ENTITIES = "entities"
RELATIONS = "relations"
UPGRADE = "upgrade"
COMBINED = "upgrade_combined"  # every upgrade view of one chunk in one pass (upgrades.combine)
SKILL_INDUCTION = "skill_induction"  # path induction for unstable edges
SKILL_HINDSIGHT = "skill_hindsight"  # hindsight diagnosis for misses


@dataclass(frozen=True)
class PassRequest:
    """Everything one pass needs.

    ``context`` carries what the prompt and the offline rules read, by key (one TypedDict
    per pass kind in :mod:`kgkit.backends.contexts`):
      ``domain`` (kgkit.formats.model.Domain) — always;
      ``entities`` — list of node dicts {"id","name","type","aliases"} of V_doc (relations, upgrades);
      ``skeleton`` — list of edge dicts {"id","head","relation","tail"} by node name (upgrades);
      ``view`` (kgkit.formats.model.View) — upgrades; ``template`` (kgkit.formats.model.Template) — diy;
      ``skills`` — list of skill dicts retrieved for this document (core passes);
      ``title`` — document title if known;
      skill passes add ``gold_edge``, ``evidence``, ``predictions``.
    ``stage`` names the pass for accounting and prompts: "entities", "relations", a view name
    such as "nary" or "diy:contract_review", or "skills".
    """

    kind: str
    stage: str
    chunk: Chunk
    schema: Mapping[str, Any]
    context: Mapping[str, Any]
    prompt: str  # template file name under kgkit/prompts, or an absolute path
    sample: int = 0  # rollout index; part of the cache key
    temperature: float = 0.0


@dataclass
class Usage:
    tokens_in: int = 0
    tokens_out: int = 0
    cost: float | None = None  # USD where the price table knows the model
    tokens_cached: int = 0  # of tokens_in, read from the provider's prompt cache (when it says)

    def add(self, other: "Usage") -> None:
        self.tokens_in += other.tokens_in
        self.tokens_out += other.tokens_out
        self.tokens_cached += other.tokens_cached
        if other.cost is not None:
            self.cost = (self.cost or 0.0) + other.cost


def cached_tokens(usage: Any) -> int:
    """Input tokens the provider read from its prompt cache, from a usage record (an object
    or a JSON mapping): OpenAI-style ``prompt_tokens_details.cached_tokens``, or Anthropic's
    ``cache_read_input_tokens``."""
    def field(record: Any, name: str) -> Any:
        return record.get(name) if isinstance(record, Mapping) else getattr(record, name, None)

    details = field(usage, "prompt_tokens_details") if usage is not None else None
    cached = field(details, "cached_tokens") if details is not None else None
    if not cached and usage is not None:
        cached = field(usage, "cache_read_input_tokens")
    try:
        return int(cached or 0)
    except (TypeError, ValueError, OverflowError):
        return 0


@dataclass
class PassResult:
    """A backend's answer: ``data`` validates against the request's schema when ``ok``."""

    data: dict[str, Any] | None
    ok: bool = True
    error: str | None = None  # why it failed (after re-ask), for the review file
    raw: str | None = None  # raw model text kept for review on failure
    usage: Usage = field(default_factory=Usage)
    cached: bool = False
    requests: int = 0  # HTTP requests actually sent (retries included); 0 when cached/offline
    retries: int = 0
    model: str = "offline"
    # how the answer's shape was asked for: json_schema | json_object_schema (JSON mode held to the schema, as
    # llama.cpp takes it) | json_object | plain
    output_format: str | None = None
    reasked: bool = False  # the first answer was unusable and the model was asked again
    cut: bool = False  # the answer ran away (or stopped at max_tokens) and was kept up to its last complete item
    warnings: list[dict[str, Any]] = field(default_factory=list)  # kept for review, e.g. a regex skipped


@runtime_checkable
class Backend(Protocol):
    name: str  # e.g. "offline" or the litellm model string

    def run(self, request: PassRequest) -> PassResult: ...

    def describe(self) -> dict[str, Any]:
        """Model and parameters for the manifest — never credentials."""
        ...


_VALIDATORS: dict[str, Any] = {}  # schema digest -> compiled validator
_BY_ID: dict[int, tuple[Any, Any]] = {}  # id(schema) -> (schema, validator): the fast path


def pass_validator(schema: Mapping[str, Any]):
    """One checked-and-compiled JSON Schema validator per pass schema, for every backend.

    ``jsonschema.validate`` re-checks the schema itself on every call, which was nearly
    half of an offline run on a long document. Schemas are few (one per pass kind and
    view): the same object is found by id (the entry keeps it alive, so the id cannot be
    reused), and a schema rebuilt with the same content by a digest of its JSON.
    """
    hit = _BY_ID.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    key = hashlib.sha256(json.dumps(schema, sort_keys=True, default=repr).encode()).hexdigest()
    validator = _VALIDATORS.get(key)
    if validator is None:
        import jsonschema

        cls = jsonschema.validators.validator_for(schema)
        cls.check_schema(schema)
        validator = _VALIDATORS[key] = cls(schema)
    _BY_ID[id(schema)] = (schema, validator)
    return validator


def part_requests(combined: PassRequest) -> list[PassRequest]:
    """The single-view passes a combined pass stands for, each with its own view's context and schema."""
    return [PassRequest(kind=UPGRADE, stage=part["key"], chunk=combined.chunk,
                        schema=part["view"].output_schema or {}, context=part["context"],
                        prompt=part["view"].prompt or "", sample=combined.sample, temperature=combined.temperature)
            for part in combined.context["parts"]]
