"""Fixtures for the graph store tests: both backends, and run folders to load.

``graph_url`` is parametrised over SQLite and PostgreSQL, so every store test runs on
both. PostgreSQL is a throwaway cluster from the machine's packages (initdb/pg_ctl,
Debian's ``postgresql``), started once per session in a temp folder on a Unix socket
only, run as the ``postgres`` user when the tests run as root. The store connects as a
role without superuser or BYPASSRLS, so row-level security applies to it. Where no
PostgreSQL or no psycopg can be had, the PostgreSQL cases skip and say why.
"""
from __future__ import annotations

import glob
import itertools
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest
from support.optional_parts import unavailable

from kgkit.engine.run import extract

ROLE = "kgkit_store"


def _pg_bin(name: str) -> str | None:
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"))
    return candidates[-1] if candidates else None


class PostgresCluster:
    """initdb + pg_ctl in a temp folder; ``url(db)`` for the store's role."""

    def __init__(self):
        import psycopg  # noqa: F401  (skip early if the driver is missing)

        self.initdb, self.pg_ctl = _pg_bin("initdb"), _pg_bin("pg_ctl")
        if not (self.initdb and self.pg_ctl):
            raise RuntimeError("initdb/pg_ctl not found (apt-get install postgresql)")
        self.dir = tempfile.mkdtemp(prefix="kgkit-pg-")
        self.port = 54000 + os.getpid() % 1000
        self.as_root = os.geteuid() == 0
        if self.as_root:
            shutil.chown(self.dir, "postgres", "postgres")
        self._run(self.initdb, "-D", f"{self.dir}/data", "-U", "postgres", "--auth=trust", "-E", "UTF8")
        self._run(self.pg_ctl, "-D", f"{self.dir}/data", "-l", f"{self.dir}/log", "-w", "start", "-o",
                  f"-p {self.port} -k {self.dir} -c listen_addresses=''")
        self.counter = itertools.count()
        with self.admin() as conn:
            conn.execute(f"CREATE ROLE {ROLE} LOGIN NOSUPERUSER NOBYPASSRLS")

    def _run(self, *cmd: str) -> None:
        full = ["runuser", "-u", "postgres", "--", *cmd] if self.as_root else list(cmd)
        subprocess.run(full, check=True, capture_output=True, text=True, timeout=120)

    def admin(self):
        import psycopg

        return psycopg.connect(host=self.dir, port=self.port, user="postgres", dbname="postgres", autocommit=True)

    def new_database(self) -> str:
        name = f"graph_{next(self.counter)}"
        with self.admin() as conn:
            conn.execute(f"CREATE DATABASE {name} OWNER {ROLE}")
        return self.url(name, ROLE)

    def url(self, db: str, user: str) -> str:
        return f"postgresql://{user}@/{db}?host={self.dir}&port={self.port}"

    def stop(self) -> None:
        try:
            self._run(self.pg_ctl, "-D", f"{self.dir}/data", "-m", "immediate", "-w", "stop")
        finally:
            shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres():
    try:
        cluster = PostgresCluster()
    except ImportError:
        unavailable("postgres", "PostgreSQL tests skipped: psycopg is not installed (pip install 'kgkit[postgres]')")
    except (RuntimeError, OSError, subprocess.SubprocessError) as exc:
        detail = getattr(exc, "stderr", None) or exc
        unavailable("postgres", f"PostgreSQL tests skipped: cannot start a throwaway PostgreSQL ({detail})")
    yield cluster
    cluster.stop()


@pytest.fixture(params=["sqlite", "postgresql"])
def graph_url(request, tmp_path):
    """A new, empty store on each backend."""
    if request.param == "sqlite":
        return str(tmp_path / "graph.sqlite")
    return request.getfixturevalue("postgres").new_database()


# ---------------------------------------------------------------- small in-repo documents
# Written for these tests (no gold text): three short agreements sharing a party under
# spellings that the cross-document merge should join, and an edit of one of them.
DOCS = {
    "alpha": (
        "SUPPLY AGREEMENT\n\nThis Supply Agreement is entered into as of March 3, 2021 by and between "
        "Northwind Traders, Inc., a Delaware corporation (\"Northwind\"), and Bluefin Logistics LLC "
        "(\"Bluefin\").\n\nNorthwind shall deliver the goods within thirty (30) days. This Agreement shall "
        "be governed by the laws of the State of New York.\n"
    ),
    "beta": (
        "SERVICES AGREEMENT\n\nThis Services Agreement is made as of June 1, 2022 between Northwind Trader, "
        "Inc. (\"Customer\") and Harbor Analytics Ltd. (\"Provider\").\n\nProvider shall provide the "
        "services. This Agreement shall be governed by the laws of the State of California.\n"
    ),
    "gamma": (
        "LICENSE AGREEMENT\n\nThis License Agreement is made as of January 9, 2020 between Harbor Analytics "
        "Ltd. (\"Licensor\") and Quill Media Corp. (\"Licensee\").\n\nLicensee shall pay the fees. This "
        "Agreement shall be governed by the laws of the State of Texas.\n"
    ),
}
EDITED_ALPHA = DOCS["alpha"].replace("Bluefin Logistics LLC", "Seaward Freight LLC").replace(
    '"Bluefin"', '"Seaward"').replace("New York", "Delaware")


def extract_texts(texts: dict[str, str], folder: Path, domain: str = "legal_contracts") -> dict[str, Path]:
    """Offline run folders for ``texts`` (name -> text), in ``folder``/runs."""
    src = folder / "src"
    src.mkdir(parents=True, exist_ok=True)
    paths = []
    for name, text in texts.items():
        (src / f"{name}.txt").write_text(text, encoding="utf-8")
        paths.append(str(src / f"{name}.txt"))
    results = extract(paths, domain=domain, views=["binary", "nary", "temporal", "event"], out_dir=folder / "runs")
    return {Path(r.run_dir).name: Path(r.run_dir) for r in results}


@pytest.fixture(scope="session")
def small_runs(tmp_path_factory):
    """name -> run folder for DOCS, plus "alpha_edited": alpha's edit, in a folder named alpha."""
    base = tmp_path_factory.mktemp("graph-runs")
    runs = extract_texts(DOCS, base / "v1")
    runs["alpha_edited"] = extract_texts({"alpha": EDITED_ALPHA}, base / "v2")["alpha"]
    return runs


def graph_item_id(run_dir: Path, kind: str, raw: dict) -> str:
    """The id the graph gives item ``raw`` of run folder ``run_dir`` when nothing merges its
    ends: a document's own nodes (the agreement, its defined terms, its values) are renamed
    for the document (kgkit.graph.runs.scoped_ids)."""
    import json

    from kgkit.graph.assemble import _item
    from kgkit.graph.runs import _body, repoint, scoped_ids

    nodes = json.loads((Path(run_dir) / "nodes.json").read_text(encoding="utf-8"))["nodes"]
    return _item(kind, repoint(_body(kind, raw, None), scoped_ids(Path(run_dir).name, nodes)), lambda n: n)["id"]


def comparable(snapshot) -> dict:
    """A snapshot without its version and the documents' times added: two loads of the same
    corpus must be equal in this."""
    from dataclasses import asdict

    data = asdict(snapshot)
    data.pop("version")
    for doc in data["documents"]:
        doc.pop("added")
    return data
