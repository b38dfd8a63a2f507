"""The engine against answers nobody should trust and run folders nobody should trust.

Each case is a promise of docs/security.md or docs/reliability.md: an entity the model
invents (its quote is not in the text) never reaches nodes.json, a view or a later prompt;
answers are bounded before anything is stored or sent; a run folder's symlinks are never
followed; two runs into one folder never both pay or destroy each other's files; a bad
--out is refused before any call; files honour the umask; an earlier run's views are kept.
Model answers come from tests/support/stub_provider.py over real HTTP where the case is about
what a provider sends.
"""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import kgkit
from kgkit.config.model import Config, LLMConfig

from support.cli_support import kgkit as run_cli
from support.engine_support import CHUNK_SIZE, PEOPLE, ScriptedBackend, write_inputs
from support.fault_script import chunk_text, stage_of
from support.stub_provider import Reply

INVENTED = "Zara Quill"


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("KGKIT_TEST_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)


def stub_config(stub) -> Config:
    return Config(chunk_size=CHUNK_SIZE, chunk_overlap=0,
                  llm=LLMConfig(model="openai/test-model", api_base=stub.openai_base, api_key_env="KGKIT_TEST_KEY",
                                backoff=0.0, retries=0))


def people_in(text: str, extra: list[dict] | None = None) -> dict:
    found = [{"name": p, "type": "Person", "evidence": f"{p} joined", "confidence": 0.9} for p in PEOPLE if p in text]
    return {"entities": found + (extra or [])}


def test_an_invented_entity_is_held_back_from_nodes_views_and_the_later_passes_prompts(stub_provider, tmp_path):
    """Issue 9's done-when: the model names an entity whose evidence is not in the text."""
    invented = {"name": INVENTED, "type": "Person", "evidence": f"{INVENTED} signed the merger", "confidence": 0.95}

    def answer(request):
        stage, text = stage_of(request), chunk_text(request)
        if stage == "entities":
            return Reply.answer(people_in(text, [invented]))
        if stage == "relations":
            return Reply.answer({"relations": [{"head": INVENTED, "relation": "Work_For", "tail": "Acme Corp",
                                                "evidence": f"{INVENTED} joined Acme Corp"}]})
        if stage == "nary":
            return Reply.answer({"hyperedges": []})
        raise AssertionError(stage)

    stub_provider.responder = answer
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "nary"],
                             config=stub_config(stub_provider), out_dir=tmp_path / "out")
    stages = [stage_of(r) for r in stub_provider.requests]
    assert stages == ["entities"] * 2 + ["relations"] * 2 + ["nary"] * 2
    later = [r for r in stub_provider.requests if stage_of(r) != "entities"]
    assert all(INVENTED not in r.raw.decode("utf-8") for r in later)  # in no later prompt
    nodes = json.loads((result.run_dir / "nodes.json").read_text())["nodes"]
    assert [n["name"] for n in nodes] == ["Ann Lee", "Bob Stone"]
    assert INVENTED not in (result.run_dir / "views" / "binary.json").read_text()
    held = [r for r in result.review if r["item"].get("name") == INVENTED]
    assert len(held) == 2 and all(r["reason"].startswith("held back (unverified_evidence)") for r in held)
    assert result.manifest["counts"]["held_back"]["entities"] == {"unverified_evidence": 2}
    # spans are the names' own characters, never the whole chunk
    text = inputs["doc"].read_text()
    assert all(text[m["span"][0]:m["span"][1]] == n["name"] for n in nodes for m in n["mentions"])


def test_passes_with_nothing_to_work_on_are_not_sent_and_counted_as_skipped(stub_provider, tmp_path):
    """No entity in the document: no relation pass, no temporal pass (its edges join two
    entities); the nary pass still goes, as a role of the domain takes a date literal."""
    def answer(request):
        return Reply.answer({"entities": {"entities": []}, "nary": {"hyperedges": []}}[stage_of(request)])

    stub_provider.responder = answer
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "temporal", "nary"],
                             config=stub_config(stub_provider), out_dir=tmp_path / "out")
    assert [stage_of(r) for r in stub_provider.requests] == ["entities"] * 2 + ["nary"] * 2
    calls = result.manifest["calls"]
    assert calls["skipped"] == {"relations": 2, "temporal": 2}
    assert calls["requests"] == 4 and calls["total"] == 4
    assert result.views["temporal"]["edges"] == [] and result.ok


# -- the run folder ---------------------------------------------------------------------

def offline_run(tmp_path, out, *more):
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    return run_cli("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--out", str(out), *more)


