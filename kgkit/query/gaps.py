"""O5 gaps: where the tenant's graph is thin, counted, with the first few of each listed.

* orphans: nodes that no visible statement joins to another node (extracted as entities,
  related to nothing; an event whose only filler is the node joins nothing);
* singletons: nodes only one document names (nothing corroborates them);
* outside the largest component: nodes not connected to the graph's main body;
* documents that contribute no visible statement;
* sparse cells: (head type, tail type) pairs of the binary projection with at most
  ``sparse`` statements, among the types the graph has.
"""
from __future__ import annotations

from kgkit.query.reader import Reader
from kgkit.query.results import Answer


def gaps(reader: Reader, *, limit: int = 50, sparse: int = 0) -> Answer:
    import networkx as nx

    answer = Answer("gaps", reader.tenant, reader.version, {"sparse": sparse}, limits={"limit": limit})
    q = reader.store._q
    named_in = dict(q("SELECT g.entity, COUNT(DISTINCT n.doc) FROM groups g JOIN doc_nodes n ON n.tenant = g.tenant "
                      "AND n.node = g.node WHERE g.tenant = ? GROUP BY g.entity"))
    entities = {e: (t, named_in.get(e, 0), deg) for e, t, deg in
                q("SELECT entity, type, degree FROM qx_entities WHERE tenant = ?")}
    graph = nx.Graph()
    graph.add_nodes_from(entities)
    items: dict[tuple, list[tuple[str, str]]] = {}
    for d, v, i, role, entity in q(
            "SELECT f.doc, f.view, f.item, f.role, g.entity FROM qx_fillers f JOIN qx_items i ON i.tenant = f.tenant "
            "AND i.doc = f.doc AND i.view = f.view AND i.item = f.item AND i.visible = 1 "
            "JOIN groups g ON g.tenant = f.tenant AND g.node = f.node WHERE f.tenant = ?"):
        items.setdefault((d, v, i), []).append((role, entity))
    cells: dict[tuple[str, str], int] = {}
    for fills in items.values():
        ends = sorted({e for _, e in fills})
        graph.add_edges_from((a, b) for n, a in enumerate(ends) for b in ends[n + 1:])
        roles = dict(fills)
        if set(roles) == {"head", "tail"} and roles["head"] in entities and roles["tail"] in entities:
            cell = (entities[roles["head"]][0], entities[roles["tail"]][0])
            cells[cell] = cells.get(cell, 0) + 1
    components = sorted(nx.connected_components(graph), key=lambda c: (-len(c), min(c))) if entities else []
    main = components[0] if components else set()
    busy_docs = {d for d, _, _ in items}
    documents = sorted(q("SELECT doc, id FROM documents WHERE tenant = ?"))
    types = sorted({t for t, _, _ in entities.values()})
    lists = {
        "orphans": sorted(e for e in entities if graph.degree(e) == 0),
        "singletons": sorted(e for e, (_, docs, _) in entities.items() if docs == 1),
        "outside_largest_component": sorted(e for e in entities if e not in main),
        "documents_without_statements": [i for d, i in documents if d not in busy_docs],
        "sparse_cells": [{"head": a, "tail": b, "count": cells.get((a, b), 0)} for a in types for b in types
                         if cells.get((a, b), 0) <= sparse],
    }
    answer.report = {"tenant": reader.tenant, "nodes": len(entities), "documents": len(documents),
                     "statements": len(items), "components": len(components), "largest_component": len(main),
                     "counts": {k: len(v) for k, v in lists.items()}}
    for name, values in lists.items():
        answer.cut(f"limit:{name}", len(values) - limit)
        answer.report[name] = values[:limit]
    return answer
