"""``kgkit ask`` over the whole graph (a question that names no node: counts, rankings,
absences, earliest/latest read from the domain's type and relation words) and list
questions that name two or more things (joined: the intersection for "both", the union for
"or"), on a small store built here; expectations are recounted from the store's snapshot,
and a forged aggregate or joined answer is caught by the verifier."""
from __future__ import annotations

from collections import defaultdict

import pytest

from support.ask_corpus import corpus_runs, truth
from support.ask_stub import INVENTED, responder
from support.graph_support import small_runs  # noqa: F401  (fixture)
from kgkit.ask import aggregate, ask, verify
from kgkit.config.model import AskConfig, CacheConfig, Config, LLMConfig
from kgkit.graph import GraphStore

DOMAIN = "legal_contracts"
KEY_ENV = "KGKIT_TEST_ASK_KEY"
@pytest.fixture()
def graph(small_runs, tmp_path):  # noqa: F811
    path = str(tmp_path / "g.sqlite")
    with GraphStore(path) as g:
        g.add(corpus_runs(small_runs, tmp_path))
    return path


def check_cited(record, ids: set[str]) -> None:
    """Answered, verified, and every counted element's citations are stored statements."""
    assert record.status == "answered" and record.verified, record.to_json()
    assert record.route.path == "corpus" and record.route.kind == "aggregate"
    cited = {i for g in record.aggregate.groups.values() for es in g.values() for i in es}
    cited |= {i for es in (record.aggregate.without or {}).values() for i in es}
    assert cited and cited <= ids
    assert all(i in ids for es in record.cites.values() for i in es)
    assert any(c.supported and c.reason.startswith(f"{record.aggregate.op}:") for c in record.checks)


def test_counts_and_absences_over_the_whole_graph(graph):
    with GraphStore(graph) as store:
        by, ids, docs = truth(store)
        every = ask(store, "How many agreements are there?", domain=DOMAIN)
        lawless = ask(store, "Which contracts have no governing law?", domain=DOMAIN)
        how_many = ask(store, "How many contracts have no governing law?", domain=DOMAIN)
    for record in (every, lawless, how_many):
        check_cited(record, ids)
    assert every.answer == [str(len(docs))] == ["4"] and set(every.aggregate.groups["answer"]) == docs
    without = sorted(docs - set(by["GOVERNING_LAW"]))
    assert lawless.answer == without == ["delta"] and lawless.answer_type == "documents"
    assert set(lawless.aggregate.without) == set(by["GOVERNING_LAW"]) and lawless.aggregate.relations == ["GOVERNING_LAW"]
    assert how_many.answer == ["1"] and "with no GOVERNING_LAW statement" in how_many.text


def test_rankings_and_dates_over_the_whole_graph(graph):
    with GraphStore(graph) as store:
        by, ids, docs = truth(store)
        most = ask(store, "Which contract has the most parties?", domain=DOMAIN)
        party = ask(store, "Which party is a party to the most contracts?", domain=DOMAIN)
        law = ask(store, "Which jurisdiction governs the most contracts?", domain=DOMAIN)
        latest = ask(store, "Which contract is dated latest?", domain=DOMAIN)
    for record in (most, party, law, latest):
        check_cited(record, ids)
    parties = {d: len(ps) for d, ps in by["HAS_PARTY"].items()}
    assert most.answer == [d for d, n in parties.items() if n == max(parties.values())] == ["delta"]
    assert most.aggregate.value == parties and most.answer_type == "documents"
    signs: dict[str, int] = defaultdict(int)
    for ps in by["HAS_PARTY"].values():
        for p in ps:
            signs[p] += 1
    assert party.answer == ["Harbor Analytics Ltd."] and party.aggregate.value["Harbor Analytics Ltd."] == 3
    assert law.answer == ["California", "New York", "Texas"]  # one contract each: a tie names each
    assert latest.answer == ["delta"] and latest.aggregate.value == "2023-05-02"


def test_words_the_domain_does_not_declare_leave_the_question_to_the_other_paths(graph):
    with GraphStore(graph) as store:
        threshold = ask(store, "Which contracts have more than two parties?", domain=DOMAIN)
        unknown = ask(store, "How many spaceships are there?", domain=DOMAIN)
        no_domain = ask(store, "How many agreements are there?")
        nothing_ranked = ask(store, "Which has more contracts?", domain=DOMAIN)
    for record in (threshold, unknown, no_domain, nothing_ranked):
        assert record.route.path != "corpus" and record.aggregate is None, record.question


