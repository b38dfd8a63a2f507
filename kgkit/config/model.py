"""Effective configuration as typed values. Every setting is declared here, once.

A setting is a dataclass field made by :func:`setting`: its type, its default and the one
line that describes it. The starter ``kgkit.yaml`` takes its comments from those lines,
the published ``kgkit/schemas/config.schema.json`` its descriptions and defaults
(:mod:`kgkit.config.settings` writes them there; a test fails when the file lags), and
``kgkit config show`` its layout. Nothing else repeats a default: code that needs one
reads it from these classes.

``kgkit.config.load_config`` fills these from ``kgkit.yaml`` (``--config``), the
environment (``KGKIT_MODEL``, ``KGKIT_CACHE_DIR``, …) and CLI flags, in that order of
increasing precedence.
"""
from __future__ import annotations

from dataclasses import MISSING, dataclass, field
from pathlib import Path
from typing import Any, Callable


def setting(default: Any = MISSING, doc: str = "", *, factory: Callable[[], Any] | None = None,
            key: str | None = None) -> Any:
    """A configuration key: its default (or ``factory`` for a mutable one) and its description.

    ``key`` is its dotted place in kgkit.yaml when that is not the field's own
    (``chunk_size`` is ``chunking.size``)."""
    metadata = {"doc": doc, **({"key": key} if key else {})}
    if factory is not None:
        return field(default_factory=factory, metadata=metadata)
    return field(default=default, metadata=metadata)


def section(cls: type, doc: str) -> Any:
    """A kgkit.yaml section: a mapping of settings declared by ``cls``."""
    return field(default_factory=cls, metadata={"doc": doc, "section": True})


@dataclass
class StageLLM:
    """Per-stage overrides (core, upgrades, skills); None means "use llm.*"."""

    model: str | None = None
    temperature: float | None = None
    max_tokens: int | None = None


@dataclass
class LLMConfig:
    model: str | None = setting(None, "null: the built-in offline backend (deterministic, free, no network); local/PATH.gguf: a model in this process")
    api_base: str | None = setting(None, "the provider's URL, for Ollama, vLLM or a proxy")
    api_key_env: str | None = setting(None, "name of the variable holding the key (never the key itself)")
    temperature: float = setting(0.0, "0 for extraction: the same text gives the same answer")
    max_tokens: int = setting(2048, "the most one answer may take (each pass asks for what its chunk needs, up to this)")
    timeout: float = setting(60.0, "seconds a whole request may take")  # kgkit/backends/deadline.py
    retries: int = setting(3, "extra attempts after the first (429, 5xx, resets, timeouts)")
    backoff: float = setting(1.0, "base seconds of exponential backoff; a Retry-After header wins")
    json_mode: bool = setting(True, "ask for structured output (a strict JSON Schema, else JSON mode) where the "
                                    "provider supports it")
    concurrency: int = setting(16, "requests in flight at once for the whole run (the passes of a stage go out "
                                   "together)")  # kgkit/engine/pool.py
    rpm: int | None = setting(None, "null: no limit; else requests per minute at most, spaced evenly")  # backends/pace.py
    tpm: int | None = setting(None, "null: no limit; else tokens per minute at most (input + output), spaced evenly")
    client: str = setting("auto", "auto: openai/... models over kgkit's own HTTP client, every other through "
                                  "litellm; or litellm, direct")  # kgkit/backends/clients.py, pick_client
    model_sha256: str | None = setting(None, "local/PATH.gguf models: null, or the sha256 the file must have")
    context_window: int | None = setting(None, "local/PATH.gguf models: null: the model's own context, at most 8192 "
                                               "tokens")  # kgkit/backends/local.py
    stages: dict[str, StageLLM] = setting(doc="per-stage overrides of model, temperature, max_tokens (core, "
                                              "upgrades, skills)", factory=dict)


@dataclass
class CacheConfig:
    enabled: bool = setting(True, "false = --no-cache")
    dir: Path | None = setting(None, "null: $KGKIT_CACHE_DIR, else the user cache directory")


