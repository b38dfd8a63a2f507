"""One connection to a graph store, SQLite or PostgreSQL, behind the same few calls.

The store's SQL is written once, with ``?`` placeholders and types that both databases
read (``INSERT ... ON CONFLICT`` works in SQLite 3.24+ and PostgreSQL alike); this module
holds the little that differs: how to connect, how a writer takes the store (SQLite
``BEGIN IMMEDIATE`` with a busy timeout; PostgreSQL an advisory lock per tenant, so two
writers of one tenant queue and other tenants go on), and how a reader gets a snapshot
that no concurrent writer can show half of (a read transaction in SQLite's WAL mode;
``REPEATABLE READ`` in PostgreSQL).

Tenancy in PostgreSQL is enforced by the database: every tenant table has row-level
security forced on, with a policy that compares its ``tenant`` column to the session
setting ``app.tenant``, which this connection sets once. A role without BYPASSRLS (any
non-superuser) sees and changes only its tenant's rows whatever SQL it sends.
"""
from __future__ import annotations

import sqlite3
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterable, Iterator

from kgkit.errors import ConfigError, InputError
from kgkit.graph.migrations import MIGRATIONS, TABLES, TENANT_TABLES
from kgkit.secrets import mask_url, scrub_url

#: Seconds a writer waits for another to finish before giving up (SQLite busy_timeout).
WAIT_SECONDS = 60.0


def is_postgres(url: str) -> bool:
    return url.startswith(("postgresql://", "postgres://"))


class Database:
    """A connection scoped to one tenant. Use :meth:`write` / :meth:`read` for transactions."""

    kind = ""

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

    def write(self):
        """One update: all of it or none of it, one writer per tenant at a time."""
        return self._transaction(self._begin_write)

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
            self.execute("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
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
            for version in range(current + 1, newest + 1):
                for statement in self._ddl(MIGRATIONS[version - 1]):
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

    def _ddl(self, statements: list[str]) -> list[str]:
        return statements

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

    def _ddl(self, statements: list[str]) -> list[str]:
        out = [s.replace(" REAL", " DOUBLE PRECISION") for s in statements]
        for s in statements:
            table = s.split("(")[0].split()[-1] if s.startswith("CREATE TABLE") else None
            if table in TENANT_TABLES:
                out += [
                    f"ALTER TABLE {table} ENABLE ROW LEVEL SECURITY",
                    f"ALTER TABLE {table} FORCE ROW LEVEL SECURITY",
                    f"CREATE POLICY {table}_tenant ON {table} USING (tenant = current_setting('app.tenant')) "
                    f"WITH CHECK (tenant = current_setting('app.tenant'))",
                ]
        return out


def _check_sqlite_file(target: Path) -> None:
    """An existing store path must be a regular file that is empty or an SQLite database: a
    device (``/dev/zero``), a FIFO or a text file is refused with its kind, unopened by SQLite."""
    from kgkit.input_file import UnusableFile, open_regular

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


def connect(url: str, tenant: str) -> Database:
    """Open (creating and migrating if need be) the store at ``url``: a file path or postgresql:// URL."""
    if not isinstance(url, str) or not url.strip():
        raise ConfigError("no graph store given", hint="pass GRAPH (a .sqlite path or postgresql:// URL) or set graph.url")
    db = PostgresDatabase(url, tenant) if is_postgres(url) else SQLiteDatabase(url, tenant)
    try:
        db.migrate()
    except Exception:
        db.close()
        raise
    return db
