"""Canonical keys and the merge of mentions into V_doc nodes, through kgkit.canon.merge's public API."""
from __future__ import annotations

import json
import random
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rapidfuzz import fuzz

from kgkit.canon.records import REASONS, Mention
from kgkit.canon.names import defined_terms_after, entity_type_name
from kgkit.canon.merge import merge_entities
from kgkit.text.name_keys import canonical_key, split_trade_name
from kgkit.ids import node_id
from kgkit.formats.model import Domain, EntityType
from support.shared_data import DATA

CUAD = DATA / "cuad"

DOMAIN = Domain(
    name="test",
    entity_types=(
        EntityType("Person", aliases=("PER", "people")),
        EntityType("Organization", aliases=("ORG",)),
        EntityType("Location"),
    ),
)


def nodes_by_name(result):
    return {n.name: n for n in result.nodes}


def node_of(result, surface: str, type: str):
    """The node a surface form ended up in (by its mentions, not by resolve)."""
    found = [n for n in result.nodes if n.type == type and any(m.name == surface for m in n.mentions)]
    assert len(found) == 1, (surface, found)
    return found[0]


# --------------------------------------------------------------------------- keys


@pytest.mark.parametrize(
    "name, key",
    [
        ("ACME Corp.", "acme"),
        ("Acme Corporation", "acme"),
        ("ACME, Inc.", "acme"),
        ("acme  inc", "acme"),
        ("Foo Pty. Ltd.", "foo"),
        ("Coca-Cola Co., Ltd.", "coca cola"),
        ("Veteran Technology Group, L.L.C.", "veteran technology group"),
        ("Smith & Co.", "smith"),
        ("Société Générale S.A.", "societe generale"),
        ("SOCIETE GENERALE", "societe generale"),
        ("The Boeing Company", "boeing"),
        ("J. R. R. Tolkien", "jrr tolkien"),
        ("JRR Tolkien", "jrr tolkien"),
        ("McDonald\u2019s", "mcdonalds"),
        ("Johnson & Johnson", "johnson and johnson"),
        ("ＡＣＭＥ\u00a0Corp", "acme"),  # full-width letters and a no-break space (NFKC)
        ("Solutions Media, Inc., dba SpinRecords.com", "solutions media"),
    ],
)
def test_canonical_key_folds_spelling_variants(name, key):
    assert canonical_key(name) == key


@pytest.mark.parametrize("name, key", [("Inc.", "inc"), ("The Company", "company"), ("the", "the"), ("Co", "co")])
def test_legal_suffix_and_article_are_kept_when_nothing_else_remains(name, key):
    assert canonical_key(name) == key


def test_legal_suffixes_can_be_kept():
    assert canonical_key("ACME Corp.", legal_suffixes=False) == "acme corp"
    assert canonical_key("ACME Corp.", legal_suffixes=False) != canonical_key("ACME Inc.", legal_suffixes=False)


def test_distinct_names_keep_distinct_keys():
    keys = {canonical_key(n) for n in ["Apple", "Apple Bank", "AB", "Section 3.1", "Section 1.3", "Section 31"]}
    assert len(keys) == 6


def test_name_without_letters_keys_to_itself():
    assert canonical_key("—") == "—"


def test_split_trade_name():
    assert split_trade_name("Solutions  Media,  Inc.,  dba SpinRecords.com") == ("Solutions Media, Inc.", "SpinRecords.com")
    assert split_trade_name("John Doe a/k/a Johnny D") == ("John Doe", "Johnny D")
    assert split_trade_name("Dbase Systems") == ("Dbase Systems", None)


# --------------------------------------------------------------------------- rule merges


def test_legal_suffix_variants_merge_with_reason():
    result = merge_entities(
        [Mention("ACME Corp.", "Organization"), Mention("Acme Corporation", "Organization"),
         Mention("ACME, Inc.", "Organization"), Mention("ACME Corp.", "Organization")],
        DOMAIN,
    )
    assert len(result.nodes) == 1
    node = result.nodes[0]
    assert node.name == "ACME Corp."  # the most frequent surface
    assert node.aliases == ("ACME, Inc.", "Acme Corporation")
    assert len(node.mentions) == 4
    assert {(r.merged, r.reason) for r in result.merges} == {("Acme Corporation", "legal-suffix"),
                                                             ("ACME, Inc.", "legal-suffix")}
    assert all(r.kept == "ACME Corp." and r.score == 100.0 for r in result.merges)
    assert node.merged_from == tuple({"name": r.merged, "reason": r.reason, "score": 100.0} for r in result.merges)
    assert node.id == node_id("Organization", "ACME Corp.")


