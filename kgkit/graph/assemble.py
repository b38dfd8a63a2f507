"""A store's rows (of a :class:`kgkit.graph.GraphStore`) assembled into a
:class:`GraphSnapshot`: one node per entity, items re-pointed at entities and merged
across documents.

Items are stored as each run folder wrote them, pointing at that document's node ids; a
snapshot substitutes each node id with its entity's and recomputes the item's id the way
the engine computes it (kgkit/ids.py), so the same statement read in two documents about
one entity is one item with two documents' evidence. Held items appear only once a
reviewer has accepted them.
"""
from __future__ import annotations

import json
from typing import Any, Callable

from kgkit import ids
from kgkit.graph.snapshot import GraphSnapshot

VISIBLE_ITEMS = (
    "SELECT i.doc, i.view, i.item, i.kind, i.body, i.confidence FROM items i "
    "LEFT JOIN decisions d ON d.tenant = i.tenant AND d.doc = i.doc AND d.key = i.review_key "
    "WHERE i.tenant = ? AND (i.held IS NULL OR d.decision = 'accept')"
)


def _substitute(value: Any, canon: Callable[[str], str]) -> Any:
    """A role or argument filler ({"node"} / {"literal", ...} / a list) with node ids re-pointed."""
    if isinstance(value, list):
        return [_substitute(v, canon) for v in value]
    if isinstance(value, dict) and "node" in value:
        return {**value, "node": canon(value["node"])}
    return value


def item_nodes(body: dict[str, Any]) -> list[str]:
    """The document node ids a stored item's body names: its ends, its roles' or arguments' fillers."""
    out = [body[k] for k in ("head", "tail") if isinstance(body.get(k), str)]
    for fillers in (body.get("roles"), body.get("arguments")):
        for value in (fillers or {}).values():
            out += _node_ids(value)
    return out


def _node_ids(value: Any) -> list[str]:
    if isinstance(value, list):
        return [n for v in value for n in _node_ids(v)]
    if isinstance(value, dict) and isinstance(value.get("node"), str):
        return [value["node"]]
    return []


def _item(kind: str, body: dict[str, Any], canon: Callable[[str], str]) -> dict[str, Any]:
    """The snapshot shape of one stored item, with its entity-level id."""
    if kind in ("edge", "temporal"):
        head, tail = canon(body["head"]), canon(body["tail"])
        if kind == "edge":
            edge = {"id": ids.edge_id(head, body["relation"], tail), "head": head, "relation": body["relation"],
                    "tail": tail}
            if body.get("properties"):
                edge["properties"] = body["properties"]
            return edge
        qualifiers = body.get("qualifiers") or {}
        return {"id": ids.content_id("t", {"head": head, "relation": body["relation"], "tail": tail,
                                           "qualifiers": {k: v.get("text") for k, v in qualifiers.items()}}),
                "head": head, "relation": body["relation"], "tail": tail, "qualifiers": qualifiers}
    if kind == "event":
        arguments = {role: _substitute(v, canon) for role, v in body["arguments"].items()}
        time = body.get("time")
        return {"id": ids.content_id("v", {"type": body["type"], "trigger": body["trigger"], "arguments": arguments,
                                           "time": time.get("text") if time else None}),
                "type": body["type"], "trigger": body["trigger"],
                "arguments": {role: _node_ids(v) for role, v in arguments.items()}, "time": time}
    roles = {role: _substitute(v, canon) for role, v in body["roles"].items()}
    content = {"relation": body["relation"], "roles": roles}
    if "template" in body:
        content = {"template": body["template"], **content}
    return {"id": ids.content_id("h", content), "relation": body["relation"],
            "roles": {role: _node_ids(v) for role, v in roles.items()}}


def merge_properties(kept: dict[str, Any] | None, other: dict[str, Any] | None) -> dict[str, Any] | None:
    """The properties one edge shows when several stored rows state it with their own (a
    ``CITES`` edge's intent and strength): the row with the highest ``strength``, ties to the
    smaller canonical JSON, so the answer never depends on the order rows are read in."""
    if not other:
        return kept
    if not kept:
        return other

    def rank(props: dict[str, Any]) -> tuple:
        strength = props.get("strength")
        return (-(strength if isinstance(strength, (int, float)) else 0), ids.canonical_json(props))
    return min(kept, other, key=rank)


