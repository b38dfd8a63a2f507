"""How contracts are commonly written, read by the legal_contracts domain offline.

Every text here is written for this test (no gold document's words): the forms a
governing-law clause takes, "hereof" for the contract itself, recurring renewal periods
beside plain ones of the same length.
"""
from __future__ import annotations

import pytest

from kgkit.backends.base import ENTITIES, RELATIONS, PassRequest
from kgkit.backends.offline import OfflineBackend
from kgkit.canon.records import Mention
from kgkit.canon.merge import merge_entities
from kgkit.documents.types import Chunk
from kgkit.engine.core import ENTITIES_SCHEMA, RELATIONS_SCHEMA
from kgkit.eval.metrics import NameMatcher, value_kinds
from kgkit.catalog.load import load_domain

PREAMBLE = 'This Supply Agreement is made by Alder Freight Corp. ("Buyer") and Birchmoor Mills LLC ("Seller").\n\n'


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="module")
def legal():
    return load_domain("legal_contracts")


def _run(kind, text, context):
    chunk = Chunk(id="c_test", doc_id="d_test", index=0, text=text, start=0, end=len(text))
    schema = {ENTITIES: ENTITIES_SCHEMA, RELATIONS: RELATIONS_SCHEMA}[kind]
    result = OfflineBackend().run(PassRequest(kind=kind, stage=kind, chunk=chunk, schema=schema, context=context,
                                              prompt=f"{kind}.j2"))
    assert result.ok, result.error
    return result.data


def read(text, domain):
    """(entities, relations) as the engine asks for them: the first Agreement found is the
    document's own node (``"document": true``), as the engine marks it."""
    ents = _run(ENTITIES, text, {"domain": domain})["entities"]
    nodes = [{"name": e["name"], "type": e["type"], "aliases": e.get("aliases", [])} for e in ents]
    own = next(n for n in nodes if n["type"] == "Agreement")
    own["document"] = True
    rels = _run(RELATIONS, text, {"domain": domain, "entities": nodes})["relations"]
    return ents, {(r["head"], r["relation"], r["tail"]) for r in rels}


def laws(text, domain):
    _, relations = read(PREAMBLE + text, domain)
    return {t for _, r, t in relations if r == "GOVERNING_LAW"}


