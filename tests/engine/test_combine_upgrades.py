"""upgrades.combine (issue 11 item 6): one pass per chunk answers every upgrade view, and the
answer splits into what separate passes would give — the same view files, review and
held-back counts — for n·(2 + 1) calls instead of n·(2 + upgrades)."""
from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pytest

import kgkit
from support.engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs
from support.fault_script import chunk_text, stage_of
from kgkit.backends.base import COMBINED, PassResult
from kgkit.backends.offline import OfflineBackend
from kgkit.config.model import CacheConfig, Config, LimitsConfig, LLMConfig, UpgradesConfig
from kgkit.backends.base import part_requests
from support.stub_provider import Recorded, Reply

from support.cli_support import kgkit as run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cooltech_strategic_alliance.pdf"
CONTRACT_VIEWS = ["nary", "temporal", "event", "diy:contract_review"]
KEY_ENV = "KGKIT_TEST_COMBINE_KEY"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv(KEY_ENV, "sk-test-combine")
    monkeypatch.chdir(tmp_path)


class Recording:
    """A backend that records each request it answers, then lets ``inner`` answer it; a
    combined request is answered part by part, as a model obeying the prompt would."""

    name = "recording"

    def __init__(self, inner, fail_combined: bool = False):
        self.inner, self.fail_combined = inner, fail_combined
        self.requests = []

    def describe(self):
        return self.inner.describe()

    def run(self, request):
        self.requests.append(request)
        if request.kind == COMBINED and not isinstance(self.inner, OfflineBackend):
            if self.fail_combined:
                return PassResult(data=None, ok=False, error="scripted failure", raw="{not json")
            return PassResult(data={p.stage: self.inner.run(p).data for p in part_requests(request)})
        return self.inner.run(request)

    def stages(self):
        return [r.stage for r in self.requests]


def folder_files(run_dir: Path, *, manifest: bool = False) -> dict[str, bytes]:
    names = ["nodes.json", "review.jsonl", *(f"views/{p.name}" for p in sorted((run_dir / "views").glob("*.json")))]
    return {name: (run_dir / name).read_bytes() for name in names}


def run(doc, out, views, backend, **upgrades):
    [result] = kgkit.extract(doc, domain="legal_contracts", views=views, backend=backend, out_dir=out,
                             config=Config(upgrades=UpgradesConfig(**upgrades)))
    return result


@pytest.mark.parametrize("skip", [False, True])
def test_offline_combined_passes_give_the_same_run_folder_for_fewer_calls(tmp_path, skip):
    separate = Recording(OfflineBackend())
    plain = run(EXAMPLE, tmp_path / "separate", CONTRACT_VIEWS, separate, skip_idle_chunks=skip)
    together = Recording(OfflineBackend())
    combined = run(EXAMPLE, tmp_path / "combined", CONTRACT_VIEWS, together, skip_idle_chunks=skip, combine=True)

    assert folder_files(combined.run_dir) == folder_files(plain.run_dir)  # views, nodes, review: byte for byte
    assert combined.manifest["counts"] == plain.manifest["counts"]
    n = combined.manifest["input"]["chunks"]
    upgrade_sent = [s for s in together.stages() if s not in ("entities", "relations")]
    assert len(upgrade_sent) <= n < len([s for s in separate.stages() if s not in ("entities", "relations")])
    calls, before = combined.manifest["calls"], plain.manifest["calls"]
    assert calls["total"] == calls["core"] + len(upgrade_sent) == calls["executed"]
    # every view's passes are answered: alone, or inside a combined pass
    for view in CONTRACT_VIEWS:
        assert calls["upgrade"][view] + calls.get("combined", {}).get(view, 0) == before["upgrade"][view]
    assert calls["saved"] - before["saved"] == before["total"] - calls["total"]
    if not skip:  # every chunk has work for every view: exactly n·(2 + 1)
        assert calls["total"] == 3 * n and calls["upgrade"]["combined"] == n
        assert calls["saved"] == n * (len(CONTRACT_VIEWS) - 1)


def test_resume_reuses_combined_passes_and_their_keys_never_meet_single_view_ones(tmp_path):
    first = run(EXAMPLE, tmp_path / "out", ["nary", "temporal"], Recording(OfflineBackend()), combine=True)
    again = Recording(OfflineBackend())
    second = run(EXAMPLE, tmp_path / "out", ["nary", "temporal"], again, combine=True)
    assert again.requests == [] and second.manifest["calls"]["reused"] == first.manifest["calls"]["total"]

    single = Recording(OfflineBackend())  # the same folder without the option: its own passes, paid
    run(EXAMPLE, tmp_path / "out", ["nary", "temporal"], single)
    assert sorted(set(single.stages())) == ["nary", "temporal"]
    other_parts = Recording(OfflineBackend())  # another set of views: another combined pass
    run(EXAMPLE, tmp_path / "out", ["nary", "event"], other_parts, combine=True, )
    assert set(other_parts.stages()) == {"combined"}


def test_a_failed_combined_pass_fails_its_chunk_for_each_view_and_resume_retries_only_it(tmp_path):
    inputs = write_inputs(tmp_path / "in", paragraphs=3)
    cfg = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, upgrades=UpgradesConfig(combine=True))
    failing = Recording(ScriptedBackend(), fail_combined=True)
    [broken] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary", "temporal"], config=cfg,
                             backend=failing, out_dir=tmp_path / "out")
    assert [f["stage"] for f in broken.failures] == ["combined"] * 3
    assert broken.views["nary"]["hyperedges"] == [] and broken.views["temporal"]["edges"] == []
    fixed = Recording(ScriptedBackend())
    [resumed] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary", "temporal"], config=cfg,
                              backend=fixed, out_dir=tmp_path / "out", resume=True)
    assert fixed.stages() == ["combined"] * 3 and resumed.ok
    assert len(resumed.views["nary"]["hyperedges"]) == 3 and len(resumed.views["temporal"]["edges"]) == 3


