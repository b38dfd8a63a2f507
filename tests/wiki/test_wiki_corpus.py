"""The wiki reader on the shared vaults (Foam and Quartz documentation): articles, every link
with its kind and status, categories and broken links as the gold has them."""
from __future__ import annotations

import json
from collections import Counter

import pytest

from support.shared_data import DATA

pytestmark = pytest.mark.corpus

VAULTS = ("foam-docs", "quartz-docs")


def _gold(name: str) -> dict:
    path = DATA / "wikis" / f"{name}.gold.json"
    if not path.is_file():
        pytest.fail(f"{path} not found (set KGKIT_SHARED_DATA)")  # a corpus run without its data is a failure, not a pass
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", VAULTS)
def test_the_reader_matches_the_gold(name):
    from kgkit.wiki import read_vault

    gold = _gold(name)
    vault = read_vault(DATA / "wikis" / name)
    assert Counter((a["id"], a["title"], tuple(sorted(a["aliases"])), tuple(sorted(a["tags"])))
                   for a in gold["articles"]) == \
        Counter((n.id, n.title, tuple(sorted(n.aliases)), tuple(sorted(n.tags))) for n in vault.notes)
    gold_links = {(l["source"], l["line"], l["raw"]): l for l in gold["links"]}
    assert len(vault.links) == len(gold["links"])
    for link in vault.links:
        expected = gold_links[(link.source, link.line, link.raw)]
        assert (link.kind, link.syntax) == (expected["kind"], expected["syntax"]), link
        if link.status == "missing_file":  # the copy has no images: attachment (or broken) in the gold
            assert expected["status"] in ("attachment", "broken"), link
        else:
            assert (link.status, link.target) == (expected["status"], expected["target"]), link
    reported = {(l.source, l.line, l.raw) for l in vault.links if l.status in ("broken", "missing_file")}
    assert {k for k, l in gold_links.items() if l["status"] == "broken"} <= reported
    assert [(c.index, c.section, c.level, c.articles, c.unresolved) for c in vault.categories] == \
        [(c["index"], c["section"], c["level"], c["articles"], c["unresolved"]) for c in gold["categories"]]
