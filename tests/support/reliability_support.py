"""Shared pieces of the reliability suites: a small real corpus and a model that answers it.

The corpus is three short news documents written for these tests in CoNLL04's style
(tests/fixtures/news, with gold annotations in the shared gold format), cut into a few chunks
each (``chunk_size`` 300). :class:`GoldModel` plays a well-behaved LLM behind the stub
provider: for each request it reads the chunk text it was sent and answers with the gold
entities and relations that the text mentions — a pure function of the request, so a run
that survives faults must end with exactly the fault-free output.
"""
from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

from support.fault_script import chunk_text, stage_of
from support.shared_data import FIXTURES
from support.stub_provider import Recorded, Reply

DATA = FIXTURES / "news"
CORPUS = ("news_000", "news_001", "news_003")
KEY_ENV = "KGKIT_TEST_KEY"
FAKE_KEY = "sk-canary-7f3e9d1c5b2a4e6f8a0b1c2d3e4f5a6b"
TYPES = {"Peop": "Person", "Org": "Organization", "Loc": "Location"}  # "Other" has no general type
CHUNK_SIZE = 300
SKILL = {"kind": "relation", "target": "works_for", "pattern": {"phrases": ["official of"], "regex": []},
         "instruction": "When a person is called an official of an organisation, emit works_for(person, org).",
         "example": "Bruno Pusterla, a top official of the Italian Agricultural Confederation"}
VIEWS = "binary,nary"


def copy_corpus(folder: Path) -> list[Path]:
    """The corpus texts copied into ``folder`` (tests never write beside the fixtures)."""
    folder.mkdir(parents=True, exist_ok=True)
    return [Path(shutil.copy(DATA / f"{name}.txt", folder / f"{name}.txt")) for name in CORPUS]


class GoldModel:
    """Answers each pass from the gold annotations of the corpus, for the text it was sent."""

    def __init__(self, names: tuple[str, ...] = CORPUS):
        self.entities: list[dict[str, Any]] = []
        self.relations: list[dict[str, Any]] = []
        for name in names:
            gold = json.loads((DATA / f"{name}.gold.json").read_text())
            self.entities += [e for e in gold["entities"] if e["type"] in TYPES]
            self.relations += gold["relations"]

    def answer(self, request: Recorded) -> dict[str, Any]:
        text, stage = chunk_text(request), stage_of(request)
        if stage == "entities":
            found = [{"name": e["name"], "type": TYPES[e["type"]], "evidence": e["name"], "confidence": 0.9}
                     for e in self.entities if e["name"] in text]
            return {"entities": found}
        if stage == "relations":
            found = []
            for r in self.relations:
                if r["head"] in text and r["tail"] in text:
                    quote = r["evidence"] if r["evidence"] and r["evidence"] in text else None  # null is allowed
                    item = {"head": r["head"], "relation": r["relation"], "tail": r["tail"], "confidence": 0.8}
                    found.append({**item, "evidence": quote} if quote else item)
            return {"relations": found}
        if stage == "nary":
            return {"hyperedges": []}
        if stage == "skills":
            return {"skills": [SKILL]}
        return {}

    def __call__(self, request: Recorded) -> Reply:
        return Reply.answer(self.answer(request))


def write_config(folder: Path, stub_base: str, *, retries: int = 8, timeout: float = 30.0,
                 cache: bool = False, concurrency: int = 16) -> Path:
    """A kgkit.yaml naming the stub as an OpenAI-compatible provider; the key stays in the env.
    With ``cache``, the response cache is on (in ``KGKIT_CACHE_DIR``). The timeout is
    generous: on a loaded machine a real answer must never be timed out and asked again."""
    cache = f"cache: {{enabled: {'true' if cache else 'false'}}}"
    text = (
        "llm:\n"
        "  model: openai/stub-model\n"
        f"  api_base: {stub_base}\n"
        f"  api_key: ${{{KEY_ENV}}}\n"
        f"  retries: {retries}\n"
        f"  timeout: {timeout}\n"
        "  backoff: 0\n"
        f"  concurrency: {concurrency}\n"
        "domain: general\n"
        "chunking:\n"
        f"  size: {CHUNK_SIZE}\n"
        "  overlap: 0\n"
        f"{cache}\n"
        "skills: {enabled: false}\n"
    )
    path = folder / "kgkit.yaml"
    path.write_text(text)
    return path


def kgkit_command() -> list[str]:
    """How to start the installed CLI in a child process (the same interpreter as pytest)."""
    return [sys.executable, "-c", "from kgkit.cli import run; run()"]


def child_env(tmp: Path) -> dict[str, str]:
    """The environment of a child ``kgkit``: the fake key, and no home directory state."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("KGKIT_")}
    env.update({KEY_ENV: FAKE_KEY, "KGKIT_CONFIG_DIR": str(tmp / "config-home"),
                "KGKIT_CACHE_DIR": str(tmp / "cache-home"), "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "PYTHONDONTWRITEBYTECODE": "1"})
    return env


def output_files(run_root: Path) -> dict[str, bytes]:
    """nodes.json and views/*.json of every run folder under ``run_root``, by relative path."""
    files = {}
    for path in sorted(run_root.rglob("*.json")):
        rel = path.relative_to(run_root)
        if rel.name == "nodes.json" or rel.parent.name == "views":
            files[str(rel)] = path.read_bytes()
    return files


def manifests(run_root: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(run_root.glob("*/manifest.json"))]


def extract_args(docs: list[Path], config: Path, out: Path, *more: str) -> list[str]:
    """`kgkit extract` arguments for the reliability corpus: its views, a config, an output folder."""
    return ["extract", *map(str, docs), "--config", str(config), "--view", VIEWS, "--out", str(out), *more]