@pytest.mark.parametrize("clause, law", [
    ("This Agreement shall be governed by the laws of the state of Vermont.", "Vermont"),  # "state" in lower case
    ("THIS AGREEMENT SHALL BE GOVERNED BY THE LAWS OF THE STATE OF NEW MEXICO, WITHOUT REGARD TO ITS CONFLICT OF "
     "LAWS RULES.", "NEW MEXICO"),  # the clause in capitals
    ("This Agreement shall be governed by Delaware law.", "Delaware"),
    ("This Agreement shall be construed under the laws of the District of Columbia.", "District of Columbia"),
    ("This Agreement shall be interpreted in accordance with Kentucky law.", "Kentucky"),
    ("This Agreement shall be governed by the laws in force in the State of Nevada.", "Nevada"),
    ("This Agreement shall be governed by the laws of the People's Republic of China.", "China"),
    ("This Agreement shall be governed by the laws of the State of\nIllinois.", "Illinois"),  # a line break
    ("This Agreement will be governed by the internal laws of the State of Oregon, U.S.A.", "Oregon"),  # one state node
    ("12. Governing Law. The validity and construction hereof shall be governed by the laws of the State of Iowa.",
     "Iowa"),  # "hereof" is the contract
    ("This Agreement shall be governed by the laws of the Federal Republic of Germany.", "Germany"),
    ("This Agreement shall be governed by the laws of England and Wales.", "England and Wales"),  # one law
    ("This Agreement shall be governed by the laws of the United States of America and the State of Maine.", "Maine"),
    ("This Agreement shall be governed by the laws in the State of Ohio.", "Ohio"),
    ("This Agreement shall be governed by, and construed in accordance with, the laws of New York State.", "New York"),
    ("This Agreement shall be governed by the laws of the State of Idaho and the federal laws of the United States.",
     "Idaho"),  # the state, not "Idaho, United States" (the Canadian formula joins a province to Canada)
    ("This Agreement shall be governed by the laws of the State of Idaho and the laws of the United States.",
     "Idaho"),  # the second law beside a state is no law of its own
    ("This Agreement shall be governed by the laws of Manitoba and the federal laws of Canada applicable therein.",
     "Manitoba, Canada"),  # the Canadian formula without "the Province of"
    ("This Agreement shall be governed by the laws of the Province of Manitoba and the laws of Canada applicable "
     "therein.", "Manitoba, Canada"),  # ... and without "federal"
    ("This Agreement shall be governed by the laws of the State of New\nHampshire.", "New Hampshire"),  # a name broken
    ("This Agreement shall be governed by the federal laws of the United States of America and the laws of the State "
     "of Utah.", "Utah"),  # the federal law written first: the state's
    ("This Agreement shall be governed by federal law and the laws of the Commonwealth of Virginia.", "Virginia"),
    ("This Agreement shall be governed by the laws of the PRC.", "PRC"),
    ("Delaware law shall govern this Agreement.", "Delaware"),  # the place's law, then the verb
    ("This Agreement shall be governed by English law.", "England"),  # a law named by its country's adjective
    ("This Agreement shall be governed by and construed in accordance with Swiss law.", "Switzerland"),
    ("This Agreement shall be governed by the internal laws (and not the law of conflicts) of the State of Nevada.",
     "Nevada"),  # a parenthesis between the laws and their place
    ("This Agreement shall be governed by the laws of the State of NEW MEXICO, without regard to conflicts of law.",
     "NEW MEXICO"),  # the place in capitals in a clause that is not
    ("The laws of the State of Kansas govern this Agreement.", "Kansas"),
    ("This Agreement shall be construed in accordance with, and governed by, the laws of, the State of Georgia.",
     "Georgia"),  # a comma between "laws of" and the place
    ("This Agreement shall be governed by the laws of Mainland China.", "China"),
    ("This Agreement shall be governed by the laws of the Hong Kong Special Administrative Region.", "Hong Kong"),
    ("This Agreement shall be governed by the laws of Hong Kong SAR.", "Hong Kong"),
    ("THIS AGREEMENT SHALL BE GOVERNED BY THE LAWS OF THE PROVINCE OF ALBERTA AND THE FEDERAL LAWS OF CANADA "
     "APPLICABLE THEREIN.", "ALBERTA, CANADA"),  # the Canadian formula in capitals
])
def test_governing_law_in_its_usual_forms(legal, clause, law):
    assert laws(clause, legal) == {law}


@pytest.mark.parametrize("clause, law", [
    ("All disputes arising hereunder shall be governed by the laws of the State of Texas.", "Texas"),
    ("The rights and duties of the parties shall be construed in accordance with the laws of Ontario.", "Ontario"),
    ("Governing Law. The laws of the Commonwealth of Kentucky shall govern.", "Kentucky"),
    ("14. Governing Law: Nevada.", "Nevada"),  # a law named in a heading
    ("GOVERNING LAW - STATE OF OHIO\n\nThe courts shall apply it.", "OHIO"),
    ("Choice of Law (Arizona).", "Arizona"),
    ("Governing Law. The laws of the State of Vermont shall apply.", "Vermont"),  # "apply", "control"
    ("Choice of Law. The laws of Wyoming, without regard to conflicts principles, will control.", "Wyoming"),
    ("Any dispute hereunder shall be settled in accordance with the laws of the State of Oregon.", "Oregon"),
    ("The rights of the parties hereunder shall be determined by the laws of the State of Maine.", "Maine"),
])
def test_governing_law_of_a_sentence_that_does_not_name_the_contract(legal, clause, law):
    """A governing-law clause is the contract's own even where its sentence does not say
    "this Agreement": the words that state it stand for the contract."""
    assert laws(clause, legal) == {law}


@pytest.mark.parametrize("clause", [
    "The Escrow Agreement shall be governed by the laws of the State of Utah.",  # another agreement's law
    "Buyer shall comply with the laws of the State of Utah in all its sales.",  # no word states a governing law
    "Governing Law: This Agreement is to be read as a whole.",  # the heading's next word is no place
    "This Agreement shall be governed by British law.",  # an adjective that names no single legal system
    "Each party shall comply with all laws (including export laws) of the United States.",
    "Seller is a company duly organized under the laws of the State of Utah.",  # where a party was formed
    "Seller is a limited liability company formed under the laws of the State of Utah.",
    "Seller, a company registered under the laws of Ireland, shall ship the goods.",
])
def test_no_governing_law_where_none_is_named(legal, clause):
    assert laws(clause, legal) == set()


