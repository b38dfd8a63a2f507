"""Skill library files, the deterministic controller and the lexical retriever."""
from __future__ import annotations

import pytest

from kgkit.errors import NotFoundError, ValidationError
from kgkit.skills.controller import apply, fold, jaccard, plan
from kgkit.skills.library import (Library, diff_libraries, load_library, pattern_tokens, save_library, skill_id)
from kgkit.skills.retrieve import retrieve_skills

T = {"merge": 0.7, "modify": 0.4}


def cand(phrases, target="Work_For", doc="d1", edge=("A", "Work_For", "B"), label="miss", instruction="say it"):
    return {"kind": "relation", "target": target, "pattern": {"phrases": list(phrases), "regex": []},
            "instruction": instruction, "example": "A works for B.",
            "provenance": [{"doc": doc, "edge": list(edge), "label": label}]}


def test_ids_are_stable_and_order_free():
    a = skill_id("relation", "Work_For", {"phrases": ["works for", "employee of"]})
    b = skill_id("relation", "Work_For", {"phrases": ["Employee of", "works  for"]})
    assert a == b and a.startswith("sk_") and len(a) == 15
    assert a != skill_id("relation", "Kill", {"phrases": ["works for", "employee of"]})


def test_controller_actions_by_jaccard():
    lib = Library("d")
    first = fold(lib, cand(["works for", "employee of"]), **T, date="2026-01-01")
    assert first.action == "add"
    sid = first.skill
    # subset of the skill's phrases -> keep; new provenance recorded, no new version
    keep = fold(lib, cand(["works for"], doc="d2"), **T, date="2026-01-02")
    assert (keep.action, keep.skill) == ("keep", sid)
    assert lib.skills[sid]["version"] == 1 and lib.skills[sid]["support"] == {"stable": 0, "unstable": 0, "miss": 2}
    assert lib.skills[sid]["updated"] == "2026-01-02"
    # tokens {works, for, employee, of} vs {works, for, employee, of, an}: J = 4/5 >= 0.7 -> merge
    merge = fold(lib, cand(["works for", "an employee of"], doc="d3"), **T, date="2026-01-03")
    assert (merge.action, merge.similarity) == ("merge", 0.8)
    assert lib.skills[sid]["version"] == 2 and lib.skills[sid]["instruction"] == "say it"
    assert lib.skills[sid]["pattern"]["phrases"] == ["an employee of", "employee of", "works for"]
    # {employed, by, works, for} vs {works, for, employee, of, an}: J = 2/7 < 0.4 -> add
    assert fold(lib, cand(["employed by", "works for"]), **T, date="2026-01-04").action == "add"
    # {works, for, of} vs the first skill {an, employee, of, works, for}: J = 3/5 -> modify
    mod = fold(lib, cand(["works for", "head of"], doc="d5", instruction="newer"), **T, date="2026-01-05")
    assert (mod.action, mod.skill, mod.similarity) == ("modify", sid, 0.5)
    assert lib.skills[sid]["instruction"] == "newer" and lib.skills[sid]["version"] == 3
    # another target never matches
    assert fold(lib, cand(["works for"], target="Kill"), **T, date="2026-01-06").action == "add"
    assert len(lib.skills) == 3


def test_a_relation_cue_joins_its_relations_skill_with_join_on():
    """Fewer, fuller skills: below the modify threshold a relation cue joins the skill of its
    relation (patterns joined, both instructions kept, one example) instead of taking another
    of retrieval's few places; an entity cue, or a relation with no skill yet, is still added."""
    lib = Library("d")
    sid = fold(lib, cand(["works for"], instruction="Person works for Org."), **T, date="2026-01-01", join=True).skill
    # {employed, by} vs {works, for}: J = 0 < 0.4 -> without join, a second skill
    assert plan(lib, cand(["employed by"]), **T).action == "add"
    joined = fold(lib, cand(["employed by"], doc="d2", instruction="Person employed by Org."), **T, date="2026-01-02",
                  join=True)
    assert (joined.action, joined.skill, joined.similarity) == ("join", sid, 0.0)
    skill = lib.skills[sid]
    assert skill["pattern"]["phrases"] == ["employed by", "works for"] and skill["version"] == 2
    assert skill["instruction"] == "Person works for Org. Person employed by Org."
    assert skill["example"] == "A works for B." and skill["support"]["miss"] == 2
    # the same instruction is not repeated; another relation, or an entity cue, is added beside
    fold(lib, cand(["hired by"], instruction="Person works for Org."), **T, date="2026-01-03", join=True)
    assert lib.skills[sid]["instruction"] == "Person works for Org. Person employed by Org."
    assert fold(lib, cand(["lives in"], target="Live_In"), **T, date="2026-01-04", join=True).action == "add"
    entity = {**cand(["mr"], target="Person"), "kind": "entity"}
    fold(lib, entity, **T, date="2026-01-05", join=True)
    assert fold(lib, {**entity, "pattern": {"phrases": ["dr"], "regex": []}}, **T, date="2026-01-06",
                join=True).action == "add"
    assert len(lib.skills) == 4


