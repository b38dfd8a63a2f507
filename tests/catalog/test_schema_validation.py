"""Good files validate; extends merges as documented; the search path resolves by precedence."""
from __future__ import annotations


import pytest

from kgkit.catalog import load as catalog
from kgkit.formats import search_path
from kgkit.errors import NotFoundError, ValidationError
from kgkit.catalog.validation import validate_file
from kgkit.formats.yaml_source import parse
from support.schema_support import FIXTURES


@pytest.mark.parametrize("path", sorted(FIXTURES.glob("*/*.yaml")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_good_fixture_files_validate(path, fixture_project):
    data = validate_file(path.parent.name, path)
    assert data["name"] == path.stem


def test_extends_merge_rules(fixture_project):
    staff = catalog.load_domain("staff")
    assert staff.name == "staff" and staff.lineage == ("staff", "people")
    # parent types first, in the parent's order; new names appended after them
    assert [t.name for t in staff.entity_types] == ["Person", "Organization", "Location", "Team"]
    # a child entry replaces the parent's entry of the same name whole
    location = staff.entity_type("Location")
    assert location.description == "A city or office."
    work_for = staff.relation_type("Work_For")
    assert work_for.tail == ("Organization", "Team") and work_for.triggers.phrases == ()
    assert staff.relation_type("employed_by") is None  # the parent's alias went with its entry
    # untouched parent entries, parent sections the child omits, and scalars are inherited
    assert staff.relation_type("Knows").symmetric
    assert [e.name for e in staff.event_types] == ["Hire"]
    assert staff.chunking.size == 1500 and staff.default_views == ("binary", "diy:contract_mini")
    assert staff.description == "Staff records."
    # examples: the parent's first, then the child's
    assert [e.text[:5] for e in staff.examples] == ["Dr. A", "Grace"]


def test_child_may_use_parent_types_but_not_invent_them(tmp_path, fixture_project):
    child = tmp_path / "child.yaml"
    child.write_text("name: child\nextends: people\nrelation_types:\n"
                     "  - {name: Visits, head: [Person], tail: [Location]}\n", encoding="utf-8")
    assert validate_file("domains", child)["name"] == "child"
    child.write_text("name: child\nextends: people\nrelation_types:\n"
                     "  - {name: Visits, head: [Person], tail: [Place]}\n", encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", child)
    assert [i.format() for i in caught.value.issues] == [
        f"{child}:4:43: relation_types -> Visits -> tail -> 0: unknown entity type 'Place'; "
        "expected a declared entity type or '*' (declared: Person, Organization, Location)"
    ]


def test_a_broken_parent_is_reported_with_the_child(tmp_path, fixture_project):
    parent = tmp_path / "parent.yaml"
    parent.write_text("name: parent\nentity_types:\n  - nam: Person\n", encoding="utf-8")
    child = tmp_path / "child.yaml"
    child.write_text("name: child\nextends: ./parent.yaml\n", encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", child)
    assert [i.format() for i in caught.value.issues] == [
        f"{child}:2:10: extends: parent domain './parent.yaml' ({tmp_path}/parent.yaml) has 2 problems; expected a valid parent",
        f"{parent}:3:5: entity_types -> 0: missing required key 'name'",
        f"{parent}:3:5: entity_types -> 0 -> nam: unknown key 'nam' (did you mean 'name'?)",
    ]


def test_a_project_domain_can_extend_the_builtin_of_the_same_name(tmp_path, monkeypatch):
    builtin = tmp_path / "builtin"
    (builtin / "domains").mkdir(parents=True)
    (builtin / "domains" / "base.yaml").write_text("name: base\nentity_types: [{name: Thing}]\n", encoding="utf-8")
    project = tmp_path / "project"
    (project / "domains").mkdir(parents=True)
    (project / "domains" / "base.yaml").write_text(
        "name: base\nextends: base\nrelation_types: [{name: near, head: [Thing], tail: [Thing]}]\n", encoding="utf-8")
    monkeypatch.setattr(search_path, "builtin_root", lambda: builtin)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    domain = catalog.load_domain("base", project_dir=project)
    assert [t.name for t in domain.entity_types] == ["Thing"] and domain.relation_type("near")
    assert domain.source == project / "domains" / "base.yaml"


def test_search_path_precedence(tmp_path, monkeypatch):
    """Project directory beats the user config directory, which beats the built-ins."""
    roots = {name: tmp_path / name for name in ("project", "config", "builtin")}
    for label, root in roots.items():
        (root / "views").mkdir(parents=True)
    views = {"everywhere": ("project", "config", "builtin"), "user_and_builtin": ("config", "builtin"), "builtin_only": ("builtin",)}
    for view, places in views.items():
        for label in places:
            (roots[label] / "views" / f"{view}.yaml").write_text(
                f"name: {view}\ndescription: from {label}\nstrategy: projection\nprojection: {{relations: ['*']}}\n",
                encoding="utf-8")
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(roots["config"]))
    monkeypatch.setattr(search_path, "builtin_root", lambda: roots["builtin"])
    monkeypatch.chdir(roots["project"])
    assert search_path.search_path("views") == [roots["project"] / "views", roots["config"] / "views", roots["builtin"] / "views"]
    for view, places in views.items():
        assert catalog.load_view(view).description == f"from {places[0]}"
        assert search_path.available("views")[view] == roots[places[0]] / "views" / f"{view}.yaml"


def test_unknown_names_list_what_exists(fixture_project):
    with pytest.raises(NotFoundError) as caught:
        catalog.load_domain("peple")
    assert caught.value.message == "unknown domain 'peple'; available: people, staff"
    assert caught.value.hint == "did you mean 'people'?"


def test_template_refs_into_the_domain_schema_resolve(tmp_path, fixture_project):
    """template.schema.json reuses domain.schema.json's definitions through $ref."""
    bad = tmp_path / "t.yaml"
    bad.write_text("name: t\nentity_types:\n  - name: Drug\n    alias: [med]\nrelation_types:\n"
                   "  - name: treats\n    roles: {drug: {types: [Drug]}}\n", encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        validate_file("template", bad)
    assert [i.format() for i in caught.value.issues] == [
        f"{bad}:4:5: entity_types -> Drug -> alias: unknown key 'alias' (did you mean 'aliases'?)"
    ]


def test_diy_view_with_template(fixture_project):
    view = catalog.load_view("diy:contract_mini")
    assert view.name == "diy:contract_mini" and view.template.relation_type("obliges").qualifiers == ("notice",)
    assert catalog.load_view("diy:templates/contract_mini.yaml").template.name == "contract_mini"
    with pytest.raises(NotFoundError):
        catalog.load_view("diy")


def test_yaml_source_marks_and_merges():
    src = parse("base: &b {size: 1}\nother:\n  <<: *b\n  size: 2\n  on: yes\ndate: 2024-01-31\n", "x.yaml")
    assert src.issues == []
    # merge keys apply (own keys win), `on` stays a name, dates stay text (JSON-shaped data)
    assert src.data == {"base": {"size": 1}, "other": {"size": 2, "on": True}, "date": "2024-01-31"}
    assert src.keys[("other", "size")] == (4, 3) and src.values[("date",)] == (6, 7)


def test_document_type_and_scopes_are_checked_and_defaulted(tmp_path, fixture_project):
    from kgkit.catalog.build import build_domain
    from kgkit.formats.scopes import entity_scopes

    path = tmp_path / "deals.yaml"
    path.write_text("name: deals\ndocument_type: Deal\nentity_types:\n  - {name: Deal}\n  - {name: Date}\n"
                    "  - {name: Firm}\n  - {name: Term, aliases: [defined_term]}\n  - {name: Desk, scope: document}\n",
                    encoding="utf-8")
    assert entity_scopes(build_domain(path)) == {"Deal": "document", "Date": "value", "Firm": "corpus",
                                                 "Term": "document", "Desk": "document"}
    path.write_text("name: deals\ndocument_type: Dael\nentity_types:\n  - {name: Deal, scope: corpus}\n",
                    encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", path)
    assert "unknown entity type 'Dael'" in caught.value.issues[0].format()
    path.write_text("name: deals\ndocument_type: Deal\nentity_types:\n  - {name: Deal, scope: value}\n",
                    encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", path)
    assert "has scope 'value'" in caught.value.issues[0].format()
    path.write_text("name: deals\nentity_types:\n  - {name: Deal, scope: global}\n", encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        validate_file("domains", path)
    assert "'global' is not allowed" in caught.value.issues[0].format()
