"""O1 find: a mention to the canonical nodes it may name.

Four stages, each scored, best first: the exact canonical key of a node's name (1.0), of
one of its aliases (0.9), a fuzzy key match through canon's blocks (the similarity times
0.8), and full-text over names and aliases (up to 0.5, by rank). A node found by several
keeps its best; ties go to the node more statements name (degree), then the name.
"""
from __future__ import annotations

from kgkit.canon.fuzzy import BLOCK_CAP, key_similarity, similar_keys
from kgkit.graph.candidates import BlockIndex
from kgkit.graph.index import _rows
from kgkit.text.name_keys import canonical_key
from kgkit.query import text
from kgkit.query.reader import Reader
from kgkit.query.results import Answer

SCORES = {"key": 1.0, "alias": 0.9, "fuzzy": 0.8, "text": 0.5}
FUZZY_FLOOR = 80.0  # the lowest similarity a fuzzy match is shown at
LIMIT = 10  # nodes a mention is resolved to without --limit (query.limit when that is lower)


def find(reader: Reader, mention: str, *, types: list[str] | None = None, limit: int = 10) -> Answer:
    answer = Answer("find", reader.tenant, reader.version, {"mention": mention, "types": types or []},
                    limits={"limit": limit})
    reader.check("type", types, reader.types())
    best = candidates(reader, mention, types)
    found = reader.entities(best)
    ranked = sorted(found, key=lambda e: (-best[e][0], -found[e]["degree"], found[e]["name"], e))
    answer.cut("limit", len(ranked) - limit)
    reader.entities(ranked[:limit], documents=True)  # in one read
    mentions = reader.mentions(ranked[:limit], per_entity=2)
    answer.nodes = [reader.node(e, score=round(best[e][0], 4), matched=best[e][1], evidence=mentions.get(e, []))
                    for e in ranked[:limit]]
    return answer


def candidates(reader: Reader, mention: str, types: list[str] | None) -> dict[str, tuple[float, str]]:
    """entity -> (score, stage) for every node ``mention`` may name."""
    key = canonical_key(mention, legal_suffixes=reader.store.legal_suffixes)
    best: dict[str, tuple[float, str]] = {}

    def offer(entity: str, score: float, stage: str) -> None:
        if entity not in best or score > best[entity][0]:
            best[entity] = (score, stage)

    if key:
        for entity, alias in reader.store._q("SELECT entity, alias FROM qx_names WHERE tenant = ? AND key = ?", key):
            offer(entity, SCORES["alias" if alias else "key"], "alias" if alias else "key")
        for entity, score in _fuzzy(reader, key, types):
            offer(entity, SCORES["fuzzy"] * score / 100.0, "fuzzy")
    for rank, (ref, _) in enumerate(text.search(reader, mention, kind="entity", depth=50)):
        offer(ref, SCORES["text"] / (1 + rank * 0.1), "text")
    if types:
        typed = reader.entities(best)
        best = {e: v for e, v in best.items() if e in typed and typed[e]["type"] in types}
    return best


def exact(reader: Reader, mention: str) -> dict[str, dict]:
    """The visible entities whose own name has ``mention``'s canonical key (score 1.0, the
    best :func:`candidates` gives), with their index rows: a seed given by its name is
    resolved without the fuzzy and full-text stages, which could only tie below it."""
    key = canonical_key(mention, legal_suffixes=reader.store.legal_suffixes)
    if not key:
        return {}
    return reader.entities([e for (e,) in reader.store._q("SELECT entity FROM qx_names WHERE tenant = ? AND key = ? "
                                                           "AND alias = 0", key)])


def _fuzzy(reader: Reader, key: str, types: list[str] | None) -> list[tuple[str, float]]:
    """(entity, similarity) of groups canon's blocking puts beside ``key``; a block held by
    more than canon's block cap is passed over (as the merge passes it over), so a common
    word costs nothing, and the rest are screened in one vectorised pass."""
    blocks = [b for t in (types or reader.types()) for b in BlockIndex.blocks_of(t, key)]
    sizes = dict(_rows(reader.store, "SELECT block, COUNT(*) FROM blocks WHERE tenant = ? AND block IN ({}) "
                                     "GROUP BY block", blocks))
    usable = [b for b in blocks if 0 < sizes.get(b, 0) <= BLOCK_CAP]
    pairs = sorted(set(_rows(reader.store, "SELECT node, key FROM blocks WHERE tenant = ? AND block IN ({})", usable)))
    keys = [k for _, k in pairs]
    scored: dict[str, float] = {}
    for i in similar_keys(key, keys, FUZZY_FLOOR):
        node, other = pairs[i]
        scored[node] = max(key_similarity(key, other, FUZZY_FLOOR), scored.get(node, 0.0))
    canon = reader.entity_of(scored)
    out: dict[str, float] = {}
    for node, score in scored.items():
        if node in canon and score >= FUZZY_FLOOR:
            out[canon[node]] = max(score, out.get(canon[node], 0.0))
    return sorted(out.items())