@dataclass
class CanonConfig:
    fuzzy_threshold: float = setting(90.0, "0-100: names of one type this similar are merged")
    legal_suffixes: bool = setting(True, "treat 'Acme Inc.' and 'Acme' as one name")
    block_cap: int | None = setting(200, "a word's first or last 3 letters shared by more than N names of a type "
                                         "find no look-alikes (keeps the merge linear); null: off")


@dataclass
class ReviewConfig:
    confidence_threshold: float = setting(0.5, "items below go to review.jsonl (kept, marked)")
    evidence_threshold: float = setting(85.0, "0-100: how closely a quote must match the chunk text")
    admit_unverified: bool = setting(False, "true: items whose quote is not in the text enter the graph, marked; "
                                            "false: review only")


@dataclass
class LimitsConfig:
    """Bounds on one pass's answer, applied before it is stored or sent on (see kgkit/engine/limits.py)."""

    items_per_answer: int = setting(500, "entities, relations... kept from one answer; the rest go to review.jsonl")
    name_chars: int = setting(500, "longest name or other text of an item (its evidence quote aside)")
    answer_chars: int = setting(200_000, "largest answer, as JSON, taken from one pass")
    # so a prompt does not grow with the document (kgkit/engine/core.py)
    document_entities: int = setting(10, "entities of the whole document (the opening chunk's, then the most "
                                         "mentioned) a relation prompt lists beside those of its chunk")
    # after decompression; a longer one is refused unread (kgkit/backends/direct.py): a run holds at most
    # llm.concurrency of them at once
    max_response_bytes: int = setting(4_000_000, "largest HTTP answer the direct client reads (decompressed); a longer "
                                                 "one is refused")


@dataclass
class SkillsConfig:
    enabled: bool = setting(True, "give the core passes the learned skills that fit the document")
    top_k: int = setting(3, "skills retrieved per document")
    library: Path | None = setting(None, "null: ./skill_library if present, else the user data directory's "
                                         "skill_library")
    rollouts: int = setting(3, "samples per chunk when learning skills")
    temperature: float = setting(0.7, "sampling temperature of those rollouts")
    jaccard_merge: float = setting(0.7, "a new skill this similar to an old one merges into it")
    jaccard_modify: float = setting(0.4, "this similar: a new version of the old one; below: a new skill")
    min_gain: float = setting(0.001, "> 0: the gate keeps a change only if dev relation F1 rises at least this much")
    # kgkit/learning/loop.py, Gate; "train+dev" scores partly the documents a skill was learned from
    gate: str = setting("cv", "cv, dev or train+dev: how a change's development gain is measured (cv: folds of "
                              "all learning documents, each scored by a learner that never saw it; dev: a dev "
                              "split alone)")
    folds: int = setting(5, "gate cv: the learning documents dealt into this many folds, each scored by a learner "
                            "that never saw it")
    min_precision: float = setting(0.5, "a candidate skill's precision on the train documents must reach this")
    applied_precision: float = setting(0.33, "and, applied by extraction to the train documents, on the relations "
                                             "it adds")
    min_support: int = setting(2, "train documents a candidate must fire in (or gold edges it must explain)")
    typed_cues: bool = setting(True, "offline learning: also propose each cue binding only the two nearest names "
                                     "of the edge's types")
    join: bool = setting(True, "a learned relation cue joins its relation's skill instead of a new skill: "
                               "retrieval's top_k holds more")
    gazetteer_cap: int = setting(25, "literal names kept per domain, apart from skills")
    gazetteer_share: float = setting(0.2, "at most this share of the items one learn run accepts are gazetteer "
                                          "names (names go last)")


@dataclass
class GraphConfig:
    url: str | None = setting(None, "corpus graph store: a .sqlite path or postgresql:// URL (kgkit graph ...)")
    tenant: str = setting("default", "the tenant graph commands read and write")


