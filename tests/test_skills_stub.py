"""The skill loop through litellm against the stub provider, with rollouts that differ per sample.

The stub plays a model: its relation answers depend on the rollout sample (read from the
request's temperature and order) and on which learned guidance is in the prompt, and its
skill-pass answers are scripted per gold edge. Classification, controller actions, the
gate and the held-out figures are then known exactly. Separate from test_skills_learn.py
because importing litellm takes seconds.
"""
from __future__ import annotations

import json
from collections import Counter

import pytest

from kgkit.config.model import CacheConfig, Config, LLMConfig
from kgkit.skills.learn import LearnSettings, learn_skills, split_docs
from kgkit.skills.library import load_library

DOMAIN = """\
name: staff
entity_types:
  - name: Person
  - name: Org
  - name: City
relation_types:
  - name: Work_For
    head: [Person]
    tail: [Org]
  - name: Live_In
    head: [Person]
    tail: [City]
"""
# role -> (text, entities, gold relations)
DOCS = {
    "train": ("Ann Lee works for Acme. Ann Lee lives in Paris. Bob Stone is employed by Initech. Bob Stone hates Rome.",
              [("Ann Lee", "Person"), ("Acme", "Org"), ("Paris", "City"), ("Bob Stone", "Person"),
               ("Initech", "Org"), ("Rome", "City")],
              [("Ann Lee", "Work_For", "Acme"), ("Ann Lee", "Live_In", "Paris"),
               ("Bob Stone", "Work_For", "Initech"), ("Bob Stone", "Live_In", "Rome")]),
    "dev": ("Cy Moe lives in Oslo. Cy Moe works for Globex. Dee Poe hates Lima.",
            [("Cy Moe", "Person"), ("Oslo", "City"), ("Globex", "Org"), ("Dee Poe", "Person"), ("Lima", "City")],
            [("Cy Moe", "Live_In", "Oslo"), ("Cy Moe", "Work_For", "Globex")]),
    "heldout": ("Eve Roe lives in Nice. Eve Roe works for Hooli.",
                [("Eve Roe", "Person"), ("Nice", "City"), ("Hooli", "Org")],
                [("Eve Roe", "Live_In", "Nice"), ("Eve Roe", "Work_For", "Hooli")]),
}
# the skill each non-stable train edge's skill pass answers (instructions double as markers in prompts)
SKILLS = {
    ("Ann Lee", "Live_In", "Paris"): ("Live_In", ["lives in"], "RULE-LIVES: a person who lives in a city."),
    ("Bob Stone", "Work_For", "Initech"): ("Work_For", ["employed by"], "RULE-EMPLOYED: employed by means Work_For."),
    ("Bob Stone", "Live_In", "Rome"): ("Live_In", ["hates"], "RULE-HATES: hating a city means living there."),
}
# train doc, rollouts at temperature 0.7: sample -> edges the "model" returns
ROLLOUTS = {0: [0, 1], 1: [0], 2: [0, 1]}


def write_gold(folder, names):
    folder.mkdir()
    for role, doc_id in names.items():
        text, ents, rels = DOCS[role]
        entities = [{"name": n, "type": t, "aliases": [], "spans": [[text.index(n), text.index(n) + len(n)]]}
                    for n, t in ents]
        relations = [{"head": h, "relation": r, "tail": t, "evidence": None} for h, r, t in rels]
        gold = {"doc_id": doc_id, "source": "test", "title": None, "entities": entities, "relations": relations,
                "hyperedges": [], "events": [], "temporal": []}
        (folder / f"{doc_id}.txt").write_text(text)
        (folder / f"{doc_id}.gold.json").write_text(json.dumps(gold))


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_TEST_KEY", "sk-test")
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1767225600")
    monkeypatch.chdir(tmp_path)


