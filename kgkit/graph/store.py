"""The corpus graph store: many documents' run folders in one database, kept correct as
documents come, change and go.

Every document's contribution is kept as rows of its own (its nodes, items, evidence,
review entries), so replacing or retracting it touches only those rows; an entity is a
set of *key groups* reference-counted by the documents naming them, so it outlives a
document as long as another still names it. Which groups are one entity is re-solved, per
update, only in the neighbourhood of the groups the update touched, read from the stored
candidate pairs (:mod:`kgkit.graph.resolution`, :mod:`kgkit.graph.links`), which is why an
update costs time in proportion to its document and leaves exactly the graph a fresh load
of the same corpus gives.

Every call is scoped to the store's tenant; every update is one transaction.
"""
from __future__ import annotations

import getpass
import json
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Iterable, Iterator

from kgkit import ids
from kgkit.config.model import CanonConfig, ReviewConfig
from kgkit.errors import InputError, NotFoundError
from kgkit.graph.candidates import BlockIndex
from kgkit.graph.database import Database, connect
from kgkit.graph.links import Neighbourhood
from kgkit.graph.resolution import Assignment, Group, fuzzy_cluster, resolve
from kgkit.graph.runs import Contribution, read_run
from kgkit.graph.snapshot import GraphSnapshot
from kgkit.graph import assemble, index, item_ids, review
from kgkit.formats.scopes import SCOPES

DEFAULT_TENANT = "default"


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def _who(who: str | None) -> str:
    if who:
        return who
    try:
        return getpass.getuser()
    except Exception:  # no user name in this environment (a container without passwd entry)
        return "unknown"


def unnamed_nodes(snap: GraphSnapshot) -> list[dict[str, Any]]:
    """The nodes no item names: no edge, temporal edge, role or argument."""
    used = {end for e in snap.edges + snap.temporal for end in (e["head"], e["tail"])}
    used |= {n for h in snap.hyperedges for ids in h["roles"].values() for n in ids}
    used |= {n for v in snap.events for ids in v["arguments"].values() for n in ids}
    return [n for n in snap.nodes if n["id"] not in used]


def isolated_nodes(snap: GraphSnapshot) -> list[str]:
    """Ids of the entity nodes that hang on nothing: no item names them and they are not of
    ``document`` scope. A node only mentioned is still in the graph (MENTIONED_IN its
    documents), but answers no question about how things relate. A document-scoped node
    (a term a contract defines, the contract itself) is one document's by identity: its
    link to that Document node, with the quote that defines it, is the relation it has —
    "which contracts define Territory, and how" — so it is not isolated
    (docs/graph.md, "Isolated nodes")."""
    return [n["id"] for n in unnamed_nodes(snap) if n.get("scope") != "document"]


@dataclass(frozen=True)
class AddResult:
    doc: str
    status: str  # "added", "replaced" or "unchanged"
    version: int