def test_rule_reasons_name_the_weakest_rule_needed():
    result = merge_entities(
        [Mention("Acme Widgets", "Organization"), Mention("Acme Widgets", "Organization"),
         Mention("Acme\u00a0 Widgets", "Organization"), Mention("ACME WIDGETS", "Organization"),
         Mention("Acme Widgets Ltd", "Organization")],
    )
    reasons = {r.merged: r.reason for r in result.merges}
    assert reasons == {"Acme\u00a0 Widgets": "exact", "ACME WIDGETS": "case/punctuation",
                       "Acme Widgets Ltd": "legal-suffix"}
    node = nodes_by_name(result)["Acme Widgets"]
    assert len(node.mentions) == 5
    assert node.aliases == ("ACME WIDGETS", "Acme Widgets Ltd")  # a re-spaced copy is no new alias
    assert set(REASONS) >= set(reasons.values())


def test_legal_suffix_merging_can_be_switched_off():
    mentions = [Mention("ACME Corp.", "Organization"), Mention("ACME Inc.", "Organization")]
    assert len(merge_entities(mentions, threshold=101).nodes) == 1
    assert len(merge_entities(mentions, threshold=101, legal_suffixes=False).nodes) == 2


# --------------------------------------------------------------------------- fuzzy


def test_name_inside_a_longer_name_does_not_merge():
    result = merge_entities([Mention("Apple", "Organization"), Mention("Apple Bank", "Organization")], threshold=80)
    assert sorted(nodes_by_name(result)) == ["Apple", "Apple Bank"]
    assert result.merges == []


@pytest.mark.parametrize("threshold, merged", [(90, True), (95, False)])
def test_fuzzy_merge_depends_on_threshold(threshold, merged):
    result = merge_entities([Mention("John Smith", "Person"), Mention("Jon Smith", "Person")], threshold=threshold)
    assert (len(result.nodes) == 1) is merged
    if merged:
        (record,) = result.merges
        assert (record.reason, round(record.score, 1)) == ("fuzzy", 94.7)


def test_word_order_does_not_matter():
    result = merge_entities([Mention("Smith, John", "Person"), Mention("John Smith", "Person")])
    assert len(result.nodes) == 1


def test_chained_look_alikes_do_not_merge_through_the_middle():
    a, b, c = "Maria Gonzalez", "Maria Gonzales", "Mario Gonzales"
    # the premise: A~B and B~C reach 90, A~C does not
    assert fuzz.token_sort_ratio(a, b) >= 90 and fuzz.token_sort_ratio(b, c) >= 90
    assert fuzz.token_sort_ratio(a, c) < 90
    for order in ([a, b, c], [c, b, a], [b, a, c], [b, c, a]):
        result = merge_entities([Mention(n, "Person") for n in order], threshold=90)
        assert len(result.nodes) == 2
        assert node_of(result, a, "Person") is not node_of(result, c, "Person")
        assert [r.reason for r in result.merges] == ["fuzzy"]


def test_numbers_must_agree_for_a_fuzzy_merge():
    result = merge_entities([Mention("Phase 2 trial", "Event"), Mention("Phase 3 trial", "Event"),
                             Mention("Section 3.1", "Event"), Mention("Section 1.3", "Event")], threshold=80)
    assert len(result.nodes) == 4


def test_one_letter_labels_must_not_conflict():
    labelled = ["EXHIBIT A TO SERVICES OUTSOURCING AGREEMENT", "EXHIBIT B TO SERVICES OUTSOURCING AGREEMENT"]
    assert fuzz.token_sort_ratio(*labelled) > 95  # the premise: similar enough to merge otherwise
    assert len(merge_entities([Mention(n, "Agreement") for n in labelled]).nodes) == 2
    assert len(merge_entities([Mention("John F. Kennedy", "Person"), Mention("John R. Kennedy", "Person")]).nodes) == 2
    assert len(merge_entities([Mention("John F. Kennedy", "Person"), Mention("John Kennedy", "Person")]).nodes) == 1


def test_fuzzy_merge_stays_within_a_type():
    result = merge_entities([Mention("John Smith", "Person"), Mention("Jon Smith", "Organization")])
    assert len(result.nodes) == 2


def test_blocking_finds_the_same_merges_as_exhaustive_search():
    rng = random.Random(7)
    firsts = ["John", "Maria", "Wei", "Fatima", "Oliver", "Amara", "Hiroshi", "Elena", "Kwame", "Sofia"]
    lasts = ["Smith", "Gonzalez", "Nakamura", "Okafor", "Ivanova", "Kowalski", "Haddad", "Larsen"]
    mentions = []
    for _ in range(400):
        name = f"{rng.choice(firsts)} {rng.choice(lasts)}"
        if rng.random() < 0.3:  # a one-letter typo
            i = rng.randrange(len(name))
            name = name[:i] + rng.choice("aeiourst") + name[i + 1:]
        mentions.append(Mention(name, "Person"))
    blocked = merge_entities(mentions, blocking=True)
    exhaustive = merge_entities(mentions, blocking=False)
    assert [n.id for n in blocked.nodes] == [n.id for n in exhaustive.nodes]
    assert len(blocked.nodes) < len({m.name for m in mentions})  # the typos did merge