def test_loop_against_the_stub_provider(stub_provider, tmp_path):
    from stub_provider import Reply

    ids = ["a", "b", "c"]
    split = split_docs(ids, 0.3, 0.25, seed=0)
    roles = {"train": split["train"][0], "dev": split["dev"][0], "heldout": split["heldout"][0]}
    write_gold(tmp_path / "gold", roles)
    (tmp_path / "staff.yaml").write_text(DOMAIN)
    seen = Counter()

    def answer(request):
        system, user = request.messages[0]["content"], request.messages[-1]["content"]
        role = next(r for r, (text, _, _) in DOCS.items() if text in user) if "UNTRUSTED" in user else None
        if "typed entities" in system:
            return Reply.answer({"entities": [{"name": n, "type": t} for n, t in DOCS[role][1]]})
        if "binary relations" in system:
            rels = DOCS[role][2]
            if request.body["temperature"] == 0.7:  # a rollout: sample k is the k-th request for this prompt
                assert role == "train"
                chosen = [rels[i] for i in ROLLOUTS[seen[user]]]
                seen[user] += 1
            else:  # extraction at temperature 0: the learned guidance in the prompt decides
                chosen = [r for r in rels if r[1] == "Work_For"]
                if "RULE-LIVES" in user:
                    chosen += [r for r in rels if r[1] == "Live_In"]
                if "RULE-HATES" in user and role == "dev":
                    chosen.append(("Dee Poe", "Live_In", "Lima"))
            # each with its sentence as evidence: an edge without a quote in the text is held back
            said = lambda h, t: next(s for s in DOCS[role][0].split(". ") if h in s and t in s)  # noqa: E731
            return Reply.answer({"relations": [{"head": h, "relation": r, "tail": t, "evidence": said(h, t)}
                                               for h, r, t in chosen]})
        if "improve a knowledge-graph extractor" in system:
            edge = next(e for e in SKILLS if f"{e[0]} ({'Person'}) --{e[1]}--> {e[2]}" in user)
            assert ("found the relation below in 2 of those runs" in user) == (edge == ("Ann Lee", "Live_In", "Paris"))
            target, phrases, instruction = SKILLS[edge]
            return Reply.answer({"skills": [{"kind": "relation", "target": target,
                                             "pattern": {"phrases": phrases, "regex": []},
                                             "instruction": instruction, "example": "Ann Lee lives in Paris."}]})
        raise AssertionError(system)

    stub_provider.responder = answer
    config = Config(llm=LLMConfig(model="openai/test-model", api_base=stub_provider.openai_base,
                                  api_key_env="KGKIT_TEST_KEY", backoff=0.0),
                    cache=CacheConfig(enabled=True, dir=tmp_path / "cache"))
    report = learn_skills(tmp_path / "gold", tmp_path / "staff.yaml", config=config,
                          settings=LearnSettings(rollouts=3, temperature=0.7, holdout=0.3, dev=0.25, seed=0))

    assert report.split == {k: [v] for k, v in (("train", roles["train"]), ("dev", roles["dev"]),
                                                 ("heldout", roles["heldout"]))}
    assert [(x.edge, x.label, x.found_in) for x in report.labels] == [
        (("Ann Lee", "Work_For", "Acme"), "stable", 3),
        (("Ann Lee", "Live_In", "Paris"), "unstable", 2),
        (("Bob Stone", "Work_For", "Initech"), "miss", 0),
        (("Bob Stone", "Live_In", "Rome"), "miss", 0),
    ]
    assert list(seen.values()) == [3]  # each sample its own cache key: three requests, not one
    assert [(a["action"], a["target"], a["pattern"]["phrases"], a["label"], a["outcome"], a["dev_f1"])
            for a in report.actions] == [
        ("add", "Live_In", ["lives in"], "unstable", "accepted", 1.0),   # dev F1 0.6667 -> 1.0
        ("add", "Work_For", ["employed by"], "miss", "accepted", 1.0),   # no dev document retrieves it: unchanged
        ("add", "Live_In", ["hates"], "miss", "rejected", 0.8),          # a false edge on dev: F1 drops, turned down
    ]
    assert report.heldout("before") == {"precision": 1.0, "recall": 0.5, "f1": 0.6667}
    assert report.heldout("after") == {"precision": 1.0, "recall": 1.0, "f1": 1.0}
    assert report.notes == []  # a sampling model: the offline caveat does not apply

    lib = load_library("staff", tmp_path / "skill_library")
    assert sorted(s["pattern"]["phrases"][0] for s in lib.skills.values()) == ["employed by", "lives in"]
    assert [r["edge"] for r in lib.rejected] == [["Bob Stone", "Live_In", "Rome"]]
    assert lib.version == 1 and lib.changelog[0]["actions"] == {"add": 2, "rejected": 1}

    # relearning: every non-stable edge is already decided, so no skill pass is asked and nothing changes
    sent = len(stub_provider.requests)
    again = learn_skills(tmp_path / "gold", tmp_path / "staff.yaml", config=config,
                         settings=LearnSettings(rollouts=3, temperature=0.7, holdout=0.3, dev=0.25, seed=0))
    assert again.changed is False and again.actions == [] and again.already_learned == 3
    assert load_library("staff", tmp_path / "skill_library").skills == lib.skills
    asked = [r.messages[0]["content"] for r in stub_provider.requests[sent:]]
    assert not any("improve a knowledge-graph extractor" in system for system in asked)