class GraphStore:
    """One tenant of a graph store. ``url``: a SQLite file path or a ``postgresql://`` URL.

    ``fuzzy_threshold`` and ``legal_suffixes`` are canon's settings (config ``canon.*``);
    ``confidence_threshold`` holds items under it for review (config ``review.*``).
    """

    def __init__(self, url: str | Path, tenant: str = DEFAULT_TENANT, *, fuzzy_threshold: float = CanonConfig.fuzzy_threshold,
                 legal_suffixes: bool = CanonConfig.legal_suffixes,
                 confidence_threshold: float = ReviewConfig.confidence_threshold):
        self.db: Database = connect(str(url), tenant)
        self.tenant = tenant
        self.threshold = fuzzy_threshold
        self.legal_suffixes = legal_suffixes
        self.confidence_threshold = confidence_threshold
        self._upgraded = False  # this tenant's links and rule are known to be current
        self._index = BlockIndex(lambda block: self._q("SELECT node, key FROM blocks WHERE tenant = ? AND block = ?",
                                                       block))
        index.ensure(self)  # the query indexes (kgkit/graph/index.py), kept on every update
        item_ids.ensure(self)  # answer-level item ids (kgkit/graph/item_ids.py), the same way

    @classmethod
    def from_config(cls, config, url: str | None = None, tenant: str | None = None) -> "GraphStore":
        """The store a command means: explicit ``url``/``tenant`` first, then ``graph.*`` in config."""
        return cls(url or config.graph.url, tenant or config.graph.tenant,
                   fuzzy_threshold=config.canon.fuzzy_threshold, legal_suffixes=config.canon.legal_suffixes,
                   confidence_threshold=config.review.confidence_threshold)

    def grant_tenant_role(self, role: str) -> None:
        """PostgreSQL: make login role ``role`` this tenant's (see docs/graph.md, Tenants). Run as the
        store's owner; a session of that role then reads and writes this tenant only, whatever SQL it sends."""
        self.db.grant_tenant_role(role)

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> "GraphStore":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ small helpers
    def _q(self, sql: str, *params: Any) -> list[tuple]:
        return self.db.query(sql, (self.tenant, *params))

    def _x(self, sql: str, *params: Any) -> int:
        return self.db.execute(sql, (self.tenant, *params))

    @contextmanager
    def _writing(self) -> Iterator[None]:
        """A write transaction; the in-memory block index is trusted only if the store is
        still at the version it reflects (no other writer came in between)."""
        try:
            with self.db.write():
                current = self.version()
                if self._index.version != current:
                    self._index.reset(current)
                self._upgrade()
                yield
                item_ids.refresh(self)  # before index.refresh, which clears the notes it reads
                index.refresh(self)
                reached = self.version()
        except BaseException:
            self._index.reset(None)
            self._upgraded = False
            raise
        self._index.version = reached

    def _upgrade(self) -> None:
        """A tenant written by an earlier kgkit (store schema 1) has no links and entities
        solved by the earlier rule; its first update builds the links and re-solves every
        group, once (merges and splits this makes are logged)."""
        if self._upgraded:
            return
        if not self._q("SELECT rule FROM resolution_state WHERE tenant = ?"):
            nodes = self._q("SELECT node, type, key FROM groups WHERE tenant = ?")
            if nodes:
                self._link({n: {"type": t, "key": k} for n, t, k in nodes})
                self._reresolve({n for n, _, _ in nodes})
                self._bump()
            self._x("INSERT INTO resolution_state (tenant, rule) VALUES (?, 1)")
        self._upgraded = True

    def version(self) -> int:
        rows = self._q("SELECT version FROM graph_version WHERE tenant = ?")
        return rows[0][0] if rows else 0

    def _bump(self) -> int:
        version = self.version() + 1
        self._x("INSERT INTO graph_version (tenant, version) VALUES (?, ?) "
                "ON CONFLICT (tenant) DO UPDATE SET version = excluded.version", version)
        return version

    # ------------------------------------------------------------------ updates
    def add(self, run_dirs: Iterable[str | Path]) -> list[AddResult]:
        """Add run folders (``kgkit extract`` output), one transaction each.

        A folder whose document the store holds under that name replaces its earlier
        contribution; one whose content is unchanged changes nothing.
        """
        results = []
        for run_dir in run_dirs:
            contribution = read_run(run_dir, confidence_threshold=self.confidence_threshold,
                                    legal_suffixes=self.legal_suffixes)
            results.append(self.add_contribution(contribution))
        return results

    def add_contribution(self, c: Contribution) -> AddResult:
        with self._writing():
            row = self._q("SELECT contribution FROM documents WHERE tenant = ? AND doc = ?", c.doc)
            if row and row[0][0] == c.fingerprint:
                return AddResult(c.doc, "unchanged", self.version())
            seeds = self._retract(c.doc)
            self._insert(c)
            seeds |= {n["node"] for n in c.nodes}
            for _, etype, akey in c.claims:  # a group it newly claims leaves the fuzzy stage
                seeds |= self._alias_links(etype, akey)
            self._reresolve(seeds)
            return AddResult(c.doc, "replaced" if row else "added", self._bump())

    def remove(self, doc: str) -> int:
        """Retract one document (by name or ``d_`` id); returns the new graph version."""
        with self._writing():
            name = self._doc_name(doc)
            self._reresolve(self._retract(name))
            return self._bump()

    def _doc_name(self, doc: str) -> str:
        # by name, else by d_ id: two index reads (one OR over both columns reads every document)
        rows = (self._q("SELECT doc FROM documents WHERE tenant = ? AND doc = ?", doc)
                or self._q("SELECT doc FROM documents WHERE tenant = ? AND id = ?", doc))
        if not rows:
            known = [r[0] for r in self._q("SELECT doc FROM documents WHERE tenant = ? ORDER BY doc")]
            raise NotFoundError(f"no document {doc!r} in graph tenant {self.tenant!r}",
                                hint=f"documents: {', '.join(known[:10]) or 'none'}")
        return rows[0][0]

    def _retract(self, doc: str) -> set[str]:
        """Delete a document's rows and drop its references; returns the groups to re-solve."""
        named = [r[0] for r in self._q("SELECT node FROM doc_nodes WHERE tenant = ? AND doc = ?", doc)]
        seeds = set(named)
        # no DISTINCT: SQLite would read the tenant's every claim in that order rather than sort the document's
        for etype, akey in set(self._q("SELECT type, alias_key FROM claims WHERE tenant = ? AND doc = ?", doc)):
            seeds |= self._alias_links(etype, akey)
        self.db.many("UPDATE groups SET refs = refs - 1 WHERE tenant = ? AND node = ?",
                     [(self.tenant, node) for node in named])
        for table in ("documents", "doc_nodes", "claims", "items", "evidence", "review"):
            self._x(f"DELETE FROM {table} WHERE tenant = ? AND doc = ?", doc)
        return seeds

    def _insert(self, c: Contribution) -> None:
        t, doc = self.tenant, c.doc
        self._x("INSERT INTO documents (tenant, doc, id, source, sha256, contribution, added, title, pages, node) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", doc, c.doc_id, c.source, c.sha256, c.fingerprint, _now(),
                c.title, c.pages, c.doc_node)
        self.db.many("INSERT INTO doc_nodes (tenant, doc, node, type, key, name, aliases, scope, value) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                     [(t, doc, n["node"], n["type"], n["key"], n["name"], json.dumps(n["aliases"]), n.get("scope", "corpus"),
                       None if n.get("value") is None else ids.canonical_json(n["value"])) for n in c.nodes])
        self.db.many("INSERT INTO claims (tenant, doc, node, type, alias_key) VALUES (?, ?, ?, ?, ?) "
                     "ON CONFLICT DO NOTHING", [(t, doc, *claim) for claim in c.claims])
        # in chunks: one document may hold more nodes than a statement takes parameters (65,535 in PostgreSQL)
        rows = Neighbourhood(self._q).rows(
            "SELECT node, type, key, refs FROM groups WHERE tenant = ? AND node IN ({})", (n["node"] for n in c.nodes))
        # a node no document holds any more (this document's own before an edit retitled it) is free
        # to take its new name; one that another document holds is not
        mine = {n["node"]: (n["type"], n["key"]) for n in c.nodes}
        free = [r[0] for r in rows if r[3] <= 0 and (r[1], r[2]) != mine[r[0]]]
        self.db.many("DELETE FROM groups WHERE tenant = ? AND node = ?", [(t, n) for n in free])
        stored = {r[0]: (r[1], r[2]) for r in rows if r[0] not in free}
        for n in c.nodes:  # an id another document holds under another type or name is not this node
            if n["node"] in stored and stored[n["node"]] != (n["type"], n["key"]):
                raise InputError(f"{c.doc}: nodes.json: node {n['node']} ({n['type']!r} named {n['name'][:40]!r}) "
                                 f"reuses the id of a {stored[n['node']][0]!r} of another document")
        known = set(stored)
        fresh = {n["node"]: n for n in c.nodes if n["node"] not in known}
        self.db.many("UPDATE groups SET refs = refs + 1 WHERE tenant = ? AND node = ?",
                     [(t, n) for n in sorted({n["node"] for n in c.nodes} & known)])
        self.db.many("INSERT INTO groups (tenant, node, type, key, refs, entity, scope) VALUES (?, ?, ?, ?, 1, ?, ?)",
                     [(t, n, g["type"], g["key"], n, g.get("scope", "corpus")) for n, g in fresh.items()])
        fresh = {n: g for n, g in fresh.items() if g.get("scope", "corpus") == "corpus"}  # only these meet other documents'
        self.db.many("INSERT INTO blocks (tenant, node, block, key) VALUES (?, ?, ?, ?) ON CONFLICT DO NOTHING",
                     [(t, n, b, g["key"]) for n, g in fresh.items() for b in self._index.blocks_of(g["type"], g["key"])])
        for n, g in fresh.items():
            self._index.add(n, g["type"], g["key"])
        self._link(fresh)
        self.db.many("INSERT INTO items (tenant, doc, view, item, kind, body, confidence, held, review_key) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
                     [(t, doc, i["view"], i["item"], i["kind"], ids.canonical_json(i["body"]), i["confidence"],
                       i["held"], i["review_key"]) for i in c.items])
        self.db.many("INSERT INTO evidence (tenant, doc, item, view, chunk, page, span_start, span_end, quote) "
                     "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", [(t, doc, *e) for e in c.evidence])
        self.db.many("INSERT INTO review (tenant, doc, key, stage, chunk, item, reason) VALUES (?, ?, ?, ?, ?, ?, ?) "
                     "ON CONFLICT DO NOTHING",
                     [(t, doc, r["key"], r["stage"], r["chunk"], ids.canonical_json(r["item"]), r["reason"])
                      for r in c.review])
        for r in c.review:  # a reject accepted before this document was re-added enters again
            if self._decision(doc, r["key"]) == "accept":
                try:
                    review.accept_reject(self, doc, r)
                except InputError:
                    pass  # its ends name no node of the edited document any more: it stays decided, out


    # ------------------------------------------------------------------ resolution
    def _alias_links(self, etype: str, akey: str) -> set[str]:
        """Groups an alias key links: the group keyed so, and every group claiming it."""
        found = {r[0] for r in self._q("SELECT node FROM groups WHERE tenant = ? AND type = ? AND key = ?", etype, akey)}
        return found | {r[0] for r in self._q("SELECT node FROM claims WHERE tenant = ? AND type = ? AND alias_key = ?",
                                              etype, akey)}

    def _link(self, fresh: dict[str, dict[str, Any]]) -> None:
        """Keep the fuzzy candidate pairs of newly created groups (kgkit.graph.links)."""
        rows = []
        for node, g in fresh.items():
            for other in self._index.similar(g["type"], g["key"], self.threshold):
                if other != node:
                    rows += [(self.tenant, node, other), (self.tenant, other, node)]
        self.db.many("INSERT INTO links (tenant, a, b) VALUES (?, ?, ?) ON CONFLICT DO NOTHING", rows)

    def _closure(self, seeds: set[str], hood: Neighbourhood) -> set[str]:
        """What an update must re-solve: ``seeds`` and their linked groups (whose neighbours
        the seeds changed), closed under membership of one fuzzy cluster or entity, before
        and after, and under alias claims (why that suffices: kgkit.graph.resolution)."""
        found: set[str] = set()
        todo = hood.ball(seeds, 1)
        while todo:
            found |= todo
            hood.read_groups(todo)
            more: set[str] = set()
            live = sorted(n for n in todo if hood.live(n))
            hood.prime(live)
            for node in live:
                more.update(fuzzy_cluster(node, hood.near, hood.order))
            known = [n for n in todo if n in hood.groups]
            entities = {r[0] for r in hood.rows("SELECT entity FROM groups WHERE tenant = ? AND node IN ({})", known)}
            more |= {r[0] for r in hood.rows("SELECT node FROM groups WHERE tenant = ? AND entity IN ({})", entities)}
            for node, etype, akey in hood.rows("SELECT node, type, alias_key FROM claims "
                                               "WHERE tenant = ? AND node IN ({})", known):
                more |= self._alias_links(etype, akey)
            keyed = {hood.groups[n][:2] for n in known}  # who claims these groups' keys as an alias
            more |= {node for node, etype, akey in hood.rows("SELECT node, type, alias_key FROM claims "
                                                             "WHERE tenant = ? AND alias_key IN ({})",
                                                             {k for _, k in keyed})
                     if (etype, akey) in keyed}
            todo = more - found
        return found

    def _reresolve(self, seeds: set[str], who: str = "kgkit") -> None:
        hood = Neighbourhood(self._q)
        closure = self._closure(seeds, hood)
        groups = {n: Group(n, *hood.groups[n]) for n in closure if n in hood.groups}
        dead = sorted(n for n, g in groups.items() if g.refs <= 0)
        for node in dead:
            for table in ("groups", "blocks"):
                self._x(f"DELETE FROM {table} WHERE tenant = ? AND node = ?", node)
            self.db.many("DELETE FROM links WHERE tenant = ? AND a = ? AND b = ?",
                         [(self.tenant, a, b) for other in hood.linked(node) for a, b in ((node, other), (other, node))])
            self._index.remove(node, groups[node].type, groups[node].key)
        live = {n: g for n, g in groups.items() if g.refs > 0}
        if not live:
            return
        claims: dict[str, set[str]] = {}
        for node, akey in hood.rows("SELECT DISTINCT node, alias_key FROM claims WHERE tenant = ? AND node IN ({})",
                                     live):
            claims.setdefault(node, set()).add(akey)
        apart = {frozenset(p) for p in hood.rows("SELECT a, b FROM apart WHERE tenant = ? AND a IN ({})", live)}
        old = {n: Assignment(e, r, s) for n, e, r, s in
               hood.rows("SELECT node, entity, reason, score FROM groups WHERE tenant = ? AND node IN ({})", live)}
        new = resolve(live, claims, apart, self.threshold, near=hood.near, order=hood.order)
        at = _now()
        old_mates: dict[str, set[str]] = {}
        new_mates: dict[str, set[str]] = {}
        for n in live:
            old_mates.setdefault(old[n].entity, set()).add(n)
            new_mates.setdefault(new[n].entity, set()).add(n)
        for node in sorted(new):
            a = new[node]
            if a != old[node]:
                self.db.execute("UPDATE groups SET entity = ?, reason = ?, score = ? WHERE tenant = ? AND node = ?",
                                (a.entity, a.reason, a.score, self.tenant, node))
            if a.entity != node and a.entity not in old_mates[old[node].entity]:
                self._log("merge", a.entity, node, a.reason, a.score, who, at)
            elif old[node].entity != node and len(new_mates[a.entity]) == 1 and len(old_mates[old[node].entity]) > 1:
                self._log("split", old[node].entity, node, None, None, who, at)

    def _log(self, action: str, entity: str, node: str, reason: str | None, score: float | None, who: str,
             at: str) -> None:
        seq = self._q("SELECT COALESCE(MAX(seq), 0) + 1 FROM merge_log WHERE tenant = ?")[0][0]
        self._x("INSERT INTO merge_log (tenant, seq, action, entity, node, reason, score, who, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", seq, action, entity, node, reason, score, who, at)

    # ------------------------------------------------------------------ merges
    def merges(self) -> list[dict[str, Any]]:
        """The merge log, oldest first: every merge, automatic split and unmerge."""
        with self.db.read():
            rows = self._q("SELECT seq, action, entity, node, reason, score, who, at FROM merge_log "
                           "WHERE tenant = ? ORDER BY seq")
            names = self._names()
        return [{"seq": s, "action": a, "entity": e, "entity_name": names.get(e), "node": n,
                 "node_name": names.get(n), "reason": r, "score": sc, "who": w, "at": at}
                for s, a, e, n, r, sc, w, at in rows]

    def entities_of(self, nodes: Iterable[str]) -> dict[str, str]:
        """Document node id -> the entity it resolves to (its key group's), for those of
        ``nodes`` the store knows; read by the key groups' primary key."""
        with self.db.read():
            return dict(index._rows(self, "SELECT node, entity FROM groups WHERE tenant = ? AND node IN ({})", nodes))

    def unmerge(self, node: str, who: str | None = None) -> int:
        """Split key group ``node`` (a node id the merge log names) from its entity, for good:
        it is kept apart from every other member, also after later updates. Returns the version."""
        with self._writing():
            row = self._q("SELECT entity FROM groups WHERE tenant = ? AND node = ?", node)
            if not row:
                raise NotFoundError(f"no node {node!r} in graph tenant {self.tenant!r}",
                                    hint="`kgkit graph merges GRAPH` lists merged node ids")
            mates = sorted(r[0] for r in self._q("SELECT node FROM groups WHERE tenant = ? AND entity = ?", row[0][0])
                           if r[0] != node)
            if not mates:
                raise NotFoundError(f"node {node!r} is not merged with anything", hint="`kgkit graph merges GRAPH`")
            self.db.many("INSERT INTO apart (tenant, a, b) VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
                         [(self.tenant, a, b) for m in mates for a, b in ((node, m), (m, node))])
            self._log("unmerge", row[0][0], node, None, None, _who(who), _now())
            self._reresolve({node, *mates}, who=_who(who))
            return self._bump()

    # ------------------------------------------------------------------ reads
    def _names(self) -> dict[str, str]:
        """Display name of every group: its most frequent name across documents, longest on a tie."""
        counts: dict[str, dict[str, int]] = {}
        for node, name in self._q("SELECT node, name FROM doc_nodes WHERE tenant = ?"):
            counts.setdefault(node, {}).setdefault(name, 0)
            counts[node][name] += 1
        return {n: min(c, key=lambda s: (-c[s], -len(s), s)) for n, c in counts.items()}

    def stats(self) -> dict[str, Any]:
        """Counts of the tenant's graph (what a snapshot would hold) and its review queue."""
        snap = self.snapshot()
        with self.db.read():
            queue = review.queue(self)
        isolated = isolated_nodes(snap)
        unnamed = unnamed_nodes(snap)
        scopes = {scope: sum(n.get("scope") == scope for n in snap.nodes) for scope in SCOPES}
        return {"tenant": self.tenant, "version": snap.version, "store": self.db.location,
                "documents": len(snap.documents), "nodes": len(snap.nodes),
                **{f"{scope}_nodes": count for scope, count in scopes.items()},
                "edges": len(snap.edges),
                "hyperedges": len(snap.hyperedges), "events": len(snap.events), "temporal": len(snap.temporal),
                "evidence": len(snap.evidence), "merged_nodes": sum(1 for n in snap.nodes if len(n["documents"]) > 1),
                "isolated_nodes": len(isolated),
                "isolated_share": round(len(isolated) / len(snap.nodes), 4) if snap.nodes else 0.0,
                "unnamed_document_nodes": sum(1 for n in unnamed if n.get("scope") == "document"),
                "review_pending": sum(1 for r in queue if r["decision"] is None)}

    def snapshot(self) -> GraphSnapshot:
        """The tenant's graph as plain data (kgkit.graph.snapshot), read in one transaction."""
        with self.db.read():
            return assemble.build_snapshot(self)

    def _decision(self, doc: str, key: str) -> str | None:
        rows = self._q("SELECT decision FROM decisions WHERE tenant = ? AND doc = ? AND key = ?", doc, key)
        return rows[0][0] if rows else None

    # ------------------------------------------------------------------ review gate
    def review_queue(self, pending_only: bool = False) -> list[dict[str, Any]]:
        """The review queue: held items and rejected answers, with any decision taken."""
        with self.db.read():
            entries = review.queue(self)
        return [e for e in entries if e["decision"] is None] if pending_only else entries

    def review_entry(self, entry_id: str) -> dict[str, Any]:
        with self.db.read():
            return review.find(self, entry_id)

    def decide(self, entry_id: str, decision: str, who: str | None = None) -> int:
        """Accept or reject one review entry (recorded with who and when); returns the version."""
        with self._writing():
            review.decide(self, entry_id, decision, _who(who), _now())
            return self._bump()
