"""Effective configuration as typed values. Every default lives here, in one place.

``kgkit.config.load_config`` fills these from ``kgkit.yaml`` (``--config``), the
environment (``KGKIT_MODEL``, ``KGKIT_CACHE_DIR``, …) and CLI flags, in that order of
increasing precedence.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class StageLLM:
    """Per-stage overrides (core, upgrades, skills); None means "use llm.*"."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass
class LLMConfig:
    model: str | None = None  # None -> the offline backend
    api_base: str | None = None
    api_key_env: str | None = None  # name of the env var holding the key; never the key
    temperature: float = 0.0
    max_tokens: int = 2048
    timeout: float = 60.0  # seconds a whole request may take (kgkit/backends/deadline.py)
    retries: int = 3  # extra attempts after the first
    backoff: float = 1.0  # base seconds for exponential backoff (Retry-After wins)
    json_mode: bool = True  # strict JSON Schema, else JSON mode, where litellm says the model takes it
    concurrency: int = 16  # passes in flight at once, for the whole run (kgkit/engine/pool.py)
    rpm: int | None = None  # requests per minute at most, spaced evenly (kgkit/backends/pace.py)
    tpm: int | None = None  # tokens per minute at most (prompt estimate + max_tokens, then usage), smoothed
    client: str = "auto"  # auto | litellm | direct: who sends the requests (kgkit/backends/llm.py, pick_client)
    model_sha256: str | None = None  # local/PATH.gguf models: the file must have this sha256 (kgkit/backends/local.py)
    context_window: int | None = None  # local models: tokens of context; None: the model's own, at most 8192
    stages: dict[str, StageLLM] = field(default_factory=dict)  # "core" | "upgrades" | "skills"


@dataclass
class CacheConfig:
    enabled: bool = True
    dir: Path | None = None  # None -> platformdirs user cache dir / "kgkit"


@dataclass
class CanonConfig:
    fuzzy_threshold: float = 90.0  # rapidfuzz score (0-100) within a type
    legal_suffixes: bool = True
    block_cap: int | None = 200  # block purging: kgkit.canon.BLOCK_CAP; None compares every name sharing a key


@dataclass
class ReviewConfig:
    confidence_threshold: float = 0.5  # items below go to review.jsonl (kept, marked)
    evidence_threshold: float = 85.0  # fuzzy score for an evidence quote to count as found
    admit_unverified: bool = False  # True: items whose evidence is not in the text enter the graph, marked


@dataclass
class LimitsConfig:
    """Bounds on one pass's answer, applied before it is stored or sent on (see kgkit/engine/limits.py)."""

    items_per_answer: int = 500  # entities, relations, hyperedges… in one list of one answer
    name_chars: int = 500  # any text of an item but its evidence quote (names, types, role values)
    answer_chars: int = 200_000  # the whole answer as JSON
    # entities of the whole document (the opening chunk's, then the most mentioned) a relation prompt lists beside the
    # chunk's own, so a prompt does not grow with the document (kgkit/engine/core.py)
    document_entities: int = 10
    # bytes of one HTTP answer the direct client reads, after decompression; a longer one is refused unread
    # (kgkit/backends/direct.py): a run holds at most llm.concurrency of them at once
    max_response_bytes: int = 4_000_000


@dataclass
class SkillsConfig:
    enabled: bool = True
    top_k: int = 3
    library: Path | None = None  # None -> ./skill_library if present, else the user data directory's
    rollouts: int = 3
    temperature: float = 0.7
    jaccard_merge: float = 0.7  # >= : merge into the existing skill
    jaccard_modify: float = 0.4  # >= : modify (new version of) the existing skill; below: add
    min_gain: float = 0.001  # the gate keeps a change only if its relation F1 rises by at least this
    # what the gate scores a change on (kgkit/skills/learn.py, Gate): "cv", folds of the learning documents,
    # each scored by a learner that never saw it (a development gain on all of them); "dev", a dev split alone;
    # "train+dev" (more documents, but partly the ones a skill was learned from: not a development gain)
    gate: str = "cv"
    folds: int = 5  # gate "cv": the learning documents dealt into this many folds
    min_precision: float = 0.5  # a candidate's precision on the train split must reach this
    applied_precision: float = 0.33  # ... and, applied by extraction to train, on the relations it adds
    min_support: int = 2  # ... and it must fire in this many train documents (or explain this many edges)
    nearest_cues: bool = False  # offline skill passes also propose each relation cue in its nearest shape
    typed_cues: bool = True  # ... and, for a relation allowing other end types, a nearest cue typed to the edge's ends
    join: bool = True  # a relation cue joins its relation's skill (one skill, several cues): top_k holds more
    families: bool = False  # clean cues of one relation, each too rare to gate alone, pooled and gated as one skill
    family_size: int = 8  # at most this many cues in such a family
    family_max_wrong: int = 0  # a family member adds at most this many wrong relations, applied alone to train
    gazetteer_cap: int = 25  # literal names kept per domain (not skills; listed apart)
    gazetteer_share: float = 0.2  # at most this share of the items one learn run accepts are gazetteer names
    sample_rule_drop: float = 0.2  # offline simulation of sampling, at temperature 1: rule left out
    sample_item_drop: float = 0.3  # ... found item dropped, times (1 - its confidence)


