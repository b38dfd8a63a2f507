"""Set-level P/R/F1 on small cases whose figures were worked out by hand."""
from __future__ import annotations

import pytest

from kgkit.eval.metrics import NameMatcher, Score, score_document
from kgkit.formats.model import Domain, EntityType, RelationType

GOLD = {
    "entities": [
        {"name": "John Smith", "type": "Peop", "aliases": ["Smith"]},
        {"name": "IBM", "type": "Org", "aliases": ["International Business Machines"]},
        {"name": "Boston", "type": "Loc", "aliases": []},
        {"name": "Mary Jones", "type": "Peop", "aliases": []},
    ],
    "relations": [
        {"head": "John Smith", "relation": "Work_For", "tail": "IBM"},
        {"head": "IBM", "relation": "OrgBased_In", "tail": "Boston"},
        {"head": "Mary Jones", "relation": "Live_In", "tail": "Boston"},
    ],
    "hyperedges": [{"relation": "Attack", "roles": {"attacker": "John Smith", "target": ["IBM", "Boston"]}}],
    "events": [{"type": "Die", "trigger": "killed", "arguments": {"Victim": "Mary Jones"}, "time": None}],
    "temporal": [{"head": "John Smith", "relation": "Work_For", "tail": "IBM", "start": "2001-01-01", "end": None}],
}


def ents(*pairs):
    return [{"name": n, "type": t, "aliases": []} for n, t in pairs]


def rels(*triples):
    return [{"head": h, "relation": r, "tail": t} for h, r, t in triples]


def test_perfect_prediction_scores_one_everywhere():
    score = score_document(GOLD, {k: GOLD[k] for k in GOLD})
    for name, cat in score.categories.items():
        micro = cat.micro
        assert (micro.precision, micro.recall, micro.f1) == (1.0, 1.0, 1.0), name
        assert micro.fp == micro.fn == 0


def test_empty_prediction_has_zero_recall_and_counts_every_gold_item_missed():
    score = score_document(GOLD, {"entities": [], "relations": []})
    assert score.categories["entities"].micro.to_dict() == {"tp": 0, "fp": 0, "fn": 4, "precision": 0.0, "recall": 0.0, "f1": 0.0}
    assert score.categories["relations"].micro.fn == 3
    assert "events" not in score.categories  # not predicted at all -> not scored


def test_partial_prediction_hand_checked():
    # 2 of 4 entities right, 1 wrong type, 1 invented: tp=2, fp=2, fn=2 -> P=R=F1=0.5
    predicted = {
        "entities": ents(("John Smith", "Peop"), ("IBM", "Org"), ("Boston", "Org"), ("Paris", "Loc")),
        # 1 right, 1 wrong direction, 1 invented: tp=1 fp=2 fn=2 -> P=1/3 R=1/3
        "relations": rels(("John Smith", "Work_For", "IBM"), ("Boston", "OrgBased_In", "IBM"),
                          ("Paris", "Live_In", "Boston")),
    }
    score = score_document(GOLD, predicted)
    e = score.categories["entities"].micro
    assert (e.tp, e.fp, e.fn) == (2, 2, 2)
    assert e.f1 == pytest.approx(0.5)
    r = score.categories["relations"].micro
    assert (r.tp, r.fp, r.fn) == (1, 2, 2)
    assert r.precision == pytest.approx(1 / 3) and r.recall == pytest.approx(1 / 3)
    # per type: Work_For 1/1/0; OrgBased_In fp1 fn1; Live_In fp1 fn1 -> macro F1 = (1 + 0 + 0) / 3
    per = score.categories["relations"].per_type
    assert (per["Work_For"].tp, per["Work_For"].fp, per["Work_For"].fn) == (1, 0, 0)
    assert score.categories["relations"].macro["f1"] == pytest.approx(0.3333, abs=1e-4)
    # per entity type: Peop tp1 fn1 (P=1,R=.5,F=2/3); Org tp1 fp1 (Boston as Org) (F=2/3);
    # Loc fp1 (Paris) fn1 (Boston) (F=0) -> macro F1 = (2/3 + 2/3 + 0) / 3
    assert score.categories["entities"].macro["f1"] == pytest.approx(4 / 9, abs=1e-4)


def test_duplicate_predictions_count_once():
    predicted = {
        "entities": ents(("IBM", "Org"), ("IBM", "Org"), ("ibm", "Org"), ("I.B.M.", "Org")),
        "relations": rels(("John Smith", "Work_For", "IBM"), ("John Smith", "Work_For", "IBM"),
                          ("Smith", "Work_For", "I.B.M.")),
    }
    score = score_document(GOLD, predicted)
    e = score.categories["entities"].micro
    assert (e.tp, e.fp, e.fn) == (1, 0, 3)
    r = score.categories["relations"].micro
    assert (r.tp, r.fp, r.fn) == (1, 0, 2)


def test_alias_matches_count_for_the_gold_entity():
    predicted = {
        "entities": ents(("Smith", "Peop"), ("International Business Machines", "Org")),
        "relations": rels(("Smith", "Work_For", "International Business Machines")),
    }
    score = score_document(GOLD, predicted)
    assert score.categories["entities"].micro.tp == 2
    assert score.categories["relations"].micro.tp == 1


