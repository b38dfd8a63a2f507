"""Full-text search over the index's texts (entity names with aliases, evidence quotes):
SQLite FTS5 ranked by its BM25 (a table per kind of text), PostgreSQL ``tsvector`` ranked
by ``ts_rank_cd``.

A query is its words joined by OR (a question need not contain every word of what it is
after), less a short list of English function words that would match nearly every row and,
on SQLite, less the words a large store holds in very many rows when rarer ones remain
(:func:`_informative`).
The two stores rank alike in kind but not to the digit: BM25 and cover density differ,
and FTS5's statistics span every tenant of the file (a tenant sees only its rows).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

from kgkit.graph.index import TEXT_KINDS
from kgkit.graph.links import CHUNK
from kgkit.query import bm25

STOP = frozenset(
    "a an and are as at be but by can do for from has have how i in into is it its me my of on or our please "
    "show so that the their then there these this to was what when where which who why will with would you your "
    "all any also about after before".split())
_WORD = re.compile(r"\w+", re.UNICODE)
COMMON_SHARE = 0.02  # a term in more of the rows than this share is left out of a ranking (SQLite) ...
COMMON_ROWS = 1000  # ... once it is in at least this many (a small store keeps every term)


@dataclass(frozen=True)
class TextHit:
    ref: str  # entity id (kind entity) or stored item id (kind quote)
    kind: str
    type: str  # entity type; for a quote KIND:RELATION of its item, or "mention"
    doc: str
    view: str
    text: str
    score: float  # higher is better


def words(text: str) -> list[str]:
    seen: list[str] = []
    for w in _WORD.findall(text.lower()):
        for part in w.split("_"):
            if part and part not in STOP and part not in seen:
                seen.append(part)
    return seen


def search(reader, query: str, *, kind: str | None = None, depth: int = 100) -> list[tuple[str, TextHit]]:
    """(ref, hit) best first, at most ``depth``."""
    return [(h.ref, h) for h in hits(reader, query, kind=kind, depth=depth)]


def hits(reader, query: str, *, kind: str | None = None, depth: int = 100,
         keep: Callable[[str, str], bool] | None = None) -> list[TextHit]:
    """Full-text hits of ``query`` in the reader's tenant, best first per kind, at most
    ``depth`` per kind (``kind`` None: entity names, then quotes). ``keep(kind, type)``, asked
    of each of those hits in that order, says which the caller wants: on SQLite the others'
    texts are never read (a search reads thousands of hits to fill lists of a hundred)."""
    terms = words(query)
    if not terms:
        return []
    kinds = [kind] if kind else TEXT_KINDS
    if reader.store.db.kind == "sqlite":
        return [h for k in kinds for h in _fts5(reader, k, terms, depth, keep)]
    out = []
    for k in kinds:
        rows = reader.store.db.query(
            "SELECT t.ref, t.kind, t.type, t.doc, t.view, t.text, ts_rank_cd(t.tsv, q, 1) AS s "
            "FROM qx_text t, websearch_to_tsquery('english', ?) q WHERE t.tsv @@ q AND t.tenant = ? AND t.kind = ? "
            "ORDER BY s DESC, t.id LIMIT ?", (" or ".join(terms), reader.tenant, k, depth))
        out += [_hit(r) for r in rows if keep is None or keep(r[1], r[2])]
    return out


def _hit(row: tuple) -> TextHit:
    """A hit from a row of (ref, kind, type, doc, view, text, score, ...)."""
    return TextHit(row[0], row[1], row[2], row[3], row[4], row[5], float(row[6]))


def _fts5(reader, kind: str, terms: list[str], depth: int, keep: Callable[[str, str], bool] | None) -> list[TextHit]:
    """The kind's FTS5 table ranked by BM25 (:func:`kgkit.query.bm25.top`: rows of other
    tenants of the file are passed over); the ranking reads each row's type and score only,
    the texts of the rows ``keep`` wants come after, by id."""
    db = reader.store.db
    chosen, counts = _informative(reader, kind, terms)
    ranked = bm25.top(db, f"qx_fts_{kind}", "qx_text", chosen, counts, depth, reader.tenant)
    wanted = [r for r in ranked if keep is None or keep(kind, r[1])]
    texts: dict[int, tuple] = {}
    for i in range(0, len(wanted), CHUNK):
        part = [r[0] for r in wanted[i:i + CHUNK]]
        texts.update((r[0], r[1:]) for r in db.query(
            f"SELECT id, ref, doc, view, text FROM qx_text WHERE id IN ({','.join('?' * len(part))})", part))
    return [TextHit(ref, kind, type_, doc, view, text, float(s))
            for id_, type_, s, _ in wanted for ref, doc, view, text in [texts[id_]]]


def _informative(reader, kind: str, terms: list[str]) -> tuple[list[str], list[int]]:
    """``terms`` less those in more than ``COMMON_SHARE`` of the full-text rows (and at least
    ``COMMON_ROWS``), when a rarer one remains, with the rows each kept term is in (counted
    up to the threshold: a lower bound past it). BM25 weighs such a term at nearly nothing,
    but ranking by it scores every row it is in (a company suffix or a relation word is in a
    hundred thousand quotes of a large store); each term's count is probed only up to the
    threshold, so a rare term costs nothing to check."""
    if len(terms) < 2:
        return terms, [0] * len(terms)  # one word: nothing to leave out, nothing to split
    db = reader.store.db
    [(top,)] = db.query("SELECT COALESCE(MAX(id), 0) FROM qx_text")  # row ids only grow: at least the rows
    limit = max(COMMON_ROWS, int(COMMON_SHARE * top))
    counts = [db.query(f"SELECT COUNT(*) FROM (SELECT 1 FROM qx_fts_{kind} WHERE qx_fts_{kind} "
                       "MATCH ? LIMIT ?) AS m", (bm25.phrase(t), limit + 1))[0][0] for t in terms]
    rare = [(t, n) for t, n in zip(terms, counts) if n <= limit]
    kept = rare or list(zip(terms, counts))
    return [t for t, _ in kept], [n for _, n in kept]
