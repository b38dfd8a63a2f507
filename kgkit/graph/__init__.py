"""The corpus graph: many documents' run folders in one store, resolved across documents.

    from kgkit.graph import GraphStore
    with GraphStore("corpus.sqlite", tenant="team-a") as graph:
        graph.add(["kgkit-out/contract_1", "kgkit-out/contract_2"])
        snapshot = graph.snapshot()      # what exporters read (kgkit.graph.snapshot)

See docs/graph.md.
"""
from kgkit.graph.snapshot import GraphSnapshot
from kgkit.graph.store import DEFAULT_TENANT, AddResult, GraphStore

__all__ = ["AddResult", "DEFAULT_TENANT", "GraphSnapshot", "GraphStore"]
