"""One connection to a graph store, SQLite or PostgreSQL, behind the same few calls.

The store's SQL is written once, with ``?`` placeholders and types that both databases
read (``INSERT ... ON CONFLICT`` works in SQLite 3.24+ and PostgreSQL alike); this module
holds the little that differs: how to connect, how a writer takes the store (SQLite
``BEGIN IMMEDIATE`` with a busy timeout; PostgreSQL an advisory lock per tenant, so two
writers of one tenant queue and other tenants go on), and how a reader gets a snapshot
that no concurrent writer can show half of (a read transaction in SQLite's WAL mode;
``REPEATABLE READ`` in PostgreSQL).

Tenancy in PostgreSQL is enforced by the database: every tenant table has row-level
security forced on, with a policy that compares its ``tenant`` column to
``kgkit_tenant()``. For a login role mapped to a tenant (``tenant_roles``, filled by
:meth:`PostgresDatabase.grant_tenant_role`) that is its tenant, whatever the session sets:
such a role is no owner (it cannot alter row-level security), holds only SELECT, INSERT,
UPDATE and DELETE on the tenant tables and SELECT on ``schema_version``, and reads nothing
of ``tenant_roles``; ``kgkit_tenant()`` is SECURITY DEFINER with a fixed search path, so a
temporary table cannot stand in for the mapping. For the owner (unmapped: the
administrator, who could switch row-level security off anyway) it is the session setting
``app.tenant``, which this connection sets once.
"""
from __future__ import annotations

import sqlite3
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from kgkit.errors import ConfigError, InputError
from kgkit.graph.migrations import MIGRATIONS, ROLES_VERSION, SHARED_TABLES, TABLES, TENANT_TABLES, statements, tables_of
from kgkit.guards.secrets import mask_url, scrub_url

#: What a tenant role may do on a tenant table (row-level security limits it to its tenant's rows).
TENANT_GRANT = "SELECT, INSERT, UPDATE, DELETE"
#: Seconds a writer waits for another to finish before giving up (SQLite busy_timeout).
WAIT_SECONDS = 60.0
#: SQLite's page cache per connection, in KiB (its default is 2 MiB): a query walks index
#: ranges across a store of gigabytes, and with the default nearly every page it reads again
#: comes from the operating system instead (a 2-hop read of a hub: 14 ms, 8 ms with 64 MiB).
CACHE_KIB = 65536


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