def test_predicted_alias_list_is_used_when_the_name_differs():
    predicted = {"entities": [{"name": "Big Blue", "type": "Org", "aliases": ["IBM"]}]}
    assert score_document(GOLD, predicted).categories["entities"].micro.tp == 1


def test_name_matching_order_and_fuzzy_threshold():
    m = NameMatcher(GOLD["entities"], threshold=90)
    assert m.resolve("john smith") == ("John Smith", "exact")
    assert m.resolve("J. Smith", aliases=["Smith"]) == ("John Smith", "alias")
    assert m.resolve("Jon Smith") == ("John Smith", "fuzzy")  # ratio 94.7
    assert m.resolve("Joan Smythe") == ("?joan smythe", "none")  # ratio 76: below the threshold
    assert NameMatcher(GOLD["entities"], threshold=95).resolve("Jon Smith")[1] == "none"



PLACES = [{"name": "Vermont", "type": "Place"}, {"name": "China", "type": "Place"},
          {"name": "Manitoba, Canada", "type": "Place"}, {"name": "England and Wales", "type": "Place"},
          {"name": "Hong Kong", "type": "Place"}, {"name": "State of Georgia", "type": "Place"}]


@pytest.mark.parametrize("predicted, gold", [
    ("the State of Vermont", "Vermont"), ("Vermont State", "Vermont"), ("Commonwealth of Vermont", "Vermont"),
    ("the PRC", "China"), ("People's Republic of China", "China"), ("PRC", "China"),
    ("Manitoba", "Manitoba, Canada"), ("Province of Manitoba", "Manitoba, Canada"),
    ("England", "England and Wales"), ("Hong Kong SAR", "Hong Kong"),
    ("Hong Kong Special Administrative Region", "Hong Kong"), ("Georgia", "State of Georgia"),
    ("Vermont, U.S.A.", "Vermont"),
])
def test_one_place_under_its_several_names(predicted, gold):
    assert NameMatcher(PLACES).resolve(predicted, type_name="Place") == (gold, "place")


def test_a_place_name_matches_only_gold_of_its_own_type_and_only_the_same_place():
    matcher = NameMatcher(PLACES)
    assert matcher.resolve("the State of Vermont", type_name="Party")[1] != "place"
    assert matcher.resolve("the State of Maine", type_name="Place")[1] == "none"
    assert matcher.resolve("Wales", type_name="Place")[1] == "none"  # the law of England is not "Wales"

def test_hyperedges_need_every_role_filled_right():
    right = {"relation": "Attack", "roles": {"attacker": "Smith", "target": ["Boston", "IBM"]}}
    wrong = {"relation": "Attack", "roles": {"attacker": "Smith", "target": "IBM"}}
    assert score_document(GOLD, {"hyperedges": [right]}).categories["hyperedges"].micro.tp == 1
    h = score_document(GOLD, {"hyperedges": [wrong]}).categories["hyperedges"].micro
    assert (h.tp, h.fp, h.fn) == (0, 1, 1)


def test_events_compare_type_trigger_and_arguments():
    ok = {"type": "Die", "trigger": " Killed ", "arguments": {"Victim": "mary jones"}}
    bad_trigger = {"type": "Die", "trigger": "died", "arguments": {"Victim": "Mary Jones"}}
    assert score_document(GOLD, {"events": [ok]}).categories["events"].micro.tp == 1
    assert score_document(GOLD, {"events": [bad_trigger]}).categories["events"].micro.tp == 0


def test_temporal_scored_with_and_without_time():
    wrong_date = [{"head": "John Smith", "relation": "Work_For", "tail": "IBM", "start": "2002-01-01", "end": None}]
    score = score_document(GOLD, {"temporal": wrong_date})
    assert score.categories["temporal"].micro.tp == 1
    timed = score.categories["temporal_timed"].micro
    assert (timed.tp, timed.fp, timed.fn) == (0, 1, 1)


def test_domain_normalises_relation_aliases_and_symmetric_ends():
    domain = Domain(
        name="t",
        entity_types=(EntityType("Peop"), EntityType("Loc")),
        relation_types=(RelationType("Live_In", head=("Peop",), tail=("Loc",), aliases=("resides_in",)),
                        RelationType("Knows", head=("Peop",), tail=("Peop",), symmetric=True)),
    )
    gold = dict(GOLD, relations=GOLD["relations"] + rels(("John Smith", "Knows", "Mary Jones")))
    predicted = {"relations": rels(("Mary Jones", "resides_in", "Boston"), ("Mary Jones", "Knows", "John Smith"))}
    r = score_document(gold, predicted, domain=domain).categories["relations"]
    assert r.micro.tp == 2
    assert score_document(gold, predicted).categories["relations"].micro.tp == 0


def test_scores_add_up_over_documents_micro():
    a = score_document(GOLD, {"relations": rels(("John Smith", "Work_For", "IBM"))})
    b = score_document(GOLD, {"relations": rels(("Paris", "Work_For", "IBM"))})
    total = Score()
    total.add(a)
    total.add(b)
    r = total.categories["relations"].micro
    assert (r.tp, r.fp, r.fn) == (1, 1, 5)
    assert total.f1("relations") == pytest.approx(2 * 0.5 * (1 / 6) / (0.5 + 1 / 6))


