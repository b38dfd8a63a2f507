"""The shipped domains' worked examples obey the rules the prompts state beside them, and are
kgkit's own text (issue 9, items 2 and 5)."""
from __future__ import annotations

from pathlib import Path

import pytest

from kgkit.catalog.load import load_domain
from support.shared_data import DATA

DOMAINS = sorted(p.stem for p in (Path(__file__).resolve().parents[2] / "domains").glob("*.yaml"))


@pytest.mark.parametrize("name", DOMAINS)
def test_examples_name_things_as_written_with_an_exact_quote_and_a_confidence(name):
    domain = load_domain(name)
    categories = {t.name for t in domain.entity_types if t.patterns.labels}  # named by category, not by words
    assert domain.examples, f"{name} has no worked examples"
    for example in domain.examples:
        types = {e["name"]: e["type"] for e in example.entities}
        for item in [*example.entities, *example.relations]:
            assert item.get("evidence") and item["evidence"] in example.text, item
            assert 0 <= item.get("confidence", -1) <= 1, item
            for end in [item.get("name"), item.get("head"), item.get("tail")]:
                if end is not None and types.get(end) not in categories:
                    assert end in example.text, f"{name}: {end!r} is not written in its example"
                    assert "name" not in item or end in item["evidence"], item


def _shingles(text: str, n: int = 60) -> set[str]:
    flat = " ".join(text.split())
    return {flat[i:i + n] for i in range(0, max(1, len(flat) - n + 1), 10)}


@pytest.mark.corpus
def test_no_example_text_comes_from_a_gold_document():
    gold = set()
    for path in DATA.glob("*/*.txt"):
        flat = " ".join(path.read_text(encoding="utf-8").split())
        gold |= {flat[i:i + 60] for i in range(0, max(1, len(flat) - 59))}
    for name in DOMAINS:
        for example in load_domain(name).examples:
            copied = _shingles(example.text) & gold
            assert not copied, f"{name}: example text found in a gold document: {sorted(copied)[0]!r}"
