"""PostgreSQL tenants against a tenant's own SQL. Each tenant gets a login role
(``GraphStore.grant_tenant_role``, run by the store's owner); connected as globex's role, a
session tries every attack on acme's rows and the shared tables: switching ``app.tenant``,
switching row-level security off, dropping a policy, writing ``schema_version`` or the role
map, shadowing the map with a temporary table, taking the owner's role. Each is refused or
sees nothing, and acme's graph is unchanged."""
from __future__ import annotations

import itertools
import re

import pytest

from support.graph_support import postgres, small_runs  # noqa: F401  (fixtures)
from kgkit.errors import ConfigError
from kgkit.graph import GraphStore

_names = itertools.count()


@pytest.fixture
def tenants(postgres, small_runs):  # noqa: F811
    """(owner URL, {tenant: its role's URL}), acme holding alpha and globex beta."""
    owner = postgres.new_database()
    db = re.search(r"@/(\w+)\?", owner).group(1)
    urls = {}
    for tenant, doc in (("acme", "alpha"), ("globex", "beta")):
        role = f"h28_{tenant}_{next(_names)}"
        with postgres.admin() as conn:
            conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
        with GraphStore(owner, tenant) as g:
            g.add([small_runs[doc]])
            g.grant_tenant_role(role)
        urls[tenant] = postgres.url(db, role)
    return owner, urls


def refused(conn, statement: str) -> str:
    """The database's error for ``statement`` (which must fail)."""
    import psycopg

    with pytest.raises(psycopg.Error) as err:
        conn.execute(statement)
    return str(err.value)


def test_a_tenant_role_works_on_its_own_tenant(tenants, small_runs):  # noqa: F811
    _, urls = tenants
    with GraphStore(urls["globex"], "globex") as g:
        assert [d["name"] for d in g.snapshot().documents] == ["beta"]
        assert g.add([small_runs["gamma"]])[0].status == "added"
        g.remove("gamma")


def test_a_tenant_role_cannot_open_another_tenant(tenants):
    _, urls = tenants
    with pytest.raises(ConfigError, match=r"belongs to tenant 'globex', not 'acme'"):
        GraphStore(urls["globex"], "acme")


def test_every_attack_of_a_tenant_role_on_another_tenant_fails(tenants):
    owner, urls = tenants
    with GraphStore(owner, "acme") as g:
        before = g.snapshot()
    with GraphStore(urls["globex"], "globex") as g:
        conn = g.db.conn

        # 1 the tenant setting: switched, and ignored for a tenant role
        conn.execute("SELECT set_config('app.tenant', 'acme', false)")
        assert conn.execute("SELECT count(*) FROM documents WHERE tenant = 'acme'").fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM doc_nodes").fetchone()[0] > 0  # its own rows only
        assert conn.execute("SELECT count(*) FROM doc_nodes WHERE tenant <> 'globex'").fetchone()[0] == 0
        assert conn.execute("UPDATE documents SET sha256 = 'x' WHERE tenant = 'acme'").rowcount == 0
        assert conn.execute("DELETE FROM groups WHERE tenant = 'acme'").rowcount == 0
        assert "row-level security" in refused(
            conn, "INSERT INTO documents (tenant, doc, id, source, sha256, contribution, added) "
                  "VALUES ('acme', 'evil', 'd_x', NULL, 'x', 'x', 'now')")
        conn.execute("RESET app.tenant")

        # 2 row-level security itself: only the owner may alter it
        for statement in ("ALTER TABLE documents NO FORCE ROW LEVEL SECURITY",
                          "ALTER TABLE documents DISABLE ROW LEVEL SECURITY",
                          "DROP POLICY documents_tenant ON documents",
                          "CREATE POLICY open ON documents USING (true)",
                          "ALTER TABLE documents OWNER TO CURRENT_USER",
                          "CREATE OR REPLACE FUNCTION kgkit_tenant() RETURNS text LANGUAGE sql AS $$ SELECT 'acme' $$"):
            assert re.search(r"must be owner|permission denied", refused(conn, statement)), statement

        # 3 the shared tables: read schema_version, touch nothing
        assert conn.execute("SELECT version FROM schema_version").fetchone()[0] >= 3
        for statement in ("UPDATE schema_version SET version = 99", "DELETE FROM schema_version",
                          "INSERT INTO schema_version VALUES (99)", "SELECT * FROM tenant_roles",
                          "UPDATE tenant_roles SET tenant = 'acme'",
                          "INSERT INTO tenant_roles VALUES ('intruder', 'acme')", "TRUNCATE documents",
                          "DROP TABLE items"):
            assert re.search(r"permission denied|must be owner", refused(conn, statement)), statement

        # 4 a temporary table or function standing in for the role map
        conn.execute("CREATE TEMP TABLE tenant_roles (role text, tenant text)")
        conn.execute("INSERT INTO tenant_roles SELECT session_user, 'acme'")
        conn.execute("SET search_path = pg_temp, public")
        assert conn.execute("SELECT count(*) FROM documents WHERE tenant = 'acme'").fetchone()[0] == 0
        conn.execute("RESET search_path")

        # 5 another role
        assert "permission denied" in refused(conn, "SET ROLE kgkit_store")
    with GraphStore(owner, "acme") as g:
        assert g.snapshot() == before
    with GraphStore(urls["acme"], "acme") as g:  # and acme's own role still sees all of it
        assert g.snapshot().documents == before.documents


def test_grant_is_a_command_and_refuses_what_cannot_be_a_tenant_role(postgres, tmp_path):  # noqa: F811
    from support.cli_support import kgkit

    owner = postgres.new_database()
    role = f"h28_cli_{next(_names)}"
    with postgres.admin() as conn:
        conn.execute(f"CREATE ROLE {role} LOGIN NOSUPERUSER NOBYPASSRLS")
    result = kgkit("graph", "grant", owner, role, "--tenant", "acme")
    assert result.exit_code == 0 and result.output == f"{role}: role of tenant acme\n"
    for bad, expected in (("postgres", "no role 'postgres' without SUPERUSER and BYPASSRLS"),
                          ("nobody_h28", "no role 'nobody_h28'"), ("kgkit_store", "cannot be a tenant role")):
        result = kgkit("graph", "grant", owner, bad, "--tenant", "acme")
        assert result.exit_code == 2 and expected in result.output and "Traceback" not in result.output
    result = kgkit("graph", "grant", str(tmp_path / "g.sqlite"), role)
    assert result.exit_code == 2 and "tenant roles are PostgreSQL's" in result.output