def test_keep_with_known_provenance_changes_nothing():
    lib = Library("d")
    fold(lib, cand(["works for"]), **T, date="2026-01-01")
    before = lib.copy()
    action = plan(lib, cand(["works for"]), **T)
    assert action.action == "keep"
    assert apply(lib, action, "2027-01-01") is False
    assert lib.skills == before.skills


def test_jaccard_edge_cases():
    assert jaccard(frozenset(), frozenset()) == 1.0
    assert jaccard(pattern_tokens({"phrases": ["a b"]}), pattern_tokens({"phrases": ["b c"]})) == pytest.approx(1 / 3)


def test_save_and_load_round_trip_and_diff(tmp_path):
    lib = Library("conll04")
    fold(lib, cand(["works for"]), **T, date="2026-01-01")
    lib.version = 1
    lib.changelog.append({"version": 1, "date": "2026-01-01", "actions": {"add": 1}})
    save_library(lib, tmp_path)
    files = sorted(p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*.yaml"))
    sid = next(iter(lib.skills))
    assert files == ["conll04/library.yaml", f"conll04/skills/{sid}.yaml"]
    text = (tmp_path / "conll04" / "skills" / f"{sid}.yaml").read_text()
    assert text.splitlines()[:4] == [f"id: {sid}", "version: 1", "kind: relation", "target: Work_For"]
    again = load_library("conll04", tmp_path)
    assert again.skills == lib.skills and again.version == 1 and again.changelog == lib.changelog

    changed = again.copy()
    fold(changed, cand(["works for", "worker at"], doc="d9"), **T, date="2026-02-01")
    lines = diff_libraries(again, changed)
    assert lines[0] == f"~ {sid} v1 -> v2"
    assert "    +  - worker at" in lines and "    +version: 2" in lines


def test_broken_skill_file_is_a_validation_error(tmp_path):
    folder = tmp_path / "d" / "skills"
    folder.mkdir(parents=True)
    (folder / "sk_x.yaml").write_text("id: sk_x\nkind: relation\n")
    with pytest.raises(ValidationError) as err:
        load_library("d", tmp_path)
    assert err.value.format().splitlines()[0] == (
        f"{folder / 'sk_x.yaml'}: skill is missing version, target, pattern, instruction, example, provenance, "
        "support, created, updated")
    (folder / "sk_x.yaml").write_text("id: [\n")
    with pytest.raises(ValidationError) as err:
        load_library("d", tmp_path)
    assert err.value.format().startswith(f"{folder / 'sk_x.yaml'}:2:1: not valid YAML")


def test_get_by_prefix_and_unknown():
    lib = Library("d")
    sid = fold(lib, cand(["works for"]), **T, date="2026-01-01").skill
    assert lib.get(sid[:6])["id"] == sid
    with pytest.raises(NotFoundError, match=f"no skill 'sk_nope' in the d library; skills: {sid}"):
        lib.get("sk_nope")


def test_retrieval_prefers_skills_whose_trigger_occurs(tmp_path):
    lib = Library("news")
    works = fold(lib, cand(["works for"]), **T, date="2026-01-01").skill
    killed = fold(lib, cand(["assassinated"], target="Kill", instruction="killing"), **T, date="2026-01-01").skill
    fold(lib, cand(["headquartered in"], target="OrgBased_In", instruction="offices"), **T, date="2026-01-01")
    save_library(lib, tmp_path)
    text = "Oswald assassinated Kennedy in Dallas. " + "x " * 1500 + "Smith works for IBM."
    got = retrieve_skills("news", text, title=None, k=3, library_dir=tmp_path)
    # "works for" sits after the first 2,000 characters: only its vocabulary overlap counts
    assert [s["id"] for s in got][:1] == [killed]
    assert works not in [s["id"] for s in got[:1]]
    assert [s["id"] for s in retrieve_skills("news", "Smith works for IBM.", None, k=1, library_dir=tmp_path)] == [works]
    assert retrieve_skills("news", "nothing relevant here", None, library_dir=tmp_path) == []
    assert retrieve_skills("other", "Smith works for IBM.", None, library_dir=tmp_path) == []
