"""The document as a node, and scopes, in the corpus graph (the default suite's small
contracts): a contract is its own Agreement node whatever its title, values and defined
terms stay in their document, and every item names the documents that state it."""
from __future__ import annotations

import json

from support.graph_support import DOCS, extract_texts, graph_url, postgres  # noqa: F401  (fixtures)
from kgkit.graph import GraphStore

# Written for this test: beta's parties and law under alpha's title.
RETITLED = DOCS["beta"].replace("SERVICES AGREEMENT", "SUPPLY AGREEMENT").replace("Services Agreement",
                                                                                     "Supply Agreement")


def _ends(snap, node_id, relation):
    names = {n["id"]: n["name"] for n in snap.nodes}
    return sorted(names[e["tail"]] for e in snap.edges if e["head"] == node_id and e["relation"] == relation)


def test_two_contracts_of_one_title_are_two_agreements_with_their_own_parties(graph_url, tmp_path):
    runs = extract_texts({"alpha": DOCS["alpha"], "beta_retitled": RETITLED}, tmp_path)
    with GraphStore(graph_url) as g:
        g.add(runs.values())
        snap = g.snapshot()
    agreements = [n for n in snap.nodes if n["type"] == "Agreement"]
    assert sorted(n["name"] for n in agreements) == ["SUPPLY AGREEMENT", "SUPPLY AGREEMENT"]
    assert all(len(n["documents"]) == 1 and n["scope"] == "document" for n in agreements)
    by_doc = {d["name"]: d for d in snap.documents}
    alpha, beta = by_doc["alpha"]["node"], by_doc["beta_retitled"]["node"]
    assert {alpha, beta} == {n["id"] for n in agreements}
    assert [n[:9] for n in _ends(snap, alpha, "HAS_PARTY")] == ["Bluefin L", "Northwind"]
    assert _ends(snap, alpha, "GOVERNING_LAW") == ["New York"]
    assert _ends(snap, beta, "GOVERNING_LAW") == ["California"]
    assert "Harbor Analytics Ltd." in _ends(snap, beta, "HAS_PARTY")
    assert "Bluefin Logistics LLC" not in _ends(snap, beta, "HAS_PARTY")
    # the two Northwinds are one party of both contracts: corpus nodes still merge
    [northwind] = [n for n in snap.nodes if n["type"] == "Party" and n["name"].startswith("Northwind")]
    assert len(northwind["documents"]) == 2
    assert by_doc["alpha"]["title"] == "SUPPLY AGREEMENT"


def test_a_contract_without_a_title_pattern_still_has_its_agreement_and_edges(graph_url, tmp_path):
    untitled = DOCS["gamma"].replace("LICENSE AGREEMENT\n\n", "").replace("This License Agreement", "This agreement")
    runs = extract_texts({"untitled": untitled}, tmp_path)
    nodes = json.loads((runs["untitled"] / "nodes.json").read_text())["nodes"]
    [own] = [n for n in nodes if n.get("document")]
    assert own["type"] == "Agreement" and own["name"] == "untitled" and own["scope"] == "document"
    with GraphStore(graph_url) as g:
        g.add(runs.values())
        snap = g.snapshot()
    [doc] = snap.documents
    assert _ends(snap, doc["node"], "GOVERNING_LAW") == ["Texas"]
    assert "Quill Media Corp." in _ends(snap, doc["node"], "HAS_PARTY")


def test_values_never_bridge_documents_and_items_name_their_documents(graph_url, tmp_path):
    same_day = DOCS["beta"].replace("June 1, 2022", "March 3, 2021")
    runs = extract_texts({"alpha": DOCS["alpha"], "beta": same_day}, tmp_path)
    with GraphStore(graph_url) as g:
        g.add(runs.values())
        snap = g.snapshot()
    dates = [n for n in snap.nodes if n["type"] == "Date"]
    assert len(dates) == 2 and all(n["scope"] == "value" and len(n["documents"]) == 1 for n in dates)
    assert {n["value"] for n in dates} == {"2021-03-03"}
    doc_ids = {d["id"] for d in snap.documents}
    for item in snap.edges + snap.hyperedges + snap.events + snap.temporal:
        assert item["documents"] and set(item["documents"]) <= doc_ids


def test_stats_count_scopes_and_the_nodes_no_item_names(graph_url, tmp_path):
    text = DOCS["alpha"] + "\nNotices go to Quill Media Corp. (\"Agent\").\n"  # a party no relation ends
    runs = extract_texts({"alpha": text}, tmp_path)
    with GraphStore(graph_url) as g:
        g.add(runs.values())
        snap, stats = g.snapshot(), g.stats()
    ends = {n for e in snap.edges + snap.temporal for n in (e["head"], e["tail"])} | \
        {n for h in snap.hyperedges for ids in h["roles"].values() for n in ids} | \
        {n for v in snap.events for ids in v["arguments"].values() for n in ids}
    alone = [n["name"] for n in snap.nodes if n["id"] not in ends]
    assert "Quill Media Corp." in alone and stats["isolated_nodes"] == len(alone)
    assert stats["isolated_share"] == round(len(alone) / len(snap.nodes), 4)
    assert stats["corpus_nodes"] + stats["document_nodes"] + stats["value_nodes"] == stats["nodes"]
    assert stats["document_nodes"] == 1 and stats["value_nodes"] >= 1


def test_this_contract_is_the_document_too(tmp_path):
    text = ('Kestrel Farms LLC ("Grower") and Orbitline Foods Inc. ("Buyer") enter into this contract on '
            'June 9, 2022.\n\nThis Contract shall be governed by the laws of the State of Oregon.\n')
    runs = extract_texts({"untitled_contract": text}, tmp_path)
    nodes = {n["id"]: n for n in json.loads((runs["untitled_contract"] / "nodes.json").read_text())["nodes"]}
    edges = json.loads((runs["untitled_contract"] / "views" / "binary.json").read_text())["edges"]
    laws = [(nodes[e["head"]], nodes[e["tail"]]["name"]) for e in edges if e["relation"] == "GOVERNING_LAW"]
    assert [(head.get("document"), law) for head, law in laws] == [(True, "Oregon")]