# --------------------------------------------------------------------------- types


def test_types_match_declared_names_and_aliases_case_insensitively():
    result = merge_entities([Mention("Ada Lovelace", "per"), Mention("Ada Lovelace", "PERSON"),
                             Mention("Acme", "org")], DOMAIN)
    assert sorted((n.type, n.name) for n in result.nodes) == [("Organization", "Acme"), ("Person", "Ada Lovelace")]
    assert entity_type_name(DOMAIN, "People") == "Person"
    assert entity_type_name(DOMAIN, "Drug") is None
    assert entity_type_name(None, " Drug ") == "Drug"


def test_unknown_types_and_empty_names_are_rejected_with_reasons():
    bad_type = Mention("Aspirin", "Drug", chunk_id="c_1")
    empty = Mention("  ", "Person")
    result = merge_entities([bad_type, empty, Mention("Acme", "ORG")], DOMAIN)
    assert [n.name for n in result.nodes] == ["Acme"]
    reasons = {r.mention: r.reason for r in result.rejected}
    assert reasons[bad_type] == "unknown entity type 'Drug' (declared: Person, Organization, Location)"
    assert reasons[empty] == "empty entity name"


def test_homonyms_of_different_types_stay_apart():
    result = merge_entities([Mention("Washington", "Person"), Mention("Washington", "Location")], DOMAIN)
    ids = {n.type: n.id for n in result.nodes}
    assert len(ids) == 2 and ids["Person"] != ids["Location"]
    assert result.resolve("Washington") is None  # ambiguous without a type
    assert sorted(n.type for n in result.resolve_all("Washington")) == ["Location", "Person"]
    assert result.resolve("washington", "PER").id == ids["Person"]
    assert result.resolve("Washington", "Location").id == ids["Location"]


# --------------------------------------------------------------------------- aliases


def test_declared_alias_merges_and_is_not_the_display_name():
    mentions = [Mention("ABC Corp.", "Organization", aliases=("the Company",))]
    mentions += [Mention("the Company", "Organization", chunk_id=f"c_{i}") for i in range(3)]
    result = merge_entities(mentions, DOMAIN)
    (node,) = result.nodes
    assert node.name == "ABC Corp."
    assert node.merged_from == ({"name": "the Company", "reason": "declared-alias", "score": 100.0},)
    assert len(node.mentions) == 4
    assert result.resolve("Company", "ORG") is node


def test_alias_never_mentioned_still_resolves():
    result = merge_entities([Mention("International Business Machines", "Organization", aliases=("IBM",))])
    assert result.resolve("I.B.M.").name == "International Business Machines"
    assert result.nodes[0].aliases == ("IBM",)
    assert result.merges == []


def test_alias_claimed_by_two_entities_merges_nothing_and_is_reported():
    result = merge_entities([
        Mention("ABC Corp.", "Organization", aliases=("the Company",)),
        Mention("XYZ Ltd.", "Organization", aliases=("The Company",)),
        Mention("the Company", "Organization"),
    ])
    assert sorted(nodes_by_name(result)) == ["ABC Corp.", "XYZ Ltd.", "the Company"]
    (amb,) = result.ambiguous
    assert (amb.type, amb.claimants) == ("Organization", ("ABC Corp.", "XYZ Ltd."))
    assert result.resolve("the company") is None
    assert len(result.resolve_all("the company")) == 3


# Real contract wording (CUAD, CC BY 4.0: CCA Industries services outsourcing agreement).
CCA = ('This Services Outsourcing Agreement (this "Agreement") is made as of January 20, 2014 (Date), '
       'between CCA Industries, Inc. ("Company"), and Emerson HealthCare, LLC, a Pennsylvania limited '
       'liability company ("Contractor"). The Company shall pay Contractor monthly.')


def _at(text: str, surface: str, nth: int = 0) -> tuple[int, int]:
    start = -1
    for _ in range(nth + 1):
        start = text.index(surface, start + 1)
    return start, start + len(surface)


def test_defined_terms_in_the_document_text_merge_with_their_party():
    mentions = [Mention(s, "Party", span=_at(CCA, s, n)) for s, n in
                [("CCA Industries, Inc.", 0), ("Emerson HealthCare, LLC", 0), ("Company", 1), ("Contractor", 1)]]
    result = merge_entities(mentions, text=CCA)
    names = nodes_by_name(result)
    assert sorted(names) == ["CCA Industries, Inc.", "Emerson HealthCare, LLC"]
    assert names["CCA Industries, Inc."].merged_from == ({"name": "Company", "reason": "defined-term", "score": 100.0},)
    assert names["Emerson HealthCare, LLC"].aliases == ("Contractor",)


