"""The shipped domains and DIY templates: they load, validate, carry real content, and the
offline backend reads their own few-shot examples back with non-trivial recall."""
from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest
import yaml

from kgkit.backends.base import ENTITIES, RELATIONS, UPGRADE, PassRequest
from kgkit.backends.offline import OfflineBackend
from kgkit.catalog.load import load_domain, load_template, load_view
from kgkit.formats.search_path import builtin_root
from kgkit.documents.types import Chunk
from kgkit.engine.core import ENTITIES_SCHEMA, RELATIONS_SCHEMA
from support.shared_data import DATA

DOMAINS = ("general", "legal_contracts", "biomedical", "finance", "scholarly")
TEMPLATES = ("contract_review", "drug_interaction", "paper_findings")
SCHEMAS = Path(__file__).resolve().parents[2] / "kgkit" / "schemas"
CUAD_MANIFEST = DATA / "cuad" / "manifest.json"

# Few-shot recall the offline backend reaches on each domain's own examples (measured, then
# set a little under): a pattern edit that breaks a domain's examples fails here.
MIN_RECALL = {  # domain: (entities, relations)
    "general": (0.9, 0.6),
    "legal_contracts": (0.9, 0.9),
    "biomedical": (0.9, 0.8),
    "finance": (0.9, 0.8),
    "scholarly": (0.8, 0.5),
}


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)  # no project ./domains shadows the built-ins


def _raw(kind: str, name: str) -> dict:
    return yaml.safe_load((builtin_root() / kind / f"{name}.yaml").read_text(encoding="utf-8"))


def _validator(name: str) -> jsonschema.Draft202012Validator:
    from referencing import Registry, Resource

    docs = {p.name: json.loads(p.read_text()) for p in SCHEMAS.glob("*.schema.json")}
    registry = Registry().with_resources(
        (uri, Resource.from_contents(doc)) for n, doc in docs.items() for uri in (n, doc["$id"]))
    return jsonschema.Draft202012Validator(docs[name], registry=registry)


@pytest.mark.parametrize("name", DOMAINS)
def test_every_domain_loads_and_matches_its_json_schema(name):
    errors = list(_validator("domain.schema.json").iter_errors(_raw("domains", name)))
    assert errors == []
    domain = load_domain(name)
    assert domain.name == name
    assert len([t for t in domain.entity_types if t.patterns]) >= 3
    assert all(r.triggers for r in domain.relation_types if r.kind != "structural")  # structural: from the layout
    assert domain.nary_relation_types and domain.event_types and domain.qualifiers
    assert all(t.triggers and len(t.roles) >= 2 for t in domain.nary_relation_types + domain.event_types)
    assert len(_raw("domains", name)["examples"]) >= 2
    for view in domain.default_views:
        load_view(view)


@pytest.mark.parametrize("name", TEMPLATES)
def test_every_template_loads_and_is_self_contained(name):
    errors = list(_validator("template.schema.json").iter_errors(_raw("templates", name)))
    assert errors == []
    template = load_template(name)
    declared = {t.name for t in template.entity_types}
    assert any(len(r.roles) > 2 for r in template.relation_types), "needs an n-ary relation with named roles"
    for rel in template.relation_types:
        for role in rel.roles:
            assert set(role.types) <= declared | {"*"}, (rel.name, role.name)
        assert set(rel.qualifiers) <= {q.name for q in template.qualifiers}
    assert len(template.examples) >= 2
    assert load_view(f"diy:{name}").template.name == name


@pytest.mark.corpus
def test_legal_contracts_speaks_cuad():
    """Type and relation names line up with the CUAD gold set, so it can be scored."""
    manifest = json.loads(CUAD_MANIFEST.read_text())
    domain = load_domain("legal_contracts")
    assert set(manifest["entity_types"]) <= {t.name for t in domain.entity_types}
    assert set(manifest["relation_types"]) <= {r.name for r in domain.relation_types}
    assert domain.relation_type("references") is None
    assert load_domain("scholarly").relation_type("references").name == "CITES"


def _run(kind, text, schema, context):
    chunk = Chunk(id="c_test", doc_id="d_test", index=0, text=text, start=0, end=len(text))
    result = OfflineBackend().run(PassRequest(kind=kind, stage=kind, chunk=chunk, schema=schema,
                                              context=context, prompt=f"{kind}.j2"))
    assert result.ok, result.error
    return result.data


def _key(name: str) -> str:
    return " ".join(name.lower().split())


@pytest.mark.parametrize("name", DOMAINS)
def test_offline_backend_reads_each_domains_own_examples(name):
    domain = load_domain(name)
    gold_e = gold_r = hit_e = hit_r = 0
    for example in _raw("domains", name)["examples"]:
        entities = _run(ENTITIES, example["text"], ENTITIES_SCHEMA, {"domain": domain})["entities"]
        found = {(_key(e["name"]), e["type"]) for e in entities}
        gold_e += len(example["entities"])
        hit_e += sum((_key(e["name"]), e["type"]) in found for e in example["entities"])
        nodes = [{"name": e["name"], "type": e["type"], "aliases": e.get("aliases", [])} for e in entities]
        relations = _run(RELATIONS, example["text"], RELATIONS_SCHEMA, {"domain": domain, "entities": nodes})
        got = {(_key(r["head"]), r["relation"], _key(r["tail"])) for r in relations["relations"]}
        gold_r += len(example["relations"])
        hit_r += sum((_key(r["head"]), r["relation"], _key(r["tail"])) in got for r in example["relations"])
    min_e, min_r = MIN_RECALL[name]
    assert hit_e / gold_e >= min_e, f"{name}: entity recall {hit_e}/{gold_e}"
    assert hit_r / gold_r >= min_r, f"{name}: relation recall {hit_r}/{gold_r}"


@pytest.mark.parametrize("name", TEMPLATES)
def test_offline_diy_reads_each_templates_examples(name):
    view = load_view(f"diy:{name}")
    roles_hit = roles_total = 0
    for example in view.template.examples:
        answer = _run(UPGRADE, example["text"], view.output_schema, {"domain": load_domain("general"),
                                                                      "view": view, "template": view.template})
        for gold in example["relations"]:
            same = [r for r in answer["relations"] if r["relation"] == gold["relation"]]
            for role, value in gold["roles"].items():
                roles_total += 1
                roles_hit += any(isinstance(r["roles"].get(role), str) and r["roles"][role].lower() in
                                 (value.lower(), _duration_name(value)) for r in same)
    assert roles_hit / roles_total >= 0.8, f"{name}: {roles_hit}/{roles_total} roles filled as in the examples"


def _duration_name(text: str) -> str:
    from kgkit.text.literals import literal_name

    return (literal_name("duration", text) or "").lower()


@pytest.mark.parametrize("name", DOMAINS + TEMPLATES)
def test_roles_named_like_qualifiers_share_their_type(name):
    """The offline backend binds a literal role through the qualifier of the same name
    ("notice_period" takes what "notice" binds); a role of another kind would silently
    lose its cue."""
    owner = load_domain(name) if name in DOMAINS else load_template(name)
    qualifiers = {q.name: q for q in owner.qualifiers}
    kinds = (owner.nary_relation_types + owner.event_types) if name in DOMAINS else owner.relation_types
    for kind in kinds:
        for role in kind.roles:
            if role.name in qualifiers and role.literal:
                assert role.literal == qualifiers[role.name].type, (kind.name, role.name)
