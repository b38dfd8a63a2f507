"""Module E as the scholarly domain declares it: every relation tagged structural or
semantic, open relations read only from the sections their kind is stated in, and the tag
carried on every edge into the run folder, the corpus store and its exports. Offline on
Markdown papers of our own words, and through the stub provider for the LLM path's wiring."""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

import kgkit
from kgkit.catalog.build import build_domain
from kgkit.config.model import CacheConfig, Config
from kgkit.errors import ValidationError
from kgkit.formats import search_path
from kgkit.formats.model import content

PAPER = """# Reading Papers

## 1 Introduction

Dropout leads to self-attention in this story.

## 2 Method

Dropout leads to self-attention here as well. The Transformer consists of self-attention.

### 2.1 Encoder

The Transformer consists of beam search.

## 3 Related Work

The Transformer differs from BERT in reading left to right.
"""

STRUCTURAL = {"AUTHORED_BY", "AFFILIATED_WITH", "PUBLISHED_IN", "CITES"}
CONTROLLED = {"BUILDS_ON", "USES_COMPONENT", "ALTERNATIVE_TO", "SOLVES", "APPLIED_TO", "TARGETS"}


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))


def _scholarly():
    return build_domain(search_path.find("domains", "scholarly", None))


def _edges(run: Path) -> list[tuple[str, str, str, str | None, str]]:
    names = {n["id"]: n["name"] for n in json.loads((run / "nodes.json").read_text())["nodes"]}
    edges = json.loads((run / "views" / "binary.json").read_text())["edges"]
    return sorted((names[e["head"]], e["relation"], names[e["tail"]], e.get("kind"), e["evidence"]["quote"])
                  for e in edges)


def _extract(tmp_path: Path, config: Config | None = None, domain: str = "scholarly") -> Path:
    doc = tmp_path / "paper.md"
    doc.write_text(PAPER, encoding="utf-8")
    kgkit.extract([doc], domain=domain, views=["binary"], out_dir=tmp_path / "out", skills=False,
                  config=config or Config(cache=CacheConfig(enabled=False)))
    return tmp_path / "out" / "paper"


def test_every_relation_is_tagged_and_the_open_ones_are_bound_to_sections():
    domain = _scholarly()
    kinds = {r.name: r.kind for r in domain.relation_types}
    assert set(kinds.values()) == {"structural", "semantic"}
    assert {n for n, k in kinds.items() if k == "structural"} == STRUCTURAL
    scoped = {r.name: set(r.sections) for r in domain.relation_types if r.sections}
    assert scoped["CAUSES"] == scoped["ENABLES"] == {"introduction", "discussion"}
    assert scoped["COMPOSED_OF"] == {"methods"} and scoped["DIFFERS_FROM"] == {"related_work"}
    assert scoped["HAS_LIMITATION"] == {"limitations"}
    assert not CONTROLLED & set(scoped) and not STRUCTURAL & set(scoped)
    assert all(not r.triggers for r in domain.relation_types if r.kind == "structural")


def test_a_chunk_is_asked_only_for_the_relations_its_section_allows():
    domain = _scholarly()
    methods = domain.for_section(domain.kinds_of(["2 Method", "2.1 Encoder"]))
    intro = domain.for_section(domain.kinds_of(["1 Introduction"]))
    unknown = domain.for_section(domain.kinds_of([]))
    names = lambda d: {r.name for r in d.relation_types}  # noqa: E731
    assert "COMPOSED_OF" in names(methods) and "CAUSES" not in names(methods)
    assert "CAUSES" in names(intro) and "COMPOSED_OF" not in names(intro)
    assert names(unknown) == CONTROLLED  # no heading: the controlled relations only
    assert not STRUCTURAL & (names(methods) | names(intro))
    assert "kind: methods" in methods.description and domain.for_section(frozenset({"methods"})) is methods


def test_offline_a_causal_relation_comes_from_the_introduction_and_not_from_the_methods(tmp_path):
    edges = _edges(_extract(tmp_path))
    causes = [e for e in edges if e[1] == "CAUSES"]
    assert [(h, t, q) for h, _, t, _, q in causes] == [
        ("Dropout", "self-attention", "Dropout leads to self-attention in this story.")]
    composed = {(h, t) for h, r, t, _, _ in edges if r == "COMPOSED_OF"}
    assert composed == {("Transformer", "self-attention"), ("Transformer", "beam search")}  # a subsection of Method too
    assert {(h, t) for h, r, t, _, _ in edges if r == "DIFFERS_FROM"} == {("Transformer", "BERT")}
    assert edges and {kind for *_, kind, _ in edges} == {"semantic"}


def test_a_document_without_headings_states_no_open_relation(tmp_path):
    doc = tmp_path / "flat.txt"
    doc.write_text("Dropout leads to self-attention. The Transformer consists of self-attention.\n", encoding="utf-8")
    kgkit.extract([doc], domain="scholarly", views=["binary"], out_dir=tmp_path / "out", skills=False,
                  config=Config(cache=CacheConfig(enabled=False)))
    relations = {r for _, r, *_ in _edges(tmp_path / "out" / "flat")}
    assert not relations & {"CAUSES", "COMPOSED_OF"}