def test_defined_term_found_in_the_evidence_quote_without_the_text():
    quote = 'between CCA Industries, Inc. ("Company"), and Emerson HealthCare, LLC'
    result = merge_entities([Mention("CCA Industries, Inc.", "Party", evidence=quote),
                             Mention("Emerson HealthCare, LLC", "Party", evidence=quote),
                             Mention("Company", "Party")])
    assert node_of(result, "Company", "Party").name == "CCA Industries, Inc."
    assert node_of(result, "Emerson HealthCare, LLC", "Party").aliases == ()


@pytest.mark.parametrize(
    "text, terms",
    [
        ('Acme Corp. (the "Company")', ["Company"]),
        ("Acme Corp. (\u201cSeller\u201d)", ["Seller"]),
        ('Acme Corp., a Nevada corporation (hereinafter referred to as "ACME")', ["ACME"]),
        ('Acme Corp., dba Acme.com a Delaware Corporation, with offices at 1 Main St. ("Acme.com" or "Client")',
         ["Acme.com", "Client"]),
        ('Acme Corp., a Delaware corporation, and Beta LLC, a Texas company ("Beta")', []),  # Beta's term
        ("Acme Corp. (Delaware)", []),
        ("Acme Corp. is a party", []),
    ],
)
def test_defined_terms_after_a_name(text, terms):
    assert defined_terms_after(text, len("Acme Corp.")) == terms


def _gold_parties(gold_path):
    gold = json.loads(gold_path.read_text(encoding="utf-8"))
    with open(gold_path.with_name(gold_path.name.replace(".gold.json", ".txt")), encoding="utf-8", newline="") as f:
        text = f.read()
    return [e for e in gold["entities"] if e["type"] == "Party"], text


@pytest.mark.corpus
def test_cuad_party_mentions_never_merge_two_parties_and_defined_terms_join_their_party():
    """On real contracts, merging the gold parties' own mentions (names, defined terms, d/b/a
    forms, at their gold spans) never puts two parties in one node, and every term the text
    defines right after a party's name (``Acme Corp. (the "Company")``) resolves to that
    party. Aliases CUAD links some other way (a term defined pages later, a signature
    block) are not promised: the merge only joins what the text itself says.

    Known noise in CUAD's party answers, and why the property still holds on it:
    * two parties in one answer ("Company and AGI" in HOLIDAYRVSUPERSTORESINC): it has no
      span, so it holds no mention and cannot make a node hold two parties;
    * a name the text does not write (GridironBionutrients' "... Northern America Chapter"
      for the text's "Northern California Chapter"): the property reads the mention at the
      gold span, not the gold name;
    * a d/b/a clause split into two answers' spans (HOLIDAYRVSUPERSTORESINC): the term
      defined after the clause joins the mention it follows.
    The old version of this test asked for one node per gold party and failed on 22 of 35
    contracts, mostly on this noise and on aliases no definition in the text supports.

    One test over every contract, not one per contract: the list of contracts is read when the
    test runs, never at collection (the default suite collects this module without the data)."""
    paths = sorted(CUAD.glob("*.gold.json"))
    assert paths, f"no CUAD gold under {CUAD}"
    failures = []
    for gold_path in paths:
        try:
            _check_party_property(gold_path)
        except AssertionError as e:
            failures.append(f"{gold_path.name.split('.')[0]}: {e}")
    assert not failures, "\n".join(failures)


def _check_party_property(gold_path) -> None:
    parties, text = _gold_parties(gold_path)
    mentions = [Mention(text[s:e], "Party", span=(s, e)) for p in parties for s, e in p["spans"]]
    result = merge_entities(reversed(mentions), text=text)
    home = {}
    for party in parties:
        for node in result.nodes:
            if any(list(m.span) in party["spans"] for m in node.mentions):
                home.setdefault(node.id, set()).add(party["name"])
    assert all(len(names) == 1 for names in home.values()), home
    # each definition after a party's mention is asserted inside; how many there are across
    # the contracts is test_the_cuad_party_property_is_not_vacuous's question
    _defined_terms_join(parties, text, result)


def _defined_terms_join(parties, text, result) -> int:
    """Assert each term defined right after a party's gold mention resolves to that mention's
    node; return how many such definitions there were."""
    checked = 0
    for party in parties:
        for s, e in party["spans"]:
            [node] = [n for n in result.nodes if any(m.span == (s, e) for m in n.mentions)]
            for term in defined_terms_after(text, e):
                if canonical_key(term) in {canonical_key(a) for a in party["aliases"]}:
                    assert result.resolve(term, "Party") is node, (party["name"], term)
                    checked += 1
    return checked