class Database:
    """A connection scoped to one tenant. Use :meth:`write` / :meth:`read` for transactions."""

    kind = ""
    conn: Any  # the driver's connection (sqlite3's or psycopg's), opened by the subclass
    location: str  # where the store is, for messages: a path, or host/database without a password
    writing = False  # inside write(): what this connection wrote is not yet in FTS5's averages record

    def __init__(self, tenant: str):
        if not isinstance(tenant, str) or not tenant.strip():
            raise ConfigError("graph tenant must be a non-empty name", hint="pass --tenant NAME or set graph.tenant")
        self.tenant = tenant

    # -- per backend
    def _sql(self, sql: str) -> str:
        return sql

    def _begin_write(self) -> None:
        raise NotImplementedError

    def _begin_read(self) -> None:
        raise NotImplementedError

    def _migration(self) -> AbstractContextManager[None]:
        """A transaction a schema migration runs in, held against concurrent migrations."""
        raise NotImplementedError

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """The driver's error for a store that is damaged (a corrupted page, a dropped table)
        as a named InputError; SQLite only (PostgreSQL's errors are the server's own)."""
        yield

    # -- shared
    def execute(self, sql: str, params: Iterable[Any] = ()) -> int:
        with self._guard():
            cur = self.conn.execute(self._sql(sql), tuple(params))
            return cur.rowcount

    def query(self, sql: str, params: Iterable[Any] = ()) -> list[tuple]:
        with self._guard():
            return list(self.conn.execute(self._sql(sql), tuple(params)).fetchall())

    def many(self, sql: str, rows: list[tuple]) -> None:
        if rows:
            with self._guard():
                self.conn.cursor().executemany(self._sql(sql), rows)

    @contextmanager
    def _transaction(self, begin) -> Iterator[None]:
        with self._guard():
            begin()
        try:
            yield
        except BaseException:
            try:
                self.conn.execute("ROLLBACK")
            except Exception:  # noqa: BLE001 - a damaged store may refuse even that; the first error says why
                pass
            raise
        with self._guard():
            self.conn.execute("COMMIT")

    @contextmanager
    def write(self) -> Iterator[None]:
        """One update: all of it or none of it, one writer per tenant at a time."""
        self.writing = True
        try:
            with self._transaction(self._begin_write):
                yield
        finally:
            self.writing = False

    @contextmanager
    def read(self) -> Iterator[None]:
        """A consistent view: every read inside sees the store as of one moment."""
        self._begin_read()
        try:
            yield
        finally:
            self.conn.execute("ROLLBACK")

    def migrate(self) -> int:
        """Bring the schema up to the newest version (forward only); returns that version."""
        with self._migration():
            if "schema_version" not in self._tables():  # a tenant role may not create: it only reads
                self.execute("CREATE TABLE schema_version (version INTEGER NOT NULL)")
            rows = self.query("SELECT version FROM schema_version")
            current = rows[0][0] if rows else 0
            newest = len(MIGRATIONS)
            if len(rows) > 1 or not isinstance(current, int) or isinstance(current, bool) or current < 0:
                raise InputError(f"{self.location}: not a kgkit graph store (its schema_version holds "
                                 f"{str(current)[:40]!r}, not one version)",
                                 hint="restore the store from a backup, or build a new one with kgkit graph add")
            if current > newest:
                raise ConfigError(f"graph store schema version {current} is newer than this kgkit knows ({newest})",
                                  hint="upgrade kgkit")
            if current < newest:
                self._may_migrate(current, newest)
            for version in range(current + 1, newest + 1):
                for statement in self._ddl(statements(MIGRATIONS[version - 1], self.kind), version):
                    self.execute(statement)
            if not rows:
                self.execute("INSERT INTO schema_version (version) VALUES (?)", (newest,))
            elif current != newest:
                self.execute("UPDATE schema_version SET version = ?", (newest,))
            missing = sorted(TABLES - set(self._tables()))
            if missing:
                raise InputError(f"{self.location}: the graph store is damaged: table {', '.join(missing)} is missing",
                                 hint="restore the store from a backup, or build a new one with kgkit graph add")
            return newest

    def _tables(self) -> list[str]:
        raise NotImplementedError

    def _ddl(self, statements: list[str], version: int) -> list[str]:
        return statements

    def _may_migrate(self, current: int, newest: int) -> None:
        """ConfigError when this connection cannot change the schema (a tenant role)."""

    def check_tenant(self) -> None:
        """ConfigError when this connection's role belongs to another tenant than the one asked for."""

    def grant_tenant_role(self, role: str) -> None:
        raise ConfigError("tenant roles are PostgreSQL's: with SQLite the file is the boundary",
                          hint="see docs/graph.md, Tenants")

    def close(self) -> None:
        self.conn.close()