def test_notices_hereunder_name_no_party(legal):
    """"hereof" stands for the contract, "hereunder" and "hereto" do not: the addressee of a
    copy of a notice is not a party."""
    text = PREAMBLE + ("All notices hereunder shall be sent to the parties at their addresses, with a copy to "
                       "Quarry Lane Partners LLP.")
    _, relations = read(text, legal)
    assert {t for _, r, t in relations if r == "HAS_PARTY"} == {"Alder Freight Corp.", "Birchmoor Mills LLC"}


RENEWING = PREAMBLE + (
    "This Agreement shall commence on March 3, 2021 and continue in effect for nine (9) months (the \"Initial "
    "Term\"). This Agreement shall automatically renew for successive nine (9) month periods unless either party gives notice "
    "of its intent not to renew at least nine (9) months before the end of the then-current term.")


def test_a_recurring_period_is_not_the_plain_period_of_the_same_length(legal):
    """"successive nine (9) month periods" renews; "nine (9) months" is the initial term and
    the notice: two things of one length, never one node."""
    entities, relations = read(RENEWING, legal)
    durations = {e["name"] for e in entities if e["type"] == "Duration"}
    assert durations == {"nine (9) months", "successive nine (9) month periods"}
    ends = {(r, t) for _, r, t in relations if t in durations}
    assert ("RENEWAL_TERM", "successive nine (9) month periods") in ends
    assert ("NOTICE_PERIOD_TO_TERMINATE_RENEWAL", "nine (9) months") in ends
    assert ("NOTICE_PERIOD_TO_TERMINATE_RENEWAL", "successive nine (9) month periods") not in ends
    assert ("INITIAL_TERM", "successive nine (9) month periods") not in ends


def test_the_merge_keeps_a_recurring_period_apart(legal):
    found = [Mention("nine (9) months", "Duration"), Mention("successive nine (9) month periods", "Duration"),
             Mention("9 months", "Duration")]
    nodes = merge_entities(found, legal).nodes
    assert sorted(sorted([n.name, *n.aliases]) for n in nodes) == [
        ["9 months", "nine (9) months"], ["successive nine (9) month periods"]]


def test_eval_matches_a_plain_period_to_the_plain_gold_one(legal):
    """Gold names a renewal "successive 9 months" and a notice period "9 months": each
    prediction meets its own, and a recurring one never the plain one."""
    gold = [{"name": "successive 9 months", "type": "Duration", "aliases": []},
            {"name": "9 months", "type": "Duration", "aliases": []}]
    matcher = NameMatcher(gold, literal_kinds=value_kinds({"Duration"}, legal))
    assert matcher.resolve("nine (9) months", type_name="Duration")[0] == "9 months"
    assert matcher.resolve("successive nine (9) month periods", type_name="Duration")[0] == "successive 9 months"
    only_plain = NameMatcher(gold[1:], literal_kinds=value_kinds({"Duration"}, legal))
    assert only_plain.resolve("successive nine (9) month periods", type_name="Duration")[1] != "value"


def test_a_trigger_takes_the_date_right_after_it(legal):
    """"dated June 2, effective as of July 9": "effective as of" is July 9's cue, not a cue
    just after June 2; and "the Effective Date" is a date's name, not a cue for the end date."""
    text = ('This Hosting Agreement ("Agreement") between Alder Freight Corp. ("Customer") and Birchmoor Mills LLC '
            '("Host") is dated June 2, 2023, effective as of July 9, 2023 ("Effective Date").\n\n'
            'This Agreement shall begin on the Effective Date and shall continue until March 31, 2024.')
    _, relations = read(text, legal)
    dates = {(r, t) for _, r, t in relations if r.endswith("_DATE")}
    assert dates == {("AGREEMENT_DATE", "June 2, 2023"), ("EFFECTIVE_DATE", "July 9, 2023"),
                     ("EXPIRATION_DATE", "March 31, 2024")}


