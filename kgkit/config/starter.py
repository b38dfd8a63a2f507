"""The commented starter ``kgkit.yaml`` that ``kgkit init`` writes.

Values come from :class:`kgkit.config.model.Config` defaults, so the starter cannot
drift from them: loading it back gives the defaults (a test holds it to that). Keys
whose default is "decided elsewhere" (the output folder, stage overrides, prompt
overrides) are shown commented out, ready to edit.
"""
from __future__ import annotations

from typing import Any

from kgkit.config.model import Config

HEADER = """\
# kgkit configuration. Every key is optional; delete what you do not change.
# Precedence: these values < environment (KGKIT_MODEL, KGKIT_API_BASE, KGKIT_CACHE_DIR,
# KGKIT_DOMAIN) < command-line flags. Strings may use ${VARIABLE}; relative paths are
# relative to this file. `kgkit config show` prints what is in effect.

"""

# Comments for keys, by section; a key without one is shown bare.
COMMENTS: dict[str, dict[str, str]] = {
    "llm": {
        "model": "null: the built-in offline backend (deterministic, free, no network); local/PATH.gguf: a model in this process",
        "api_base": "the provider's URL, for Ollama, vLLM or a proxy",
        "api_key_env": "name of the variable holding the key (never the key itself)",
        "temperature": "0 for extraction: the same text gives the same answer",
        "max_tokens": "the most one answer may take (each pass asks for what its chunk needs, up to this)",
        "timeout": "seconds a whole request may take",
        "retries": "extra attempts after the first (429, 5xx, resets, timeouts)",
        "backoff": "base seconds of exponential backoff; a Retry-After header wins",
        "json_mode": "ask for structured output (a strict JSON Schema, else JSON mode) where the provider supports it",
        "concurrency": "requests in flight at once for the whole run (the passes of a stage go out together)",
        "rpm": "null: no limit; else requests per minute at most, spaced evenly",
        "tpm": "null: no limit; else tokens per minute at most (input + output), spaced evenly",
        "client": "auto: openai/... models over kgkit's own HTTP client, every other through litellm; or litellm, direct",
        "model_sha256": "local/PATH.gguf models: null, or the sha256 the file must have",
        "context_window": "local/PATH.gguf models: null: the model's own context, at most 8192 tokens",
    },
    "domain": {"domain": "a name (`kgkit domains` lists them) or a path to a domain file"},
    "views": {"views": "null: the domain's default views; e.g. [binary, nary, temporal]"},
    "chunking": {"size": "characters; null: the domain's chunking", "overlap": "characters shared by neighbours"},
    "canon": {
        "fuzzy_threshold": "0-100: names of one type this similar are merged",
        "legal_suffixes": "treat 'Acme Inc.' and 'Acme' as one name",
        "block_cap": "a word's first or last 3 letters shared by more than N names of a type find no look-alikes (keeps the merge linear); null: off",
    },
    "review": {
        "confidence_threshold": "items below go to review.jsonl (kept, marked)",
        "evidence_threshold": "0-100: how closely a quote must match the chunk text",
        "admit_unverified": "true: items whose quote is not in the text enter the graph, marked; false: review only",
    },
    "limits": {
        "items_per_answer": "entities, relations... kept from one answer; the rest go to review.jsonl",
        "name_chars": "longest name or other text of an item (its evidence quote aside)",
        "answer_chars": "largest answer, as JSON, taken from one pass",
        "document_entities": "entities of the whole document (the opening chunk's, then the most mentioned) a relation prompt lists beside those of its chunk",
        "max_response_bytes": "largest HTTP answer the direct client reads (decompressed); a longer one is refused",
    },
    "cache": {"enabled": "false = --no-cache", "dir": "null: $KGKIT_CACHE_DIR, else the user cache directory"},
    "graph": {
        "url": "corpus graph store: a .sqlite path or postgresql:// URL (kgkit graph ...)",
        "tenant": "the tenant graph commands read and write",
    },
    "skills": {
        "enabled": "give the core passes the learned skills that fit the document",
        "top_k": "skills retrieved per document",
        "library": "null: ./skill_library if present, else the user data directory's skill_library",
        "rollouts": "samples per chunk when learning skills",
        "temperature": "sampling temperature of those rollouts",
        "jaccard_merge": "a new skill this similar to an old one merges into it",
        "jaccard_modify": "this similar: a new version of the old one; below: a new skill",
        "min_gain": "> 0: the gate keeps a change only if dev relation F1 rises at least this much",
        "gate": "cv, dev or train+dev: how a change's development gain is measured (cv: folds of all learning documents, each scored by a learner that never saw it; dev: a dev split alone)",
        "folds": "gate cv: the learning documents dealt into this many folds, each scored by a learner that never saw it",
        "min_precision": "a candidate skill's precision on the train documents must reach this",
        "applied_precision": "and, applied by extraction to the train documents, on the relations it adds",
        "min_support": "train documents a candidate must fire in (or gold edges it must explain)",
        "nearest_cues": "offline learning: also propose each relation cue binding only the two names nearest to it",
        "typed_cues": "offline learning: also propose each cue binding only the two nearest names of the edge's types",
        "join": "a learned relation cue joins its relation's skill instead of a new skill: retrieval's top_k holds more",
        "families": "pool one relation's clean cues, each too rare to gate alone, into one skill gated as one",
        "family_size": "at most this many cues in such a family",
        "family_max_wrong": "a family member adds at most this many wrong relations, applied alone to train",
        "gazetteer_cap": "literal names kept per domain, apart from skills",
        "gazetteer_share": "at most this share of the items one learn run accepts are gazetteer names (names go last)",
        "sample_rule_drop": "offline sampling simulation (temperature 1): chance a rule is left out",
        "sample_item_drop": "offline sampling simulation: chance a found item is dropped, times (1 - confidence)",
    },
    "input": {
        "max_bytes": "a document larger than this is refused before it is read",
        "regex_timeout": "seconds a domain/skill regex may run per chunk; then it is skipped (review.jsonl)",
    },
    "upgrades": {
        "skip_idle_chunks": "skip upgrade passes on chunks that cannot contribute (counted in calls.skipped)",
        "combine": "one pass per chunk answers every upgrade view at once (calls.upgrade.combined; saved in calls.saved)",
    },
    "engine": {"engine": "local: documents run in this process; ray: as Ray tasks (pip install 'kgkit[ray]')"},
    "ray": {
        "address": "null: a small local cluster for the run; else the cluster's (auto, ray://host:10001)",
        "workers": "documents running at once; null: 2 on a local cluster, else the cluster's CPUs",
    },
}