class SQLiteDatabase(Database):
    kind = "sqlite"

    def __init__(self, path: str, tenant: str):
        super().__init__(tenant)
        target = Path(path)
        self.location = str(target)
        if not target.parent.exists():
            raise InputError(f"{path}: the folder for the graph store does not exist")
        if target.exists() and target.is_dir():
            raise InputError(f"{path}: is a folder, not a graph store file")
        if target.exists():
            _check_sqlite_file(target)
        try:
            self.conn = sqlite3.connect(str(target), isolation_level=None, timeout=WAIT_SECONDS)
            self.conn.execute(f"PRAGMA busy_timeout = {int(WAIT_SECONDS * 1000)}")
            foreign = self._foreign_tables()
            if foreign:  # another program's database: refused before anything (WAL mode too) changes it
                self.conn.close()
                raise InputError(f"{path}: not a kgkit graph store (it holds other tables: "
                                 f"{', '.join(foreign[:5])}{', …' if len(foreign) > 5 else ''})",
                                 hint="give a new file name, or the file kgkit graph add wrote")
            self.conn.execute("PRAGMA journal_mode = WAL")
            self.conn.execute("PRAGMA synchronous = NORMAL")
            self.conn.execute(f"PRAGMA cache_size = -{CACHE_KIB}")
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{path}: not a kgkit graph store ({exc})") from None

    def _foreign_tables(self) -> list[str]:
        """The tables of a database that has some but no schema_version: another program's."""
        names = [r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table' "
                                                 "AND name NOT LIKE 'sqlite_%' ORDER BY name")]
        return [] if not names or "schema_version" in names else names

    def _tables(self) -> list[str]:
        return [r[0] for r in self.query("SELECT name FROM sqlite_master WHERE type = 'table'")]

    @contextmanager
    def _guard(self) -> Iterator[None]:
        try:
            yield
        except sqlite3.IntegrityError:
            raise
        except sqlite3.DatabaseError as exc:
            raise InputError(f"{self.location}: the graph store cannot be read ({exc})",
                             hint="restore the store from a backup, or build a new one with kgkit graph add") from None

    def _begin_write(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def _begin_read(self) -> None:
        self.conn.execute("BEGIN")

    def _migration(self):
        return self.write()


class PostgresDatabase(Database):
    kind = "postgresql"

    def __init__(self, url: str, tenant: str):
        super().__init__(tenant)
        try:
            import psycopg
        except ImportError:
            raise ConfigError("a postgresql:// graph needs psycopg", hint="pip install 'kgkit[postgres]'") from None
        try:
            self.conn = psycopg.connect(url, autocommit=True)
        except (psycopg.Error, ValueError) as exc:  # the driver may quote the URL, password and all
            detail = scrub_url((str(exc).strip().splitlines() or [type(exc).__name__])[0], url)
            raise InputError(f"cannot connect to the graph store {mask_url(url)}: {detail}") from None
        self.conn.execute("SELECT set_config('app.tenant', %s, false)", (tenant,))
        # psycopg prepares a statement run five times; PostgreSQL may then plan it once for
        # every later run. A document's add fills its tables as it goes, so a plan made while
        # they were near empty (a sequential scan) stays for 66,000 rows: plan each run afresh.
        self.conn.execute("SET plan_cache_mode = force_custom_plan")
        self.location = mask_url(url).split("@")[-1]  # never show a password

    def _sql(self, sql: str) -> str:
        return sql.replace("?", "%s")

    def _tables(self) -> list[str]:
        return [r[0] for r in self.query("SELECT tablename FROM pg_tables WHERE schemaname = current_schema()")]

    def _begin_write(self) -> None:
        self.conn.execute("BEGIN")
        self.conn.execute("SELECT pg_advisory_xact_lock(hashtext('kgkit:' || %s))", (self.tenant,))

    def _begin_read(self) -> None:
        self.conn.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")

    def _migration(self):
        def begin() -> None:  # one migrating connection at a time, whatever the tenant
            self.conn.execute("BEGIN")
            self.conn.execute("SELECT pg_advisory_xact_lock(hashtext('kgkit:schema'))")

        return self._transaction(begin)

    def _ddl(self, statements: list[str], version: int) -> list[str]:
        out = [s.replace(" REAL", " DOUBLE PRECISION") for s in statements]
        tenant = "kgkit_tenant()" if version > ROLES_VERSION else "current_setting('app.tenant')"
        for s in statements:
            table = s.split("(")[0].split()[-1] if s.startswith("CREATE TABLE") else None
            if table in TENANT_TABLES:
                out += [
                    f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
                    f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
                    f"CREATE POLICY {table}_tenant ON {table} USING (tenant = {tenant}) WITH CHECK (tenant = {tenant})",
                ]
            if table in TENANT_TABLES and version > ROLES_VERSION:  # the roles granted before it came
                out.append(self._grant_to_roles(table))
            if table == "tenant_roles":
                out += [self._tenant_function(), "REVOKE ALL ON tenant_roles FROM PUBLIC",
                        *(f"ALTER POLICY {t}_tenant ON {t} USING (tenant = kgkit_tenant()) "
                          f"WITH CHECK (tenant = kgkit_tenant())" for t in sorted(tables_of(MIGRATIONS[:ROLES_VERSION]) & TENANT_TABLES))]
        return out

    @staticmethod
    def _grant_to_roles(table: str) -> str:
        """What :meth:`grant_tenant_role` grants on ``table``, to every tenant role mapped so far (``%%``:
        the statement goes through the driver's placeholders)."""
        return ("DO $$ DECLARE r record; BEGIN FOR r IN SELECT role FROM tenant_roles LOOP "
                f"EXECUTE format('GRANT {TENANT_GRANT} ON %%I TO %%I', '{table}', r.role); END LOOP; END $$")

    def _tenant_function(self) -> str:
        """``kgkit_tenant()``: the tenant of the session's login role, else ``app.tenant``. SECURITY
        DEFINER (a tenant role cannot read tenant_roles), the table named by schema and the search
        path fixed with pg_temp last, so no temporary table or function of a session stands in."""
        from psycopg import sql

        schema = self.query("SELECT current_schema()")[0][0]
        table = sql.Identifier(schema, "tenant_roles").as_string(self.conn)
        name = sql.Identifier(schema, "kgkit_tenant").as_string(self.conn)
        return (f"CREATE OR REPLACE FUNCTION {name}() RETURNS text LANGUAGE sql STABLE SECURITY DEFINER "
                "SET search_path = pg_catalog, pg_temp AS $$ SELECT COALESCE("
                f"(SELECT tenant FROM {table} WHERE role = session_user), current_setting('app.tenant')) $$")

    def _may_migrate(self, current: int, newest: int) -> None:
        if current and self._owns_nothing():
            raise ConfigError(f"{self.location}: the store is at schema version {current} and this kgkit needs "
                              f"{newest}; this role may not change the schema",
                              hint="open it once as the database owner (any kgkit graph command) to migrate it")

    def _owns_nothing(self) -> bool:
        """Whether this session's role owns no table of the store (a tenant role, not the owner)."""
        rows = self.query("SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() "
                          "AND tableowner = session_user")
        return rows[0][0] == 0

    def check_tenant(self) -> None:
        if "tenant_roles" not in self._tables():
            return
        [(actual, role)] = self.query("SELECT kgkit_tenant(), session_user")
        if actual != self.tenant:
            raise ConfigError(f"graph role {role} belongs to tenant {actual!r}, not {self.tenant!r}",
                              hint=f"pass --tenant {actual}, or connect as the role of tenant {self.tenant!r}")

    def grant_tenant_role(self, role: str) -> None:
        """Make login role ``role`` this tenant's: mapped in tenant_roles, and granted what the
        store's commands need on the tenant tables (SELECT, INSERT, UPDATE, DELETE) and SELECT on
        schema_version; nothing else. Run as the store's owner; creating the role is the DBA's."""
        from psycopg import sql

        if not isinstance(role, str) or not role or role == self.query("SELECT session_user")[0][0]:
            raise ConfigError(f"{role!r} cannot be a tenant role: give a login role that is not the store's owner")
        ident = sql.Identifier(role).as_string(self.conn)
        schema = sql.Identifier(self.query("SELECT current_schema()")[0][0]).as_string(self.conn)
        with self.write():
            if not self.query("SELECT 1 FROM pg_roles WHERE rolname = ? AND NOT rolsuper AND NOT rolbypassrls",
                              (role,)):
                raise ConfigError(f"no role {role!r} without SUPERUSER and BYPASSRLS",
                                  hint=f"CREATE ROLE {ident} LOGIN PASSWORD '…' NOSUPERUSER NOBYPASSRLS")
            self.execute("INSERT INTO tenant_roles (role, tenant) VALUES (?, ?) "
                         "ON CONFLICT (role) DO UPDATE SET tenant = excluded.tenant", (role, self.tenant))
            self.execute(f"GRANT USAGE ON SCHEMA {schema} TO {ident}")
            self.execute(f"GRANT SELECT ON schema_version TO {ident}")
            for table in sorted(TENANT_TABLES):
                self.execute(f"GRANT {TENANT_GRANT} ON {table} TO {ident}")


def _check_sqlite_file(target: Path) -> None:
    """An existing store path must be a regular file that is empty or an SQLite database: a
    device (``/dev/zero``), a FIFO or a text file is refused with its kind, unopened by SQLite."""
    from kgkit.guards.input_file import UnusableFile, open_regular

    try:
        with open_regular(target, 1 << 62, what="a graph store file") as fh:
            head = fh.read(16)
    except UnusableFile as exc:
        raise InputError(str(exc)) from None
    except OSError as exc:
        raise InputError(f"{target}: cannot be read ({exc.strerror or exc})") from None
    if head and head != b"SQLite format 3\x00":
        raise InputError(f"{target}: not a kgkit graph store (not an SQLite database)",
                         hint="give a new file name, or the file kgkit graph add wrote")


def require_existing(url: str) -> None:
    """For a command that only reads a graph: a SQLite path that names no file is refused
    (InputError, exit 2) before anything creates it, instead of answering from a new empty
    store. A postgresql:// URL is left to its connection, which names a missing database."""
    if isinstance(url, str) and url.strip() not in ("", ":memory:") and not is_postgres(url) and not Path(url).exists():
        raise InputError(f"{url}: no graph store at this path (nothing was created)",
                         hint="give the file kgkit graph add wrote, or build one with kgkit graph add")


def connect(url: str, tenant: str) -> Database:
    """Open (creating and migrating if need be) the store at ``url``: a file path or postgresql:// URL."""
    if not isinstance(url, str) or not url.strip():
        raise ConfigError("no graph store given", hint="pass GRAPH (a .sqlite path or postgresql:// URL) or set graph.url")
    db = PostgresDatabase(url, tenant) if is_postgres(url) else SQLiteDatabase(url, tenant)
    try:
        db.migrate()
        db.check_tenant()
    except Exception:
        db.close()
        raise
    return db