def test_a_period_that_names_its_renewal_is_no_initial_term(legal):
    text = PREAMBLE + ('The initial term of this Agreement shall be four (4) years; thereafter the Initial Term shall '
                       'be subject to automatic successive renewal terms of two (2) years each.')
    _, relations = read(text, legal)
    ends = {(r, t) for _, r, t in relations if r in ("INITIAL_TERM", "RENEWAL_TERM")}
    assert ("RENEWAL_TERM", "successive renewal terms of two (2) years") in ends
    assert ("INITIAL_TERM", "successive renewal terms of two (2) years") not in ends


@pytest.mark.parametrize("clause, found", [
    ("There are no third-party beneficiaries of this Agreement.", False),
    ("Nothing in this Agreement shall confer upon any person any third party beneficiary rights.", False),
    ("Each Affiliate of Alder Freight Corp. is an intended third party beneficiary of this Agreement.", True),
])
def test_a_clause_denying_third_party_beneficiaries_is_not_one(legal, clause, found):
    _, relations = read(PREAMBLE + clause, legal)
    assert (("Supply Agreement", "HAS_CLAUSE", "Third Party Beneficiary") in relations) is found


CANADIAN = ("SUPPLY AGREEMENT\n\nThis Supply Agreement is made by Alder Freight Corp. (\"Buyer\") and Birchmoor Mills "
            "LLC (\"Seller\").\n\n23. Governing Law. This Agreement shall be governed by the laws of the Province of "
            "Manitoba and the federal laws of Canada applicable therein, and the courts of the Province of Manitoba "
            "shall hear any dispute under this Agreement.\n")


def test_a_province_with_the_federal_laws_of_its_country_is_one_jurisdiction(tmp_path):
    """The usual Canadian formula names one law, "Manitoba, Canada": not Manitoba and Canada
    apart. The name is not written as such, so the graph checks that the quote writes both
    parts, and "Manitoba" alone is an alias of that node."""
    import json

    from kgkit.engine.run import extract

    (tmp_path / "supply.txt").write_text(CANADIAN, encoding="utf-8")
    extract([tmp_path / "supply.txt"], domain="legal_contracts", views=["binary"], out_dir=tmp_path / "out")
    folder = tmp_path / "out" / "supply"
    nodes = json.loads((folder / "nodes.json").read_text())["nodes"]
    laws = [n for n in nodes if n["type"] == "Jurisdiction"]
    assert [(n["name"], n["aliases"]) for n in laws] == [("Manitoba, Canada", ["Manitoba"])]
    names = {n["id"]: n["name"] for n in nodes}
    edges = json.loads((folder / "views" / "binary.json").read_text())["edges"]
    assert {(names[e["tail"]], e["relation"]) for e in edges if e["relation"] in ("GOVERNING_LAW", "JURISDICTION")} \
        == {("Manitoba, Canada", "GOVERNING_LAW"), ("Manitoba, Canada", "JURISDICTION")}


def test_where_a_party_was_formed_is_no_governing_law_even_in_the_preamble(legal):
    """The preamble names the contract and where each party was formed: no law governs it there."""
    text = ('This Supply Agreement is made by Alder Freight Corp., a corporation formed under the laws of the State '
            'of Utah ("Buyer"), and Birchmoor Mills LLC, a company established under the laws of Ireland ("Seller").'
            '\n\nThis Agreement shall be governed by the laws of the State of Utah.')
    _, relations = read(text, legal)
    laws = [(r, t) for _, r, t in relations if r == "GOVERNING_LAW"]
    assert laws == [("GOVERNING_LAW", "Utah")]  # from the governing-law clause, and no Ireland


def test_a_value_needs_a_cue_that_binds_it(legal):
    """A period the sentence gives for another purpose is not the term because "the term of
    this Agreement" is in the same sentence: a value is bound only by a trigger that binds it."""
    text = PREAMBLE + ("During the term of this Agreement and for a period of six (6) months thereafter, neither party "
                       "shall solicit the employees of the other.")
    _, relations = read(text, legal)
    assert not [t for _, r, t in relations if r == "INITIAL_TERM"]


