"""The engine's and the modes' memos give what asking afresh gives, and ask once.

Each memo stands in for work a run repeated (a name resolved for every relation end, chunk
and view; a chunk's share of the skeleton built per view): these tests compare it with the
unmemoised computation and count the calls it saves.
"""
from __future__ import annotations

import random

from kgkit.canon import Mention, merge_entities
from kgkit.modes.base import Skeleton
from kgkit.schema.model import Domain, EntityType

DOMAIN = Domain(name="test", entity_types=(EntityType("Person"), EntityType("Organization"), EntityType("Location")))
NAMES = ["Acme Corp", "Acme Corporation", "ACME", "Jane Doe", "Doe", "Jane Do", "Berlin", "Paris", "Acme",
         "Globex Ltd", "Globex", "Initech", "Jane", "Paris Hilton", "Hilton"]
TYPES = ["Person", "Organization", "Location"]


def _old_lookup(resolve, candidates, name, types=()):
    """Skeleton.lookup as it was before the memo: every call asks the merge."""
    typed = [t for t in types if t != "*"]
    if not typed or len(typed) < len(types):
        found = resolve(name, None)
        if found:
            return found
        every = candidates(name)
        return every[0] if len(every) == 1 else None
    hits = {resolve(name, t) for t in typed} - {None}
    return hits.pop() if len(hits) == 1 else None


def test_lookup_memo_answers_as_the_merge_does_and_asks_once_per_name_and_type():
    rng = random.Random(5)
    for _ in range(40):
        mentions = [Mention(name=rng.choice(NAMES), type=rng.choice(TYPES), chunk_id="c0")
                    for _ in range(rng.randint(1, 12))]
        merged = merge_entities(mentions, DOMAIN)
        asked = {"resolve": 0, "candidates": 0}

        def resolve(name, type_):
            asked["resolve"] += 1
            found = merged.resolve(name, type_)
            return found.id if found else None

        def candidates(name):
            asked["candidates"] += 1
            return [n.id for n in merged.resolve_all(name)]

        nodes = [{**n.to_dict(), "origin": "core"} for n in merged.nodes]
        skeleton = Skeleton(doc_id="d", nodes=nodes, edges=[], resolve=resolve, candidates=candidates)
        queries = [(rng.choice(NAMES + ["Nobody", "Acme Corp."]),
                    tuple(rng.sample(TYPES + ["*"], rng.randint(0, 3)))) for _ in range(60)]
        for name, types in queries * 3:
            expected = _old_lookup(lambda n, t: (merged.resolve(n, t) or None) and merged.resolve(n, t).id,
                                   lambda n: [x.id for x in merged.resolve_all(n)], name, types)
            assert skeleton.lookup(name, types) == expected
            assert skeleton.meanings(name) == [x.id for x in merged.resolve_all(name)]
        distinct_resolves = {(name, t) for name, types in queries
                             for t in ([None] if not [t for t in types if t != "*"] or "*" in types
                                       else [t for t in types if t != "*"])}
        assert asked["resolve"] <= len(distinct_resolves)
        assert asked["candidates"] <= len({name for name, _ in queries})


def test_lookup_of_an_unknown_name_is_remembered_as_none():
    asked = []
    skeleton = Skeleton(doc_id="d", nodes=[], edges=[], resolve=lambda n, t: asked.append((n, t)),
                        candidates=lambda n: [])
    assert skeleton.lookup("Nobody", ("Person",)) is None
    assert skeleton.lookup("Nobody", ("Person",)) is None
    assert asked == [("Nobody", "Person")]
