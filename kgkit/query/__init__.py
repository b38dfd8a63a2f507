"""Asking a corpus graph: deterministic operators and typed retrieval, over a GraphStore.

    from kgkit.graph import GraphStore
    from kgkit.query import Query
    with GraphStore("corpus.sqlite", tenant="team-a") as graph:
        q = Query(graph)                                   # limits from QueryConfig()
        q.find("Northwind")                                # O1
        q.neighbours(["Northwind Traders"], hops=2)        # O2
        q.match('Agreement -GOVERNING_LAW-> Jurisdiction{name: "New York"}')   # O3
        q.anchors("attention")                             # O4
        q.gaps()                                           # O5
        q.search("who supplies the goods")                 # typed retrieval
        answer.to_json()                                   # the published ``query`` schema

Every call reads one tenant at one graph version in one read transaction, and its
:class:`~kgkit.query.results.Answer` says which, with the limits applied and what they
cut. Seeds and ends may be given by node id or by name (the best :meth:`Query.find` hit).
See docs/query.md.
"""
from __future__ import annotations

from contextlib import contextmanager
from typing import Any, Iterator

from kgkit.config.model import QueryConfig
from kgkit.query import anchors as _anchors
from kgkit.query import find as _find
from kgkit.query import gaps as _gaps
from kgkit.query import match as _match
from kgkit.query import novelty as _novelty
from kgkit.formats import query_pattern as _pattern
from kgkit.query import search as _search
from kgkit.query import traverse
from kgkit.query.reader import Budget, Reader
from kgkit.query.results import Answer

__all__ = ["Answer", "Query"]