@dataclass
class GraphConfig:
    url: str | None = None  # a .sqlite path or postgresql:// URL; None: commands take GRAPH
    tenant: str = "default"


@dataclass
class SearchConfig:
    """Typed retrieval (kgkit/query/search.py): weighted reciprocal-rank fusion of per-type lists."""

    k: int = 30  # RRF's k: a list's rank r adds weight / (k + r) (30 and the rest chosen on the tune half: docs/query.md)
    weights: dict[str, float] = field(default_factory=lambda: {"quote": 0.5})  # by list, entity type or source
    depth: int = 100  # how many hits each per-type list contributes to the fusion
    owner_score: str = "sum"  # an owner scores the sum of its children's fused scores ("max": its best child's)


@dataclass
class QueryConfig:
    """Limits every query operator applies (kgkit/query); a CLI flag may lower, never pass, max_hops."""

    hops: int = 2  # neighbours / lineage / path without --hops
    max_hops: int = 6  # the most --hops may ask for
    fanout: int = 50  # neighbours kept per node per hop (hubs are damped, the rest reported as cut)
    scan: int = 300  # statements a node's neighbours are ranked from per hop (a hub's others: a cut)
    limit: int = 50  # results an answer returns at most
    documents: int = 50  # documents listed per node at most (a hub's others are counted as cut)
    timeout: float = 10.0  # seconds a query may take; then it answers with what it has, marked partial
    min_confidence: float | None = None  # items under it are left out at query time
    search: SearchConfig = field(default_factory=SearchConfig)


@dataclass
class InputConfig:
    max_bytes: int = 200_000_000  # a document over this is refused before it is read (docs/security.md)
    regex_timeout: float = 1.0  # seconds each domain/skill regex may run per chunk before it is skipped


@dataclass
class UpgradesConfig:
    skip_idle_chunks: bool = False  # skip an upgrade pass on a chunk that cannot contribute (UpgradeMode.can_contribute)
    combine: bool = False  # one pass per chunk answers every upgrade view (kgkit/modes/combined.py)


@dataclass
class RayConfig:
    """Where ``engine: ray`` runs the documents (kgkit/engine/ray_engine.py)."""

    address: str | None = None  # None: a small local cluster for the run; else a cluster's ("auto", "ray://host:10001")
    workers: int | None = None  # documents running at once; None: 2 on a local cluster, else the cluster's CPUs


@dataclass
class Config:
    llm: LLMConfig = field(default_factory=LLMConfig)
    domain: str = "general"
    views: list[str] | None = None  # None -> the domain's default_views
    chunk_size: int | None = None  # None -> the domain's chunking
    chunk_overlap: int | None = None
    canon: CanonConfig = field(default_factory=CanonConfig)
    review: ReviewConfig = field(default_factory=ReviewConfig)
    limits: LimitsConfig = field(default_factory=LimitsConfig)
    cache: CacheConfig = field(default_factory=CacheConfig)
    skills: SkillsConfig = field(default_factory=SkillsConfig)
    graph: GraphConfig = field(default_factory=GraphConfig)
    query: QueryConfig = field(default_factory=QueryConfig)

    input: InputConfig = field(default_factory=InputConfig)
    upgrades: UpgradesConfig = field(default_factory=UpgradesConfig)
    engine: str = "local"  # "local": documents run in this process; "ray": as Ray tasks (the ray extra)
    ray: RayConfig = field(default_factory=RayConfig)
    prompts: dict[str, Path] = field(default_factory=dict)  # stage -> template path override
    out_dir: Path = Path("kgkit-out")
    source: Path | None = None  # the kgkit.yaml it came from, if any