@pytest.mark.corpus
def test_the_cuad_party_property_is_not_vacuous():
    """Most CUAD contracts define their parties' short names right after the name; if the
    definition reader broke, the property above would pass on nothing."""
    with_definition = 0
    paths = sorted(CUAD.glob("*.gold.json"))
    for gold_path in paths:
        parties, text = _gold_parties(gold_path)
        mentions = [Mention(text[s:e], "Party", span=(s, e)) for p in parties for s, e in p["spans"]]
        with_definition += _defined_terms_join(parties, text, merge_entities(mentions, text=text)) > 0
    assert with_definition >= len(paths) // 2


# --------------------------------------------------------------------------- resolve


def test_resolve_exact_alias_then_fuzzy_within_type():
    result = merge_entities([Mention("Acme Corporation", "Organization"), Mention("Jonathan Smithers", "Person")],
                            DOMAIN)
    assert result.resolve("ACME inc").name == "Acme Corporation"
    assert result.resolve("Jonathan Smither", "Person").name == "Jonathan Smithers"
    assert result.resolve("Jonathan Smither", "Organization") is None
    assert result.resolve("Jonathan Smither", "Dinosaur") is None
    assert result.resolve("Globex") is None
    assert result.resolve("") is None


def test_resolve_fuzzy_tie_is_ambiguous():
    result = merge_entities([Mention("Mark Jonas", "Person"), Mention("Mary Jones", "Person")])
    assert len(result.nodes) == 2
    # the premise: "Mary Jonas" is one letter from each
    assert fuzz.token_sort_ratio("Mary Jonas", "Mark Jonas") == fuzz.token_sort_ratio("Mary Jonas", "Mary Jones") == 90
    assert result.resolve("Mary Jonas", "Person") is None
    assert sorted(n.name for n in result.resolve_all("Mary Jonas", "Person")) == ["Mark Jonas", "Mary Jones"]


# --------------------------------------------------------------------------- determinism


def test_result_does_not_depend_on_input_order():
    mentions = [
        Mention("ACME Corp.", "Organization", chunk_id="c_1", span=(0, 10), page=1),
        Mention("Acme Corporation", "Organization", chunk_id="c_2", span=(500, 516), page=2),
        Mention("ABC Corp.", "Organization", aliases=("the Company",), chunk_id="c_1", span=(20, 29)),
        Mention("the Company", "Organization", chunk_id="c_3", span=(900, 911)),
        Mention("John Smith", "Person", chunk_id="c_1", span=(40, 50)),
        Mention("Jon Smith", "Person", chunk_id="c_2", span=(600, 609)),
        Mention("Maria Gonzalez", "Person"), Mention("Maria Gonzales", "Person"), Mention("Mario Gonzales", "Person"),
        Mention("Washington", "Location"), Mention("Washington", "Person"), Mention("Aspirin", "Drug"),
    ]

    def snapshot(result):
        return ([n.to_dict() for n in result.nodes], [r.to_dict() for r in result.merges],
                [(r.mention, r.reason) for r in result.rejected])

    expected = snapshot(merge_entities(mentions, DOMAIN))
    rng = random.Random(1)
    for _ in range(20):
        shuffled = mentions[:]
        rng.shuffle(shuffled)
        assert snapshot(merge_entities(shuffled, DOMAIN)) == expected


def test_node_dict_matches_nodes_json_shape():
    result = merge_entities([
        Mention("ACME Corp.", "Organization", chunk_id="c_1", span=(0, 10), page=1),
        Mention("ACME Corp.", "Organization", chunk_id="c_0", span=(0, 10), page=1),  # overlapping chunk
        Mention("Acme Inc", "Organization", chunk_id="c_2", span=(50, 58), page=2),
    ])
    assert result.nodes[0].to_dict() == {
        "id": node_id("Organization", "ACME Corp."),
        "type": "Organization",
        "name": "ACME Corp.",
        "aliases": ["Acme Inc"],
        "mentions": [{"chunk": "c_0", "span": [0, 10], "page": 1}, {"chunk": "c_2", "span": [50, 58], "page": 2}],
        "merged_from": [{"name": "Acme Inc", "reason": "legal-suffix", "score": 100.0}],
    }


# --------------------------------------------------------------------------- properties

POOL = ["John Smith", "Jon Smith", "JOHN SMITH", "Maria Gonzalez", "Maria Gonzales", "Mario Gonzales",
        "Acme Corp.", "ACME, Inc.", "Acme", "Apple", "Apple Bank", "Globex Ltd", "Globex", "Phase 2", "Phase 3",
        "Smith, John", "", "Initech GmbH", "Initek GmbH"]