def test_a_symlink_inside_the_run_folder_is_refused_and_its_target_untouched(tmp_path):
    """Issue 10 case 1: views/ linked to a folder outside --out."""
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.json").write_text("{}")
    (tmp_path / "out" / "staff_notes").mkdir(parents=True)
    (tmp_path / "out" / "staff_notes" / "views").symlink_to(victim)
    result = offline_run(tmp_path, tmp_path / "out")
    assert result.exit_code == 2 and "is a symbolic link inside the run folder" in result.output
    assert "Traceback" not in result.output
    assert [p.name for p in victim.iterdir()] == ["keep.json"]
    assert sorted(p.name for p in (tmp_path / "out" / "staff_notes").iterdir()) == ["views"]


def test_a_symlinked_state_file_is_refused(tmp_path):
    out = tmp_path / "out"
    assert offline_run(tmp_path, out).exit_code == 0
    secret = tmp_path / "secret.txt"
    secret.write_text("not for the run")
    [state] = list((out / "staff_notes" / "state" / "entities").iterdir())[:1]
    state.unlink()
    state.symlink_to(secret)
    result = offline_run(tmp_path, out)
    assert result.exit_code == 2 and str(state) in result.output
    assert secret.read_text() == "not for the run"


def test_a_run_folder_that_is_a_symlink_is_refused(tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (tmp_path / "out").mkdir()
    (tmp_path / "out" / "staff_notes").symlink_to(elsewhere)
    result = offline_run(tmp_path, tmp_path / "out")
    assert result.exit_code == 2 and "is a symbolic link" in result.output
    assert list(elsewhere.iterdir()) == []


@pytest.mark.parametrize("out", ["afile/sub", "/dev/null"])
def test_an_out_that_cannot_be_a_folder_is_refused_before_any_call(tmp_path, stub_provider, out):
    """Issue 10 case 7: exit 2 and a clean message, nothing paid."""
    (tmp_path / "afile").write_text("a file")
    inputs = write_inputs(tmp_path / "in", paragraphs=2)
    config = tmp_path / "kgkit.yaml"
    config.write_text(f"llm: {{model: openai/test-model, api_base: {stub_provider.openai_base}, "
                      "api_key_env: KGKIT_TEST_KEY}\n")
    result = run_cli("extract", str(inputs["doc"]), "--domain", str(inputs["domain"]), "--config", str(config),
                     "--out", out)
    assert result.exit_code == 2 and "cannot create the run folder" in result.output
    assert "Traceback" not in result.output and stub_provider.requests == []


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes to read-only folders")
def test_a_read_only_out_is_refused_before_any_call(tmp_path):
    (tmp_path / "ro").mkdir(mode=0o555)
    result = offline_run(tmp_path, tmp_path / "ro")
    assert result.exit_code == 2 and "cannot create the run folder" in result.output


def test_a_second_run_into_a_folder_in_use_stops_at_once_and_leaves_the_first_alone(tmp_path):
    """Issue 10 case 6: the first run holds the lock; the second pays nothing, removes nothing."""
    from kgkit.engine.outputs import RunFolder

    out = tmp_path / "out"
    folder = out / "staff_notes"
    folder.mkdir(parents=True)
    in_flight = folder / ".nodes.json.0123456789ab.kgkit-tmp"
    with RunFolder(folder).locked():
        in_flight.write_text("the first run is writing this")
        inputs = write_inputs(tmp_path / "in", paragraphs=2)
        backend = ScriptedBackend()
        from support.engine_support import CountingBackend

        counting = CountingBackend(backend)
        with pytest.raises(kgkit.errors.InputError, match="another kgkit run is writing to"):
            kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], out_dir=out, backend=counting,
                          config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0))
        assert counting.calls == [] and in_flight.read_text() == "the first run is writing this"
    assert offline_run(tmp_path, out).exit_code == 0  # free again once released
    assert not in_flight.exists() and not (folder / ".kgkit.lock").exists()


def test_clean_up_removes_only_kgkit_temp_files(tmp_path):
    out = tmp_path / "out"
    folder = out / "staff_notes"
    folder.mkdir(parents=True)
    theirs = folder / ".notes.tmp"
    theirs.write_text("someone else's")
    assert offline_run(tmp_path, out).exit_code == 0
    assert theirs.read_text() == "someone else's"