def test_through_the_stub_provider_prompts_list_the_sections_relations_and_others_are_rejected(
        stub_provider, tmp_path, monkeypatch):
    """The model answers CAUSES and AUTHORED_BY for every chunk: the Method chunk's prompt
    did not list CAUSES, so its CAUSES is rejected; AUTHORED_BY is structural, listed in no
    prompt and rejected everywhere; the Introduction's CAUSES is an edge tagged semantic."""
    from kgkit.config.model import LLMConfig
    from support.stub_provider import Reply

    def answer(request):
        system, prompt = request.messages[0]["content"], request.messages[-1]["content"]
        if "typed entities" in system:
            return Reply.answer({"entities": [{"name": n, "type": t} for n, t in (
                ("Dropout", "Method"), ("self-attention", "Method"), ("Transformer", "Method"))
                if n in prompt.rsplit("BEGIN UNTRUSTED DOCUMENT", 1)[-1]]})
        quote = next(s for s in ("Dropout leads to self-attention in this story.",
                                 "Dropout leads to self-attention here as well.", "") if s in prompt)
        return Reply.answer({"relations": [
            {"head": "Dropout", "relation": "CAUSES", "tail": "self-attention", "evidence": quote},
            {"head": "Dropout", "relation": "AUTHORED_BY", "tail": "self-attention", "evidence": quote}]
            if quote else []})

    stub_provider.responder = answer
    monkeypatch.setenv("KGKIT_TEST_KEY", "sk-test")
    llm = LLMConfig(model="openai/test-model", api_base=stub_provider.openai_base, api_key_env="KGKIT_TEST_KEY",
                    backoff=0.0)
    run = _extract(tmp_path, Config(llm=llm, cache=CacheConfig(enabled=False)))
    prompts = [r.messages[-1]["content"] for r in stub_provider.requests
               if "binary relations" in r.messages[0]["content"]]
    by_section = {s: next(p for p in prompts if s in p.rsplit("BEGIN UNTRUSTED DOCUMENT", 1)[-1])
                  for s in ("in this story", "here as well")}
    assert "- CAUSES:" in by_section["in this story"] and "- COMPOSED_OF:" not in by_section["in this story"]
    assert "- CAUSES:" not in by_section["here as well"] and "- COMPOSED_OF:" in by_section["here as well"]
    assert not any("- AUTHORED_BY:" in p for p in prompts)
    assert [(h, r, t, k) for h, r, t, k, _ in _edges(run)] == [("Dropout", "CAUSES", "self-attention", "semantic")]
    reasons = [json.loads(line)["reason"] for line in (run / "review.jsonl").read_text().splitlines()]
    assert sum(r.startswith("section_not_allowed: CAUSES") for r in reasons) == 1
    assert sum(r.startswith("structural_relation: AUTHORED_BY") for r in reasons) == 2


def test_the_tag_reaches_the_corpus_store_and_its_exports(tmp_path):
    from kgkit.graph.export import export_graph  # noqa: F401  (the registry's entry point)
    from kgkit.graph.store import GraphStore

    run = _extract(tmp_path)
    with GraphStore(tmp_path / "g.sqlite") as store:
        store.add([run])
        snap = store.snapshot()
    kinds = {(e["relation"], (e.get("properties") or {}).get("kind")) for e in snap.edges}
    assert ("CAUSES", "semantic") in kinds and ("COMPOSED_OF", "semantic") in kinds
    assert all(kind == "semantic" for _, kind in kinds)


def test_numbers_stay_out_of_open_relations_unless_the_domain_asks(tmp_path):
    domain = _scholarly()
    causes = next(r for r in domain.relation_types if r.name == "CAUSES")
    assert "Score" not in causes.head and "ImplementationDetail" not in causes.tail and "Method" in causes.head
    child = tmp_path / "numbers.yaml"
    child.write_text("name: scholarly_numbers\nextends: scholarly\nnot_in_relations: {}\n", encoding="utf-8")
    included = next(r for r in build_domain(child).relation_types if r.name == "CAUSES")
    assert included.head == ("*",) and included.sections == ("introduction", "discussion")


def test_a_section_kind_no_domain_declares_and_a_structural_relation_with_cues_are_errors(tmp_path):
    child = tmp_path / "bad.yaml"
    child.write_text(
        "name: bad\nextends: scholarly\nrelation_types:\n"
        "  - name: FAILS_ON\n    head: [Method]\n    tail: [Dataset]\n    kind: semantic\n    sections: [limitation]\n"
        "  - name: AFFILIATED_WITH\n    head: [Author]\n    tail: [Affiliation]\n    kind: structural\n"
        "    triggers: [works at]\n", encoding="utf-8")
    with pytest.raises(ValidationError) as caught:
        build_domain(child)
    text = caught.value.format()
    assert "bad.yaml:8:16: relation_types -> FAILS_ON -> sections" in text and "unknown section kind 'limitation'" in text and "limitations" in text
    assert "bad.yaml:13" in text and "structural relation 'AFFILIATED_WITH'" in text


def test_a_domain_without_module_e_settings_keeps_its_fingerprint_content():
    """The new settings enter a pass's fingerprint only when set, so a domain that sets
    none (every other built-in one) fingerprints as it did, and its run folders stay."""
    general = build_domain(search_path.find("domains", "general", None))
    assert not general.scoped and general.for_section(frozenset()) is general
    before = dataclasses.asdict(general)  # what the fingerprint took before these settings were added
    del before["section_kinds"]
    for relation in before["relation_types"]:
        del relation["kind"], relation["sections"]
    as_json = lambda v: json.loads(json.dumps(v, default=str))  # noqa: E731  (tuples and lists alike)
    assert as_json(content(general)) == as_json(before)
    scholarly = content(_scholarly())
    assert scholarly["section_kinds"] and scholarly["relation_types"][0]["kind"] == "structural"