@dataclass
class SearchConfig:
    """Typed retrieval (kgkit/query/search.py): weighted reciprocal-rank fusion of per-type lists."""

    # 30 and the rest chosen on the tune half: docs/query.md
    k: int = setting(30, "Reciprocal-rank fusion's k.")  # a list's rank r adds weight / (k + r)
    weights: dict[str, float] = setting(doc="Weights of the ranked lists: by list name (Party, quote:edge, mention:Tool), "
                                            "by the entity type a list ranks, or by source (name, quote); a list's weight "
                                            "is its own, else its type's times its source's, each 1 when not given.",
                                        factory=lambda: {"quote": 0.5})
    depth: int = setting(100, "Hits each ranked list contributes to the fusion.")
    owner_score: str = setting("sum", "An owner scores the sum of its children's fused scores, or its best child's.")


@dataclass
class EmbeddingsConfig:
    """Typed retrieval's embedding list (kgkit/query/embeddings.py): texts ranked by the cosine of
    their embedding with the question's, through litellm's embedding API, fused as one more list."""

    model: str | None = setting(None, "null: no embedding list (BM25 lists only); else a litellm embedding model, "
                                      "e.g. openai/text-embedding-3-small")
    api_base: str | None = setting(None, "the embedding provider's URL (a proxy, Ollama, vLLM)")
    api_key_env: str | None = setting(None, "name of the variable holding the key (never the key itself)")
    timeout: float = setting(30.0, "seconds one embedding request may take")
    batch: int = setting(128, "texts sent in one embedding request")
    texts: int = setting(2000, "texts a search embeds at most: all of a tenant's names and quotes when they are "
                               "fewer, else the full-text hits' (the rest reported as cut)")
    cache: int = setting(100_000, "embeddings kept in memory per process, so a text is embedded once")


@dataclass
class QueryConfig:
    """Limits every query operator applies (kgkit/query); a CLI flag may lower, never pass, max_hops."""

    hops: int = setting(2, "Hops of neighbours, lineage and path without --hops.")
    max_hops: int = setting(6, "The most --hops may ask for.")
    fanout: int = setting(50, "Neighbours kept per node per hop; what a hub loses is reported as cut.")
    scan: int = setting(300, "Statements a node's neighbours are ranked from per hop; the others a hub has are "
                             "not read, and reported as cut.")
    limit: int = setting(50, "Results an answer returns at most.")
    documents: int = setting(50, "Documents listed per node at most; the others a hub is named in are reported "
                                 "as cut.")
    timeout: float = setting(10.0, "Seconds a query may take before it answers with what it has, marked partial.")
    min_confidence: float | None = setting(None, "Items under this confidence are left out at query time.")
    search: SearchConfig = section(SearchConfig, "Typed retrieval: weighted reciprocal-rank fusion of per-type lists.")


@dataclass
class AskRole:
    """One model role of ``kgkit ask`` (kgkit/ask): its own sampling, budget and retries."""

    temperature: float = setting(0.0, "Sampling temperature of this role's requests (reason: at most 0.1).")
    max_tokens: int = setting(1024, "Tokens one answer of this role may take.")
    timeout: float = setting(30.0, "Seconds one request of this role may take (never past the question's deadline).")
    retries: int = setting(2, "Extra attempts after the first.")
    backoff: float = setting(0.5, "Base seconds of the exponential back-off between attempts (Retry-After wins).")
    jitter: float = setting(0.5, "Each back-off is stretched by a random share up to this, so retries never run "
                                 "in lockstep.")


@dataclass
class RouteRole(AskRole):
    """The route role: a short answer (the kind and the mentions)."""

    max_tokens: int = setting(256, "Tokens one answer of this role may take.")


