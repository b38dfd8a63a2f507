"""``kgkit view`` on a corpus graph of the shared CUAD set (offline extraction, every contract),
opened offline in headless Chromium: no console message, everything drawn, a party that
several contracts name found by search with its documents and merge log. No figure is
published from this test, so the tune/report split does not apply.

Marked ``corpus``; skipped without a browser except when KGKIT_REQUIRE names ``browser``."""
from __future__ import annotations

import pytest

from support.cli_support import kgkit
from support.graph_support import extract_texts
from kgkit.graph import GraphStore
from support.shared_data import DATA
from support.view_support import browser, console_errors, expected_drawn, page_data  # noqa: F401  (fixture)

pytestmark = pytest.mark.corpus


def test_a_cuad_corpus_page_opens_offline_and_finds_a_shared_party(browser, tmp_path):
    texts = {p.stem: p.read_text(encoding="utf-8") for p in sorted((DATA / "cuad").glob("*.txt"))}
    runs = extract_texts(texts, tmp_path, "legal_contracts")
    store = tmp_path / "cuad.sqlite"
    with GraphStore(store) as g:
        g.add(list(runs.values()))
    out = tmp_path / "cuad.html"
    result = kgkit("view", str(store), "-o", str(out))
    assert result.exit_code == 0, result.output
    data = page_data(out.read_text(encoding="utf-8"))
    assert len(data["documents"]) == len(texts)

    browser.open(out)
    assert console_errors(browser) == [] and browser.requests() == []
    assert browser.js("return kgkitViewer.drawn()") == expected_drawn(data)
    shared = max((n for n in data["nodes"] if n["scope"] == "corpus"), key=lambda n: (len(n["docs"]), n["id"]))
    assert len(shared["docs"]) >= 2
    assert shared["id"] in browser.js("return kgkitViewer.search(arguments[0])", shared["name"])
    browser.js("kgkitViewer.focus(arguments[0])", shared["id"])
    panel = browser.js("return document.getElementById('panel').textContent")
    assert all(data["documents"][d]["name"] in panel for d in shared["docs"])
    if shared["id"] in data["merges"]:
        assert browser.js("return document.querySelectorAll('#merges li').length") == len(data["merges"][shared["id"]])
    assert console_errors(browser) == []
    browser.screenshot("viewer-cuad.png")
