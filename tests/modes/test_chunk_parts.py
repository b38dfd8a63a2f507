"""Skeleton.part_for through kgkit.modes.chunk_parts gives what a scan of every node and edge gives,
and its index follows the skeleton when its nodes or edges change."""
from __future__ import annotations

import random

from kgkit.documents.types import Chunk
from kgkit.modes.base import Skeleton

WORDS = ["acme", "Acme Corp", "ACME", "jane", "Jane Doe", "Doe", "bank", "x", "İstanbul", "Straße", "ß", "é"]


def _scan(skeleton: Skeleton, chunk: Chunk):
    """part_for as it was: every node and edge looked at for each chunk."""
    text = chunk.text.lower()
    nodes = [{"id": n["id"], "name": n["name"], "type": n["type"], "aliases": list(n.get("aliases", ()))}
             for n in skeleton.nodes
             if any(m["chunk"] == chunk.id for m in n.get("mentions", ()))
             or any(s.lower() in text for s in [n["name"], *n.get("aliases", ())] if s)]
    present = {n["id"] for n in nodes}
    by_id = {n["id"]: n for n in skeleton.nodes}
    edges = [{"id": e["id"], "head": by_id[e["head"]]["name"], "relation": e["relation"],
              "tail": by_id[e["tail"]]["name"]}
             for e in skeleton.edges
             if e["evidence"]["chunk"] == chunk.id or (e["head"] in present and e["tail"] in present)]
    return nodes, edges


def _chunk(i: int, text: str) -> Chunk:
    return Chunk(id=f"c{i}", doc_id="d", index=i, text=text, start=0, end=len(text))


def _skeleton(rng: random.Random, chunks: int) -> Skeleton:
    nodes = []
    for i in range(rng.randint(0, 12)):
        nodes.append({"id": f"n{i}", "name": rng.choice(WORDS) + rng.choice(["", " Ltd", " 2"]), "type": "T",
                      "aliases": rng.sample(WORDS, rng.randint(0, 2)) + ([""] if rng.random() < 0.1 else []),
                      "mentions": [{"chunk": f"c{rng.randrange(chunks)}"} for _ in range(rng.randint(0, 2))]})
    edges = []
    for j in range(rng.randint(0, 15) if nodes else 0):
        edges.append({"id": f"e{j}", "head": rng.choice(nodes)["id"], "relation": "r",
                      "tail": rng.choice(nodes)["id"], "evidence": {"chunk": f"c{rng.randrange(chunks)}"}})
    return Skeleton(doc_id="d", nodes=nodes, edges=edges, resolve=lambda n, t: None, candidates=lambda n: [])


def test_part_for_equals_the_scan_of_every_node_and_edge():
    rng = random.Random(4)
    compared = 0
    for _ in range(300):
        chunks = [_chunk(i, " ".join(rng.choice(WORDS + ["the", "and", "Corp"]) for _ in range(8))) for i in range(4)]
        skeleton = _skeleton(rng, len(chunks))
        for chunk in chunks:
            expected = _scan(skeleton, chunk)
            assert skeleton.part_for(chunk) == expected
            compared += bool(expected[0]) + bool(expected[1])
    assert compared > 300


def test_the_index_follows_new_nodes_and_edges():
    chunk = _chunk(0, "Acme Corp hired Jane Doe.")
    skeleton = Skeleton(doc_id="d", nodes=[{"id": "a", "name": "Acme Corp", "type": "Org", "aliases": []}],
                        edges=[], resolve=lambda n, t: None, candidates=lambda n: [])
    assert [n["id"] for n in skeleton.part_for(chunk)[0]] == ["a"]
    skeleton.nodes.append({"id": "j", "name": "Jane Doe", "type": "Person", "aliases": []})
    skeleton._by_id["j"] = skeleton.nodes[-1]
    assert [n["id"] for n in skeleton.part_for(chunk)[0]] == ["a", "j"]
    skeleton.edges = [{"id": "e", "head": "a", "relation": "employs", "tail": "j", "evidence": {"chunk": "c9"}}]
    assert skeleton.part_for(chunk)[1] == [{"id": "e", "head": "Acme Corp", "relation": "employs", "tail": "Jane Doe"}]
    other = _chunk(1, "Nothing of either.")
    assert skeleton.part_for(other) == ([], [])
    assert skeleton.node_positions(other, {"j"}) == [1]  # the document-level nodes a prompt also lists
