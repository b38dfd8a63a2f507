"""Upgrade and projection modes: references to V_doc, literals, rejects, the registry."""
from __future__ import annotations

import pytest

import kgkit
from kgkit.config.model import Config
from kgkit.errors import NotFoundError
from kgkit.modes import registry

from support.engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_NO_PLUGINS", "1")
    monkeypatch.chdir(tmp_path)


def extract(tmp_path, views, extra=None):
    inputs = write_inputs(tmp_path / "in")
    views = [v.replace("TEMPLATE", str(inputs["template"])) for v in views]
    return kgkit.extract(inputs["doc"], domain=inputs["domain"], views=views,
                         config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0), out_dir=tmp_path / "out",
                         backend=ScriptedBackend(extra=extra))[0]


def reasons(result, stage):
    return [r["reason"] for r in result.review if r["stage"] == stage]


def test_nary_items_naming_unknown_nodes_are_rejected_and_counted(tmp_path):
    extra = {"nary": [
        {"relation": "Employment", "roles": {"employee": "Nobody Known", "employer": "Acme Corp"}},
        {"relation": "Employment", "roles": {"employee": "Acme Corp"}},  # an Org cannot fill a Person role
        {"relation": "Employment", "roles": {"employer": "June 1, 2020"}},  # employer takes no literal
        {"relation": "Employment", "roles": {"salary": "Acme Corp"}},
        {"relation": "Sale", "roles": {"buyer": "Ann Lee"}},
    ]}
    result = extract(tmp_path, ["nary"], extra)
    assert result.manifest["counts"]["rejects"]["nary"] == {
        "unknown_node": 24, "unknown_role": 8, "unknown_relation": 8}
    assert "unknown_node: employee = 'Nobody Known' names no node of the document" in reasons(result, "nary")
    assert len(result.views["nary"]["hyperedges"]) == 8


def test_nary_role_lists_and_literal_objects(tmp_path):
    extra = {"nary": [{"relation": "Employment", "evidence": "Ann Lee joined Acme Corp",
                       "roles": {"employee": ["Ann Lee", "Cy Park"], "start": {"literal": "1/2/21", "type": "date"}}}]}
    result = extract(tmp_path, ["nary"], extra)
    ids = {n["name"]: n["id"] for n in result.nodes}
    listed = [h for h in result.views["nary"]["hyperedges"] if isinstance(h["roles"]["employee"], list)]
    assert listed[0]["roles"] == {"employee": [{"node": ids["Ann Lee"]}, {"node": ids["Cy Park"]}],
                                  "start": {"literal": "1/2/21", "type": "date", "value": "2021-01-02"}}
    # missing required role is reported, the item kept
    extra = {"nary": [{"relation": "Employment", "roles": {"employer": "Acme Corp"}, "evidence": "Acme Corp"}]}
    result = extract(tmp_path / "second", ["nary"], extra)
    assert "missing required role(s): employee" in reasons(result, "nary")


def test_temporal_undeclared_qualifiers_are_left_out_and_reported(tmp_path):
    extra = {"temporal": [{"head": "Ann Lee", "relation": "Work_For", "tail": "Acme Corp",
                           "qualifiers": {"start_date": "the 3rd day of May, 2021", "salary": "$5"},
                           "evidence": "Ann Lee joined Acme Corp"},
                          {"head": "Acme Corp", "relation": "Work_For", "tail": "Ann Lee"}]}
    result = extract(tmp_path, ["temporal"], extra)
    may = [e for e in result.views["temporal"]["edges"] if e["qualifiers"]["start_date"]["value"] == "2021-05-03"]
    assert may[0]["qualifiers"] == {"start_date": {"text": "the 3rd day of May, 2021", "type": "date",
                                                   "value": "2021-05-03"}}
    assert "unknown_qualifier: qualifier 'salary' is not declared for Work_For" in reasons(result, "temporal")
    assert result.manifest["counts"]["rejects"]["temporal"]["type_not_allowed"] == 8


def test_event_time_is_normalised_and_kept_as_written(tmp_path):
    result = extract(tmp_path, ["event"])
    event = result.views["event"]["events"][0]
    assert event["time"] == {"text": "March 1, 2020", "value": "2020-03-01"}
    assert event["type"] == "Hire" and event["trigger"] == "joined"


def test_an_off_schema_answer_is_one_review_entry(tmp_path):
    extra = {"event": [{"type": "Hire"}]}  # no trigger, no arguments
    result = extract(tmp_path, ["event"], extra)
    assert result.views["event"]["events"] == []
    assert reasons(result, "event")[0] == (
        "invalid_answer: answer does not match the pass schema at events/1: 'trigger' is a required property")