@settings(max_examples=150, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(POOL), st.sampled_from(["Person", "Organization", "Drug"])), max_size=25),
       st.sampled_from([85.0, 90.0, 95.0]))
def test_merge_keeps_every_mention_and_never_chains(pairs, threshold):
    mentions = [Mention(name, etype, span=(i, i + 1)) for i, (name, etype) in enumerate(pairs)]
    result = merge_entities(mentions, DOMAIN, threshold=threshold)
    assert sum(len(n.mentions) for n in result.nodes) + len(result.rejected) == len(mentions)
    assert {r.reason for r in result.merges} <= set(REASONS)
    assert len({n.id for n in result.nodes}) == len(result.nodes)
    for node in result.nodes:
        keys = sorted({" ".join(sorted(canonical_key(m.name).split())) for m in node.mentions})
        for i, a in enumerate(keys):  # complete link: every pair of spellings within the threshold
            for b in keys[i + 1:]:
                assert fuzz.ratio(a, b) >= threshold, (node.name, a, b)


@given(st.text(min_size=1).filter(str.strip))
def test_any_name_has_a_non_empty_key_and_an_id(name):
    assert canonical_key(name)
    assert canonical_key(name, legal_suffixes=False)
    assert node_id("T", name).startswith("n_")


# --------------------------------------------------------------------------- literals, defined terms, furniture


def _legal():
    from kgkit.catalog.load import load_domain

    return load_domain("legal_contracts")


def test_literals_keep_their_names_as_written_carry_a_value_and_merge_by_value():
    text = "Signed on the 26th day of May, 2017. Effective May 26, 2017 for twelve (12) months, renewable for 1 year."

    def at(name, type_):
        start = text.index(name)
        return Mention(name, type_, span=(start, start + len(name)))

    mentions = [at("26th day of May, 2017", "Date"), at("May 26, 2017", "Date"),
                at("twelve (12) months", "Duration"), at("1 year", "Duration")]
    result = merge_entities(mentions, _legal(), text=text)
    [date] = [n for n in result.nodes if n.type == "Date"]
    assert date.name in ("26th day of May, 2017", "May 26, 2017") and date.value == "2017-05-26"
    assert date.to_dict()["value"] == "2017-05-26" and len(date.to_dict()["mentions"]) == 2
    assert [r["reason"] for r in date.merged_from] == ["same-value"]
    durations = {n.name: n.value for n in result.nodes if n.type == "Duration"}
    assert durations == {"twelve (12) months": "P12M", "1 year": "P1Y"}  # values differ: never merged
    assert all(text[m.span[0]:m.span[1]] == m.name for n in result.nodes for m in n.mentions)


def test_a_defined_short_name_is_its_party_whatever_type_another_mention_gave_it():
    text = 'Acme Technologies Inc., a Nevada corporation (hereinafter "ACME TECH"), and Beta LLC. ACME TECH shall pay.'
    mentions = [Mention("Acme Technologies Inc.", "Party", span=(0, 22)),
                Mention("ACME TECH", "Organization", span=(87, 96)),
                Mention("ACME TECH", "DefinedTerm", span=(61, 70))]
    result = merge_entities(mentions, _legal(), text=text)
    assert [(n.type, n.name) for n in result.nodes] == [("Party", "Acme Technologies Inc.")]
    assert result.nodes[0].aliases == ("ACME TECH",)


def test_a_term_the_document_defines_is_not_also_an_organisation():
    mentions = [Mention("Licensed Services", "DefinedTerm", span=(0, 17)),
                Mention("Licensed Services", "Organization", span=(40, 57))]
    result = merge_entities(mentions, _legal(), text="Licensed Services" + " " * 23 + "Licensed Services")
    assert [(n.type, n.name) for n in result.nodes] == [("DefinedTerm", "Licensed Services")]


def test_mentions_on_a_running_footer_are_rejected_with_their_reason():
    footer = "Filed by Acme Corp., Form 10-K, 3/4/2019"
    pages = ["Acme Corp. shall pay on March 4, 2019.", "The goods are delivered monthly.", "Notices go by mail."]
    text = "\n".join(f"{page}\n{footer}" for page in pages)
    where = text.index(footer)
    mentions = [Mention("Acme Corp.", "Party", span=(0, 10)), Mention("Acme Corp.", "Party", span=(where + 9, where + 19)),
                Mention("3/4/2019", "Date", span=(where + 32, where + 40))]
    result = merge_entities(mentions, _legal(), text=text)
    assert [(n.type, len(n.mentions)) for n in result.nodes] == [("Party", 1)]
    assert sorted(r.code for r in result.rejected) == ["page_furniture", "page_furniture"]
    # a line that is the name alone (a signature block) is not furniture
    block = "\n".join(["Acme Corp.", "Signature: ____"] * 3)
    result = merge_entities([Mention("Acme Corp.", "Party", span=(0, 10))], _legal(), text=block)
    assert not result.rejected