LLM_SWITCH = """\
  # Switching provider is editing `model` (litellm names); nothing else changes:
  #   model: openai/gpt-4o-mini                  # key in OPENAI_API_KEY
  #   model: anthropic/claude-3-5-haiku-latest   # key in ANTHROPIC_API_KEY
  #   model: ollama/qwen2.5:7b                   # with api_base: http://localhost:11434
  #   model: hosted_vllm/Qwen/Qwen2.5-7B-Instruct  # with api_base: http://your-host:8000/v1
  # A key may also be named here as api_key: ${MY_KEY} (never written literally).
"""

LLM_STAGES = """\
  # Per-stage overrides of model, temperature, max_tokens (core, upgrades, skills):
  # stages:
  #   upgrades: {model: openai/gpt-4o-mini}
  #   skills: {model: openai/gpt-4o, temperature: 0.7}

"""

TAIL = """\
# Replace a built-in prompt (Jinja2) for a stage or view:
# prompts:
#   entities: prompts/my_entities.j2
#   nary: prompts/my_nary.j2

# output:
#   dir: {out_dir}   # run folders go to <dir>/<document name>/
"""


def starter_text(config: Config | None = None) -> str:
    """The starter file's text, with ``config``'s values (default: the defaults)."""
    from kgkit.config.loader import config_to_data

    data = config_to_data(config or Config())
    lines = [HEADER]
    lines.append("llm:\n" + LLM_SWITCH)
    for key, value in data["llm"].items():
        if key != "stages":
            lines.append(_line(key, value, COMMENTS["llm"].get(key), indent=2))
    lines.append(LLM_STAGES)
    for top in ("domain", "views"):
        lines.append(_line(top, data[top], COMMENTS[top].get(top)) + "\n")
    lines.append(_line("engine", data["engine"], COMMENTS["engine"]["engine"]) + "\n")
    for section in ("chunking", "canon", "review", "limits", "cache", "skills", "input", "upgrades", "ray", "graph"):
        lines.append(f"{section}:\n")
        for key, value in data[section].items():
            lines.append(_line(key, value, COMMENTS[section].get(key), indent=2))
        lines.append("\n")
    lines.append(TAIL.format(out_dir=data["output"]["dir"]))
    return "".join(lines)


def _line(key: str, value: Any, comment: str | None, indent: int = 0) -> str:
    text = f"{' ' * indent}{key}: {_yaml_scalar(value)}"
    return text + (f"  # {comment}" if comment else "") + "\n"


def _yaml_scalar(value: Any) -> str:
    """A value as one line of YAML flow text that the loader reads back as the same value
    (``${`` is escaped as ``$${``, which the loader reads as a literal)."""
    import yaml

    from kgkit.schema.starter import scalar  # the one YAML quoting rule kgkit writes with

    if isinstance(value, list):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    if isinstance(value, str):
        return scalar(value.replace("${", "$${"))
    # numbers, booleans, null as YAML writes them (1.0e-05, not JSON's 1e-05)
    dumped = yaml.safe_dump(value, width=float("inf"), allow_unicode=True)
    return dumped.rstrip("\n").removesuffix("\n...").rstrip("\n")