GENERAL_LIKE = Domain(
    name="g",
    entity_types=(EntityType("Person", aliases=("PER", "Peop")), EntityType("Organization", aliases=("ORG",)),
                  EntityType("Location", aliases=("LOC", "GPE"))),
    relation_types=(RelationType("works_for", head=("Person",), tail=("Organization",), aliases=("Work_For",)),
                    RelationType("based_in", head=("Organization",), tail=("Location",), aliases=("OrgBased_In",))),
)


def test_domain_maps_gold_entity_types_through_declared_aliases():
    # gold Peop/Org/Loc; the domain calls them Person/Organization/Location (Org by alias ORG, any case)
    predicted = {"entities": ents(("John Smith", "Person"), ("IBM", "Organization"), ("Boston", "Location"),
                                  ("Mary Jones", "Organization"))}
    score = score_document(GOLD, predicted, domain=GENERAL_LIKE).categories["entities"]
    # 3 right; Mary Jones has the wrong type: fp 1 (Organization) and fn 1 (Person)
    assert (score.micro.tp, score.micro.fp, score.micro.fn) == (3, 1, 1)
    assert {t: (c.tp, c.fp, c.fn) for t, c in score.per_type.items()} == {
        "Person": (1, 0, 1), "Organization": (1, 1, 0), "Location": (1, 0, 0)}
    # without the domain the labels differ and nothing is right
    assert score_document(GOLD, predicted).categories["entities"].micro.tp == 0


def test_domain_maps_labels_on_both_sides_and_keeps_undeclared_ones():
    # a prediction may use an alias too ("PER"); gold "Other" is not declared: it stays as it is, a miss
    gold = dict(GOLD, entities=GOLD["entities"] + [{"name": "Nobel Prize", "type": "Other", "aliases": []}])
    predicted = {"entities": ents(("John Smith", "PER"), ("Nobel Prize", "Misc")),
                 "relations": rels(("John Smith", "works_for", "IBM"), ("IBM", "OrgBased_In", "Boston"))}
    score = score_document(gold, predicted, domain=GENERAL_LIKE)
    e = score.categories["entities"]
    assert (e.micro.tp, e.micro.fp, e.micro.fn) == (1, 1, 4)
    assert (e.per_type["Other"].fn, e.per_type["Misc"].fp) == (1, 1)
    r = score.categories["relations"]
    # gold Work_For / OrgBased_In are works_for / based_in by alias; Live_In is not declared
    assert {t: (c.tp, c.fp, c.fn) for t, c in r.per_type.items()} == {
        "works_for": (1, 0, 0), "based_in": (1, 0, 0), "Live_In": (0, 0, 1)}


LITERAL_DOMAIN = Domain(
    name="t",
    entity_types=(EntityType("Deal"), EntityType("Date"), EntityType("Duration"), EntityType("Money")),
    relation_types=(RelationType("STARTS", head=("Deal",), tail=("Date",)),
                    RelationType("LASTS", head=("Deal",), tail=("Duration",)),
                    RelationType("PRICE", head=("Deal",), tail=("Money",))),
)
LITERAL_GOLD = {
    "entities": ents(("Harbour Lease", "Deal"), ("2021-04-01", "Date"), ("2021-04", "Date"),
                     ("P1Y", "Duration"), ("$2,000", "Money")),
    "relations": rels(("Harbour Lease", "STARTS", "2021-04-01"), ("Harbour Lease", "LASTS", "P1Y"),
                      ("Harbour Lease", "PRICE", "$2,000")),
}


def test_literal_entities_and_relation_ends_match_gold_by_value_one_way():
    predicted = {
        # a date entity goes to the gold of its own value text before the coarser month; a
        # literal node's value is read before its name; durations compare at the coarser unit
        "entities": [{"name": "April 1, 2021", "type": "Date"},
                     {"name": "early April", "type": "Date", "value": "2021-04"},
                     {"name": "twelve (12) months", "type": "Duration"},
                     {"name": "2,000 dollars", "type": "Money"}],
        # relation ends have no type: the same value, read from the name, in its canonical text
        "relations": rels(("Harbour Lease", "STARTS", "April 1, 2021"), ("Harbour Lease", "PRICE", "USD 2,000.00"),
                          ("Harbour Lease", "LASTS", "twelve (12) months")),
    }
    score = score_document(LITERAL_GOLD, predicted, domain=LITERAL_DOMAIN).categories
    e = score["entities"].micro
    assert (e.tp, e.fp, e.fn) == (4, 0, 1)  # only the Deal is missed
    r = score["relations"]
    assert (r.micro.tp, r.micro.fp, r.micro.fn) == (2, 1, 1)
    assert r.per_type["LASTS"].fp == 1  # P12M is not the text P1Y on a relation end
    assert NameMatcher(LITERAL_GOLD["entities"]).resolve("April 1, 2021")[1] == "none"  # no kinds, no values