def test_diy_rejects_unknown_entity_types_and_relations_naming_no_entity(tmp_path):
    extra = {"diy:staffing": [{"relation": "HOLDS", "roles": {"holder": "Ann Lee", "role": "pilot"}}]}
    result = extract(tmp_path, ["diy:TEMPLATE"], extra)
    assert result.manifest["counts"]["rejects"]["diy:staffing"] == {"unknown_node": 8}
    assert result.views["diy:staffing"]["template"] == "staffing"


def test_person_projection_orients_person_first_with_zero_calls(tmp_path):
    result = extract(tmp_path, ["person", "binary"])
    nodes = {n["id"]: n for n in result.nodes}
    assert result.manifest["calls"]["total"] == 16
    assert all(nodes[e["head"]]["type"] == "Person" for e in result.views["person"]["edges"])
    assert [e["id"] for e in result.views["person"]["edges"]] == [e["id"] for e in result.views["binary"]["edges"]]


def test_modes_register_like_plugins_and_unknown_modes_name_the_known(tmp_path):
    assert set(registry.available_modes()) >= {"projection.v1", "nary.v1", "temporal.v1", "event.v1", "diy.v1"}

    class Nary2(type(registry.get_mode("nary.v1"))):
        name = "nary.v2"

    registry.register_mode(Nary2(), origin="test")
    try:
        assert registry.available_modes()["nary.v2"] == "test"
        with pytest.raises(NotFoundError, match="unknown view mode 'nary.v3'") as err:
            registry.get_mode("nary.v3")
        assert "nary.v2" in err.value.hint
    finally:
        registry._modes.pop("nary.v2")
        registry._origins.pop("nary.v2")


def test_a_built_in_name_imports_its_own_module_and_plugins_add_names_of_their_own(monkeypatch):
    """A built-in mode is found without importing the other built-ins or reading package
    metadata; a plugin's hook runs once, when a name no built-in has is asked for, and what it
    registers under a built-in's name does not replace the built-in."""
    import importlib.metadata
    import sys

    monkeypatch.delenv("KGKIT_NO_PLUGINS")
    for module in set(registry.BUILTIN_MODES.values()):
        monkeypatch.delitem(sys.modules, module, raising=False)
    monkeypatch.setattr(registry, "_modes", {})
    monkeypatch.setattr(registry, "_origins", {})
    monkeypatch.setattr(registry, "_plugins_loaded", False)
    looked: list[str] = []
    builtin_nary = importlib.import_module("kgkit.modes.nary").NaryMode

    class Taken(builtin_nary):
        pass

    class Own(builtin_nary):
        name = "staff.v1"

    class Point:
        name, value = "staffing", "staff_plugin:register"

        def load(self):
            def hook(register):
                register(Taken())
                register(Own())
            return hook

    def entry_points(group):
        looked.append(group)
        return [Point()]

    monkeypatch.setattr(importlib.metadata, "entry_points", entry_points)
    monkeypatch.delitem(sys.modules, "kgkit.modes.nary")
    assert registry.get_mode("projection.v1").name == "projection.v1" and registry.is_mode("nary.v1")
    assert "kgkit.modes.nary" not in sys.modules and looked == []
    assert registry.get_mode("staff.v1").name == "staff.v1" and looked == ["kgkit.modes"]
    assert type(registry.get_mode("nary.v1")).__name__ == "NaryMode"
    assert registry.available_modes()["staff.v1"] == "staff_plugin:register (plugin staffing)"
    assert not registry.is_mode("nary.v9") and looked == ["kgkit.modes"]  # the hooks ran once


def test_diy_entities_of_types_the_template_lacks_are_rejected(tmp_path):
    extra = {"diy-entities": [{"name": "Acme Corp", "type": "Company", "evidence": "Acme Corp"}]}
    result = extract(tmp_path, ["diy:TEMPLATE"], extra)
    assert result.manifest["counts"]["rejects"]["diy:staffing"] == {"unknown_type": 8}
    assert "unknown_type: 'Company' is not an entity type of template staffing" in reasons(result, "diy:staffing")


def test_roles_and_qualifiers_given_as_null_are_absent_not_errors(tmp_path):
    extra = {"nary": [{"relation": "Employment", "evidence": "Ann Lee joined Acme Corp",
                       "roles": {"employee": "Ann Lee", "employer": None, "start": []}}],
             "temporal": [{"head": "Ann Lee", "relation": "Work_For", "tail": "Acme Corp",
                           "qualifiers": {"start_date": None}, "evidence": "Ann Lee joined Acme Corp"}]}
    result = extract(tmp_path, ["nary", "temporal"], extra)
    ann = next(n["id"] for n in result.nodes if n["name"] == "Ann Lee")
    assert {"employee": {"node": ann}} in [h["roles"] for h in result.views["nary"]["hyperedges"]]
    assert {} in [e["qualifiers"] for e in result.views["temporal"]["edges"]]
    # (the extra answer comes back for every chunk; only its quote is missing from 7 of them)
    assert {r["reason"].split(":")[0] for r in result.review if r["stage"] in ("nary", "temporal")} == {
        "held back (unverified_evidence)"}


