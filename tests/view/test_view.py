"""``kgkit view``: the page's data is the graph's (shared ids, items, evidence with their
passages, held items apart, documents, merges), the page is self-contained, document text
is escaped into it, and bad input is refused with nothing written. The page in a real
browser: tests/view/test_view_browser.py."""
from __future__ import annotations

import base64
import hashlib
import json
import re

from support.cli_support import kgkit
from support.graph_support import graph_url, postgres, small_runs  # noqa: F401  (fixtures)
from kgkit.graph import GraphStore
from kgkit.view import build_data
from kgkit.view.page import embed_json, render
from support.view_support import HOSTILE_NAME, HOSTILE_QUOTE, hostile_run, page_data


def _write(target, out, *extra):
    result = kgkit("view", str(target), "-o", str(out), *extra)
    assert result.exit_code == 0, result.output
    return page_data(out.read_text(encoding="utf-8"))


def test_a_corpus_page_holds_the_graph_with_its_shared_ids(small_runs, tmp_path):
    corpus = small_runs["alpha"].parent
    data = _write(corpus, tmp_path / "corpus.html")
    store = tmp_path / "corpus.sqlite"
    with GraphStore(store) as g:
        g.add([corpus / name for name in ("alpha", "beta", "gamma")])
        snap = g.snapshot()
        merged = {m["entity"] for m in g.merges()}
    assert [n["id"] for n in data["nodes"]] == [n["id"] for n in snap.nodes]
    shown = {(it["kind"], it["id"]) for it in data["items"]}
    expected = {(kind, i["id"]) for kind, rows in (("edge", snap.edges), ("temporal", snap.temporal),
                                                    ("hyperedge", snap.hyperedges), ("event", snap.events))
                for i in rows}
    assert shown == expected and all(it["status"] == "verified" for it in data["items"])
    # every view of the runs is offered, and an item names the views that hold it
    assert set(data["views"]) == {v for rows in (snap.edges, snap.hyperedges, snap.events, snap.temporal)
                                  for i in rows for v in i["views"]}
    # n-ary items and events: their roles name nodes of the page
    node_ids = {n["id"] for n in data["nodes"]}
    nary = [it for it in data["items"] if it["kind"] in ("hyperedge", "event")]
    assert nary and all(end[1] in node_ids for it in nary for end in it["ends"])
    # the corpus: three documents with counts, and the merge log of the merged party
    assert [d["name"] for d in sorted(data["documents"], key=lambda d: d["name"])] == ["alpha", "beta", "gamma"]
    assert all(d["nodes"] > 0 and d["items"] > 0 for d in data["documents"])
    northwind = next(n for n in data["nodes"] if n["name"].startswith("Northwind"))
    assert len(northwind["docs"]) == 2 and northwind["id"] in merged
    assert data["merges"][northwind["id"]][0]["action"]


def test_evidence_carries_the_passage_with_the_span_marked(small_runs, tmp_path):
    corpus = small_runs["alpha"].parent
    data = _write(corpus, tmp_path / "corpus.html")
    texts = {d["name"]: (corpus.parent / "src" / f"{d['name']}.txt").read_text(encoding="utf-8") for d in data["documents"]}
    rows = [e for item in data["items"] for e in data["evidence"].get(item["id"], [])]
    assert rows
    for row in rows:
        text = texts[data["documents"][row["doc"]]["name"]]
        assert row["quote"] and row["mark"] == row["quote"]
        whole = row["pre"].lstrip("…") + row["mark"] + row["post"].rstrip("…")
        assert whole in text
    # --no-text: the stored quotes only, no passage from the documents
    bare = _write(corpus, tmp_path / "bare.html", "--no-text")
    assert all("mark" not in e and "pre" not in e for rows in bare["evidence"].values() for e in rows)
    assert bare["meta"]["text"] is False