def test_a_persons_title_before_the_name_is_an_alias():
    from kgkit.catalog.load import load_domain

    text = "Texas Gov. John Connally rode with President John F. Kennedy. Kennedy waved."
    def at(name):
        start = text.index(name)
        return Mention(name, "Person", span=(start, start + len(name)))

    result = merge_entities([at("John Connally"), at("John F. Kennedy")], load_domain("general"), text=text)
    by_name = {n.name: n for n in result.nodes}
    assert by_name["John Connally"].aliases == ("Texas Gov. John Connally",)
    assert by_name["John F. Kennedy"].aliases == ("President John F. Kennedy",)
    assert result.resolve("President John F. Kennedy", "Person") is by_name["John F. Kennedy"]
    # a title is read only right before the name, and never for things that are not people
    assert merge_entities([Mention("Acme Corp.", "Organization", span=(0, 10))], load_domain("general"),
                          text="Acme Corp.").nodes[0].aliases == ()


def test_length_filter_never_drops_a_pair_the_screen_would_pass():
    """_could_reach (the fuzzy merge's length filter) may only rule out pairs whose
    fuzz.ratio is below the threshold: checked on every length pair up to 40 characters."""
    from rapidfuzz import fuzz

    from kgkit.text.ratio_index import could_reach as _could_reach

    for threshold in (50.0, 85.0, 90.0, 100.0):
        for la in range(0, 41):
            for lb in range(0, 41):
                a, b = "a" * la, "a" * lb  # one string inside the other: the best ratio these lengths allow
                reaches = bool(fuzz.ratio(a, b, score_cutoff=threshold)) or la + lb == 0
                assert _could_reach(la, lb, threshold) == reaches, (la, lb, threshold)  # safe, and tight


def _reference_clusters(groups, threshold, blocking, cap=None):
    """The fuzzy clustering as first written: every cluster filed under a usable blocking
    key of a group (every cluster, without blocking) screened against its first member. A
    key over the cap that a group keeps files the first ``cap`` clusters that bring it."""
    from kgkit.canon.fuzzy import _score, _usable_blocks

    clusters, blocks = [], []
    usable, held = _usable_blocks(groups, cap)
    filed = {}  # over-cap key -> clusters filed under it

    def file(c, keys):
        for k in keys:
            if cap is not None and held[k] > cap:
                if k in blocks[c] or filed.get(k, 0) >= cap:
                    continue
                filed[k] = filed.get(k, 0) + 1
            blocks[c].add(k)

    for g in sorted(groups, key=lambda g: (-len(g.mentions), g.key)):
        best, best_score = None, 0.0
        for c, members in enumerate(clusters):
            if blocking and usable[id(g)].isdisjoint(blocks[c]):
                continue
            if fuzz.ratio(g.sorted_form, members[0].sorted_form, score_cutoff=threshold) < threshold:
                continue
            worst = min(_score(g, m, threshold) for m in members)
            if worst and worst > best_score:
                best, best_score = c, worst
        if best is None:
            clusters.append([g])
            blocks.append(set())
            best = len(clusters) - 1
        else:
            clusters[best].append(g)
        file(best, usable[id(g)])
    return clusters


@pytest.mark.parametrize("threshold", [0.0, 70.0, 85.0, 90.0, 95.0])
@pytest.mark.parametrize("blocking, cap", [(True, None), (False, None), (True, 60), (True, 8)])
def test_fuzzy_clusters_are_those_of_comparing_every_cluster(threshold, blocking, cap):
    """The q-gram index (kgkit.text.ratio_index) only narrows which clusters are compared: the
    clusters, their members and their order are those of comparing with every cluster
    (that shares a usable key: with a ``cap``, keys held by more groups are purged, and
    one a name must keep files only the first ``cap`` clusters).
    Names share blocking keys heavily ("...ville", "... Holdings", a few first names),
    many are one or two letters apart, some are a single letter."""
    from kgkit.canon.fuzzy import _Group, _fuzzy_clusters, _prepare

    rng = random.Random(int(threshold) * 2 + blocking)
    syllables = ["ka", "lo", "mi", "ren", "tor", "vas", "bel", "os"]
    names = set()
    while len(names) < 500:
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(1, 3)))
        if rng.random() < 0.3:  # a one-letter typo
            i = rng.randrange(len(word))
            word = word[:i] + rng.choice("aeiours") + word[i + 1:]
        names.add(rng.choice([word, f"{word}ville", f"{word} holdings", f"anna {word}", f"{word} b", word[:1]]))
    groups = []
    for key in sorted(names):
        g = _Group(type="Thing", key=key, mentions=[None] * rng.randint(1, 3))
        _prepare(g)
        groups.append(g)
    got = _fuzzy_clusters(groups, threshold, blocking, cap)
    want = _reference_clusters(groups, threshold, blocking, cap)
    assert [[g.key for g in c] for c in got] == [[g.key for g in c] for c in want]
    assert len(got) > 1
    assert any(len(c) > 1 for c in got) or (cap, threshold) == (8, 95.0)  # at 95 a cap of 8 leaves no pair
    if cap == 8:  # keys over the cap that more than 8 groups must keep: only the first 8 clusters are filed
        from kgkit.canon.fuzzy import _usable_blocks

        usable, held = _usable_blocks(groups, cap)
        keeping = Counter(k for g in groups for k in usable[id(g)] if held[k] > cap)
        assert max(keeping.values()) > cap
    if cap is not None and threshold <= 90:  # the cap did keep pairs apart (at 95 few pairs reach)
        assert len(got) > len(_fuzzy_clusters(groups, threshold, blocking))


