"""``kgkit extract --dry-run`` (issue 11 item 3): the prompt sizes it counts are those the
provider is sent — system prompt, examples, the bounded entity list and the chunk — and its
call budget counts the views a run folder keeps and the passes skipped or combined."""
from __future__ import annotations

import json

import pytest

import kgkit
from kgkit.backends.base import ENTITIES, PassRequest
from kgkit.backends.offline import OfflineBackend
from kgkit.config.model import CacheConfig, Config, LLMConfig, UpgradesConfig
from kgkit.documents.types import Chunk
from kgkit.engine.core import ENTITIES_SCHEMA
from kgkit.engine.plan import plan
from kgkit.engine.options import RunOptions
from support.fault_script import chunk_text, stage_of
from support.stub_provider import Recorded, Reply

from support.cli_support import kgkit as run_cli

from test_combine_upgrades import EXAMPLE, KEY_ENV, _isolated  # noqa: F401 - the fixture: an own home, cache and key


class RulesModel:
    """Finds the entities the offline rules find in the chunk it is sent, and nothing else:
    the model the dry run's estimate assumes. Records the characters of every request by stage."""

    def __init__(self):
        self.domain = kgkit.load_domain("legal_contracts")
        self.chars: dict[str, int] = {}
        self.requests: dict[str, int] = {}

    def __call__(self, request: Recorded) -> Reply:
        stage = stage_of(request)
        self.chars[stage] = self.chars.get(stage, 0) + sum(len(m["content"]) for m in request.messages)
        self.requests[stage] = self.requests.get(stage, 0) + 1
        if stage == "entities":
            text = chunk_text(request)
            fake = PassRequest(kind=ENTITIES, stage="entities", schema=ENTITIES_SCHEMA, prompt="entities.j2",
                               chunk=Chunk(id="c", doc_id="d", index=0, text=text, start=0, end=len(text)),
                               context={"domain": self.domain, "skills": []})
            return Reply.answer(OfflineBackend().run(fake).data)
        empty = {"relations": {"relations": []}, "nary": {"hyperedges": []}, "temporal": {"edges": []}}
        if stage == "combined":
            user = request.messages[-1]["content"]
            tasks = [line.split('"')[1] for line in user.splitlines() if line.startswith("=== Task ")]
            return Reply.answer({task: empty[task] for task in tasks})
        return Reply.answer(empty[stage])


@pytest.mark.parametrize("options", [{}, {"skip_idle_chunks": True, "combine": True}])
def test_the_estimate_counts_the_prompts_the_stub_receives(stub_provider, tmp_path, options):
    model = RulesModel()
    stub_provider.responder = model
    llm = LLMConfig(model="openai/stub-model", api_base=stub_provider.openai_base, api_key_env=KEY_ENV,
                    backoff=0.0, timeout=20.0, concurrency=2)
    cfg = Config(llm=llm, cache=CacheConfig(enabled=False), upgrades=UpgradesConfig(**options))
    [planned] = plan(EXAMPLE, RunOptions(domain="legal_contracts", views=["nary", "temporal"],
                                             out_dir=tmp_path / "out", skills=False), config=cfg)
    assert stub_provider.requests == []  # the dry run calls nothing
    [result] = kgkit.extract(EXAMPLE, domain="legal_contracts", views=["nary", "temporal"], config=cfg,
                             out_dir=tmp_path / "out", skills=False)
    assert result.ok
    assert planned.prompt_chars == model.chars  # stage by stage, character for character
    calls = result.manifest["calls"]
    assert planned.calls["total"] == calls["total"] == sum(model.requests.values())
    for key in ("upgrade", "skipped", "saved"):
        assert planned.calls[key] == calls[key]
    assert planned.calls.get("combined") == calls.get("combined")
    if options:
        assert calls["saved"] > 0 and calls["upgrade"]["combined"] > 0
    assert planned.tokens["in"] >= sum(model.chars.values()) // 4