def test_held_items_are_items_of_their_own_never_the_graphs(small_runs, tmp_path):
    run = tmp_path / "alpha"
    import shutil

    shutil.copytree(small_runs["alpha"], run)
    binary = run / "views" / "binary.json"
    view = json.loads(binary.read_text())
    view["edges"][0]["verified"] = False
    view["edges"][1]["verified"] = False
    binary.write_text(json.dumps(view))
    store = tmp_path / "g.sqlite"
    with GraphStore(store) as g:
        g.add([run])
        held = [e for e in g.review_queue() if e["kind"] == "held"]
        assert len(held) == 2
        g.decide(held[0]["id"], "accept", who="dana")
        before = {i["id"] for i in GraphStore(tmp_path / "empty.sqlite").snapshot().edges}
        accepted_id = next(i["id"] for i in g.snapshot().edges if i["relation"] == held[0]["item"]["relation"]
                           and i["id"] not in before)
    data = page_data(_page(store, tmp_path / "g.html"))
    statuses = {it["status"] for it in data["items"]}
    assert statuses == {"verified", "accepted", "held"}
    waiting = [it for it in data["items"] if it["status"] == "held"]
    assert [it["id"] for it in waiting] == [held[1]["id"]]  # keyed by its review entry, not the graph's id
    assert waiting[0]["reason"] == held[1]["reason"]
    assert data["evidence"][held[1]["id"]][0]["quote"] == held[1]["evidence"][0]["quote"]
    assert accepted_id in {it["id"] for it in data["items"] if it["status"] == "accepted"}


def _page(target, out):
    result = kgkit("view", str(target), "-o", str(out))
    assert result.exit_code == 0, result.output
    return out.read_text(encoding="utf-8")


def test_hostile_text_is_data_in_the_page(small_runs, tmp_path):
    node = hostile_run(small_runs["alpha"], tmp_path / "alpha", "Bluefin Logistics LLC")
    html = _page(tmp_path / "alpha", tmp_path / "hostile.html")
    data = page_data(html)
    assert next(n for n in data["nodes"] if n["id"] == node)["name"] == HOSTILE_NAME
    assert any(e["quote"] == HOSTILE_QUOTE for rows in data["evidence"].values() for e in rows)
    # the only script elements are kgkit's own six (data, evidence, three libraries, the viewer): none from a name
    assert html.count("<script") == 6 and html.count("</script>") == 6
    assert "<img" not in html and "\u2028" not in html
    # a placeholder of the page's template inside a quote stays text: the data is inserted last
    assert page_data(html)["meta"]["title"] == "alpha"


def test_the_page_asks_for_nothing_and_runs_only_its_own_scripts(small_runs, tmp_path):
    html = _page(small_runs["alpha"], tmp_path / "one.html")
    markup = re.sub(r"<script\b[^>]*>.*?</script>", "", html, flags=re.S)
    assert not re.search(r"<(link|img|iframe|object|embed)\b|\b(src|href)\s*=", markup, re.I)
    csp = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', html).group(1)
    assert "default-src &#x27;none&#x27;" in csp
    scripts = re.findall(r"<script>(.*?)</script>", html, re.S)
    assert len(scripts) == 4
    for source in scripts:
        digest = base64.b64encode(hashlib.sha256(source.encode()).digest()).decode()
        assert f"sha256-{digest}" in csp


def test_embedded_json_survives_any_string():
    nasty = {"name": "</script><!--<script>\u2028\u2029&amp;", "x": [HOSTILE_NAME, HOSTILE_QUOTE]}
    text = embed_json(nasty)
    assert "<" not in text and ">" not in text and "&" not in text and json.loads(text) == nasty
    page = render({**_empty(), "nodes": [{"id": "n", "type": "T", "name": "{{viewer}} {{csp}}", "aliases": [],
                                          "docs": [], "x": 0, "y": 0}], "types": ["T"]})
    assert page_data(page)["nodes"][0]["name"] == "{{viewer}} {{csp}}"


def test_embedded_json_is_the_standard_encoders_text_and_always_valid():
    """orjson writes the page's data (json took most of a large page's build): the text is
    json.dumps's, control characters, bidi marks and non-ASCII text included, numbers at the
    page's precision (positions at 2 decimals; below 0.0001 only the spelling differs); NaN
    becomes null (json's NaN is no JSON); what orjson refuses, json still writes."""
    from hypothesis import given, strategies as st

    def standard(data):
        text = json.dumps(data, ensure_ascii=False, separators=(",", ":"))
        for char, escape in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                             ("\u2029", "\\u2029")):
            text = text.replace(char, escape)
        return text

    values = st.recursive(st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text()
                          | st.floats(allow_nan=False, allow_infinity=False).map(lambda f: round(f, 2)),
                          lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(), inner, max_size=4),
                          max_leaves=20)

    @given(values)
    def same(data):
        assert embed_json(data) == standard(data)

    same()
    assert json.loads(embed_json({"conf": float("nan")})) == {"conf": None}
    assert json.loads(embed_json({1: 2**70})) == {"1": 2**70}  # orjson refuses both: json writes them