def test_fuzzy_resolution_finds_what_screening_every_name_finds():
    """CanonResult looks fuzzy names up through the q-gram index: the nodes and scores are
    those of screening every name of the type (or of every type) that shares a blocking key
    with the probe, for probes that are near copies, strangers, one letter long and of a
    type nobody has."""
    from kgkit.canon.fuzzy import _Group, _labels_agree, _prepare

    rng = random.Random(5)
    syllables = ["ka", "lo", "mi", "ren", "tor", "vas", "bel", "os"]
    words = ["".join(rng.choice(syllables) for _ in range(rng.randint(1, 3))) for _ in range(300)]
    mentions = [Mention(rng.choice([w, f"{w}ville", f"{w} Holdings", f"Anna {w}"]), rng.choice(["Person", "Place"]))
                for w in words]
    result = merge_entities(mentions)

    def screened(name, types):
        probe = _Group(type="", key=canonical_key(name))
        _prepare(probe)
        scored = {}
        for (t, key), node_ids in result._index.items():
            other = _Group(type=t, key=key)
            _prepare(other)
            score = fuzz.ratio(probe.sorted_form, other.sorted_form, score_cutoff=result.threshold)
            if t in types and score and _labels_agree(other, probe) and not probe.blocks.isdisjoint(other.blocks):
                for i in node_ids:
                    scored[i] = max(scored.get(i, 0.0), score)
        return sorted(scored, key=lambda i: (-scored[i], i))

    probes = [w[:i] + rng.choice("aeio") + w[i + 1:] for w in words[:150] for i in [rng.randrange(len(w))]]
    probes += [f"{w}vile" for w in words[:30]] + ["k", "zzzzzz", "Anna", "x" * 40]
    fuzzy = 0
    for name in probes:
        for type_ in ("Person", "Place", None, "Ship"):
            found = [n.id for n in result.resolve_all(name, type_)]
            key = canonical_key(name)
            types = {"Person", "Place"} if type_ is None else {type_}
            if not any((t, key) in result._index for t in types):
                assert found == screened(name, types), (name, type_)
                fuzzy += bool(found)
    assert fuzzy > 20  # the probes did reach names by similarity


# --- the shortcuts the merge takes must answer as the full rules do ---------------------

_TITLE_WORDS = ["President", "Vice President", "Gov.", "Texas Gov.", "Mr.", "Dr.", "the", "Former", "Sir",
                "(President", "Chicago Mayor", "Secretary", "engineer.", "King", "Superior Court Judge"]


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(_TITLE_WORDS), max_size=5),
       st.lists(st.sampled_from([" ", "  ", "\n", "\t", "\u00a0", "", ", "]), min_size=5, max_size=5))
def test_a_title_is_found_before_a_name_exactly_where_the_title_rule_finds_one(words, gaps):
    import kgkit.canon.names as names

    text = "".join(w + g for w, g in zip(words, gaps)) + "John Smith joined."
    start = text.index("John Smith")
    mention = Mention(name="John Smith", type="Person", span=(start, start + len("John Smith")))
    m = names._TITLE_BEFORE.search(text, max(0, start - 60), start)  # the rule alone, without the shortcut
    assert names.titled_names(mention, text) == ([names.squash(f"{m.group(1)} John Smith")] if m else [])


def test_a_type_label_names_the_first_declared_type_that_has_it_even_when_the_domain_changes():
    first = Domain(name="d", entity_types=(EntityType(name="Person", aliases=("PER",)),
                                           EntityType(name="Org", aliases=("per",))))
    assert entity_type_name(first, " per ") == "Person"
    assert entity_type_name(first, "ORG") == "Org"
    assert entity_type_name(first, "Place") is None
    other = Domain(name="d", entity_types=(EntityType(name="Org", aliases=("per",)),))
    assert entity_type_name(other, "per") == "Org"  # a table of its own, not the first domain's
