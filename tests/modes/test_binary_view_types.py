"""No edge of a binary view joins types its relation does not allow, and a contract read
with its own domain carries no news relations (issue 9's done-when, item 4)."""
from __future__ import annotations

from pathlib import Path

import pytest

import kgkit
from kgkit.config.model import Config
from kgkit.catalog.load import load_domain

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "cooltech_strategic_alliance.pdf"
DOMAINS = sorted(p.stem for p in (ROOT / "domains").glob("*.yaml"))


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))


def _edges(path: Path, domain: str, out: Path):
    [run] = kgkit.extract(str(path), domain=domain, views=["binary"], config=Config(), out_dir=out)
    types = {n["id"]: (n["type"], n["name"]) for n in run.nodes}
    return [(types[e["head"]], e["relation"], types[e["tail"]]) for e in run.views["binary"]["edges"]]


def _assert_typed(edges, domain_name):
    domain = load_domain(domain_name)
    for (head_type, head), relation, (tail_type, tail) in edges:
        rel = domain.relation_type(relation)
        assert rel is not None, relation
        allowed = (("*" in rel.head or head_type in rel.head) and ("*" in rel.tail or tail_type in rel.tail)) or (
            rel.symmetric and ("*" in rel.head or tail_type in rel.head) and ("*" in rel.tail or head_type in rel.tail))
        assert allowed, f"{domain_name}: {head} <{head_type}> -{relation}-> {tail} <{tail_type}>"


@pytest.mark.parametrize("domain", DOMAINS)
def test_binary_edges_join_only_the_types_their_relation_allows(domain, tmp_path):
    texts = [ex.text for ex in load_domain(domain).examples]
    doc = tmp_path / f"{domain}.txt"
    doc.write_text("\n\n".join(texts), encoding="utf-8")
    edges = _edges(doc, domain, tmp_path / "out")
    assert edges, f"{domain}: its own examples gave no edge"
    _assert_typed(edges, domain)


@pytest.mark.parametrize("domain", ["legal_contracts", "general"])
def test_the_bundled_contract_gives_typed_edges_and_no_news_nonsense(domain, tmp_path):
    edges = _edges(EXAMPLE, domain, tmp_path / "out")
    _assert_typed(edges, domain)
    if domain == "legal_contracts":
        assert not [e for e in edges if e[1] in ("located_in", "lives_in", "based_in", "killed", "works_for")]
        assert not [e for e in edges if "Location" in (e[0][0], e[2][0])]
        assert ("HAS_PARTY", "Cool Technologies Inc.") in {(e[1], e[2][1]) for e in edges}