def _empty():
    return {"meta": {"title": "t"}, "types": [], "views": [], "relations": [], "statuses": [], "documents": [],
            "nodes": [], "items": [], "evidence": {}, "merges": {}, "review": []}


def test_bad_input_is_refused_and_nothing_is_written(small_runs, tmp_path):
    out = tmp_path / "page.html"
    missing = kgkit("view", str(tmp_path / "nope"), "-o", str(out))
    assert missing.exit_code == 2 and "no such run folder or graph store" in missing.output
    empty = tmp_path / "empty"
    empty.mkdir()
    assert kgkit("view", str(empty), "-o", str(out)).exit_code == 2
    broken = tmp_path / "alpha"
    import shutil

    shutil.copytree(small_runs["alpha"], broken)
    view = json.loads((broken / "views" / "binary.json").read_text())
    view["edges"][0]["head"] = "n_0000000000000000"
    (broken / "views" / "binary.json").write_text(json.dumps(view))
    result = kgkit("view", str(broken), "-o", str(out))
    assert result.exit_code == 2 and "binary.json" in result.output and "Traceback" not in result.output
    assert not out.exists() and sorted(p.name for p in tmp_path.iterdir()) == ["alpha", "empty"]
    # a page that cannot be written: a clear error, no traceback
    unwritable = kgkit("view", str(small_runs["alpha"]), "-o", "/proc/no-such-folder/page.html")
    assert unwritable.exit_code == 2 and "cannot write the page" in unwritable.output


def test_build_data_reads_a_store_and_a_run_folder_alike(small_runs, tmp_path):
    store = tmp_path / "one.sqlite"
    with GraphStore(store) as g:
        g.add([small_runs["gamma"]])
    from_store = build_data(str(store)).to_json()
    from_run = build_data(str(small_runs["gamma"])).to_json()
    for key in ("nodes", "items", "evidence", "types", "views", "relations"):
        assert from_store[key] == from_run[key]


def test_the_page_draws_before_it_reads_the_evidence_and_starts_no_webgl():
    """The graph's data and scripts come first, the evidence (most of the bytes) after them; the
    renderer draws on a 2D canvas: nothing in the page asks for a WebGL context (seconds to
    start in a browser without a GPU)."""
    page = render({"meta": {"title": "t"}, "nodes": [], "items": [], "evidence": {"x": []}})
    data, renderer, viewer, evidence = (page.index(s) for s in (
        'id="kgkit-data"', "kgkit view: the graph drawn on a 2D canvas", "kgkit view: the page's script",
        'id="kgkit-evidence"'))
    assert data < renderer < viewer < evidence
    assert "getContext('2d'" in page
    assert not re.search(r"getContext\(\s*['\"](experimental-)?webgl|WebGL2?RenderingContext", page)


def test_a_tenant_of_a_store_gets_a_page_of_its_own_on_both_backends(graph_url, small_runs, tmp_path):
    """One tenant's page holds its documents only; a page of a PostgreSQL URL is titled by its
    tenant, never by the URL (which may hold a password)."""
    for tenant, docs in (("acme", ["alpha", "beta"]), ("globex", ["gamma"])):
        with GraphStore(graph_url, tenant) as store:
            store.add([small_runs[d] for d in docs])
    data = _write(graph_url, tmp_path / "acme.html", "--tenant", "acme")
    assert sorted(d["name"] for d in data["documents"]) == ["alpha", "beta"]
    assert data["meta"]["tenant"] == "acme"
    other = _write(graph_url, tmp_path / "globex.html", "--tenant", "globex")
    assert [d["name"] for d in other["documents"]] == ["gamma"]
    assert "Supply Agreement" not in (tmp_path / "globex.html").read_text(encoding="utf-8")  # alpha's, acme's
    if graph_url.startswith("postgresql"):
        html = (tmp_path / "acme.html").read_text(encoding="utf-8")
        assert data["meta"]["title"] == "acme" and graph_url not in html
