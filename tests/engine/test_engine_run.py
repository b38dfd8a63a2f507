"""kgkit.extract end to end on real files: call budget, run folder, state reuse, resume."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

import kgkit
from kgkit.formats.search_path import find
from kgkit.config.model import Config
from kgkit.documents.chunking import chunk_document
from kgkit.documents.load import load_document
from kgkit.errors import KgkitError, NotFoundError

from support.engine_support import CHUNK_SIZE, CountingBackend, ScriptedBackend, write_inputs

ALL_SIX = ["binary", "person", "nary", "temporal", "event"]
SCHEMA = json.loads((Path(kgkit.__file__).parent / "schemas" / "payload.schema.json").read_text())


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture
def inputs(tmp_path):
    return write_inputs(tmp_path / "in")


def config() -> Config:
    return Config(chunk_size=CHUNK_SIZE, chunk_overlap=0)


def run(inputs, views, backend, out, **kw):
    return kgkit.extract(inputs["doc"], domain=inputs["domain"], views=views, config=config(), out_dir=out,
                         backend=backend, **kw)[0]


def validate(defn: str, data) -> None:
    jsonschema.Draft202012Validator({"$defs": SCHEMA["$defs"], "$ref": f"#/$defs/{defn}"}).validate(data)


def test_the_document_has_eight_chunks(inputs):
    assert len(chunk_document(load_document(inputs["doc"]), CHUNK_SIZE, 0)) == 8


def test_all_six_views_cost_48_calls_against_a_naive_96(inputs, tmp_path):
    backend = CountingBackend(ScriptedBackend())
    views = ALL_SIX + [f"diy:{inputs['template']}"]
    result = run(inputs, views, backend, tmp_path / "out")
    assert len(backend.calls) == 48
    stages = [stage for stage, _ in backend.calls]
    assert {s: stages.count(s) for s in set(stages)} == {
        "entities": 8, "relations": 8, "nary": 8, "temporal": 8, "event": 8, "diy:staffing": 8}
    # every chunk exactly once per pass
    assert sorted(set(backend.calls)) == sorted(backend.calls)
    calls = result.manifest["calls"]
    assert (calls["core"], calls["projection"], calls["total"], calls["naive"]) == (16, 0, 48, 96)
    assert calls["upgrade"] == {"nary": 8, "temporal": 8, "event": 8, "diy:staffing": 8}
    assert result.manifest["tokens"] == {"in": 4800, "out": 960, "cached_in": 0}


def test_projections_only_cost_the_core(inputs, tmp_path):
    backend = CountingBackend(ScriptedBackend())
    result = run(inputs, ["binary", "person"], backend, tmp_path / "out")
    assert len(backend.calls) == 16
    assert result.manifest["calls"]["total"] == 16 and result.manifest["calls"]["naive"] == 32


def test_run_folder_files_match_the_published_schema(inputs, tmp_path):
    result = run(inputs, ALL_SIX + [f"diy:{inputs['template']}"], ScriptedBackend(), tmp_path / "out")
    folder = result.run_dir
    assert folder == tmp_path / "out" / "staff_notes"
    validate("manifest", json.loads((folder / "manifest.json").read_text()))
    validate("nodes_file", json.loads((folder / "nodes.json").read_text()))
    names = sorted(p.name for p in (folder / "views").iterdir())
    assert names == sorted(["binary.json", "person.json", "nary.json", "temporal.json", "event.json",
                            "diy.staffing.json"])
    for path in (folder / "views").iterdir():
        validate("view_file", json.loads(path.read_text()))
    for line in (folder / "review.jsonl").read_text().splitlines():
        validate("review_item", json.loads(line))
    assert not [p for p in folder.rglob("*.tmp")]
    jsonschema.Draft202012Validator(SCHEMA).validate(json.loads(json.dumps(result.as_dict())))


def test_every_view_refers_to_nodes_of_the_shared_table(inputs, tmp_path):
    result = run(inputs, ALL_SIX + [f"diy:{inputs['template']}"], ScriptedBackend(), tmp_path / "out")
    nodes = {n["id"]: n for n in json.loads((result.run_dir / "nodes.json").read_text())["nodes"]}
    by_name = {n["name"]: n["id"] for n in nodes.values()}
    ann = by_name["Ann Lee"]
    assert nodes[ann]["type"] == "Person" and nodes[ann]["origin"] == "core"  # "PER" is an alias of Person
    hyper = [h for h in result.views["nary"]["hyperedges"] if h["roles"]["employee"] == {"node": ann}]
    assert hyper[0]["roles"]["start"] == {"literal": "March 1, 2020", "type": "date", "value": "2020-03-01"}
    temporal = [e for e in result.views["temporal"]["edges"] if e["head"] == ann]
    assert temporal[0]["qualifiers"]["start_date"]["value"] == "2020-03-01"
    # diy: the template's Person is the core's Person node; its Role entity is a new node
    holds = result.views["diy:staffing"]["relations"]
    assert {h["roles"]["holder"]["node"] for h in holds} <= set(nodes)
    role = nodes[holds[0]["roles"]["role"]["node"]]
    assert (role["name"], role["type"], role["origin"]) == ("engineer", "Role", "diy:staffing")
    assert result.manifest["counts"]["dangling"] == 0
    # node ids are stable: a fresh folder on the same input gives the same table
    again = run(inputs, ["binary"], ScriptedBackend(), tmp_path / "other")
    assert {n["id"] for n in again.nodes} == {n["id"] for n in nodes.values() if n["origin"] == "core"}


def test_every_item_carries_chunk_span_and_page(inputs, tmp_path):
    result = run(inputs, ["binary", "nary"], ScriptedBackend(), tmp_path / "out")
    text = inputs["doc"].read_text()
    for edge in result.views["binary"]["edges"] + result.views["nary"]["hyperedges"]:
        start, end = edge["evidence"]["span"]
        assert text[start:end] == edge["evidence"]["quote"] and edge["verified"]
    for node in result.nodes:
        for m in node["mentions"]:
            assert text[m["span"][0]:m["span"][1]] == node["name"]


def test_a_rerun_reuses_every_pass_and_adding_a_view_runs_only_its_passes(inputs, tmp_path):
    out = tmp_path / "out"
    first = run(inputs, ["nary", "temporal"], ScriptedBackend(), out)
    assert first.manifest["calls"]["executed"] == 32
    backend = CountingBackend(ScriptedBackend())
    again = run(inputs, ["nary", "temporal"], backend, out)
    assert backend.calls == [] and again.manifest["calls"]["reused"] == 32
    assert again.views == first.views and again.nodes == first.nodes
    backend = CountingBackend(ScriptedBackend())
    added = run(inputs, ["event"], backend, out, resume=True)
    assert [stage for stage, _ in backend.calls] == ["event"] * 8
    assert [v["name"] for v in added.manifest["views"]] == ["nary", "temporal", "event"]
    assert sorted(p.name for p in (out / "staff_notes" / "views").iterdir()) == ["event.json", "nary.json",
                                                                               "temporal.json"]


def test_the_same_domain_and_views_found_elsewhere_reuse_the_passes(inputs, tmp_path, monkeypatch):
    """Where a file was found (a checkout, an installed wheel, a copy) is not part of a pass's
    identity; its content is. Otherwise --resume from another directory pays again."""
    out = tmp_path / "out"
    run(inputs, ["nary"], ScriptedBackend(), out)
    copies = tmp_path / "elsewhere"
    (copies / "views").mkdir(parents=True)
    for name in ("nary", "binary"):
        (copies / "views" / f"{name}.yaml").write_text(
            find("views", name).read_text(encoding="utf-8"), encoding="utf-8")
    domain = copies / "staff.yaml"
    domain.write_text(inputs["domain"].read_text(encoding="utf-8"), encoding="utf-8")
    monkeypatch.chdir(copies)  # ./views/nary.yaml now shadows the built-in file
    assert find("views", "nary").resolve() == (copies / "views" / "nary.yaml").resolve()
    backend = CountingBackend(ScriptedBackend())
    again = kgkit.extract(inputs["doc"], domain=domain, views=["nary"], config=config(), out_dir=out,
                          backend=backend)[0]
    assert backend.calls == [] and again.manifest["calls"]["reused"] == 24


def test_a_changed_shared_prompt_file_runs_the_passes_again(inputs, tmp_path, monkeypatch):
    """Every built-in pass template extends _chat.j2 and imports _common.j2: what they say
    is part of each prompt, so a completed pass is not reused once they change."""
    import shutil

    from kgkit.engine import passes

    prompts = tmp_path / "prompts"
    shutil.copytree(passes._PROMPTS_DIR, prompts)
    monkeypatch.setattr(passes, "_PROMPTS_DIR", prompts)
    out = tmp_path / "out"
    run(inputs, ["nary"], ScriptedBackend(), out)
    with (prompts / "_common.j2").open("a", encoding="utf-8") as fh:
        fh.write("{# changed #}\n")
    backend = CountingBackend(ScriptedBackend())
    again = run(inputs, ["nary"], backend, out)
    assert len(backend.calls) == 24 and again.manifest["calls"]["reused"] == 0


def test_a_run_with_another_view_keeps_the_earlier_ones_and_replace_views_drops_them(inputs, tmp_path):
    out = tmp_path / "out"
    first = run(inputs, ["nary", "binary"], ScriptedBackend(), out)
    views = out / "staff_notes" / "views"
    backend = CountingBackend(ScriptedBackend())
    again = run(inputs, ["event"], backend, out)
    assert [stage for stage, _ in backend.calls] == ["event"] * 8  # the kept views came from state/
    assert sorted(p.name for p in views.iterdir()) == ["binary.json", "event.json", "nary.json"]
    assert again.views["nary"] == first.views["nary"]
    assert again.manifest["view_files"] == ["views/binary.json", "views/event.json", "views/nary.json"]
    replaced = run(inputs, ["binary"], ScriptedBackend(), out, replace_views=True)
    assert [p.name for p in views.iterdir()] == ["binary.json"]
    assert replaced.manifest["view_files"] == ["views/binary.json"]


def test_failed_chunks_are_kept_for_resume(inputs, tmp_path):
    out = tmp_path / "out"
    failing = ScriptedBackend(fail={("relations", 2), ("nary", 5)})
    result = run(inputs, ["nary"], failing, out)
    assert not result.ok
    assert sorted((f["stage"], f["error"]) for f in result.failures) == [
        ("nary", "scripted failure"), ("relations", "scripted failure")]
    assert any(r["reason"].startswith("unparsable answer") and r["item"] == {"raw": "not json {"}
               for r in result.review)
    assert len(result.views["nary"]["hyperedges"]) == 7
    backend = CountingBackend(ScriptedBackend())
    resumed = run(inputs, None, backend, out, resume=True)
    # the failed passes again, and chunk 2's nary pass, whose context (the chunk's part of
    # the skeleton) now holds the relation recovered there; nothing else
    assert sorted(backend.calls) == [("nary", 2), ("nary", 5), ("relations", 2)]
    assert resumed.ok and len(resumed.views["nary"]["hyperedges"]) == 8


def test_unverified_items_are_held_back_and_low_confidence_ones_kept_and_reviewed(inputs, tmp_path):
    extra = {"relations": [{"head": "Ann Lee", "relation": "Work_For", "tail": "Acme Corp",
                            "evidence": "Ann Lee was the chair of the board of Acme", "confidence": 0.9},
                           {"head": "Ann Lee", "relation": "Work_For", "tail": "Acme Corp",
                            "evidence": "Ann Lee joined Acme Corp", "confidence": 0.2}]}
    result = run(inputs, ["binary"], ScriptedBackend(extra=extra), tmp_path / "out")
    reasons = [r["reason"] for r in result.review if r["stage"] == "relations"]
    assert any(r.startswith("held back (unverified_evidence): unverified evidence: quote not found") for r in reasons)
    assert any(r == "low confidence (0.2 < 0.5)" for r in reasons)
    held = [r for r in reasons if r.startswith("held back")]
    assert len(held) >= 8 and result.manifest["counts"]["held_back"]["relations"] == {"unverified_evidence": len(held)}
    assert all(e["verified"] and e["evidence"]["quote"] != extra["relations"][0]["evidence"]
               for e in result.views["binary"]["edges"])


def test_admit_unverified_keeps_them_marked_with_no_span(inputs, tmp_path):
    extra = {"relations": [{"head": "Ann Lee", "relation": "Work_For", "tail": "Beta Ltd",
                            "evidence": "Ann Lee was the chair of the board of Beta", "confidence": 0.9}],
             "entities": [{"name": "Zed Nobody", "type": "Person", "evidence": "Zed Nobody spoke"}]}
    cfg = config()
    cfg.review.admit_unverified = True
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=cfg,
                           out_dir=tmp_path / "out", backend=ScriptedBackend(extra=extra))[0]
    [edge] = [e for e in result.views["binary"]["edges"] if not e["verified"]]
    assert edge["evidence"]["span"] is None and edge["evidence"]["quote"] == extra["relations"][0]["evidence"]
    assert result.manifest["counts"]["held_back"]["relations"] == {}
    validate("view_file", result.views["binary"])
    [zed] = [n for n in result.nodes if n["name"] == "Zed Nobody"]
    assert zed["verified"] is False and {m["span"] for m in zed["mentions"]} == {None}
    assert all("verified" not in n for n in result.nodes if n is not zed)
    validate("nodes_file", {"doc_id": result.manifest["input"]["doc_id"], "nodes": result.nodes})
    validate("manifest", result.manifest)


def test_bad_view_or_domain_fails_before_any_call(inputs, tmp_path):
    backend = CountingBackend(ScriptedBackend())
    with pytest.raises(NotFoundError, match="unknown view 'narry'"):
        run(inputs, ["narry"], backend, tmp_path / "out")
    with pytest.raises(KgkitError, match="the diy view needs a template"):
        run(inputs, ["diy"], backend, tmp_path / "out")
    with pytest.raises(KgkitError):
        kgkit.extract([inputs["doc"], tmp_path / "missing.pdf"], domain=inputs["domain"], views=["binary"],
                      config=config(), out_dir=tmp_path / "out", backend=backend)
    assert backend.calls == [] and not (tmp_path / "out").exists()


def test_a_backend_factory_gets_one_backend_per_stage(inputs, tmp_path):
    made = []

    def factory(cfg, stage):
        made.append(stage)
        return ScriptedBackend()

    run(inputs, ["nary"], factory, tmp_path / "out")
    assert made == ["core", "upgrades"]


EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cooltech_strategic_alliance.pdf"


def test_offline_backend_on_the_bundled_contract_48_calls_against_96(tmp_path):
    """The same budget with the real default backend, counted by a wrapping factory."""
    from kgkit.backends.factory import create_backend

    counted: list[CountingBackend] = []

    def counting_factory(cfg, stage):
        counted.append(CountingBackend(create_backend(cfg, stage)))
        return counted[-1]

    views = ["binary", "person", "nary", "temporal", "event", "diy:contract_review"]
    result = kgkit.extract(EXAMPLE, domain="legal_contracts", views=views, config=Config(), out_dir=tmp_path,
                           backend=counting_factory)[0]
    assert result.manifest["input"]["chunks"] == 8
    assert sum(len(b.calls) for b in counted) == 48 and result.manifest["calls"]["naive"] == 96
    for path in [result.run_dir / "nodes.json", *(result.run_dir / "views").iterdir()]:
        validate("nodes_file" if path.name == "nodes.json" else "view_file", json.loads(path.read_text()))
    validate("manifest", result.manifest)
    assert result.manifest["counts"]["dangling"] == 0

    counted.clear()
    kgkit.extract(EXAMPLE, domain="legal_contracts", views=["binary", "person"], config=Config(),
                  out_dir=tmp_path / "projections", backend=counting_factory)
    assert sum(len(b.calls) for b in counted) == 16


def test_skills_reach_the_core_passes_and_the_manifest(inputs, tmp_path):
    from kgkit.config.model import SkillsConfig
    from kgkit.skills.library import Library, make_skill, save_library

    skill = make_skill("relation", "Work_For", {"phrases": ["joined"]}, "X joined Y: emit Work_For(X, Y).",
                       "Ann Lee joined Acme Corp", [], "2026-11-29")
    save_library(Library(domain="staff", skills={skill["id"]: skill}), tmp_path / "lib")
    seen: list[tuple[str, list]] = []

    class Recording(ScriptedBackend):
        def run(self, request):
            seen.append((request.stage, list(request.context.get("skills", []))))
            return super().run(request)

    cfg = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, skills=SkillsConfig(library=tmp_path / "lib"))
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary"], config=cfg,
                           out_dir=tmp_path / "out", backend=Recording())[0]
    assert result.manifest["skills"] == [skill["id"]]
    assert {stage for stage, skills in seen if skills == [skill]} == {"entities", "relations"}
    seen.clear()
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary"], config=cfg,
                           out_dir=tmp_path / "out", backend=Recording(), skills=False)[0]
    assert result.manifest["skills"] == [] and all(skills == [] for _, skills in seen)
    # skills are part of what a core answer depends on: without them the core ran again,
    # while the nary passes, whose context did not change, came from state/
    assert {stage for stage, _ in seen} == {"entities", "relations"}


def test_the_payload_schema_is_published(capsys):
    from kgkit.cli import main

    with pytest.raises(SystemExit) as exit_:
        main(["schema", "payload"])
    assert exit_.value.code == 0
    assert json.loads(capsys.readouterr().out)["$id"] == "https://kgkit.dev/schemas/payload.schema.json"


def test_an_interrupted_run_leaves_no_partial_file_and_keeps_its_completed_passes(inputs, tmp_path):
    class Interrupted(ScriptedBackend):
        def run(self, request):
            if request.stage == "relations" and request.chunk.index == 5:
                raise KeyboardInterrupt
            return super().run(request)

    out = tmp_path / "out"
    with pytest.raises(KeyboardInterrupt):
        run(inputs, ["binary"], Interrupted(), out)
    folder = out / "staff_notes"
    assert not (folder / "manifest.json").exists() and not list(folder.rglob("*.tmp"))
    backend = CountingBackend(ScriptedBackend())
    result = run(inputs, ["binary"], backend, out, resume=True)
    assert [stage for stage, _ in backend.calls] == ["relations"] * 3  # chunks 5, 6, 7
    assert result.manifest["calls"]["reused"] == 13



def test_resume_keeps_a_diy_view_whose_template_is_off_the_search_path(inputs, tmp_path):
    out = tmp_path / "out"
    run(inputs, [f"diy:{inputs['template']}"], ScriptedBackend(), out)
    backend = CountingBackend(ScriptedBackend())
    resumed = run(inputs, ["binary"], backend, out, resume=True)
    assert backend.calls == []
    assert list(resumed.views) == ["diy:staffing", "binary"]
    assert resumed.manifest["views"][0]["template"]["file"] == str(inputs["template"])


def test_view_names_come_as_a_list_a_comma_separated_string_or_both():
    from kgkit.catalog.load import load_domain
    from kgkit.engine.run import view_refs

    domain, cfg = load_domain("legal_contracts"), Config()
    assert view_refs(("nary, temporal", "binary", "nary"), domain, cfg) == ["nary", "temporal", "binary"]
    assert view_refs("nary,temporal", domain, cfg) == view_refs(["nary", "temporal"], domain, cfg)
    assert view_refs(("",), domain, cfg) == view_refs(None, domain, cfg) == list(domain.default_views)
