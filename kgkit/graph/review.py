"""The review gate: what extraction held back waits here, outside the graph, for a person.

Two kinds of entry: *held* items (a view kept them but their evidence did not verify or
their confidence was under the threshold) and *rejected* answers from review.jsonl (an
unknown relation, an end that names no node, ...). A decision is stored apart from the
document's rows, keyed by the document's name and the entry's content-derived key, so it
survives re-adding the document: an accepted item enters the graph again with its
evidence, a rejected one stays out. Of rejected answers only relations whose two ends
name nodes of their document have a graph form; the rest can only be rejected.
"""
from __future__ import annotations

import json
from typing import Any

from kgkit import ids
from kgkit.errors import InputError, NotFoundError
from kgkit.text.name_keys import canonical_key

DECISIONS = ("accept", "reject")
ACCEPTED_VIEW = "review"  # the view an accepted reject is filed under, so its provenance shows

_HELD = ("SELECT i.doc, i.view, i.item, i.body, i.held, i.review_key, d.decision, d.who, d.at FROM items i "
         "LEFT JOIN decisions d ON d.tenant = i.tenant AND d.doc = i.doc AND d.key = i.review_key "
         "WHERE i.tenant = ? AND i.held IS NOT NULL")
_REJECTED = ("SELECT r.doc, r.key, r.stage, r.chunk, r.item, r.reason, d.decision, d.who, d.at FROM review r "
             "LEFT JOIN decisions d ON d.tenant = r.tenant AND d.doc = r.doc AND d.key = r.key WHERE r.tenant = ?")


def review_id(doc: str, key: str) -> str:
    return ids.content_id("q", [doc, key])


def queue(store) -> list[dict[str, Any]]:
    """Every review entry of the tenant, decided or not, sorted by document and key."""
    return [build(store, row) for _, _, build, row in _rows(store)]


def find(store, entry_id: str) -> dict[str, Any]:
    """The entry ``entry_id`` names (its first in :func:`queue`'s order), built alone: an id is a
    hash of its document and key, so the queue's rows are read, but only one entry's evidence."""
    for doc, key, build, row in _rows(store):
        if review_id(doc, key) == entry_id:
            return build(store, row)
    raise NotFoundError(f"no review entry {entry_id!r} in graph tenant {store.tenant!r}",
                        hint="`kgkit review list GRAPH` lists them")


def _rows(store) -> list[tuple[str, str, Any, tuple]]:
    """(document, key, the entry's builder, its row) of every entry, held items first, sorted by
    document and key (a stable sort: an id two entries share names the first)."""
    return sorted([(r[0], r[5], _held, r) for r in store._q(_HELD)]
                  + [(r[0], r[1], _rejected, r) for r in store._q(_REJECTED)], key=lambda found: found[:2])


def _held(store, row: tuple) -> dict[str, Any]:
    doc, view, item, body, held, key, decision, who, at = row
    evidence = store._q("SELECT chunk, page, span_start, span_end, quote FROM evidence "
                        "WHERE tenant = ? AND doc = ? AND view = ? AND item = ?", doc, view, item)
    return {"id": review_id(doc, key), "document": doc, "key": key, "kind": "held", "view": view,
            "reason": held, "item": {"id": item, **json.loads(body)},
            "evidence": [{"chunk": c, "page": p, "span": [s, e] if s is not None else None, "quote": qt}
                         for c, p, s, e, qt in evidence],
            "decision": decision, "who": who, "at": at, "acceptable": True}


def _rejected(store, row: tuple) -> dict[str, Any]:
    doc, key, stage, chunk, item, reason, decision, who, at = row
    raw = json.loads(item)
    return {"id": review_id(doc, key), "document": doc, "key": key, "kind": "rejected", "view": stage,
            "reason": reason, "item": raw, "evidence": [{"chunk": chunk}], "decision": decision, "who": who,
            "at": at, "acceptable": _graph_form(store, doc, stage, raw) is not None}