@dataclass
class AskConfig:
    """``kgkit ask`` (kgkit/ask, docs/ask.md): the whole question's deadline and each role's settings."""

    deadline: float = setting(60.0, "Seconds the whole question may take; then it answers with status timeout.")
    min_score: float = setting(0.7, "A mention becomes a seed when find scores its best node at least this.")
    evidence: int = setting(40, "Evidence items a question gathers at most.")
    aggregate_evidence: int = setting(2000, "Statements a computed answer (a count, ranking, absence, earliest or "
                                            "latest) may read at most: never put in a prompt, so more than "
                                            "ask.evidence; past it the answer is insufficient_evidence, naming it.")
    route: RouteRole = section(RouteRole, "The route role: the question's kind and the names it mentions.")
    reason: AskRole = section(AskRole, "The reason role: the answer from the evidence list, citing it.")


@dataclass
class InputConfig:
    max_bytes: int = setting(200_000_000, "a document larger than this is refused before it is read")  # security.md
    regex_timeout: float = setting(1.0, "seconds a domain/skill regex may run per chunk; then it is skipped "
                                        "(review.jsonl)")


@dataclass
class UpgradesConfig:
    # UpgradeMode.can_contribute
    skip_idle_chunks: bool = setting(False, "skip upgrade passes on chunks that cannot contribute (counted in "
                                            "calls.skipped)")
    combine: bool = setting(False, "one pass per chunk answers every upgrade view at once (calls.upgrade.combined; "
                                   "saved in calls.saved)")  # kgkit/modes/combined.py


@dataclass
class RayConfig:
    """Where ``engine: ray`` runs the documents (kgkit/engine/ray_engine.py)."""

    address: str | None = setting(None, "null: a small local cluster for the run; else the cluster's (auto, "
                                         "ray://host:10001)")
    workers: int | None = setting(None, "tasks running at once, each a share of the documents; null: 2 on a "
                                        "local cluster, else the cluster's CPUs")


@dataclass
class Config:
    llm: LLMConfig = section(LLMConfig, "The model every pass uses. No model means the built-in offline backend.")
    domain: str = setting("general", "a name (`kgkit domains` lists them) or a path to a domain file")
    views: list[str] | None = setting(None, "null: the domain's default views; e.g. [binary, nary, temporal]")
    chunk_size: int | None = setting(None, "characters; null: the domain's chunking", key="chunking.size")
    chunk_overlap: int | None = setting(None, "characters shared by neighbours", key="chunking.overlap")
    canon: CanonConfig = section(CanonConfig, "The merge of a document's entities.")
    review: ReviewConfig = section(ReviewConfig, "What goes to review.jsonl instead of the graph.")
    limits: LimitsConfig = section(LimitsConfig, "Bounds on one pass's answer, applied before it is stored or sent "
                                                 "on; what is over goes to review.jsonl.")
    cache: CacheConfig = section(CacheConfig, "The response cache.")
    skills: SkillsConfig = section(SkillsConfig, "Learned skills: retrieval at extraction, and the learning loop.")
    input: InputConfig = section(InputConfig, "Bounds on what a document may cost before and while it is read.")
    upgrades: UpgradesConfig = section(UpgradesConfig, "How upgrade views' passes are sent.")
    engine: str = setting("local", "local: documents run in this process; ray: as Ray tasks (pip install "
                                   "'kgkit[ray]')")
    ray: RayConfig = section(RayConfig, "The Ray cluster for engine: ray. --out and cache.dir must be a filesystem "
                                        "every node shares.")
    prompts: dict[str, Path] = setting(doc="stage (entities, relations, a view name) -> path of a Jinja2 template "
                                           "replacing the built-in prompt", factory=dict)
    graph: GraphConfig = section(GraphConfig, "The corpus graph store the graph commands use.")
    query: QueryConfig = section(QueryConfig, "Limits of the query operators (kgkit query) and typed retrieval's fusion.")
    embeddings: EmbeddingsConfig = section(EmbeddingsConfig, "Typed retrieval's embedding list (off without a model).")
    ask: AskConfig = section(AskConfig, "kgkit ask: the question's deadline, seeds, evidence and each model role.")
    out_dir: Path = setting(Path("kgkit-out"), "run folders go to <dir>/<document name>/", key="output.dir")
    source: Path | None = None  # the kgkit.yaml it came from, if any (not a setting)