def test_output_files_honour_the_umask(tmp_path):
    """Issue 10 case 11: mkstemp made every file 0600 whatever the umask."""
    old = os.umask(0o022)
    try:
        assert offline_run(tmp_path, tmp_path / "out").exit_code == 0
    finally:
        os.umask(old)
    files = [p for p in (tmp_path / "out").rglob("*") if p.is_file()]
    assert files and {oct(p.stat().st_mode & 0o777) for p in files} == {oct(0o644)}


def test_adding_a_view_on_the_command_line_keeps_the_earlier_ones(tmp_path):
    """Issue 9 deliver 8: `--view nary` then `--view event` keeps nary.json; --replace-views drops it."""
    out = tmp_path / "out"
    assert offline_run(tmp_path, out, "--view", "nary").exit_code == 0
    assert offline_run(tmp_path, out, "--view", "event").exit_code == 0
    views = out / "staff_notes" / "views"
    assert sorted(p.name for p in views.iterdir()) == ["event.json", "nary.json"]
    manifest = json.loads((out / "staff_notes" / "manifest.json").read_text())
    assert manifest["view_files"] == ["views/event.json", "views/nary.json"]
    assert offline_run(tmp_path, out, "--view", "event", "--replace-views").exit_code == 0
    assert sorted(p.name for p in views.iterdir()) == ["event.json"]


# -- answers are bounded ----------------------------------------------------------------

def test_a_flood_a_huge_name_and_a_nan_are_held_back_before_anything_is_stored_or_sent(stub_provider, tmp_path):
    """Issue 10 case 4: 10,000 entities, a 5 MB name and a NaN confidence in one answer."""
    flood = [{"name": "Ann Lee", "type": "Person", "evidence": "Ann Lee joined", "confidence": 0.9}] * 10_000
    huge = {"name": "A" * 5_000_000, "type": "Person", "evidence": "Ann Lee joined"}
    nan = {"name": "Acme Corp", "type": "Org", "evidence": "joined Acme Corp", "confidence": float("nan")}

    def answer(request):
        stage = stage_of(request)
        if stage == "entities":
            return Reply.answer(json.dumps({"entities": [huge, nan, *flood]}))  # NaN as JSON writers emit it
        if stage == "relations":
            return Reply.answer({"relations": [{"head": "Ann Lee", "relation": "Work_For", "tail": "Acme Corp",
                                                "evidence": "Ann Lee joined Acme Corp", "confidence": float("nan")}]})
        return Reply.answer({"hyperedges": []})

    stub_provider.responder = answer
    inputs = write_inputs(tmp_path / "in", paragraphs=1)
    config = stub_config(stub_provider)
    # the 6 MB answer must reach the engine's answer limits: the transport's own bound
    # (limits.max_response_bytes, tests/backends/test_hardening_client.py) is raised past it here
    config.limits.max_response_bytes = 16_000_000
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary", "nary"],
                             config=config, out_dir=tmp_path / "out")
    held = result.manifest["counts"]["held_back"]
    assert held["entities"] == {"over_limit": 1 + 10_000 - 500, "non_finite": 1}
    assert held["relations"] == {"non_finite": 1} and result.views["binary"]["edges"] == []
    assert [n["name"] for n in result.nodes] == ["Ann Lee"]  # Acme Corp came only with a NaN
    later = [r for r in stub_provider.requests if stage_of(r) != "entities"]
    assert later and max(len(r.raw) for r in later) < 50_000
    [state] = (result.run_dir / "state" / "entities").iterdir()
    assert len(json.loads(state.read_text())["data"]["entities"]) == 500
    assert (result.run_dir / "review.jsonl").stat().st_size < 5_000_000

    def refuse(constant):
        raise ValueError(constant)

    for path in (result.run_dir / "views").iterdir():
        json.loads(path.read_text(), parse_constant=refuse)


def test_limits_are_config_keys_with_safe_defaults(tmp_path):
    from kgkit.config.loader import load_config

    (tmp_path / "kgkit.yaml").write_text("limits: {items_per_answer: 3, name_chars: 40, answer_chars: 1000}\n")
    limits = load_config(tmp_path / "kgkit.yaml").limits
    assert (limits.items_per_answer, limits.name_chars, limits.answer_chars) == (3, 40, 1000)
    inputs = write_inputs(tmp_path / "in", paragraphs=1)
    config = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0)
    config.limits = limits
    extra = {"entities": [{"name": "Ann Lee", "type": "Person", "evidence": "Ann Lee"}] * 5}
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=config,
                             out_dir=tmp_path / "out", backend=ScriptedBackend(extra=extra))
    assert result.manifest["counts"]["held_back"]["entities"]["over_limit"] >= 2
