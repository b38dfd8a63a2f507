"""``kgkit ask`` on a PostgreSQL store (run with KGKIT_REQUIRE=postgres in CI): the same
answers, citations and checks as on SQLite, through the command and the library, each
tenant answered from its own documents only (row-level security, as a tenant's own role),
and a computed count; a database that does not exist is named, not created."""
from __future__ import annotations

import json
import re

import pytest

from support.ask_corpus import corpus_runs, truth
from support.cli_support import kgkit
from support.graph_support import postgres, small_runs  # noqa: F401  (fixtures)
from kgkit.ask import ask
from kgkit.errors import InputError
from kgkit.graph import GraphStore

DOMAIN = "legal_contracts"
TEXAS = "Which contracts are governed by the law of Texas?"


@pytest.fixture
def stores(postgres, small_runs):  # noqa: F811
    """(owner URL, acme's role URL): acme holds alpha, beta and gamma; globex only beta."""
    owner = postgres.new_database()
    db = re.search(r"@/(\w+)\?", owner).group(1)
    role = f"ask_acme_{db}"
    with GraphStore(owner, "acme") as g:
        g.add([small_runs[n] for n in ("alpha", "beta", "gamma")])
        with postgres.admin() as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        g.grant_tenant_role(role)
    with GraphStore(owner, "globex") as g:
        g.add([small_runs["beta"]])
    return owner, postgres.url(db, role)


def test_ask_on_postgresql_answers_cites_and_counts_per_tenant(stores):
    owner, acme_role = stores
    with GraphStore(acme_role, "acme") as store:
        record = ask(store, TEXAS, domain=DOMAIN)
        ids = {e["id"] for kind in (store.snapshot().edges, store.snapshot().temporal) for e in kind}
        count = ask(store, "How many contracts is Harbor Analytics Ltd. a party to?", domain=DOMAIN)
    assert record.status == "answered" and record.verified and record.answer == ["gamma"], record.to_json()
    assert record.claims and all(e in ids for c in record.claims for e in c.evidence)
    assert count.status == "answered" and count.verified and count.answer == ["2"], count.to_json()
    with GraphStore(owner, "globex") as other:  # beta only: no Texas contract, no LICENSE AGREEMENT
        assert ask(other, TEXAS, domain=DOMAIN).status == "no_seed"
        assert ask(other, "How many contracts is Harbor Analytics Ltd. a party to?", domain=DOMAIN).answer == ["1"]
    result = kgkit("ask", acme_role, TEXAS, "-d", DOMAIN, "--tenant", "acme", "--json")
    assert result.exit_code == 0, result.output
    data = json.loads(result.output)
    assert data["answer"] == ["gamma"] and data["verified"] and data["tenant"] == "acme"


def test_ask_on_a_postgresql_database_that_does_not_exist_names_it(postgres):  # noqa: F811
    url = postgres.url("no_such_graph", "kgkit_store")
    result = kgkit("ask", url, TEXAS)
    assert result.exit_code == 2 and "cannot connect to the graph store" in result.output
    assert "Traceback" not in result.output
    with postgres.admin() as conn:
        assert not conn.execute("SELECT 1 FROM pg_database WHERE datname = 'no_such_graph'").fetchall()
    with pytest.raises(InputError):
        ask(url, TEXAS)


def test_whole_graph_aggregates_and_joined_lists_on_postgresql(postgres, small_runs, tmp_path):  # noqa: F811
    """The same whole-graph count, absence and ranking, and the same joined lists, as on SQLite
    (tests/ask/test_ask_corpus.py), each citing only statements the tenant's store holds."""
    url = postgres.new_database()
    with GraphStore(url, "acme") as store:
        store.add(corpus_runs(small_runs, tmp_path))
        by, ids, docs = truth(store)
        every = ask(store, "How many agreements are there?", domain=DOMAIN)
        lawless = ask(store, "Which contracts have no governing law?", domain=DOMAIN)
        most = ask(store, "Which contract has the most parties?", domain=DOMAIN)
        both = ask(store, "Which contracts are Harbor Analytics Ltd. and Quill Media Corp. both parties to?",
                   domain=DOMAIN)
        either = ask(store, "Which contracts is Northwind Traders, Inc. or Quill Media Corp. a party to?",
                     domain=DOMAIN)
    for record in (every, lawless, most, both, either):
        assert record.status == "answered" and record.verified, record.to_json()
        assert all(i in ids for es in record.cites.values() for i in es) and record.cites
    assert every.answer == [str(len(docs))] == ["4"] and every.route.path == "corpus"
    assert lawless.answer == sorted(docs - set(by["GOVERNING_LAW"])) == ["delta"]
    assert most.answer == ["delta"] and most.aggregate.value["delta"] == len(by["HAS_PARTY"]["delta"]) == 3
    assert both.answer == ["delta", "gamma"] and both.route.combine == "all"
    assert either.answer == ["alpha", "beta", "delta", "gamma"] and either.route.combine == "any"
    with GraphStore(url, "globex") as other:  # another tenant: nothing of acme's is counted
        none = ask(other, "How many agreements are there?", domain=DOMAIN)
        assert none.answer == ["0"] and none.evidence == [] and none.tenant == "globex"
