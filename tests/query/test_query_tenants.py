"""The query layer under PostgreSQL tenant roles (``kgkit graph grant``): a tenant's own role
opens the store without running DDL, keeps its indexes on every update, builds them itself
when its tenant has none yet, and no operator shows it anything of another tenant."""
from __future__ import annotations

import itertools
import re

import pytest

from support.graph_support import postgres, small_runs  # noqa: F401  (fixtures)
from support.query_support import index_dump
from kgkit.config.model import QueryConfig
from kgkit.errors import ConfigError
from kgkit.graph import GraphStore, index, index_schema
from kgkit.query import Query

_names = itertools.count()


@pytest.fixture
def tenants(postgres, small_runs):  # noqa: F811
    """(owner URL, {tenant: its role's URL}): acme holds alpha and gamma, globex beta, both
    added by the owner before the roles are granted."""
    owner = postgres.new_database()
    db = re.search(r"@/(\w+)\?", owner).group(1)
    urls = {}
    for tenant, docs in (("acme", ("alpha", "gamma")), ("globex", ("beta",))):
        role = f"qx_{tenant}_{next(_names)}"
        with postgres.admin() as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        with GraphStore(owner, tenant) as g:
            g.add([small_runs[d] for d in docs])
            g.grant_tenant_role(role)
        urls[tenant] = postgres.url(db, role)
    return owner, urls


def _kept_equals_rebuilt(g) -> None:
    kept = index_dump(g)
    with g.db.write():
        index.rebuild(g)
    assert index_dump(g) == kept and kept["dirty"] == [] and kept["entities"]


def _strings(value, out: set[str]) -> set[str]:
    """Every string in a JSON value, keys included."""
    if isinstance(value, str):
        out.add(value)
    elif isinstance(value, dict):
        for k, v in value.items():
            out.add(k)
            _strings(v, out)
    elif isinstance(value, list):
        for v in value:
            _strings(v, out)
    return out


def _shown(answer) -> set[str]:
    """What an answer shows, not what it was asked (its ``query`` echoes the question)."""
    data = answer.to_json()
    data.pop("query")
    return _strings(data, set())


def test_a_tenant_role_adds_and_removes_with_its_indexes_kept(tenants, small_runs):
    _, urls = tenants
    with GraphStore(urls["globex"], "globex") as g:
        assert g.add([small_runs["gamma"]])[0].status == "added"
        _kept_equals_rebuilt(g)
        quill = Query(g).find("Quill Media Corp.")
        assert quill.nodes and quill.nodes[0].matched == "key" and quill.tenant == "globex"
        g.remove("gamma")
        _kept_equals_rebuilt(g)
        assert Query(g).find("Quill Media Corp.").nodes == []


def test_no_operator_shows_a_tenant_role_another_tenants_graph(tenants):
    owner, urls = tenants
    with GraphStore(owner, "acme") as g:
        theirs = g.snapshot()
    with GraphStore(urls["globex"], "globex") as g:
        ours = g.snapshot()
        q = Query(g, QueryConfig(fanout=10_000, limit=10_000, max_hops=6))
        own_ids = {n["id"] for n in ours.nodes}
        own_names = {n["name"] for n in ours.nodes} | {a for n in ours.nodes for a in n["aliases"]}
        foreign = ({n["id"] for n in theirs.nodes} - own_ids) | ({n["name"] for n in theirs.nodes} - own_names)
        foreign |= {d[k] for d in theirs.documents for k in ("name", "id")}
        foreign |= {i["id"] for i in theirs.edges + theirs.hyperedges + theirs.events + theirs.temporal}
        assert {"Quill Media Corp.", "Bluefin Logistics LLC", "gamma", "alpha"} <= foreign
        harbor = q.find("Harbor Analytics Ltd.").nodes[0].id
        beta = next(n["id"] for n in ours.nodes if n["name"].startswith("SERVICES"))
        acme_only = sorted({n["id"] for n in theirs.nodes} - own_ids)[0]
        answers = {
            **{f"find {name}": q.find(name) for name in ("Quill Media Corp.", "Bluefin Logistics", "Texas", "New York",
                                                           "Harbor")},
            "neighbours": q.neighbours([harbor], hops=3), "neighbours foreign": q.neighbours([acme_only]),
            "neighbours both": q.neighbours([harbor, acme_only]),
            "lineage": q.lineage(beta, hops=3), "lineage back": q.lineage(harbor, direction="backward", hops=3),
            "path": q.path(harbor, beta), "path foreign": q.path(harbor, acme_only),
            "match all": q.match("*"), "match": q.match("Agreement -HAS_PARTY-> Party"),
            "match Texas": q.match('Agreement -GOVERNING_LAW-> Jurisdiction{name: "Texas"}'),
            "gaps": q.gaps(limit=10_000), "anchors": q.anchors(),
            "novelty": q.novelty("Licensee shall pay the fees. Governed by the laws of the State of Texas. Quill Media."),
            **{f"search {r}": q.search("Quill Media license fees Texas New York Bluefin goods governed", reduce=r)
               for r in ("document", "entity", "none")},
        }
        for what, answer in answers.items():
            assert answer.tenant == "globex" and not _shown(answer) & foreign, (what, _shown(answer) & foreign)
        assert all(answers[f"find {n}"].nodes == [] for n in ("Quill Media Corp.", "Bluefin Logistics", "Texas",
                                                               "New York"))  # acme's names only
        assert answers["find Harbor"].nodes and answers["neighbours"].nodes and answers["path"].paths
        assert answers["neighbours foreign"].nodes == [] and "not in the graph" in answers["neighbours foreign"].note
        assert answers["path foreign"].paths == [] and answers["match"].rows and answers["match Texas"].rows == []
        assert answers["gaps"].report["documents"] == len(ours.documents) == 1
        assert {h.name for h in answers["search document"].hits} == {"beta"}


def test_an_older_store_is_migrated_by_its_owner_and_each_role_builds_its_own_indexes(tenants):
    owner, urls = tenants
    with GraphStore(urls["globex"], "globex") as g:
        before = index_dump(g)
    with GraphStore(owner, "acme") as g:  # the store as an earlier kgkit left it: no index step
        with g.db.write():
            for statement in index_schema.drop_earlier("postgresql"):
                g.db.execute(statement)
            g.db.execute("UPDATE schema_version SET version = 4")
    with pytest.raises(ConfigError, match="this role may not change the schema"):
        GraphStore(urls["globex"], "globex")
    GraphStore(owner, "acme").close()  # the owner migrates (and builds acme's indexes)
    with GraphStore(urls["globex"], "globex") as g:  # granted the new tables, builds its own
        assert index_dump(g) == before
        assert Query(g).find("Harbor Analytics Ltd.").nodes[0].matched == "key"
