"""The BM25 top rows that skip the broad words' rows equal FTS5's own ranking of the whole
query: on seeded random tables mixing rare and common words, over two tenants."""
from __future__ import annotations

import random
import sqlite3

import pytest

from kgkit.query import bm25

TENANTS = ("a", "b")


class Db:
    """The one method of kgkit's database that bm25 uses, over a plain connection."""

    def __init__(self, conn: sqlite3.Connection):
        self.conn = conn
        self.writing = False

    def query(self, sql: str, params=()) -> list[tuple]:
        return self.conn.execute(sql, params).fetchall()


def table(seed: int) -> tuple[Db, list[str], list[str]]:
    """A table of names: a few rare words, some mid words, two words in most rows, some rows
    long and some words repeated, so that the cut often falls close to the ceiling."""
    rng = random.Random(seed)
    rare = [f"rare{i}" for i in range(40)]
    mid = [f"mid{i}" for i in range(6)]
    common = ["corp", "group"]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE TABLE meta (id INTEGER PRIMARY KEY, type TEXT, tenant TEXT)")
    for i in range(1, 3001):
        words = [rng.choice(rare)] if rng.random() < 0.05 else []
        words += rng.sample(mid, rng.randint(0, 2)) + [w for w in common if rng.random() < 0.6]
        words *= rng.choice([1, 1, 2, 4])  # a word repeated in a short row scores near its ceiling
        words += ["filler"] * rng.choice([0, 1, 3, 12])  # a rare word in a long row scores low
        rng.shuffle(words)
        conn.execute("INSERT INTO t (rowid, text) VALUES (?, ?)", (i, " ".join(words) or "empty"))
        conn.execute("INSERT INTO meta VALUES (?, ?, ?)", (i, rng.choice("XY"), rng.choice(TENANTS)))
    conn.commit()  # FTS5 writes its averages record as a transaction ends
    return Db(conn), rare, mid + common


def expected(db: Db, terms: list[str], depth: int, tenant: str) -> list[tuple]:
    """FTS5's ranking of the whole query, every row scored, ties by row id."""
    match = " OR ".join(bm25.phrase(t) for t in terms)
    rows = db.query("SELECT t.rowid, m.type, -bm25(t), m.tenant FROM t JOIN meta m ON m.id = t.rowid "
                    "WHERE t MATCH ? AND m.tenant = ? ORDER BY bm25(t), t.rowid", (match, tenant))
    return rows[:depth]


def counts(db: Db, terms: list[str]) -> list[int]:
    return [db.query("SELECT COUNT(*) FROM t WHERE t MATCH ?", (bm25.phrase(w),))[0][0] for w in terms]


@pytest.mark.parametrize("seed", range(4))
def test_top_rows_equal_fts5_ranking_of_the_whole_query(seed):
    db, rare, broad = table(seed)
    rng = random.Random(100 + seed)
    skipped = 0
    for _ in range(40):
        terms = rng.sample(rare, rng.randint(1, 3)) + rng.sample(broad, rng.randint(1, 3))
        rng.shuffle(terms)
        depth = rng.choice([1, 5, 10, 20])
        tenant = rng.choice(TENANTS)
        n = counts(db, terms)
        order = sorted(range(len(terms)), key=lambda i: (n[i], i))  # the phrase order bm25.top ranks in
        want = expected(db, [terms[i] for i in order], depth, tenant)
        got = bm25.top(db, "t", "meta", terms, n, depth, tenant)
        assert got == want, (terms, depth, tenant)
        split = bm25._split(sorted(n), depth)
        skipped += bool(split) and got[-1][2] > bm25.ceiling(sorted(n)[split:], bm25.averages(db, "t")) * (1 + bm25.SAFETY)
    assert skipped >= 5  # the broad words' rows were really left unread in some of them


def test_averages_read_from_fts5_data_equal_what_fts5_counts():
    db, _, _ = table(7)
    rows, avgdl = bm25.averages(db, "t")
    total = sum(len(text.split()) for (text,) in db.query("SELECT text FROM t"))
    assert rows == 3000 and avgdl == pytest.approx(total / 3000)


def test_an_empty_table_has_no_averages():
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text)")
    assert bm25.averages(Db(conn), "t") is None


def test_the_ceiling_holds_a_word_repeated_alone_and_is_nearly_reached_by_it():
    """A row of one word repeated scores the most that word can give any row: the ceiling
    is above it (so skipping is safe) and barely (so a ceiling set too low is caught)."""
    db, _, _ = table(3)
    db.conn.execute("INSERT INTO t (rowid, text) VALUES (5000, ?)", (" ".join(["corp"] * 200),))
    db.conn.commit()
    [n] = counts(db, ["corp"])
    score = db.query("SELECT -bm25(t) FROM t WHERE t MATCH 'corp' AND rowid = 5000")[0][0]
    ceiling = bm25.ceiling([n], bm25.averages(db, "t"))
    assert 0.97 * ceiling < score <= ceiling


def test_a_writer_that_has_not_committed_gets_the_whole_ranking():
    """Inside a write, FTS5's averages record lacks the rows just written (it is written at
    commit): a ceiling from it would be too low, so a writer's query ranks every row."""
    conn = sqlite3.connect(":memory:", isolation_level=None)
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(text, tokenize = 'porter unicode61 remove_diacritics 2')")
    conn.execute("CREATE TABLE meta (id INTEGER PRIMARY KEY, type TEXT, tenant TEXT)")
    db = Db(conn)

    def add(rowid: int, text: str) -> None:
        conn.execute("INSERT INTO t (rowid, text) VALUES (?, ?)", (rowid, text))
        conn.execute("INSERT INTO meta VALUES (?, 'X', 'a')", (rowid,))

    conn.execute("BEGIN")
    for i in range(1, 1001):  # committed: "corp" in nearly every row, a rare word in long rows
        add(i, "corp pad pad pad")
    for i in range(1001, 1011):
        add(i, "zeta " + " ".join(["pad"] * 40))
    conn.execute("COMMIT")
    conn.execute("BEGIN")
    db.writing = True
    for i in range(1011, 9011):  # written, not committed: "corp" becomes rare, and one short row has it
        add(i, "pad")
    add(9011, "corp")
    terms = ["zeta", "corp"]
    got = bm25.top(db, "t", "meta", terms, counts(db, terms), 1, "a")
    assert got == expected(db, terms, 1, "a") and got[0][0] == 9011
    conn.execute("ROLLBACK")