def test_a_forged_whole_graph_answer_is_caught_and_a_cut_is_not_a_count(graph):
    with GraphStore(graph) as store:
        lawless = ask(store, "Which contracts have no governing law?", domain=DOMAIN)
        most = ask(store, "Which contract has the most parties?", domain=DOMAIN)
        config = Config()
        config.ask.aggregate_evidence = 2  # fewer statements than the graph holds: the count would be a guess
        cut = ask(store, "Which contract has the most parties?", domain=DOMAIN, config=config)
    keys = verify.Keys({}, True)
    agg = lawless.aggregate
    governed = next(iter(agg.without))  # a contract that has a governing law, listed as lacking one
    forged = aggregate.Aggregate(**{**vars(agg), "result": sorted([*agg.result, governed]),
                                    "groups": {"answer": {**agg.groups["answer"], governed: agg.without[governed]}}})
    checks = verify.verify_aggregate(forged, {}, lawless.evidence, keys)
    assert any(not c.supported and f"{governed!r} is said to have no GOVERNING_LAW" in c.reason for c in checks)
    assert not all(c.supported for c in checks)
    # gamma's governing law counted as one of its parties: named with gamma, but not by a HAS_PARTY statement
    law = next(i for i in lawless.evidence if i.relation == "GOVERNING_LAW" and "gamma" in i.documents)
    padded = aggregate.Aggregate(**{**vars(most.aggregate), "groups": {
        **most.aggregate.groups, "gamma": {**most.aggregate.groups["gamma"], "Texas": [law.id]}}})
    owners = {g: {g} for g in padded.groups}
    checks = verify.verify_aggregate(padded, owners, most.evidence + [law], keys)
    assert any(not c.supported and "'Texas'" in c.reason and "in a HAS_PARTY statement" in c.reason for c in checks)
    assert cut.status == "insufficient_evidence" and cut.answer == [] and "ask.aggregate_evidence" in cut.note


@pytest.mark.parametrize("question, answer, combine", [
    ("Which contracts do Northwind Traders, Inc. and Harbor Analytics Ltd. both sign?", ["beta"], "all"),
    ("Which contracts are Harbor Analytics Ltd. and Quill Media Corp. both parties to?", ["delta", "gamma"], "all"),
    ("Which contracts is Northwind Traders, Inc. or Quill Media Corp. a party to?",
     ["alpha", "beta", "delta", "gamma"], "any"),
    ("How many contracts do Harbor Analytics Ltd. and Bluefin Logistics LLC both sign?", ["1"], "all"),
])
def test_a_list_question_naming_two_parties_joins_both(graph, question, answer, combine):
    with GraphStore(graph) as store:
        by, ids, _ = truth(store)
        record = ask(store, question, domain=DOMAIN)
    assert record.status == "answered" and record.verified and record.answer == answer, record.to_json()
    assert record.route.path == "named" and record.route.combine == combine and len(record.route.also) == 1
    names = [record.route.params["party"], record.route.also[0]["party"]]
    signed = [{d for d, ps in by["HAS_PARTY"].items() if n in ps} for n in names]
    joined = set.intersection(*signed) if combine == "all" else set.union(*signed)
    assert (record.answer == [str(len(joined))] if record.answer_type == "count" else set(record.answer) == joined)
    assert all(i in ids for es in record.cites.values() for i in es)
    joined_checks = [c for c in record.checks if "cited with" in c.reason]
    assert len(joined_checks) == len(joined) and all(c.supported for c in joined_checks)


def test_two_parties_that_share_no_contract_are_no_answer_and_a_forged_element_is_caught(graph):
    with GraphStore(graph) as store:
        none = ask(store, "Which contracts do Northwind Traders, Inc. and Quill Media Corp. both sign?", domain=DOMAIN)
        both = ask(store, "Which contracts do Northwind Traders, Inc. and Harbor Analytics Ltd. both sign?",
                   domain=DOMAIN)
    assert none.status == "insufficient_evidence" and none.answer == [] and "together" in none.note
    keys = verify.Keys({}, True)
    values = [[both.route.params["party"]], [both.route.also[0]["party"]]]
    alpha = [e.id for e in both.evidence if "alpha" in e.documents]  # Northwind's alone: Harbor is not in it
    checks = verify.verify_combined([("alpha", alpha)], values, "all", both.evidence, keys)
    assert alpha and not checks[0].supported and "no cited evidence names it with" in checks[0].reason
    assert verify.verify_combined([("alpha", alpha)], values, "any", both.evidence, keys)[0].supported


def _model(stub) -> Config:
    llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=KEY_ENV, backoff=0.0)
    return Config(llm=llm, cache=CacheConfig(enabled=False), ask=AskConfig())


def test_an_invented_relation_in_a_joined_list_is_caught_and_degraded(graph, stub_provider, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    stub_provider.responder = responder("lie")
    question = "Which contracts is Northwind Traders, Inc. or Quill Media Corp. a party to?"
    with GraphStore(graph) as store:
        record = ask(store, question, domain=DOMAIN, config=_model(stub_provider))
    assert len(stub_provider.requests) == 3 and record.sent_back and not record.verified
    assert record.status == "insufficient_evidence" and record.answer == []
    bad = [c for c in record.checks if not c.supported]
    assert bad and all(c.claim is not None and record.claims[c.claim].relation == INVENTED for c in bad)


def test_with_a_model_a_whole_graph_count_is_computed_not_asked(graph, stub_provider, monkeypatch):
    monkeypatch.setenv(KEY_ENV, "sk-test")
    stub_provider.responder = responder("lie")
    with GraphStore(graph) as store:
        record = ask(store, "How many contracts have no governing law?", domain=DOMAIN, config=_model(stub_provider))
    assert len(stub_provider.requests) == 1 and record.route.source == "model"  # the route only
    assert record.status == "answered" and record.answer == ["1"] and record.reasoner == "offline"
    assert all(c.relation != INVENTED for c in record.claims)
