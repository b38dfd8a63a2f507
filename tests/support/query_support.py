"""Independent computations the query tests check the query layer against: networkx over
a store's snapshot, and a dump of the query indexes to compare incremental upkeep with a
rebuild."""
from __future__ import annotations

import json
from pathlib import Path

import networkx as nx

import kgkit

SCHEMA = json.loads((Path(kgkit.__file__).parent / "schemas" / "query.schema.json").read_text())


def snapshot_graph(snapshot, relations=None, min_confidence=None) -> nx.Graph:
    """One hop per binary item (head-tail) and between every two fillers of an n-ary one."""
    g = nx.Graph()
    g.add_nodes_from(n["id"] for n in snapshot.nodes)
    for e in snapshot.edges + snapshot.temporal:
        if relations and e["relation"] not in relations:
            continue
        if min_confidence is not None and e.get("confidence") is not None and e["confidence"] < min_confidence:
            continue
        if e["head"] != e["tail"]:
            g.add_edge(e["head"], e["tail"])
    for item, roles, relation in ([(h, h["roles"], h["relation"]) for h in snapshot.hyperedges]
                                  + [(v, v["arguments"], v["type"]) for v in snapshot.events]):
        if relations and relation not in relations:
            continue
        ends = sorted({n for ns in roles.values() for n in ns})
        g.add_edges_from((a, b) for i, a in enumerate(ends) for b in ends[i + 1:])
    return g


def index_dump(store) -> dict:
    """The query index rows of the store's tenant, without row ids (comparable across builds)."""
    q = store._q
    return {
        "items": sorted(q("SELECT doc, view, item, kind, relation, confidence, visible, review_key FROM qx_items "
                          "WHERE tenant = ?")),
        "fillers": sorted(q("SELECT doc, view, item, role, node, visible FROM qx_fillers WHERE tenant = ?")),
        "times": sorted(q("SELECT doc, view, item, name, text, lo, hi FROM qx_times WHERE tenant = ?"),
                        key=lambda r: tuple(str(x) for x in r)),
        "entities": sorted(q("SELECT entity, type, name, aliases, degree FROM qx_entities WHERE tenant = ?")),
        "spellings": sorted(q("SELECT node, spelling, names, total FROM qx_spellings WHERE tenant = ?")),
        "names": sorted(q("SELECT entity, key, alias FROM qx_names WHERE tenant = ?")),
        "text": sorted(q("SELECT kind, ref, type, doc, view, text FROM qx_text WHERE tenant = ?")),
        "dirty": q("SELECT * FROM qx_dirty WHERE tenant = ?"),
    }
