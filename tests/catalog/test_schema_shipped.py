"""Every shipped domain, view and DIY template validates and loads, exactly as a user's file would."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from kgkit.catalog import load as catalog
from kgkit.formats import search_path
from kgkit.cli import cli
from kgkit.catalog.validation import validate_file

BUILTIN = search_path.builtin_root()  # the checkout's top level, or kgkit/_builtin when installed


def shipped(kind: str):
    return sorted((BUILTIN / kind).glob("*.yaml"))


@pytest.fixture
def outside_any_project(tmp_path, monkeypatch):
    """No ./domains or user config dir can shadow the built-ins."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))


def test_domain_validate_passes_every_shipped_file(outside_any_project):
    files = [str(p) for kind in ("domains", "views", "templates") for p in shipped(kind)]
    result = CliRunner().invoke(cli, ["domain", "validate", *files])
    assert result.stderr == ""
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [f"OK {f}" for f in files]


@pytest.mark.parametrize("path", shipped("domains"), ids=lambda p: p.stem)
def test_shipped_domain_loads(path, outside_any_project):
    domain = catalog.load_domain(path.stem)
    assert domain.source == path and domain.entity_types
    assert len(domain.examples) >= 2, "the issue asks for at least two few-shot examples per domain"


@pytest.mark.parametrize("path", shipped("views"), ids=lambda p: p.stem)
def test_shipped_view_validates(path, outside_any_project):
    assert validate_file("views", path)["name"] == path.stem


@pytest.mark.parametrize("path", shipped("templates"), ids=lambda p: p.stem)
def test_shipped_template_validates_and_selects(path, outside_any_project):
    assert validate_file("templates", path)["name"] == path.stem
    assert catalog.load_view(f"diy:{path.stem}").template.name == path.stem


@pytest.mark.parametrize(
    "kind, names",
    [
        ("views", {"binary", "person", "nary", "temporal", "event", "diy"}),
        ("domains", {"general", "legal_contracts", "biomedical", "finance", "scholarly", "knowledge_base"}),
        ("templates", {"contract_review", "drug_interaction"}),
    ],
)
def test_the_promised_builtins_ship(kind, names, outside_any_project):
    assert names <= set(search_path.available(kind))