def test_a_period_inside_a_longer_period_is_that_period(legal):
    """"two (2) years" inside "successive renewal terms of two (2) years" is the renewal,
    not an initial term of its own."""
    text = PREAMBLE + ('The initial term of this Agreement shall be four (4) years; thereafter the Initial Term shall '
                       'be subject to automatic successive renewal terms of two (2) years each. Each warranty runs '
                       'for two (2) years.')
    entities, relations = read(text, legal)
    assert "two (2) years" in {e["name"] for e in entities}
    assert ("Supply Agreement", "INITIAL_TERM", "two (2) years") not in relations


def test_a_date_cue_takes_the_date_after_it_not_one_before_the_title(legal):
    """A date line above the title is not the date the contract is made: "entered into as of"
    is the cue of the date written after it."""
    text = ('May 4, 2017 Supply Agreement This Supply Agreement (this "Agreement") is entered into as of May 26, 2017 '
            '(hereinafter referred to as the date of the Agreement), by and between Alder Freight Corp. ("Buyer") and '
            'Birchmoor Mills LLC ("Seller").')
    _, relations = read(text, legal)
    assert {(r, t) for _, r, t in relations if r.endswith("_DATE")} == {("AGREEMENT_DATE", "May 26, 2017")}


def test_the_agreement_is_the_document_beside_another_agreement(legal):
    """"The Agreement", capitalised, is the contract's word for itself even where the text
    names another agreement; the other is called by its own name."""
    text = ('SUPPLY AGREEMENT\n\nThis Supply Agreement is made by Alder Freight Corp. ("Buyer") and Birchmoor Mills '
            'LLC ("Seller").\n\nFORM OF WAREHOUSE AGREEMENT\n\n'
            'The Agreement shall be governed by the laws of the State of Ohio.')
    entities, relations = read(text, legal)
    assert len([e for e in entities if e["type"] == "Agreement"]) == 2
    assert {(h, r, t) for h, r, t in relations if r == "GOVERNING_LAW"} == {("SUPPLY AGREEMENT", "GOVERNING_LAW", "Ohio")}


def test_a_cue_in_the_parenthesis_after_a_date_is_that_dates(legal):
    """A long parenthesis after the date ("hereinafter referred to as the effective date of
    the Agreement") names that date, however long it is, and not a date line above the title."""
    text = ('May 4, 2017 Supply Agreement This Supply Agreement (this "Agreement") is entered into as of May 26, 2017 '
            '(hereinafter referred to as the effective date of the Agreement), by and between Alder Freight Corp. '
            '("Buyer") and Birchmoor Mills LLC ("Seller").')
    _, relations = read(text, legal)
    assert {(r, t) for _, r, t in relations if r.endswith("_DATE")} == {
        ("AGREEMENT_DATE", "May 26, 2017"), ("EFFECTIVE_DATE", "May 26, 2017")}


ENGLISH = ('MAINTENANCE AGREEMENT\n\nThis Maintenance Agreement is made by Alder Freight Corp. ("Buyer") and '
           'Birchmoor Mills LLC ("Seller").\n\n19. Governing Law. This Agreement shall be governed by English law.\n')


def test_a_law_named_by_its_adjective_is_the_place(tmp_path):
    """"English law" is England's: the node is named by the place, the adjective is its
    alias, and its mention stands where the adjective is written."""
    import json

    from kgkit.engine.run import extract

    (tmp_path / "maintenance.txt").write_text(ENGLISH, encoding="utf-8")
    extract([tmp_path / "maintenance.txt"], domain="legal_contracts", views=["binary"], out_dir=tmp_path / "out")
    folder = tmp_path / "out" / "maintenance"
    nodes = json.loads((folder / "nodes.json").read_text())["nodes"]
    (law,) = [n for n in nodes if n["type"] == "Jurisdiction"]
    assert (law["name"], law["aliases"]) == ("England", ["English"])
    assert {ENGLISH[slice(*m["span"])] for m in law["mentions"]} == {"English"}
    edges = json.loads((folder / "views" / "binary.json").read_text())["edges"]
    assert [(e["relation"], e["tail"]) for e in edges if e["relation"] == "GOVERNING_LAW"] == [("GOVERNING_LAW",
                                                                                              law["id"])]