def test_views_kept_in_the_run_folder_are_counted_unless_replaced(tmp_path):
    kgkit.extract(EXAMPLE, domain="legal_contracts", views=["nary"], out_dir=tmp_path / "out")
    [kept] = plan(EXAMPLE, RunOptions(domain="legal_contracts", views=["temporal"], out_dir=tmp_path / "out"))
    assert kept.views == ["nary", "temporal"] and set(kept.calls["upgrade"]) == {"nary", "temporal"}
    [replaced] = plan(EXAMPLE, RunOptions(domain="legal_contracts", views=["temporal"],
                                         out_dir=tmp_path / "out", replace_views=True))
    assert replaced.views == ["temporal"] and replaced.calls["total"] < kept.calls["total"]
    result = run_cli("extract", "--domain", "legal_contracts", "--view", "temporal", "--out", str(tmp_path / "out"),
                     "--dry-run", "--json", "--skip-idle-chunks", "--combine-upgrades", str(EXAMPLE))
    assert result.exit_code == 0, result.output
    [shown] = json.loads(result.stdout)["plan"]
    assert shown["views"] == ["nary", "temporal"] and shown["calls"]["upgrade"]["combined"] > 0
    assert shown["calls"]["saved"] == sum(shown["calls"]["skipped"].values()) + \
        sum(shown["calls"]["combined"].values()) - shown["calls"]["upgrade"]["combined"]


# Written for this test: a short paper-like note with headings (the scholarly domain binds
# relations to kinds of section), parties, dates, money, a drug and a company, so that each
# shipped domain's rules find something in some chunk; and a note in which they find nothing.
FULL = """# Routed Experts for Contract Review

Mira Okafor and Tomas Lindqvist, Harbor Analytics Ltd.

## 1 Introduction

Harbor Analytics Ltd. and Northwind Freight Inc. signed a services agreement on 3 March 2024.
The agreement is governed by the laws of the State of Oregon and runs for two years.

## 2 Method

We propose a routed transformer trained with dropout on the CUAD dataset (Hendrycks et al., 2021).
Northwind Freight Inc. shall pay $45,000 to Harbor Analytics Ltd. within thirty days.

## 3 Discussion

Patients taking warfarin with aspirin face a higher risk of bleeding. Acme Holdings reported
revenue of $12 million in fiscal 2023, up 8 percent, and named Dana Reyes chief executive.

## 4 Limitations

The approach fails on long contracts, a limitation shared by beam search.
"""
NOTHING = """# notes

this short note has nothing in it at all, and it is written in lower case only.

## discussion

we think it went well and will meet again soon.
"""


def _shipped_domains() -> list[str]:
    from kgkit.formats.search_path import builtin_root

    return sorted(p.stem for p in (builtin_root() / "domains").glob("*.yaml"))


@pytest.mark.parametrize("options", [{}, {"skip_idle_chunks": True, "combine": True}], ids=["plain", "skip+combine"])
@pytest.mark.parametrize("domain", _shipped_domains())
def test_an_offline_plan_counts_the_calls_an_offline_run_makes(tmp_path, domain, options):
    """Offline, the plan is the run's own core: for every shipped domain, on a document its
    rules find things in and one they find nothing in, it counts each stage's calls, the
    skipped and the combined ones as the run's manifest does."""
    cfg = Config(cache=CacheConfig(enabled=False), upgrades=UpgradesConfig(**options), chunk_size=400, chunk_overlap=0)
    counted = {}
    for name, text in (("full", FULL), ("nothing", NOTHING)):
        path = tmp_path / f"{name}.md"
        path.write_text(text, encoding="utf-8")
        run_options = RunOptions(domain=domain, views=["all"], out_dir=tmp_path / "out", skills=False)
        [planned] = plan(path, run_options, config=cfg)
        [result] = kgkit.extract(path, domain=domain, views=["all"], config=cfg, out_dir=tmp_path / "out",
                                 skills=False)
        calls = result.manifest["calls"]
        assert planned.chunks == result.manifest["input"]["chunks"] > (1 if name == "full" else 0)
        assert planned.calls["entities"] + planned.calls["relations"] == calls["core"], name
        for key in ("upgrade", "projection", "total", "naive", "skipped", "saved"):
            assert planned.calls[key] == calls[key], (name, key)
        assert planned.calls.get("combined") == calls.get("combined"), name
        counted[name] = {**calls, "chunks": planned.chunks}
    assert counted["full"]["core"] > counted["full"]["chunks"]  # relations were asked of the full note
    if domain == "scholarly":  # where the rules find nothing, the run skips what cannot work: so must the plan
        assert counted["nothing"]["skipped"].get("relations")
