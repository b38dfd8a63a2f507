"""The query layer on both stores (``graph_url``): its indexes kept by every kind of update,
each operator checked against an independent computation (networkx over the snapshot),
limits that cut and say so, tenants that cannot see each other, answers that fit the
published schema."""
from __future__ import annotations

import json
import shutil

import jsonschema
import pytest

from support.graph_support import graph_url, postgres, small_runs  # noqa: F401  (fixtures)
from support.query_support import SCHEMA, index_dump, snapshot_graph
from kgkit.config.model import QueryConfig
from kgkit.errors import InputError
from kgkit.graph import GraphStore, index
from kgkit.query import Query
from kgkit.query.reader import Reader
from graph.test_graph_review import _held_run


def _load(g, small_runs, names=("alpha", "beta", "gamma")):
    g.add([small_runs[n] for n in names])
    return g.snapshot()


def _by_name(snapshot, part):
    found = [n for n in snapshot.nodes if part in n["name"]]
    assert len(found) == 1, [n["name"] for n in found]
    return found[0]


def _refused(call, text):
    """``call`` raises InputError whose message or hint says ``text``."""
    with pytest.raises(InputError) as err:
        call()
    assert text in err.value.format(), err.value.format()


def _valid(answer):
    jsonschema.validate(json.loads(json.dumps(answer.to_json())), SCHEMA)
    return answer


def test_indexes_kept_by_updates_equal_a_rebuild_and_the_snapshot(graph_url, small_runs, tmp_path):
    held = tmp_path / "gamma"
    _held_run(small_runs["gamma"], held)
    with GraphStore(graph_url) as g:
        g.add([small_runs["alpha"], small_runs["beta"], held])
        g.add([small_runs["alpha_edited"]])  # replace
        merged = _by_name(g.snapshot(), "Northwind")
        member = next(m["node"] for m in g.merges() if m["action"] == "merge" and m["entity"] == merged["id"])
        g.unmerge(member, who="t")
        for entry in g.review_queue():
            if entry["kind"] == "held":
                g.decide(entry["id"], "accept", who="t")
        g.remove("beta")
        incremental = index_dump(g)
        snap = g.snapshot()
        with g.db.write():
            index.rebuild(g)
        assert index_dump(g) == incremental
        answer = Query(g, QueryConfig(limit=10_000)).match("*")
    assert incremental["dirty"] == []
    nodes = {n["id"]: n for n in snap.nodes}
    got = {e: (t, n, json.loads(a)) for e, t, n, a, _ in incremental["entities"]}
    assert got == {i: (n["type"], n["name"], n["aliases"]) for i, n in nodes.items()}
    assert {n.id: n.documents for n in answer.nodes} == {i: n["documents"] for i, n in nodes.items()}


