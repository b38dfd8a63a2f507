"""The authoring commands: domain new/validate/show, domains, views, templates, schema."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

import kgkit
from kgkit.catalog import load as catalog
from kgkit.formats import search_path
from kgkit.cli import cli
from support.schema_support import FIXTURES
from support.shared_data import DATA, FIXTURES as DATA_FIXTURES

SCHEMAS = Path(kgkit.__file__).resolve().parent / "schemas"  # the installed package's, not the checkout's
SCHEMA_FILE = SCHEMAS / "domain.schema.json"
NEWS = DATA_FIXTURES / "news"  # our own documents in CoNLL04's format


def run(*args: str):
    return CliRunner().invoke(cli, list(args))


def test_new_writes_a_commented_starter_that_validates(tmp_path, fixture_project):
    out = tmp_path / "my_domain.yaml"
    result = run("domain", "new", "my_domain", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert result.stdout == (f"Wrote {out}. Check it with: kgkit domain validate {out}\n"
                             f"Use it with: kgkit extract DOCUMENT --domain {out}\n")
    text = out.read_text(encoding="utf-8")
    assert SCHEMA_FILE.is_file()
    assert text.splitlines()[0] == f"# yaml-language-server: $schema={SCHEMA_FILE}"
    assert "# Entity types: the kinds of things to find." in text  # comments are kept
    assert yaml.safe_load(text)["name"] == "my_domain"
    check = run("domain", "validate", str(out))
    assert (check.exit_code, check.stdout) == (0, f"OK {out}\n")
    domain = catalog.load_domain(str(out))
    assert domain.relation_type("works_for").allows("Person", "Organization")


def test_new_defaults_to_the_project_domains_folder_and_never_overwrites(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    result = run("domain", "new", "contracts")
    assert result.exit_code == 0, result.output
    assert result.stdout == ("Wrote domains/contracts.yaml. Check it with: kgkit domain validate domains/contracts.yaml\n"
                             "Use it with: kgkit extract DOCUMENT --domain contracts\n")
    assert search_path.find("domains", "contracts").resolve() == (tmp_path / "domains" / "contracts.yaml").resolve()
    assert catalog.load_domain("contracts").name == "contracts"  # --domain NAME finds it as written
    before = (tmp_path / "domains" / "contracts.yaml").read_text(encoding="utf-8")
    again = run("domain", "new", "contracts", "--from", "general")
    assert again.exit_code == 2
    assert again.stderr == "Error: domains/contracts.yaml already exists; use --force to overwrite it\n"
    assert (tmp_path / "domains" / "contracts.yaml").read_text(encoding="utf-8") == before
    assert run("domain", "new", "contracts", "--from", "general", "--force").exit_code == 0
    assert "extends: general\n" in (tmp_path / "domains" / "contracts.yaml").read_text(encoding="utf-8")


def test_new_out_elsewhere_and_to_stdout(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    result = run("domain", "new", "mine", "--out", "mine.yaml")
    assert result.stdout.splitlines()[1] == "Use it with: kgkit extract DOCUMENT --domain ./mine.yaml"
    assert not (tmp_path / "domains").exists()
    printed = run("domain", "new", "other", "--out", "-")
    assert printed.exit_code == 0 and yaml.safe_load(printed.stdout)["name"] == "other"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["mine.yaml"]


def test_new_rejects_a_bad_name(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = run("domain", "new", "my contracts")
    assert result.exit_code == 2
    assert result.stderr.endswith(
        "Error: Invalid value for NAME: expected letters, digits, '_', '.' or '-', starting with a letter or '_'\n")
    assert list(tmp_path.iterdir()) == []


def test_new_from_an_existing_domain_extends_it(tmp_path, fixture_project):
    out = tmp_path / "mine.yaml"
    assert run("domain", "new", "mine", "--from", "people", "--out", str(out)).exit_code == 0
    text = out.read_text(encoding="utf-8")
    assert "extends: people\n" in text
    assert "# Inherited entity types: Person, Organization, Location\n" in text
    domain = catalog.load_domain(str(out))
    assert domain.lineage == ("mine", "people") and domain.entity_type("Person")


def test_new_from_an_unknown_domain_fails_cleanly(tmp_path, fixture_project):
    result = run("domain", "new", "mine", "--from", "peple", "--out", str(tmp_path / "m.yaml"))
    assert result.exit_code == 2
    assert result.stderr == "Error: unknown domain 'peple'; available: people, staff\n  hint: did you mean 'people'?\n"


def test_new_from_gold_scaffolds_a_valid_domain(tmp_path, fixture_project):
    out = tmp_path / "conll04.yaml"
    result = run("domain", "new", "conll04", "--from-gold", str(NEWS), "--out", str(out))
    assert result.exit_code == 0, result.output
    assert run("domain", "validate", str(out)).exit_code == 0
    domain = catalog.load_domain(str(out))
    assert sorted(t.name for t in domain.entity_types) == ["Loc", "Org", "Other", "Peop"]
    assert sorted(r.name for r in domain.relation_types) == ["Kill", "Live_In", "Located_In", "OrgBased_In", "Work_For"]
    # ends inferred from the gold relations (CoNLL04's annotation guidelines)
    assert domain.relation_type("Work_For").head == ("Peop",) and domain.relation_type("Work_For").tail == ("Org",)
    assert domain.relation_type("Kill").head == ("Peop",) and domain.relation_type("Kill").tail == ("Peop",)
    assert domain.relation_type("Live_In").tail == ("Loc",)
    assert 1 <= len(domain.examples) <= 2 and all(e.relations for e in domain.examples)


@pytest.mark.corpus
@pytest.mark.parametrize("dataset", ["conll04", "scierc", "wikievents", "cuad"])
def test_every_shared_gold_set_scaffolds_a_valid_domain(dataset, tmp_path, fixture_project):
    gold = DATA / dataset
    out = tmp_path / "nested" / f"{dataset}.yaml"
    assert run("domain", "new", dataset, "--from-gold", str(gold), "--out", str(out)).exit_code == 0
    domain = catalog.load_domain(str(out))
    manifest = json.loads((gold / "manifest.json").read_text(encoding="utf-8"))
    assert sorted(t.name for t in domain.entity_types) == sorted(manifest["entity_types"])


def test_new_from_a_missing_gold_folder(tmp_path, fixture_project):
    missing = tmp_path / "nowhere"
    result = run("domain", "new", "x", "--from-gold", str(missing), "--out", str(tmp_path / "x.yaml"))
    assert (result.exit_code, result.stderr) == (2, f"Error: no gold folder at {missing}\n")


def test_validate_tells_views_and_templates_by_their_folder(fixture_project):
    result = run("domain", "validate", "views/nary.yaml", "templates/contract_mini.yaml", "domains/people.yaml")
    assert (result.exit_code, result.stdout) == (0, "OK views/nary.yaml\nOK templates/contract_mini.yaml\nOK domains/people.yaml\n")
    as_domain = run("domain", "validate", "--kind", "domain", "views/binary.yaml")
    assert as_domain.exit_code == 2
    assert as_domain.stderr.splitlines()[0] == "views/binary.yaml:3:1: strategy: unknown key 'strategy' (expected one of: " \
        "name, description, version, extends, entity_types, relation_types, nary_relation_types, event_types, " \
        "qualifiers, examples, queries, default_views, document_type, chunking, reading, section_kinds, not_in_relations)"


def test_validate_a_missing_file(fixture_project):
    result = run("domain", "validate", "nope.yaml")
    assert (result.exit_code, result.stderr) == (2, "nope.yaml: file not found\n1 problem found\n")


def test_show_prints_the_resolved_domain(fixture_project):
    result = run("domain", "show", "staff")
    assert result.exit_code == 0, result.output
    first, _, body = result.stdout.partition("\n")
    assert first == f"# resolved from: {FIXTURES}/domains/staff.yaml <- {FIXTURES}/domains/people.yaml"
    data = yaml.safe_load(body)
    assert "extends" not in data and data["name"] == "staff"
    assert [t["name"] for t in data["entity_types"]] == ["Person", "Organization", "Location", "Team"]


def test_show_an_unknown_domain(fixture_project):
    result = run("domain", "show", "nope")
    assert (result.exit_code, result.stderr) == (2, "Error: unknown domain 'nope'; available: people, staff\n")


def test_domains_lists_name_file_description(fixture_project):
    result = run("domains")
    assert result.exit_code == 0
    assert result.stdout == (
        f"people  {FIXTURES}/domains/people.yaml\n        People, organisations and places.\n"
        f"staff   {FIXTURES}/domains/staff.yaml\n        Staff records.\n"
    )


def test_views_show_the_file_each_name_resolves_to(tmp_path, fixture_project, monkeypatch):
    user_views = tmp_path / "user-config" / "views"
    user_views.mkdir(parents=True)
    (user_views / "person.yaml").write_text("name: person\nstrategy: projection\nprojection: {}\n", encoding="utf-8")
    (user_views / "mine.yaml").write_text("name: mine\nstrategy: projection\nprojection: {}\n", encoding="utf-8")
    result = run("views")
    assert result.exit_code == 0
    lines = result.stdout.splitlines()
    assert f"binary  {FIXTURES}/views/binary.yaml" in lines
    assert f"mine    {user_views}/mine.yaml" in lines
    assert f"person  {FIXTURES}/views/person.yaml  (overrides {user_views}/person.yaml)" in lines


def test_templates_listing(fixture_project):
    result = run("templates")
    assert result.stdout == (
        f"diy:contract_mini  {FIXTURES}/templates/contract_mini.yaml\n                   A tiny contract template.\n"
    )


@pytest.mark.parametrize("name", ["domain", "view", "template"])
def test_schema_prints_each_published_schema(name):
    result = run("schema", name)
    assert result.exit_code == 0
    assert json.loads(result.stdout) == json.loads((SCHEMAS / f"{name}.schema.json").read_text())


def test_schema_with_a_bad_name_lists_the_names():
    result = run("schema", "domian")
    names = sorted(p.name.removesuffix(".schema.json") for p in SCHEMAS.glob("*.schema.json"))
    assert result.exit_code == 2
    assert result.stderr == f"Error: unknown schema 'domian'; did you mean 'domain'? available: {', '.join(names)}\n"


def _python(code: str, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(
    "argv", [["--help"], ["domain", "validate", "domains/people.yaml", "views/nary.yaml", "../broken/domains/tabs.yaml"]]
)
def test_startup_does_not_import_litellm(argv):
    """Through the real console entry point (kgkit.cli:main), exit codes included."""
    code = (
        "import sys\nfrom kgkit.cli import main\n"
        f"try:\n    main({argv!r})\nexcept SystemExit as exc:\n    code = exc.code\n"
        "print('litellm loaded' if 'litellm' in sys.modules else 'litellm not loaded', code, file=sys.stderr)\n"
    )
    proc = _python(code, FIXTURES)
    assert proc.stderr.splitlines()[-1] == f"litellm not loaded {0 if argv == ['--help'] else 2}"
    if argv != ["--help"]:
        assert proc.stdout == "OK domains/people.yaml\nOK views/nary.yaml\n"
        assert "../broken/domains/tabs.yaml:4:1: tab character in indentation" in proc.stderr


def test_new_from_a_parent_path_writes_extends_relative_to_the_new_file(tmp_path, fixture_project):
    out = tmp_path / "sub" / "mine.yaml"
    out.parent.mkdir()
    result = run("domain", "new", "mine", "--from", "domains/people.yaml", "--out", str(out))
    assert result.exit_code == 0, result.output
    extends = yaml.safe_load(out.read_text(encoding="utf-8"))["extends"]
    assert Path(out.parent, extends).resolve() == (FIXTURES / "domains" / "people.yaml").resolve()
    assert catalog.load_domain(str(out)).lineage == ("mine", "people")


def test_domains_listing_survives_a_broken_file(tmp_path, monkeypatch):
    (tmp_path / "domains").mkdir()
    (tmp_path / "domains" / "bad.yaml").write_bytes(b"\x00\x01binary")
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setattr(search_path, "builtin_root", lambda: tmp_path / "none")
    result = run("domains")
    assert result.exit_code == 0
    assert result.stdout == (
        f"bad  {tmp_path}/domains/bad.yaml\n     (unreadable: run kgkit domain validate {tmp_path}/domains/bad.yaml)\n"
    )


def _gold_doc(folder: Path, doc_id: str, **parts) -> None:
    base = {"doc_id": doc_id, "title": None, "entities": [], "relations": [], "hyperedges": [], "events": [],
            "temporal": []}
    (folder / f"{doc_id}.gold.json").write_text(json.dumps({**base, **parts}), encoding="utf-8")


def test_from_gold_declares_event_only_and_temporal_only_types_and_seeds_from_general(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    gold = tmp_path / "gold"
    gold.mkdir()
    ents = [{"name": n, "type": t} for n, t in [("Zorbo Quill", "Peop"), ("Blarg Widgets", "ORG"), ("Qux City", "GPE"),
                                                 ("Qux Valley", "LOC"), ("Deal", "Agreement"), ("Fizzwick", "Thing")]]
    _gold_doc(gold, "a", entities=ents,
              relations=[{"head": "Zorbo Quill", "relation": "Work_For", "tail": "Blarg Widgets"},
                         {"head": "Blarg Widgets", "relation": "OrgBased_In", "tail": "Qux City"},
                         {"head": "Qux Valley", "relation": "OrgBased_In", "tail": "Qux City"}],
              events=[{"type": "Conflict.Attack", "trigger": "zapped",
                       "arguments": {"Attacker": "Zorbo Quill", "Target": ["Fizzwick", "Blarg Widgets"]}},
                      {"type": "Life.Die", "trigger": "perished", "arguments": {}}],
              temporal=[{"head": "Blarg Widgets", "relation": "PARTY_TO", "tail": "Deal", "start": None, "end": None}])
    result = run("domain", "new", "mini", "--from-gold", "gold")
    assert result.exit_code == 0, result.output
    text = (tmp_path / "domains" / "mini.yaml").read_text(encoding="utf-8")
    assert run("domain", "validate", "domains/mini.yaml").exit_code == 0
    domain = catalog.load_domain("mini")
    general = catalog.load_domain(search_path.builtin_root() / "domains" / "general.yaml")

    attack, die = domain.event_type("Conflict.Attack"), domain.event_type("Life.Die")
    assert attack.triggers.phrases == ("zapped",)
    assert {r.name: tuple(sorted(r.types)) for r in attack.roles} == {"Attacker": ("Peop",), "Target": ("ORG", "Thing")}
    assert [(r.name, r.literal) for r in die.roles] == [("argument", "text")]  # no argument in gold: a placeholder the author renames
    party_to = domain.relation_type("PARTY_TO")
    assert (party_to.head, party_to.tail) == (("ORG",), ("Agreement",))
    assert "  - name: PARTY_TO  # 1 in gold (only in temporal)\n" in text

    # Peop and ORG look like general's Person and Organization: their patterns are copied
    assert domain.entity_type("Peop").patterns == general.entity_type("Person").patterns
    assert domain.entity_type("ORG").patterns == general.entity_type("Organization").patterns
    assert domain.entity_type("ORG").description == general.entity_type("Organization").description
    # GPE and LOC both look like Location: neither is seeded, and the file says why
    assert not domain.entity_type("GPE").patterns and not domain.entity_type("LOC").patterns
    assert "#   not seeded: GPE, LOC all look like general's Location; copy its patterns to the right one\n" in text
    # Work_For is works_for by alias, Peop -> ORG maps onto Person -> Organization: triggers seeded
    assert domain.relation_type("Work_For").triggers == general.relation_type("works_for").triggers
    assert "#   relation Work_For: triggers of general's works_for\n" in text
    # OrgBased_In is based_in by alias, but one gold head is a LOC: not seeded
    assert not domain.relation_type("OrgBased_In").triggers
    # nothing from the gold documents reaches a pattern or trigger
    cues = [p for t in domain.entity_types for p in t.patterns.phrases + t.patterns.regex]
    cues += [p for r in domain.relation_types for p in r.triggers.phrases + r.triggers.regex]
    assert not [c for c in cues if any(w in c for w in ("Zorbo", "Blarg", "Qux", "Fizzwick"))]


@pytest.mark.corpus
def test_from_gold_on_wikievents_and_cuad_declares_every_gold_label(tmp_path, fixture_project):
    for dataset, key, field in (("wikievents", "events", "type"), ("cuad", "temporal", "relation")):
        gold = DATA / dataset
        out = tmp_path / f"{dataset}.yaml"
        assert run("domain", "new", dataset, "--from-gold", str(gold), "--out", str(out)).exit_code == 0
        domain = catalog.load_domain(str(out))
        labels = {item[field] for f in gold.glob("*.gold.json")
                  for item in json.loads(f.read_text(encoding="utf-8"))[key]}
        assert labels, dataset
        declared = {t.name for t in domain.event_types} if key == "events" else {r.name for r in domain.relation_types}
        assert labels <= declared


def test_a_folder_on_the_search_path_twice_does_not_override_itself(monkeypatch, tmp_path):
    # run from a source checkout: the project folder is the built-in root
    monkeypatch.chdir(FIXTURES)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setattr(search_path, "builtin_root", lambda: FIXTURES)
    result = run("views")
    assert result.exit_code == 0
    assert "overrides" not in result.stdout
    assert f"binary  {FIXTURES}/views/binary.yaml" in result.stdout.splitlines()
    assert "overrides" not in run("templates").stdout
    assert search_path.candidates("views")["binary"] == [FIXTURES / "views" / "binary.yaml"]


def test_from_gold_example_text_with_control_characters_reads_back_unchanged(tmp_path, monkeypatch):
    # a gold sentence with a C1 control (\x90, which YAML forbids raw) and a NEL (\x85, which
    # it folds to a space) used to be written raw, so the scaffold did not parse or lost text
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    gold = tmp_path / "gold"
    gold.mkdir()
    sentence = "Zorbo Quill\x90 works for\x85Blarg Widgets."
    _gold_doc(gold, "a", entities=[{"name": "Zorbo Quill", "type": "Peop"}, {"name": "Blarg Widgets", "type": "Org"}],
              relations=[{"head": "Zorbo Quill", "relation": "Work_For", "tail": "Blarg Widgets", "evidence": sentence}])
    assert run("domain", "new", "mini", "--from-gold", "gold").exit_code == 0
    assert run("domain", "validate", "domains/mini.yaml").exit_code == 0
    assert [e.text for e in catalog.load_domain("mini").examples] == [sentence]
