"""The commented starter ``kgkit.yaml`` that ``kgkit init`` writes.

Values and comments come from the settings :mod:`kgkit.config.model` declares, so the
starter cannot drift from them: loading it back gives the defaults (a test holds it to that). Keys
whose default is "decided elsewhere" (the output folder, stage overrides, prompt
overrides) are shown commented out, ready to edit.
"""
from __future__ import annotations

from typing import Any

from kgkit.config.model import Config
from kgkit.config.settings import comments, to_data

HEADER = """\
# kgkit configuration. Every key is optional; delete what you do not change.
# Precedence: these values < environment (KGKIT_MODEL, KGKIT_API_BASE, KGKIT_CACHE_DIR,
# KGKIT_DOMAIN) < command-line flags. Strings may use ${VARIABLE}; relative paths are
# relative to this file. `kgkit config show` prints what is in effect.

"""

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
    data = to_data(config or Config())
    notes = comments()
    lines = [HEADER]
    lines.append("llm:\n" + LLM_SWITCH)
    for key, value in data["llm"].items():
        if key != "stages":
            lines.append(_line(key, value, notes["llm"].get(key), indent=2))
    lines.append(LLM_STAGES)
    for top in ("domain", "views"):
        lines.append(_line(top, data[top], notes[top].get(top)) + "\n")
    lines.append(_line("engine", data["engine"], notes["engine"]["engine"]) + "\n")
    for section in ("chunking", "canon", "review", "limits", "cache", "skills", "input", "upgrades", "ray", "graph"):
        lines.append(f"{section}:\n")
        for key, value in data[section].items():
            lines.append(_line(key, value, notes[section].get(key), indent=2))
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

    from kgkit.formats.yaml_source import scalar  # the one YAML quoting rule kgkit writes with

    if isinstance(value, list):
        return "[" + ", ".join(_yaml_scalar(v) for v in value) + "]"
    if isinstance(value, str):
        return scalar(value.replace("${", "$${"))
    # numbers, booleans, null as YAML writes them (1.0e-05, not JSON's 1e-05)
    dumped = yaml.safe_dump(value, width=float("inf"), allow_unicode=True)
    return dumped.rstrip("\n").removesuffix("\n...").rstrip("\n")