class Query:
    """The operators over one store, with ``config`` (``query.*``) as their limits."""

    def __init__(self, store, config: QueryConfig | None = None, *, rubric=None, embedder=None):
        self.store = store
        self.config = config or QueryConfig()
        self.rubric = rubric  # kgkit.query.rubric.Rubric: novelty's model grading, when a model is configured
        self.embedder = embedder  # kgkit.query.embeddings.Embedder: search's dense list, when configured

    @classmethod
    def from_config(cls, store, config) -> "Query":
        """The operators as a whole :class:`kgkit.config.model.Config` sets them up: ``query.*``
        limits, novelty's rubric when ``llm.model`` is set, search's embedding list when
        ``embeddings.model`` is set (kgkit/query/embeddings.py)."""
        from kgkit.query.embeddings import Embedder
        from kgkit.query.rubric import Rubric

        return cls(store, config.query, rubric=Rubric(config) if config.llm.model else None,
                   embedder=Embedder(config.embeddings) if config.embeddings.model else None)

    @contextmanager
    def _reading(self) -> Iterator[Reader]:
        with self.store.db.read():
            yield Reader(self.store, Budget(self.config.timeout), self.config.documents)

    @staticmethod
    def _done(r: Reader, answer: Answer) -> Answer:
        """The answer, with the documents its nodes name beyond ``query.documents`` reported cut."""
        for node in answer.nodes:
            answer.cut("documents", r.documents_cut.get(node.id, 0), at=node.id)
        return answer

    def _limits(self, hops, fanout, limit, min_confidence, relations, types) -> traverse.Limits:
        hops = self.config.hops if hops is None else hops
        traverse.check_hops(hops, self.config.max_hops)
        return traverse.Limits(hops, fanout or self.config.fanout, limit or self.config.limit,
                               self.config.min_confidence if min_confidence is None else min_confidence,
                               list(relations or []), list(types or []), self.config.scan)

    @staticmethod
    def _seed(reader: Reader, ref: str) -> str | None:
        """A node id, or the best node a name finds."""
        found = reader.resolve(ref)
        if found:
            return found
        exact = _find.exact(reader, ref)  # a name's own key scores 1.0, which nothing else reaches
        if exact:
            return min(exact, key=lambda e: (-exact[e]["degree"], e))
        best = _find.candidates(reader, ref, None)
        if not best:
            return None
        info = reader.entities(best)
        return min(info, key=lambda e: (-best[e][0], -info[e]["degree"], e))

    def _seeds(self, reader: Reader, refs: list[str], answer_of) -> tuple[list[str], Answer | None]:
        seeds: list[str] = []
        missing: list[str] = []
        for ref in refs:
            s = self._seed(reader, ref)
            (seeds if s else missing).append(s or ref)
        if missing and not seeds:
            empty = answer_of()
            empty.note = f"not in the graph: {', '.join(repr(m) for m in missing)}"
            return [], empty
        return list(dict.fromkeys(seeds)), None

    # ---------------------------------------------------------------- O1
    def find(self, mention: str, *, types: list[str] | None = None, limit: int | None = None) -> Answer:
        with self._reading() as r:
            return self._done(r, _find.find(r, mention, types=types, limit=limit or min(_find.LIMIT, self.config.limit)))

    # ---------------------------------------------------------------- O2
    def neighbours(self, seeds: list[str], *, hops: int | None = None, fanout: int | None = None,
                   limit: int | None = None, min_confidence: float | None = None,
                   relations: list[str] | None = None, types: list[str] | None = None) -> Answer:
        lim = self._limits(hops, fanout, limit, min_confidence, relations, types)
        with self._reading() as r:
            self._vocabulary(r, relations, types)
            ids, empty = self._seeds(r, list(seeds), lambda: Answer("neighbours", r.tenant, r.version,
                                                                  {"seeds": list(seeds)}, lim.as_dict()))
            return empty or self._done(r, traverse.neighbours(r, ids, lim))

    def lineage(self, seed: str, *, direction: str = "forward", hops: int | None = None, fanout: int | None = None,
                limit: int | None = None, min_confidence: float | None = None,
                relations: list[str] | None = None, types: list[str] | None = None) -> Answer:
        lim = self._limits(hops, fanout, limit, min_confidence, relations, types)
        with self._reading() as r:
            self._vocabulary(r, relations, types)
            ids, empty = self._seeds(r, [seed], lambda: Answer("lineage", r.tenant, r.version, {"seed": seed},
                                                               lim.as_dict()))
            return empty or self._done(r, traverse.lineage(r, ids[0], lim, direction))

    def path(self, a: str, b: str, *, hops: int | None = None, fanout: int | None = None, limit: int | None = None,
             min_confidence: float | None = None, relations: list[str] | None = None,
             types: list[str] | None = None) -> Answer:
        lim = self._limits(hops, fanout, limit, min_confidence, relations, types)
        with self._reading() as r:
            self._vocabulary(r, relations, types)
            start, end = self._seed(r, a), self._seed(r, b)
            if start is None or end is None:
                answer = Answer("path", r.tenant, r.version, {"from": a, "to": b}, lim.as_dict())
                answer.note = "not in the graph: " + ", ".join(
                    repr(x) for x, e in zip((a, b), (start, end)) if e is None)
                return answer
            return self._done(r, traverse.path(r, start, end, lim))

    # ---------------------------------------------------------------- O3
    def match(self, pattern: str, *, params: dict[str, str] | None = None, limit: int | None = None,
              min_confidence: float | None = None) -> Answer:
        parsed = _pattern.bind(_pattern.parse(pattern), params or {})
        with self._reading() as r:
            return self._done(r, _match.match(
                r, parsed, limit=limit or self.config.limit,
                min_confidence=self.config.min_confidence if min_confidence is None else min_confidence,
                query={"pattern": pattern, "params": dict(params or {})}))

    def named(self, query, params: dict[str, Any], *, limit: int | None = None) -> Answer:
        """Run a named query (kgkit.query.named.NamedQuery) with its parameters checked."""
        bound = query.bind(params)
        answer = self.match(query.pattern, params=bound, limit=limit)
        answer.query["named"] = query.name
        if query.returns == "documents":
            names = {i: d for d, i in self._doc_names(answer).items()}
            answer.report["answer"] = sorted({names.get(d, d) for row in answer.rows for d in row.documents})
        elif query.returns == "nodes":
            by_id = {n.id: n.name for n in answer.nodes}
            answer.report["answer"] = sorted({by_id[row.nodes[query.select]] for row in answer.rows})
        return answer

    def _doc_names(self, answer: Answer) -> dict[str, str]:
        with self.store.db.read():
            return dict(self.store._q("SELECT doc, id FROM documents WHERE tenant = ?"))

    # ---------------------------------------------------------------- O4-O6
    def anchors(self, about: str | None = None, *, kind: str | None = None, document: str | None = None,
                limit: int | None = None) -> Answer:
        """Anchors (figures, tables, equations, paragraphs) about ``about``, or all of them,
        each with its payload in ``report["anchors"]``."""
        with self._reading() as r:
            return _anchors.anchors(r, about=about, kind=kind, document=document, limit=limit or self.config.limit)

    def gaps(self, *, limit: int | None = None, sparse: int = 0) -> Answer:
        with self._reading() as r:
            return self._done(r, _gaps.gaps(r, limit=limit or self.config.limit, sparse=sparse))

    def novelty(self, text: str, *, k: int = 5, rubric=None) -> Answer:
        """O6; ``rubric`` (a :class:`kgkit.query.rubric.Rubric`, when a model is configured)
        grades the text on problem, mechanism, training and target domain as well."""
        with self._reading() as r:
            return self._done(r, _novelty.novelty(r, text, k=k, rubric=rubric or self.rubric))

    # ---------------------------------------------------------------- typed retrieval
    def search(self, text: str, *, limit: int | None = None, reduce: str = "document", owner_score: str | None = None,
               intent: str = "general", types: list[str] | None = None,
               weights: dict[str, float] | None = None, k: int | None = None) -> Answer:
        s = self.config.search
        fusion = _search.Fusion(k or s.k, dict(s.weights if weights is None else weights), s.depth, intent,
                                owner_score or s.owner_score)
        with self._reading() as r:
            return _search.search(r, text, fusion=fusion, limit=limit or self.config.limit, reduce=reduce, types=types,
                                  embedder=self.embedder)

    @staticmethod
    def _vocabulary(r: Reader, relations, types) -> None:
        r.check("relation", relations, r.relations())
        r.check("type", types, r.types())