def test_items_over_the_limits_are_held_back_under_their_own_view(tmp_path):
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    extra = {"nary": [{"relation": "Employment", "roles": {"employee": "Ann Lee"}, "evidence": "x" * 10}]}
    results = {}
    for combine in (False, True):
        cfg = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, limits=LimitsConfig(items_per_answer=1),
                     upgrades=UpgradesConfig(combine=combine))
        [results[combine]] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary", "temporal"],
                                           config=cfg, backend=Recording(ScriptedBackend(extra)),
                                           out_dir=tmp_path / str(combine))
    held = results[True].manifest["counts"]["held_back"]
    assert held["nary"] == {"over_limit": 2} == results[False].manifest["counts"]["held_back"]["nary"]
    assert [r for r in results[True].review if r["stage"] == "nary"] == \
        [r for r in results[False].review if r["stage"] == "nary"]


def test_a_view_whose_prompt_a_user_template_replaces_keeps_its_own_pass(tmp_path):
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    mine = tmp_path / "my_temporal.j2"
    mine.write_text('{% extends "kgkit/temporal.j2" %}{% block system %}Mine.{% endblock %}', encoding="utf-8")
    cfg = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, prompts={"temporal": str(mine)},
                 upgrades=UpgradesConfig(combine=True))
    backend = Recording(ScriptedBackend())
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary", "temporal", "event"],
                             config=cfg, backend=backend, out_dir=tmp_path / "out")
    upgrade = [r for r in backend.requests if r.stage not in ("entities", "relations")]
    assert [r.stage for r in upgrade] == ["combined", "temporal"] * 2
    assert [p["key"] for p in upgrade[0].context["parts"]] == ["nary", "event"]
    assert result.manifest["calls"]["combined"] == {"nary": 2, "event": 2}


def test_cli_option_turns_it_on(tmp_path):
    out = tmp_path / "out"
    result = run_cli("extract", "--domain", "legal_contracts", "--view", "nary,temporal", "--combine-upgrades",
                     "--out", str(out), str(EXAMPLE))
    assert result.exit_code == 0, result.output
    [manifest] = [json.loads(p.read_text()) for p in out.glob("*/manifest.json")]
    assert manifest["calls"]["upgrade"]["combined"] == manifest["input"]["chunks"]
    assert manifest["calls"]["upgrade"]["nary"] == manifest["calls"]["upgrade"]["temporal"] == 0


# -- against a model behind real HTTP ---------------------------------------------------------

class ObedientModel:
    """Answers like ScriptedBackend from the chunk it was sent; a combined request gets one
    answer per task it names, each what that view's own pass would have got."""

    def __init__(self):
        self.seen: list[Recorded] = []

    def __call__(self, request: Recorded) -> Reply:
        self.seen.append(request)
        text, stage = chunk_text(request), stage_of(request)

        def answer(stage):
            return ScriptedBackend().run(SimpleNamespace(stage=stage, chunk=SimpleNamespace(text=text, index=-1))).data

        if stage == "combined":
            tasks = [line.split('"')[1] for line in request.messages[-1]["content"].splitlines()
                     if line.startswith("=== Task ")]
            return Reply.answer({task: answer(task) for task in tasks})
        return Reply.answer(answer("diy:x" if stage == "diy" else stage))


def stub_config(stub, combine: bool) -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0,
                    timeout=10.0, concurrency=4)
    return Config(llm=llm, cache=CacheConfig(enabled=False), chunk_size=CHUNK_SIZE, chunk_overlap=0,
                  upgrades=UpgradesConfig(combine=combine))


def test_against_the_stub_one_request_per_chunk_answers_every_view_as_separate_passes_do(stub_provider, tmp_path):
    inputs = write_inputs(tmp_path / "in", paragraphs=4)
    views = ["nary", "temporal", "event", f"diy:{inputs['template']}"]
    runs = {}
    for combine in (False, True):
        model = ObedientModel()
        stub_provider.responder = model
        [runs[combine]] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=views,
                                        config=stub_config(stub_provider, combine), out_dir=tmp_path / str(combine),
                                        skills=False)
        runs[combine].seen = model.seen
    separate, combined = runs[False], runs[True]
    assert folder_files(combined.run_dir) == folder_files(separate.run_dir)
    n = combined.manifest["input"]["chunks"]
    assert len(separate.seen) == n * (2 + len(views)) and len(combined.seen) == n * (2 + 1)
    asks = [r for r in combined.seen if stage_of(r) == "combined"]
    assert len(asks) == n
    system, user = asks[0].messages[0]["content"], asks[0].messages[-1]["content"]
    for heading in ("N-ary relation types", "Qualifiers (use only these names)", "Event types",
                    "Entity types of the template"):
        assert user.count(heading) == 1  # each view's own instructions, once
    assert system.count("untrusted data") == 1 and user.count("Document text, part") == 1  # the chunk once,
    assert user.index("=== Your answer ===") < user.index("Document text, part")  # after every task, last
    assert user.rstrip().splitlines()[-1].startswith("END UNTRUSTED DOCUMENT")
    schema = asks[0].body["response_format"]
    assert schema["type"] in ("json_object", "json_schema")
