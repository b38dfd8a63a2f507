"""Which nodes and edges of a document's skeleton belong to each chunk, found through
indexes built once per skeleton instead of a scan of every node and edge per chunk.

A chunk's share (:meth:`kgkit.modes.base.Skeleton.part_for`) is the nodes mentioned in it
or whose name or alias its text contains (case-insensitive, any substring), the document's
own node where it stands in for a title and an edge of its was found there, and the edges
whose evidence is in it or that join two of those nodes. Scanning every node per chunk made
relation prompts and upgrade passes cost nodes x chunks, quadratic in a document of many
distinct names; here the names are one Aho-Corasick automaton (pyahocorasick) run over the
chunk's text, the mentions and edges dictionaries keyed by chunk and by node.
"""
from __future__ import annotations

from typing import Any, Iterable

import ahocorasick


class ChunkParts:
    """Indexes of one skeleton's ``nodes`` and ``edges`` (rows of nodes.json and skeleton edges)."""

    def __init__(self, nodes: list[dict[str, Any]], edges: list[dict[str, Any]]):
        self.mentioned: dict[str, set[int]] = {}  # chunk id -> positions of the nodes mentioned in it
        self.positions: dict[str, list[int]] = {}  # node id -> its positions in ``nodes``
        owners: dict[str, set[int]] = {}  # a name or alias, lower case -> positions of the nodes it names
        # the document's own node (``"document": true``): every chunk's for a relation pass
        # ("this Agreement" names it wherever its title is not written); for an upgrade pass a
        # stand-in's (a node no text names) where an edge of its was found
        self.everywhere = {i for i, node in enumerate(nodes) if node.get("document")}
        standins = {node["id"]: i for i, node in enumerate(nodes) if node.get("document") and not node.get("mentions")}
        self.standin_at: dict[str, set[int]] = {}  # chunk id -> positions of stand-ins with an edge found there
        for i, node in enumerate(nodes):
            self.positions.setdefault(node["id"], []).append(i)
            for mention in node.get("mentions", ()):
                self.mentioned.setdefault(mention["chunk"], set()).add(i)
            for surface in (node["name"], *node.get("aliases", ())):
                if surface:
                    owners.setdefault(surface.lower(), set()).add(i)
        self.names: Any = None
        if owners:
            self.names = ahocorasick.Automaton()
            for surface, where in owners.items():
                self.names.add_word(surface, where)
            self.names.make_automaton()
        self.edges_of_chunk: dict[str, list[int]] = {}  # chunk id -> positions of the edges found in it
        self.edges_from: dict[str, list[int]] = {}  # head node id -> positions of its edges
        self.edges = edges
        for j, edge in enumerate(edges):
            self.edges_of_chunk.setdefault(edge["evidence"]["chunk"], []).append(j)
            self.edges_from.setdefault(edge["head"], []).append(j)
            for end in (edge["head"], edge["tail"]):
                if end in standins:
                    self.standin_at.setdefault(edge["evidence"]["chunk"], set()).add(standins[end])

    def node_positions(self, chunk_id: str, text: str, also: Iterable[str] = (), every_chunk: bool = True) -> list[int]:
        """Positions, in order, of the nodes mentioned in the chunk or named in its ``text``,
        of the document's own node (``every_chunk``; else only a stand-in, where an edge of
        its was found), and of the nodes whose id is in ``also``."""
        found = set(self.mentioned.get(chunk_id, ()))
        found |= self.everywhere if every_chunk else self.standin_at.get(chunk_id, set())
        if self.names is not None:
            for _, where in self.names.iter(text.lower()):
                found |= where
        for node_id in also:
            found.update(self.positions.get(node_id, ()))
        return sorted(found)

    def edge_positions(self, chunk_id: str, present: set[str]) -> list[int]:
        """Positions, in order, of the edges found in the chunk or joining two ``present`` node ids."""
        found = set(self.edges_of_chunk.get(chunk_id, ()))
        for head in present:
            found.update(j for j in self.edges_from.get(head, ()) if self.edges[j]["tail"] in present)
        return sorted(found)