@pytest.mark.parametrize("text, kept, written, held", [
    (CANADIAN, "Manitoba, Canada", "Manitoba", "Manitoba, France"),  # both parts written, the second not
    (ENGLISH, "England", "English", "France"),  # the place's adjective written, another place's not
])
def test_a_place_the_quote_writes_apart_or_by_its_adjective_is_kept(text, kept, written, held):
    """The grounding gate keeps "Manitoba, Canada" for a quote that writes both parts, and
    "England" for one that writes "English"; it holds back a name the quote does not write
    so."""
    from kgkit.documents.types import Document
    from kgkit.modes.base import Locator

    sentence = text.split("\n\n")[2].strip()
    doc = Document(id="d_t", name="t", text=text, source="-", media_type="text/plain", sha256="0" * 64)
    chunk = Chunk(id="c_0", doc_id="d_t", index=0, text=text, start=0, end=len(text))
    review: list = []
    locate = Locator(doc, chunk, "entities", 90.0, 0.0, review, {}, False, set())
    place, verified = locate.mention({"name": kept, "type": "Jurisdiction"}, kept, sentence)
    assert verified and text[slice(*place["span"])] == written
    none, _ = locate.mention({"name": held, "type": "Jurisdiction"}, held, sentence)
    assert none is None and "does not occur" in review[-1]["reason"]


def test_this_and_a_name_of_the_agreement_is_the_contract_whatever_its_title(legal):
    """"This Endorsement Agreement" in a contract titled "Promotion and Endorsement
    Agreement" is that contract: its law is the document's, not another agreement's."""
    text = ('PROMOTION AND ENDORSEMENT AGREEMENT\n\nThis Endorsement Agreement is made by Alder Freight Corp. '
            '("Buyer") and Birchmoor Mills LLC ("Seller").\n\nThis Endorsement Agreement shall be governed by the '
            'laws of the State of Colorado.')
    _, relations = read(text, legal)
    assert {(h, t) for h, r, t in relations if r == "GOVERNING_LAW"} == {("PROMOTION AND ENDORSEMENT AGREEMENT",
                                                                           "Colorado")}


# A governing-law clause as a page layout leaves it: the same clause, cut or wrapped.
CLAUSE = "This Agreement shall be governed by and construed in accordance with the laws of the State of Colorado."
HALF = CLAUSE.index("the laws")


@pytest.mark.parametrize("text", [
    CLAUSE[:HALF] + "\n\n7\n\nSource: HOLLOWAY TRUST CO, 10-Q, 4/2/2009\n\n\n\n" + CLAUSE[HALF:],  # a page break
    CLAUSE[:HALF] + "\n\n- 7 -\n\nCONFIDENTIAL TREATMENT REQUESTED\n\n" + CLAUSE[HALF:],  # a footer in capitals
    CLAUSE[:HALF] + "\n\nPage 7 of 12\n" + CLAUSE[HALF:],
    CLAUSE[:HALF] + "\n\n" + CLAUSE[HALF:],  # a blank line, the clause going on in lower case
    CLAUSE.replace("the State of ", "the State of\n\n7\n\n"),  # the break before the place's name
    "THIS AGREEMENT SHALL BE GOVERNED BY AND CONSTRUED IN\nACCORDANCE WITH THE LAWS OF THE\nSTATE OF COLORADO.",
    "12.3 Governing Law.\n" + CLAUSE,  # a numbered heading on the line before
    "GOVERNING LAW\n\n" + CLAUSE,
    CLAUSE.replace(" ", "\u00a0"),  # non-breaking spaces
])
def test_governing_law_survives_the_layout(legal, text):
    assert {name.title() for name in laws(text, legal)} == {"Colorado"}


def test_a_page_break_is_quoted_as_written(legal):
    """The rules read across the break; the evidence is the document's own words."""
    text = PREAMBLE + CLAUSE[:HALF] + "\n\n7\n\n" + CLAUSE[HALF:]
    ents = _run(ENTITIES, text, {"domain": legal})["entities"]
    nodes = [{"name": e["name"], "type": e["type"]} for e in ents]
    next(n for n in nodes if n["type"] == "Agreement")["document"] = True
    rels = _run(RELATIONS, text, {"domain": legal, "entities": nodes})["relations"]
    law = next(r for r in rels if r["relation"] == "GOVERNING_LAW")
    assert law["evidence"] in text and "\n\n7\n\n" in law["evidence"]