def test_a_symmetric_relation_read_both_ways_is_one_temporal_edge(tmp_path):
    """As in the skeleton: the ends of a symmetric relation are put in one order, so the
    same statement read B-A in one chunk and A-B in another has one id."""
    extra = {"temporal": [{"head": "Acme Corp", "relation": "Partner_Of", "tail": "Beta Ltd", "evidence": "Acme Corp"},
                          {"head": "Beta Ltd", "relation": "Partner_Of", "tail": "Acme Corp", "evidence": "Beta Ltd"}]}
    inputs = write_inputs(tmp_path / "in")
    inputs["domain"].write_text(inputs["domain"].read_text().replace(
        "{name: Partner_Of, head: [Org], tail: [Org]}", "{name: Partner_Of, head: [Org], tail: [Org], symmetric: true}"))
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["temporal"],
                           config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0), out_dir=tmp_path / "out",
                           backend=ScriptedBackend(extra=extra))[0]
    partners = [e for e in result.views["temporal"]["edges"] if e["relation"] == "Partner_Of"]
    assert len(partners) == 1 and partners[0]["head"] < partners[0]["tail"]


def test_temporal_edges_are_statements_one_per_distinct_qualifiers(tmp_path):
    """The same (head, relation, tail) with other qualifiers is another edge, with its own
    evidence; the same statement read in several chunks is one (docs/design.md)."""
    extra = {"temporal": [{"head": "Ann Lee", "relation": "Work_For", "tail": "Acme Corp",
                           "qualifiers": {"start_date": "June 1, 2021"}, "evidence": "Ann Lee joined Acme Corp"}]}
    result = extract(tmp_path, ["temporal"], extra)  # the extra statement comes back from all 8 chunks
    nodes = {n["name"]: n["id"] for n in result.nodes}
    ann_acme = [e for e in result.views["temporal"]["edges"]
                if (e["head"], e["relation"], e["tail"]) == (nodes["Ann Lee"], "Work_For", nodes["Acme Corp"])]
    assert sorted(e["qualifiers"]["start_date"]["value"] for e in ann_acme) == ["2020-03-01", "2021-06-01"]
    assert len({e["id"] for e in ann_acme}) == 2


def test_an_off_schema_diy_answer_adds_no_nodes_either(tmp_path):
    """A rejected answer is rejected whole: its entities do not become nodes."""
    extra = {"diy:staffing": [{"relation": "HOLDS"}]}  # no roles: off the view's schema
    result = extract(tmp_path, ["diy:TEMPLATE"], extra)
    assert result.manifest["counts"]["rejects"]["diy:staffing"] == {"invalid_answer": 8}
    assert result.views["diy:staffing"]["relations"] == []
    assert [n for n in result.nodes if n["origin"] != "core"] == []


@pytest.mark.parametrize("legal_suffixes", [True, False])
def test_a_diy_entity_the_core_has_is_the_core_node_whatever_the_legal_suffix_setting(tmp_path, legal_suffixes):
    from kgkit.config.model import CanonConfig

    inputs = write_inputs(tmp_path / "in")
    inputs["template"].write_text(inputs["template"].read_text().replace("  - {name: Role}\n",
                                                                         "  - {name: Role}\n  - {name: Org}\n"))
    extra = {"diy-entities": [{"name": "Acme Corp", "type": "Org", "evidence": "Acme Corp"}]}
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=[f"diy:{inputs['template']}"],
                           config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0,
                                         canon=CanonConfig(legal_suffixes=legal_suffixes)),
                           out_dir=tmp_path / "out", backend=ScriptedBackend(extra=extra))[0]
    assert [n["origin"] for n in result.nodes if n["name"] == "Acme Corp"] == ["core"]


def test_a_diy_role_names_the_views_own_entity_by_the_same_canonical_key_that_made_it(tmp_path):
    extra = {"diy-entities": [{"name": "Team", "type": "Role", "evidence": "The team met"}],
             "diy:staffing": [{"relation": "HOLDS", "roles": {"holder": "Ann Lee", "role": "the  TEAM."},
                                  "evidence": "The team met weekly."}]}
    result = extract(tmp_path, ["diy:TEMPLATE"], extra)
    pilot = next(n["id"] for n in result.nodes if n["name"] == "Team")
    assert {"node": pilot} in [r["roles"]["role"] for r in result.views["diy:staffing"]["relations"]]
    assert "unknown_node" not in result.manifest["counts"]["rejects"]["diy:staffing"]