def _relation_edge(store, doc: str, raw: Any) -> tuple[str, str, str] | None:
    """(head id, relation, tail id) of a rejected relation whose ends each name one node of ``doc``."""
    if not isinstance(raw, dict) or not all(isinstance(raw.get(k), str) for k in ("head", "relation", "tail")):
        return None
    by_key: dict[str, set[str]] = {}
    for node, key, aliases in store._q("SELECT node, key, aliases FROM doc_nodes WHERE tenant = ? AND doc = ?", doc):
        for k in {key, *(canonical_key(a, legal_suffixes=store.legal_suffixes) for a in json.loads(aliases))}:
            by_key.setdefault(k, set()).add(node)
    ends = [by_key.get(canonical_key(raw[end], legal_suffixes=store.legal_suffixes), set()) for end in ("head", "tail")]
    if any(len(found) != 1 for found in ends):
        return None
    return next(iter(ends[0])), raw["relation"], next(iter(ends[1]))


def _graph_form(store, doc: str, stage: str | None, raw: Any) -> tuple[str, str, str] | None:
    """The edge a rejected answer would become if accepted; None when it has none (only a
    relation whose ends each name one node of its document can enter the graph)."""
    return _relation_edge(store, doc, raw) if stage == "relations" else None


def accept_reject(store, doc: str, entry: dict[str, Any]) -> None:
    """Put an accepted rejected relation into the graph, filed under view ``review``."""
    edge = _graph_form(store, doc, entry.get("stage"), entry["item"])
    if edge is None:
        raise InputError(f"review entry {review_id(doc, entry['key'])} ({entry['reason']}) has no graph form: "
                         "only a relation whose ends name nodes of its document can enter the graph",
                         hint="reject it instead, or fix the extraction and re-add the run")
    head, relation, tail = edge
    item = ids.edge_id(head, relation, tail)
    raw = entry["item"]
    store._x("INSERT INTO items (tenant, doc, view, item, kind, body, confidence, held, review_key) "
             "VALUES (?, ?, ?, ?, 'edge', ?, ?, NULL, ?) ON CONFLICT DO NOTHING", doc, ACCEPTED_VIEW, item,
             ids.canonical_json({"head": head, "relation": relation, "tail": tail}), raw.get("confidence"),
             entry["key"])
    store._x("INSERT INTO evidence (tenant, doc, item, view, chunk, page, span_start, span_end, quote) "
             "VALUES (?, ?, ?, ?, ?, NULL, NULL, NULL, ?)", doc, item, ACCEPTED_VIEW, entry.get("chunk"),
             raw.get("evidence") if isinstance(raw.get("evidence"), str) else None)


def decide(store, entry_id: str, decision: str, who: str, at: str) -> None:
    """Record ``decision`` (accept or reject) on one entry; call inside a write transaction."""
    if decision not in DECISIONS:
        raise InputError(f"decision must be one of {', '.join(DECISIONS)}, not {decision!r}")
    entry = find(store, entry_id)
    doc, key = entry["document"], entry["key"]
    if entry["kind"] == "rejected":
        for (item,) in store._q("SELECT item FROM items WHERE tenant = ? AND doc = ? AND view = ? AND review_key = ?",
                                doc, ACCEPTED_VIEW, key):  # an earlier accept of it is undone first
            for table in ("items", "evidence"):
                store._x(f"DELETE FROM {table} WHERE tenant = ? AND doc = ? AND view = ? AND item = ?",
                         doc, ACCEPTED_VIEW, item)
        if decision == "accept":
            accept_reject(store, doc, {"key": key, "stage": entry["view"], "chunk": entry["evidence"][0]["chunk"],
                                       "item": entry["item"], "reason": entry["reason"]})
    store._x("INSERT INTO decisions (tenant, doc, key, decision, who, at) VALUES (?, ?, ?, ?, ?, ?) "
             "ON CONFLICT (tenant, doc, key) DO UPDATE SET decision = excluded.decision, who = excluded.who, "
             "at = excluded.at", doc, key, decision, who, at)
