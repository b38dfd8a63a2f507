"""The review gate, on both stores: held items stay out until accepted, decisions survive
re-adding, and nothing gets around it (another tenant, a bogus entry, a reject with no
graph form, the same item held in one document and verified in another)."""
from __future__ import annotations

import json
import shutil

import pytest

from support.graph_support import graph_item_id, graph_url, postgres, small_runs  # noqa: F401  (fixtures)
from kgkit.errors import InputError, NotFoundError
from kgkit.graph import GraphStore


def _corpus_roles(hyperedge, corpus):
    """Keep only the fillers that are corpus nodes (the law, not the agreement): then the
    same statement in another document is the same item of the graph."""
    hyperedge["roles"] = {role: v for role, v in hyperedge["roles"].items()
                          if isinstance(v, dict) and v.get("node") in corpus}


def _held_run(source, dest, extra_review=()):
    """A copy of run ``source`` whose first binary edge did not verify, whose first hyperedge
    (cut to its corpus fillers) is low in confidence, and whose review.jsonl has two rejects; each
    item returned with ``graph``, its id in the graph (an edge from the agreement, a node
    of its document's own, has an id of its document's)."""
    shutil.copytree(source, dest)
    nodes = json.loads((dest / "nodes.json").read_text())["nodes"]
    corpus = {n["id"] for n in nodes if n["scope"] == "corpus"}
    binary = dest / "views" / "binary.json"
    data = json.loads(binary.read_text())
    data["edges"][0]["verified"] = False
    binary.write_text(json.dumps(data))
    nary = dest / "views" / "nary.json"
    hyper = json.loads(nary.read_text())
    _corpus_roles(hyper["hyperedges"][0], corpus)
    hyper["hyperedges"][0]["confidence"] = 0.2
    nary.write_text(json.dumps(hyper))
    data["edges"][0]["graph"] = graph_item_id(dest, "edge", data["edges"][0])
    hyper["hyperedges"][0]["graph"] = graph_item_id(dest, "hyperedge", hyper["hyperedges"][0])
    party = [n["name"] for n in nodes if n["type"] == "Party"]
    lines = [
        {"stage": "relations", "chunk": nodes[0]["mentions"][0]["chunk"],
         "item": {"head": party[0], "relation": "COMPETES_WITH", "tail": party[1], "evidence": "they compete"},
         "reason": "unknown_relation: 'COMPETES_WITH' is not a relation of legal_contracts"},
        {"stage": "entities", "chunk": None, "item": {"raw": "not json at all"}, "reason": "invalid_answer: no JSON"},
        *extra_review,
    ]
    (dest / "review.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    return data["edges"][0], hyper["hyperedges"][0]


def _ids(snapshot):
    return {i["id"] for kind in (snapshot.edges, snapshot.hyperedges) for i in kind}


def test_held_items_wait_outside_the_graph_until_accepted(graph_url, small_runs, tmp_path):
    run = tmp_path / "alpha"
    edge, hyperedge = _held_run(small_runs["alpha"], run)
    with GraphStore(graph_url) as g:
        g.add([run])
        snap = g.snapshot()
        assert edge["graph"] not in _ids(snap) and hyperedge["graph"] not in _ids(snap)
        assert not any(e["item"] in (edge["graph"], hyperedge["graph"]) for e in snap.evidence)
        queue = g.review_queue()
        reasons = sorted((e["kind"], e["reason"].split(" (")[0].split(":")[0]) for e in queue)
        assert reasons == [("held", "low confidence"), ("held", "unverified evidence"),
                           ("rejected", "invalid_answer"), ("rejected", "unknown_relation")]
        held_edge = next(e for e in queue if e["item"]["id"] == edge["id"])
        assert held_edge["evidence"][0]["quote"] == edge["evidence"]["quote"]
        assert g.stats()["review_pending"] == 4

        g.decide(held_edge["id"], "accept", who="dana")
        snap = g.snapshot()
        assert edge["graph"] in _ids(snap)
        assert [e["quote"] for e in snap.evidence if e["item"] == edge["graph"]] == [edge["evidence"]["quote"]]
        decided = g.review_entry(held_edge["id"])
        assert decided["decision"] == "accept" and decided["who"] == "dana" and decided["at"]
        assert g.stats()["review_pending"] == 3


def test_decisions_survive_re_adding_the_document(graph_url, small_runs, tmp_path):
    run = tmp_path / "v1" / "alpha"
    edge, hyperedge = _held_run(small_runs["alpha"], run)
    with GraphStore(graph_url) as g:
        g.add([run])
        queue = {e["item"].get("id") or e["reason"].split(":")[0]: e for e in g.review_queue()}
        g.decide(queue[edge["id"]]["id"], "accept", who="dana")
        g.decide(queue[hyperedge["id"]]["id"], "reject", who="dana")
        g.decide(queue["unknown_relation"]["id"], "accept", who="dana")
        accepted_edges = {e["id"] for e in g.snapshot().edges} - {e["id"] for e in g.snapshot().edges
                                                                   if "review" not in e["views"]}
        assert len(accepted_edges) == 1  # the accepted reject, filed under view "review"
        # the document comes again, changed (one more review line): decisions hold
        changed = tmp_path / "v2" / "alpha"
        _held_run(small_runs["alpha"], changed, extra_review=[
            {"stage": "relations", "chunk": None, "item": {"head": "x"}, "reason": "unknown_end: 'x'"}])
        [result] = g.add([changed])
        assert result.status == "replaced"
        snap = g.snapshot()
        assert edge["graph"] in _ids(snap) and hyperedge["graph"] not in _ids(snap)
        assert accepted_edges <= {e["id"] for e in snap.edges}
        review_evidence = [e for e in snap.evidence if e["view"] == "review"]
        assert review_evidence and review_evidence[0]["quote"] == "they compete"
        assert len(g.review_queue(pending_only=True)) == 2  # the invalid answer and the new line


def test_the_gate_cannot_be_bypassed(graph_url, small_runs, tmp_path):
    run = tmp_path / "alpha"
    _, edge = _held_run(small_runs["alpha"], run)  # the held hyperedge: its fillers are corpus nodes
    with GraphStore(graph_url, tenant="acme") as g, GraphStore(graph_url, tenant="intruder") as other:
        g.add([run])
        queue = g.review_queue()
        held = next(e for e in queue if e["item"].get("id") == edge["id"])
        invalid = next(e for e in queue if e["reason"].startswith("invalid_answer"))
        version = g.version()
        with pytest.raises(NotFoundError):  # another tenant cannot decide, nor see, acme's queue
            other.decide(held["id"], "accept")
        assert other.review_queue() == []
        with pytest.raises(NotFoundError):
            g.decide("q_0000000000000000", "accept")
        with pytest.raises(InputError, match="must be one of accept, reject"):
            g.decide(held["id"], "approve")
        with pytest.raises(InputError, match="has no graph form"):
            g.decide(invalid["id"], "accept")
        assert g.version() == version and edge["graph"] not in _ids(g.snapshot())
        # the same item, kept, in another document enters the graph; the held copy stays held
        clean = tmp_path / "copy" / "alpha_clean"
        shutil.copytree(small_runs["alpha"], clean)
        nary = clean / "views" / "nary.json"
        hyper = json.loads(nary.read_text())
        _corpus_roles(hyper["hyperedges"][0], {n["id"] for n in json.loads((clean / "nodes.json").read_text())["nodes"]
                                               if n["scope"] == "corpus"})
        nary.write_text(json.dumps(hyper))
        g.add([clean])
        assert edge["graph"] in _ids(g.snapshot())
        g.decide(held["id"], "reject", who="dana")
        assert edge["graph"] in _ids(g.snapshot())  # still supported by the clean document
        g.remove("alpha_clean")
        assert edge["graph"] not in _ids(g.snapshot())  # only the rejected copy is left


def test_review_list_says_which_entries_can_only_be_rejected(small_runs, tmp_path):
    from support.cli_support import kgkit

    run = tmp_path / "alpha"
    _held_run(small_runs["alpha"], run)
    graph = str(tmp_path / "g.sqlite")
    assert kgkit("graph", "add", graph, str(run)).exit_code == 0
    with GraphStore(graph) as g:
        queue = {e["reason"].split(":")[0].split(" (")[0]: e for e in g.review_queue()}
    assert {k: e["acceptable"] for k, e in queue.items()} == {
        "unverified evidence": True, "low confidence": True, "unknown_relation": True, "invalid_answer": False}
    result = kgkit("review", "list", graph)
    assert result.exit_code == 0, result.output
    invalid = queue["invalid_answer"]
    assert f"{invalid['id']}  alpha  rejected entities: invalid_answer: no JSON  " \
           "(reject only: it has no graph form to accept)" in result.output.splitlines()
    assert result.output.count("reject only") == 1
    refused = kgkit("review", "accept", graph, invalid["id"])
    assert refused.exit_code == 2 and "has no graph form" in refused.output