def build_snapshot(store) -> GraphSnapshot:
    """Assemble the tenant's graph; call inside a read transaction."""
    q = store._q
    entity_of: dict[str, str] = {}
    type_of: dict[str, str] = {}
    for node, etype, entity in q("SELECT node, type, entity FROM groups WHERE tenant = ?"):
        entity_of[node], type_of[node] = entity, etype
    canon = lambda n: entity_of.get(n, n)  # noqa: E731
    documents = sorted(({"id": i, "name": d, "source": s, "sha256": h, "title": ti, "pages": p, "added": a,
                         "node": canon(n) if n else None}
                        for d, i, s, h, ti, p, a, n in q("SELECT doc, id, source, sha256, title, pages, added, node "
                                                         "FROM documents WHERE tenant = ?")),
                       key=lambda d: (d["id"], d["name"]))
    doc_id = {d["name"]: d["id"] for d in documents}
    nodes = _nodes(store, canon, type_of, doc_id)
    kinds, where = _items(q, canon, doc_id)
    _drop_unnamed_values(nodes, kinds)
    evidence = _evidence(q, canon, doc_id, where, entity_of, nodes)
    return GraphSnapshot(
        tenant=store.tenant, version=store.version(),
        nodes=[nodes[k] for k in sorted(nodes)],
        edges=[kinds["edge"][k] for k in sorted(kinds["edge"])],
        hyperedges=[kinds["hyperedge"][k] for k in sorted(kinds["hyperedge"])],
        events=[kinds["event"][k] for k in sorted(kinds["event"])],
        temporal=[kinds["temporal"][k] for k in sorted(kinds["temporal"])],
        evidence=evidence,
        documents=documents,
    )


def _nodes(store, canon, type_of: dict[str, str], doc_id: dict[str, str]) -> dict[str, dict[str, Any]]:
    """The resolved entities, each with the names, documents and value of its document nodes."""
    names = store._names()
    nodes: dict[str, dict[str, Any]] = {}
    for doc, node, name, aliases, scope, value in store._q("SELECT doc, node, name, aliases, scope, value "
                                                            "FROM doc_nodes WHERE tenant = ?"):
        entity = canon(node)
        entry = nodes.setdefault(entity, {"id": entity, "type": type_of.get(entity, type_of.get(node)),
                                          "name": names.get(entity, name), "aliases": set(), "documents": set(),
                                          "scope": scope})
        entry["aliases"].update([name, *json.loads(aliases)])
        entry["documents"].add(doc_id[doc])
        if value is not None:
            entry["value"] = json.loads(value)
    for entry in nodes.values():
        entry["aliases"] = sorted(entry["aliases"] - {entry["name"]})
        entry["documents"] = sorted(entry["documents"])
    return nodes


_Kinds = dict[str, dict[str, dict[str, Any]]]  # kind -> snapshot id -> item


def _items(q, canon, doc_id: dict[str, str]) -> tuple[_Kinds, dict[tuple[str, str, str], str]]:
    """The visible items by kind and snapshot id (one item stated by several documents or views
    is one entry); and where each stored item went: (doc, view, stored id) -> snapshot id."""
    kinds: _Kinds = {"edge": {}, "hyperedge": {}, "event": {}, "temporal": {}}
    where: dict[tuple[str, str, str], str] = {}
    for doc, view, item, kind, body, confidence in q(VISIBLE_ITEMS):
        shaped = _item(kind, json.loads(body), canon)
        entry = kinds[kind].setdefault(shaped["id"], {**shaped, "views": set(), "confidence": None,
                                                      "documents": set()})
        if "properties" in shaped:
            entry["properties"] = merge_properties(entry.get("properties"), shaped["properties"])
        entry["views"].add(view)
        entry["documents"].add(doc_id[doc])
        if confidence is not None and (entry["confidence"] is None or confidence > entry["confidence"]):
            entry["confidence"] = confidence
        where[(doc, view, item)] = shaped["id"]
    for kind, found in kinds.items():
        for entry in found.values():
            entry["views"] = sorted(entry["views"])
            entry["documents"] = sorted(entry["documents"])
            if kind != "edge":
                del entry["confidence"]
    return kinds, where


def _drop_unnamed_values(nodes: dict[str, dict[str, Any]], kinds: _Kinds) -> None:
    """A value is a literal of the items it ends: with none, it is not in the graph."""
    named = {end for kind in ("edge", "temporal") for e in kinds[kind].values() for end in (e["head"], e["tail"])}
    named |= {n for h in kinds["hyperedge"].values() for ids_ in h["roles"].values() for n in ids_}
    named |= {n for v in kinds["event"].values() for ids_ in v["arguments"].values() for n in ids_}
    for node in [n for n, entry in nodes.items() if entry["scope"] == "value" and n not in named]:
        del nodes[node]


def _evidence(q, canon, doc_id: dict[str, str], where: dict[tuple[str, str, str], str], entity_of: dict[str, str],
              nodes: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """The evidence rows of the snapshot's items and entities, deduplicated, in a fixed order."""
    evidence = set()
    for doc, item, view, chunk, page, start, end, quote in q(
            "SELECT doc, item, view, chunk, page, span_start, span_end, quote FROM evidence WHERE tenant = ?"):
        target = where.get((doc, view, item)) or (canon(item) if item in entity_of and canon(item) in nodes else None)
        if target is not None:
            span = (start, end) if start is not None else None
            evidence.add((target, doc_id[doc], chunk, page, span, quote, view))
    ordered = sorted(evidence, key=lambda e: (e[0], e[1], e[2] or "", e[4] or (-1, -1), e[6], e[5] or "", e[3] or 0))
    return [{"item": i, "document": d, "chunk": c, "page": p, "span": list(s) if s else None, "quote": qt, "view": v}
            for i, d, c, p, s, qt, v in ordered]
