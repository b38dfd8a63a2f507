"""The offline backend's simulation of sampling: temperature 0 is exact, rollouts differ by seed."""
from __future__ import annotations

import json

from kgkit.backends.base import ENTITIES, RELATIONS, PassRequest
from kgkit.backends.offline import OfflineBackend
from kgkit.backends.offline.sampling import Sampler, SamplingKnobs
from kgkit.documents.types import Chunk
from kgkit.catalog.load import load_domain

TEXT = ("Ann Lee works for Acme Corp. in Paris. Bob Stone, an employee of Initech, lives in Rome. "
        "Cy Moe joined Globex Inc. Dee Poe lives in Oslo and works for Hooli LLC.")


def answers(kind, sample, temperature, knobs=None, **context):
    domain = load_domain("general")
    chunk = Chunk(id="c", doc_id="d", index=0, text=TEXT, start=0, end=len(TEXT))
    schema = {"type": "object"}
    result = OfflineBackend(knobs=knobs).run(PassRequest(kind=kind, stage="x", chunk=chunk, schema=schema,
                                                   context={"domain": domain, **context}, prompt="p",
                                                   sample=sample, temperature=temperature))
    assert result.ok, result.error
    return result.data


def test_temperature_zero_is_the_deterministic_answer_for_every_sample():
    base = answers(ENTITIES, 0, 0.0)
    assert all(answers(ENTITIES, k, 0.0) == base for k in range(1, 4))
    assert base["entities"]  # something to sample from


def test_rollouts_at_temperature_draw_seeded_subsets():
    base = {e["name"] for e in answers(ENTITIES, 0, 0.0)["entities"]}
    rollouts = [json.dumps(answers(ENTITIES, k, 1.0, SamplingKnobs(rule_drop=0.5, item_drop=1.0)))
                for k in range(6)]
    assert len(set(rollouts)) > 1  # rollouts differ
    assert rollouts[2] == json.dumps(answers(ENTITIES, 2, 1.0, SamplingKnobs(rule_drop=0.5, item_drop=1.0)))
    for r in rollouts:  # sampling only loses what the rules find, never invents
        assert {e["name"] for e in json.loads(r)["entities"]} <= base
    # relations too, from the deterministic entities
    ents = [{"name": e["name"], "type": e["type"]} for e in answers(ENTITIES, 0, 0.0)["entities"]]
    rel0 = answers(RELATIONS, 0, 0.0, entities=ents)["relations"]
    sampled = [answers(RELATIONS, k, 1.0, SamplingKnobs(rule_drop=0.6, item_drop=1.0), entities=ents)["relations"]
               for k in range(6)]
    assert rel0 and any(s != rel0 for s in sampled) and all(len(s) <= len(rel0) for s in sampled)


def test_knobs_scale_with_temperature_and_weak_guesses_drop_more():
    s = Sampler(0, 0.5, SamplingKnobs(rule_drop=0.4, item_drop=1.0))
    assert (s.rule_p, s.item_p) == (0.2, 0.5)

    class Item:
        def __init__(self, name, confidence):
            self.name, self.confidence = name, confidence

    items = [Item(f"n{i}", c) for i in range(400) for c in (0.4, 1.0)]
    kept = s.items(items, key=lambda x: x.name + str(x.confidence))
    assert all(x in kept for x in items if x.confidence == 1.0)  # a certain item is never dropped
    weak = sum(1 for x in kept if x.confidence == 0.4)
    assert 200 < weak < 300  # dropped with probability 0.5 × 0.6 = 0.3 of 400


def test_non_default_knobs_are_part_of_the_description():
    assert OfflineBackend().describe() == {"backend": "offline", "version": OfflineBackend().describe()["version"]}
    assert OfflineBackend(knobs=SamplingKnobs(rule_drop=0.5)).describe()["sampling"] == {"rule_drop": 0.5, "item_drop": 0.3}
