"""The top rows of an FTS5 table by its own BM25, without scoring every row a common word
is in.

Ranking ``a OR b OR c`` by ``bm25()`` scores every row any of the words is in: a company
suffix or a relation word is in thousands of rows of a large store, and scoring them is most
of a query's time. BM25 is a sum over the query's phrases, each phrase's part depending only
on that phrase (its document frequency, its count in the row, the row's length), so the
rows in which only the **broad** words occur cannot score more than those words' parts at
their largest (:func:`ceiling`). The rows the **narrow** words are in are scored by FTS5
itself, exactly as the whole query scores them (``(narrow) AND (broad)`` and ``(narrow) NOT
(broad)`` name the same phrases in the same order, so each row's sum is the same float);
when the ``depth``-th best of those beats the ceiling, no other row can enter the top and
the broad words' own rows are never read. Otherwise the whole query is ranked by FTS5. The
answer is the whole query's ranking either way, best score first, ties by row id.
"""
from __future__ import annotations

import math

K1, B = 1.2, 0.75  # FTS5's bm25() defaults
JUMP = 4  # a broad word is in this many times the narrow words' rows, at least
SAFETY = 1e-9  # relative margin for the ceiling: a float sum of the same parts may round up
Ranked = list[tuple]  # (row id, type, score, tenant): the caller's tenant's rows, best first


def top(db, table: str, rows_of: str, terms: list[str], counts: list[int], depth: int, tenant: str) -> Ranked:
    """``tenant``'s ``depth`` best rows of the FTS5 ``table`` for ``terms`` joined by OR,
    given ``counts`` (the rows each term is in, or a lower bound of it); ``rows_of`` is the
    table of (id = the FTS5 rowid, type, tenant) that says whose each row is."""
    order = sorted(range(len(terms)), key=lambda i: (counts[i], i))
    terms, counts = [terms[i] for i in order], [counts[i] for i in order]
    # FTS5 writes its averages record as a transaction ends: a writer's own rows are not in it yet
    split = 0 if db.writing else _split(counts, depth)
    stats = averages(db, table) if split else None
    if split and stats:
        best = _ranked(_partial(db, table, rows_of, terms, split), depth, tenant)
        if len(best) == depth and best[-1][2] > ceiling(counts[split:], stats) * (1 + SAFETY):
            return best
    return _whole(db, table, rows_of, terms, depth, tenant)


def _split(counts: list[int], depth: int) -> int:
    """Where the broad words start (0: nowhere worth it): the first word in more than
    ``JUMP`` times the rows of the narrower words together, once those can fill the top.
    One try only: when the ceiling is not beaten the whole query is ranked, so a try must be
    cheap beside it (few narrow rows, many broad ones)."""
    for split in range(1, len(counts)):
        narrow = sum(counts[:split])
        if narrow >= depth and counts[split] > JUMP * narrow:
            return split
    return 0


def ceiling(counts: list[int], stats: tuple[int, float]) -> float:
    """The most a row can score from words in at least ``counts`` rows each: each word's
    inverse document frequency times the largest its frequency part can be, reached as the
    row grows to that word alone repeated (count and length both grow without end)."""
    rows, avgdl = stats
    most = (K1 + 1) / (1 + K1 * B / avgdl)
    return sum(idf(n, rows) * most for n in counts)


def idf(n: int, rows: int) -> float:
    """FTS5's inverse document frequency, with its floor (a word in most rows still counts)."""
    value = math.log((rows - n + 0.5) / (n + 0.5))
    return value if value > 0 else 1e-6


def averages(db, table: str) -> tuple[int, float] | None:
    """(rows, mean tokens a row) from FTS5's averages record (row 1 of its data table: the
    row count and the token total as SQLite varints); None for an empty table."""
    found = db.query(f"SELECT block FROM {table}_data WHERE id = 1")
    if not found or not found[0][0]:
        return None
    blob = bytes(found[0][0])
    rows, at = varint(blob, 0)
    tokens, _ = varint(blob, at)
    return (rows, tokens / rows) if rows and tokens else None


def varint(buf: bytes, at: int) -> tuple[int, int]:
    """An SQLite varint at ``at``: (value, the offset after it)."""
    value = 0
    for i in range(8):
        byte = buf[at + i]
        value = (value << 7) | (byte & 0x7F)
        if not byte & 0x80:
            return value, at + i + 1
    return (value << 8) | buf[at + 8], at + 9


def phrase(term: str) -> str:
    return '"' + term.replace('"', '""') + '"'


def _partial(db, table: str, rows_of: str, terms: list[str], split: int) -> list[tuple]:
    """(row id, type, whole-query score, tenant) of every row a narrow word (``terms[:split]``)
    is in, best first."""
    narrow = " OR ".join(phrase(t) for t in terms[:split])
    broad = " OR ".join(phrase(t) for t in terms[split:])
    sql = (f"SELECT t.id, t.type, f.s, t.tenant FROM (SELECT rowid AS id, -bm25({table}) AS s FROM {table} "
           f"WHERE {table} MATCH ?) f JOIN {rows_of} t ON t.id = f.id")
    return db.query(f"{sql} UNION ALL {sql} ORDER BY 3 DESC, 1",
                    (f"({narrow}) AND ({broad})", f"({narrow}) NOT ({broad})"))


def _ranked(rows: list[tuple], depth: int, tenant: str) -> Ranked:
    """The first ``depth`` of ``rows`` (best first) that are ``tenant``'s."""
    return [r for r in rows if r[3] == tenant][:depth]


def _whole(db, table: str, rows_of: str, terms: list[str], depth: int, tenant: str) -> Ranked:
    """The whole query ranked by FTS5, read deeper while other tenants' rows fill the top."""
    match = " OR ".join(phrase(t) for t in terms)
    limit = depth
    while True:
        rows = db.query(f"SELECT t.id, t.type, f.s, t.tenant FROM (SELECT rowid AS id, -bm25({table}) AS s "
                        f"FROM {table} WHERE {table} MATCH ? ORDER BY bm25({table}), rowid LIMIT ?) f "
                        f"JOIN {rows_of} t ON t.id = f.id ORDER BY f.s DESC, t.id", (match, limit))
        best = _ranked(rows, depth, tenant)
        if len(best) >= depth or len(rows) < limit:
            return best
        limit *= 4