def test_find_by_key_alias_fuzzy_and_text_with_types(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        q = Query(g)
        harbor = _by_name(snap, "Harbor")
        exact = _valid(q.find("Harbor Analytics Ltd."))
        assert exact.nodes[0].id == harbor["id"] and exact.nodes[0].matched == "key" and exact.nodes[0].score == 1.0
        assert exact.nodes[0].evidence and exact.tenant == "default" and exact.version == snap.version
        fuzzy = q.find("Harbour Analytics")
        assert fuzzy.nodes[0].id == harbor["id"] and fuzzy.nodes[0].matched in ("fuzzy", "text")
        assert [n.type for n in q.find("Harbor", types=["Party"]).nodes] == ["Party"]
        assert q.find("Harbor", types=["Jurisdiction"]).nodes == []
        _refused(lambda: q.find("Harbor", types=["Partie"]), "did you mean 'Party'")
        one = q.find("Agreement", limit=1)
        assert len(one.nodes) == 1 and one.cuts and one.cuts[0].limit == "limit"


@pytest.mark.parametrize("hops", [1, 2, 3])
def test_neighbours_equal_networkx_over_the_snapshot(graph_url, small_runs, hops):
    import networkx as nx

    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        q = Query(g, QueryConfig(fanout=10_000, limit=10_000))
        graph = snapshot_graph(snap)
        for node in snap.nodes:
            answer = q.neighbours([node["id"]], hops=hops)
            want = nx.single_source_shortest_path_length(graph, node["id"], cutoff=hops)
            assert {n.id: n.hops for n in answer.nodes} == want
            assert not [c for c in answer.cuts if c.limit != "items"] and not answer.partial


def test_fanout_and_limit_cut_and_say_what_they_cut(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        harbor = _by_name(snap, "Harbor")["id"]
        full = Query(g, QueryConfig(fanout=1000, limit=1000)).neighbours([harbor], hops=1)
        capped = _valid(Query(g, QueryConfig(fanout=2, limit=1000)).neighbours([harbor], hops=1))
        assert len(capped.nodes) == 3  # the seed and two neighbours
        cut = [c for c in capped.cuts if c.limit == "fanout"]
        assert cut == [type(cut[0])("fanout", len(full.nodes) - 3, harbor)]
        limited = Query(g, QueryConfig(fanout=1000, limit=2)).neighbours([harbor], hops=2)
        assert len(limited.nodes) == 2 and any(c.limit == "limit" and c.dropped > 0 for c in limited.cuts)
        assert capped.limits["fanout"] == 2
        # the statements between the seed and its neighbours: two per pair shown, the others counted
        with g.db.read():
            stored = Reader(g).incident([harbor])
        per_pair = {}
        for s in stored:
            for other in {e for _, e in s.fillers} - {harbor}:
                per_pair.setdefault(other, set()).add(s.key)
        shown = sum(min(2, len(keys)) for keys in per_pair.values())
        dropped = sum(c.dropped for c in full.cuts if c.limit == "items")
        assert shown + dropped == sum(len(keys) for keys in per_pair.values()) and full.items


def test_a_lonely_seed_is_returned_and_a_missing_one_is_not(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        lonely = [n for n in snap.nodes if n["id"] not in snapshot_graph(snap) or
                  not list(snapshot_graph(snap).neighbors(n["id"]))]
        q = Query(g)
        if lonely:
            answer = q.neighbours([lonely[0]["id"]])
            assert [n.id for n in answer.nodes] == [lonely[0]["id"]] and answer.note is None
        missing = q.neighbours(["Nobody Such Company Anywhere 12345"])
        assert missing.nodes == [] and "not in the graph" in missing.note


def test_two_seeds_answer_with_their_connecting_path_first(graph_url, small_runs):
    import networkx as nx

    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        a, b = _by_name(snap, "Northwind")["id"], _by_name(snap, "Quill")["id"]
        answer = Query(g).neighbours([a, b], hops=2)
        want = nx.shortest_path_length(snapshot_graph(snap), a, b)
        assert answer.paths and len(answer.paths[0]) - 1 == want
        assert [n.id for n in answer.nodes[:len(answer.paths[0])]] == answer.paths[0]


def test_path_lengths_equal_networkx(graph_url, small_runs):
    import networkx as nx

    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        graph = snapshot_graph(snap)
        q = Query(g, QueryConfig(fanout=10_000, max_hops=6))
        ids = [n["id"] for n in snap.nodes]
        for a in ids[:6]:
            for b in ids[-6:]:
                answer = _valid(q.path(a, b, hops=4))
                if a != b and nx.has_path(graph, a, b) and nx.shortest_path_length(graph, a, b) <= 4:
                    assert answer.paths and len(answer.paths[0]) - 1 == nx.shortest_path_length(graph, a, b)
                    assert all(p[0] == a and p[-1] == b for p in answer.paths)
                    assert answer.items
                elif a != b:
                    assert answer.paths == []


def test_lineage_follows_direction_and_relations(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        agreement = _by_name(snap, "LICENSE")["id"]
        q = Query(g)
        forward = _valid(q.lineage(agreement, relations=["HAS_PARTY"], hops=1))
        want = {e["tail"] for e in snap.edges + snap.temporal if e["head"] == agreement and e["relation"] == "HAS_PARTY"}
        assert {n.id for n in forward.nodes} - {agreement} == want
        assert all(p[0] == agreement for p in forward.paths) and all(n.score is not None for n in forward.nodes)
        party = sorted(want)[0]
        back = q.lineage(party, relations=["HAS_PARTY"], direction="backward", hops=1)
        assert agreement in {n.id for n in back.nodes}
        assert q.lineage(party, relations=["HAS_PARTY"], hops=1).nodes[0].id == party  # nothing forward of a party


def test_hops_over_the_maximum_and_unknown_relations_are_refused(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        q = Query(g, QueryConfig(max_hops=3))
        _refused(lambda: q.neighbours(["Harbor Analytics Ltd."], hops=4), "hop limit 4")
        _refused(lambda: q.neighbours(["Harbor Analytics Ltd."], relations=["HAS_PARTI"]), "did you mean 'HAS_PARTY'")


def test_match_binary_pattern_equals_the_snapshot_edges(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        q = Query(g)
        nodes = {n["id"]: n for n in snap.nodes}
        law = [e for e in snap.edges + snap.temporal if e["relation"] == "GOVERNING_LAW"]
        answer = _valid(q.match("Agreement -GOVERNING_LAW-> Jurisdiction"))
        assert {(r.nodes[0], r.nodes[1], r.items[0]) for r in answer.rows} == {(e["head"], e["tail"], e["id"]) for e in law}
        ny = q.match('Agreement -GOVERNING_LAW-> Jurisdiction{name: "New York"}')
        assert {nodes[r.nodes[1]]["name"] for r in ny.rows} == {"New York"}
        alpha = next(d["id"] for d in snap.documents if d["name"] == "alpha")
        assert all(r.documents == [alpha] for r in ny.rows)
        assert all(i.evidence and i.evidence[0].quote for i in ny.items)
        two = q.match("Jurisdiction <-GOVERNING_LAW- Agreement -HAS_PARTY-> Party")
        want = {(e["tail"], e["head"], p["tail"]) for e in law for p in snap.edges + snap.temporal
                if p["relation"] == "HAS_PARTY" and p["head"] == e["head"]}
        assert {tuple(r.nodes) for r in two.rows} == want


def test_match_temporal_conditions_compare_intervals(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        q = Query(g)
        dated = {e["id"]: e["qualifiers"]["effective_date"]["value"] for e in snap.temporal
                 if e["relation"] == "HAS_PARTY" and "effective_date" in e["qualifiers"]}
        after = q.match("Agreement -HAS_PARTY-> Party where effective_date after 2021-01-01")
        assert {r.items[0] for r in after.rows} == {i for i, v in dated.items() if v > "2021-01-01"}
        during = q.match("Agreement -HAS_PARTY-> Party where during 2020")
        assert {r.items[0] for r in during.rows} == {i for i, v in dated.items() if v.startswith("2020")}
        years = q.match('Agreement -AGREEMENT_DATE-> Date{in: "2022"}')
        assert {snap_node["name"] for snap_node in snap.nodes if snap_node["id"] in {r.nodes[1] for r in years.rows}} \
            == {"June 1, 2022"}
        with pytest.raises(InputError, match="column"):
            q.match("Agreement -HAS_PARTY-> Party where after someday")


def test_match_role_patterns_over_hyperedges(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        hyper = snap.hyperedges[0]
        role, fillers = next((r, ns) for r, ns in sorted(hyper["roles"].items()) if ns)
        target = next(n for n in snap.nodes if n["id"] == fillers[0])
        answer = Query(g).match(f'{hyper["relation"]}({role}: {target["type"]}{{name: "{target["name"]}"}})')
        want = {h["id"] for h in snap.hyperedges + snap.events
                if h.get("relation", h.get("type")) == hyper["relation"]
                and target["id"] in (h.get("roles") or h.get("arguments"))[role]}
        assert {r.items[0] for r in answer.rows} == want


@pytest.mark.parametrize("pattern, column", [
    ("Agreement -GOVERNING_LAW Jurisdiction", 26),
    ("Agreement -GOVERNING_LAW-> Jurisdiction{nam: 'x'}", 41),
    ("Agreement -GOVERNING_LAW-> ", 28),
    ("Agreemnt -GOVERNING_LAW-> Jurisdiction", 1),
])
def test_malformed_patterns_name_their_column(graph_url, small_runs, pattern, column):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        with pytest.raises(InputError) as err:
            Query(g).match(pattern)
        assert f"column {column}" in err.value.message


def test_min_confidence_is_applied_again_at_query_time(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        confidences = sorted({e["confidence"] for e in snap.edges if e["confidence"] is not None})
        cut = confidences[len(confidences) // 2] if confidences else 0.9
        q = Query(g, QueryConfig(fanout=10_000, limit=10_000))
        for node in snap.nodes[:5]:
            answer = q.neighbours([node["id"]], hops=1, min_confidence=cut)
            assert all(i.confidence is None or i.confidence >= cut for i in answer.items)
        assert q.neighbours([snap.nodes[0]["id"]], min_confidence=cut).limits["min_confidence"] == cut


def test_held_items_count_only_once_accepted(graph_url, small_runs, tmp_path):
    run = tmp_path / "alpha"
    edge, _ = _held_run(small_runs["alpha"], run)
    with GraphStore(graph_url) as g:
        g.add([run])
        q = Query(g)
        relation = edge["relation"]
        before = {i for r in q.match(f"* -{relation}-> *").rows for i in r.items}
        entry = next(e for e in g.review_queue() if e["kind"] == "held" and e["item"]["id"] == edge["id"])
        g.decide(entry["id"], "accept", who="t")
        after = {i for r in q.match(f"* -{relation}-> *").rows for i in r.items}
        snap = g.snapshot()
        assert after == {e["id"] for e in snap.edges + snap.temporal if e["relation"] == relation}
        assert before < after  # the accepted edge came in


def test_a_tenant_sees_none_of_another_tenants_graph(graph_url, small_runs):
    with GraphStore(graph_url, tenant="a") as a:
        _load(a, small_runs)
    with GraphStore(graph_url, tenant="b") as b:
        b.add([small_runs["gamma"]])
        q = Query(b)
        assert q.find("Northwind").nodes == []
        assert all("Northwind" not in n.name for n in q.match("Agreement -HAS_PARTY-> Party").nodes)
        hits = q.search("Northwind Bluefin goods New York")
        assert all(h.name == "gamma" for h in hits.hits)
        assert q.gaps().report["documents"] == 1 and q.gaps().tenant == "b"


def test_gaps_equal_networkx_components_and_counts(graph_url, small_runs):
    import networkx as nx

    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        graph = snapshot_graph(snap)
        answer = _valid(Query(g).gaps(limit=1000))
        report = answer.report
        main = max(nx.connected_components(graph), key=len)
        assert set(report["outside_largest_component"]) == set(graph) - main
        assert set(report["orphans"]) == {n for n in graph if graph.degree(n) == 0}
        assert set(report["singletons"]) == {n["id"] for n in snap.nodes if len(n["documents"]) == 1}
        assert report["counts"]["orphans"] == len(report["orphans"]) and report["nodes"] == len(snap.nodes)
        limited = Query(g).gaps(limit=1)
        assert any(c.limit == "limit:singletons" for c in limited.cuts)


def test_search_ranks_types_fuses_and_reduces_to_owners_with_evidence(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        q = Query(g)
        answer = _valid(q.search("governed by the laws of the State of Texas"))
        assert answer.hits[0].kind == "document" and answer.hits[0].name == "gamma"
        assert answer.hits[0].evidence and "Texas" in " ".join(e.quote for e in answer.hits[0].evidence)
        assert answer.report["lists"] and answer.limits["k"] == QueryConfig().search.k
        entities = q.search("Texas", reduce="entity")
        assert entities.hits[0].kind == "entity" and entities.hits[0].name == "Texas"
        only = q.search("Harbor Analytics", reduce="none", types=["Party"])
        assert only.hits and all(h.via[0]["list"] in ("Party", "mention:Party") for h in only.hits)
        with pytest.raises(InputError, match="unknown reduction"):
            q.search("x", reduce="server")


def test_search_hits_and_their_children_carry_the_snapshots_ids(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        items = {i["id"] for kind in (snap.edges, snap.hyperedges, snap.events, snap.temporal) for i in kind}
        nodes = {n["id"] for n in snap.nodes}
        answer = Query(g).search("governed by the laws of the State of Texas", reduce="none")
        statements = [h for h in answer.hits if h.kind != "entity"]
        assert statements and {h.id for h in statements} <= items
        assert len({h.id for h in answer.hits}) == len(answer.hits)  # one statement, one hit
        assert {v["id"] for h in answer.hits for v in h.via} <= items | nodes
        near = Query(g).neighbours(["Texas"], hops=1)
        assert {h.id for h in statements} & {i.id for i in near.items}  # the ids neighbours gives


def test_novelty_scores_overlap_offline_and_says_the_rubric_is_not_used(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        q = Query(g)
        known = _valid(q.novelty("This Agreement shall be governed by the laws of the State of Texas"))
        new = q.novelty("Quantum chromodynamics lattice simulations of gluon plasma")
        assert known.report["novelty"] < new.report["novelty"] == 1.0
        assert known.nodes and known.report["rubric"] is None and "LLM" in known.note


def test_empty_graph_answers_empty_and_anchors_say_why(graph_url):
    with GraphStore(graph_url) as g:
        q = Query(g)
        assert q.find("anything").nodes == []
        assert q.match("Agreement -GOVERNING_LAW-> Jurisdiction").rows == []
        assert q.search("anything").hits == []
        assert q.gaps().report["nodes"] == 0
        anchors = _valid(q.anchors())
        assert anchors.nodes == [] and "no anchors" in anchors.note


def test_a_spent_time_budget_answers_partial(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        answer = Query(g, QueryConfig(timeout=1e-9)).neighbours(["Harbor Analytics Ltd."], hops=3)
        assert answer.partial and [n.hops for n in answer.nodes] == [0]


def test_an_older_store_gets_its_indexes_on_open(small_runs, tmp_path):
    path = tmp_path / "old.sqlite"
    with GraphStore(path) as g:
        _load(g, small_runs)
        built = index_dump(g)
        for table in ("qx_items", "qx_entities", "qx_names", "qx_fillers", "qx_times", "qx_state"):
            g.db.execute(f"DELETE FROM {table}")
    with GraphStore(path) as g:
        assert index_dump(g) == built


def test_indexes_an_earlier_kgkit_made_on_open_are_rebuilt_by_the_schema_step(graph_url, small_runs):
    from kgkit.graph.migrations import MIGRATIONS

    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        built = index_dump(g)
        with g.db.write():  # how that kgkit left a store: schema 4, the tables beside it, their own version table
            g.db.execute("CREATE TABLE qx_version (version INTEGER NOT NULL)")
            g.db.execute("INSERT INTO qx_version VALUES (1)")
            g.db.execute("UPDATE schema_version SET version = 4")
            g.db.execute("DELETE FROM qx_names")
    with GraphStore(graph_url) as g:
        assert g.db.query("SELECT version FROM schema_version") == [(len(MIGRATIONS),)]
        assert "qx_version" not in g.db._tables() and index_dump(g) == built


def test_the_ends_of_named_items_resolve_after_a_document_is_replaced(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        g.add([small_runs["alpha_edited"]])
        q = Query(g)
        laws = {q.match("Agreement -GOVERNING_LAW-> Jurisdiction").nodes[i].name
                for i in range(len(q.match("Agreement -GOVERNING_LAW-> Jurisdiction").nodes))}
        assert "Delaware" in laws and "New York" not in laws
        assert q.find("Bluefin Logistics").nodes == [] or q.find("Bluefin Logistics").nodes[0].matched != "key"
        shutil.rmtree(small_runs["alpha_edited"].parent / "unused", ignore_errors=True)


def test_a_store_of_the_step_before_gets_rowless_index_tables_rebuilt_on_open(small_runs, tmp_path):
    path = tmp_path / "step5.sqlite"
    with GraphStore(path) as g:
        _load(g, small_runs)
        built = index_dump(g)
        with g.db.write():  # a store the step before left: its tables as they were, its version 5
            g.db.execute("UPDATE schema_version SET version = 5")
            g.db.execute("DELETE FROM qx_names")
    with GraphStore(path) as g:
        ddl = dict(g.db.query("SELECT name, sql FROM sqlite_master WHERE type = 'table'"))
        assert index_dump(g) == built
    assert all(ddl[t].endswith("WITHOUT ROWID") for t in ("qx_fillers", "qx_degree", "qx_dirty"))
    assert not ddl["qx_text"].endswith("WITHOUT ROWID")  # its id is the full-text rowid


def test_a_merged_entitys_documents_cut_counts_each_document_once(graph_url, small_runs):
    with GraphStore(graph_url) as g:
        _load(g, small_runs)
        snap = g.snapshot()
        merged = _by_name(snap, "Northwind")
        reader = Reader(g, documents=1)
        with g.db.read():
            listed = reader.documents_of([merged["id"]])[merged["id"]]
            groups = reader.members([merged["id"]])
    assert len(groups) > 1 and len(merged["documents"]) > 1
    assert len(listed) == 1 and reader.documents_cut[merged["id"]] == len(merged["documents"]) - 1


def test_a_capped_hub_is_read_from_its_first_statements_on_both_stores(graph_url, small_runs):
    """``query.scan``: a node with more statements than the cap is ranked from the first ones
    in (document, view, item) order, the same on both stores, and the rest reported cut."""
    with GraphStore(graph_url) as g:
        snap = _load(g, small_runs)
        harbor = _by_name(snap, "Harbor")["id"]
        scan = 3
        answer = _valid(Query(g, QueryConfig(scan=scan, fanout=1000, limit=1000)).neighbours([harbor], hops=1))
        with g.db.read():
            reader = Reader(g)
            want: set[str] = set()
            read = 0
            for node in sorted(reader.members([harbor])):
                first = g.db.query("SELECT doc, view, item FROM qx_fillers WHERE tenant = 'default' AND node = ? "
                                   "AND visible = 1 ORDER BY doc, view, item, role", (node,))[:scan]
                read += len(first)
                others = {n for d, v, i in first for (n,) in g.db.query(
                    "SELECT node FROM qx_fillers WHERE tenant = 'default' AND doc = ? AND view = ? AND item = ?",
                    (d, v, i))}
                want |= set(reader.entity_of(others).values()) - {harbor}
            degree = reader.entities([harbor])[harbor]["degree"]
    assert degree > scan and want
    assert {n.id for n in answer.nodes} - {harbor} == want
    assert [(c.limit, c.dropped) for c in answer.cuts if c.limit == "scan"] == [("scan", degree - read)]
