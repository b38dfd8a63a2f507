"""The offline backend through its public contract: PassRequest in, PassResult out."""
from __future__ import annotations

import pytest

from kgkit.backends.base import ENTITIES, RELATIONS, UPGRADE, Backend, PassRequest
from kgkit.backends.offline import OfflineBackend, register_handler
from kgkit.catalog.load import load_domain, load_view
from kgkit.documents.types import Chunk
from kgkit.engine.core import ENTITIES_SCHEMA, RELATIONS_SCHEMA
from kgkit.modes.base import validate_answer

# Excerpts of CUAD v1 contracts (CC BY 4.0; the Atticus Project), quoted here so no shared data is needed:
# cuad_ENTERTAINMENTGAMINGASIAINC_Distributor.txt (preamble and governing law, joined)
DISTRIBUTOR = (
    'This Agreement is entered into as of January 21, 2005 (the "Effective Date") by and among VendingData '
    'Corporation, a Nevada corporation ("Vendor"), and Technical Casino Supplies Ltd, an English company '
    '("Distributor").\n\nThis Agreement shall be governed by, construed in accordance with the laws of Ontario, Canada.'
)
# after cuad_CCAINDUSTRIESINC_Outsourcing.txt (title block, preamble, term clause; the notice
# period changed to three months so it is not the renewal term's value)
OUTSOURCING = (
    "SERVICES OUTSOURCING AGREEMENT\n\n"
    'This Services Outsourcing Agreement (this "Agreement") is made as of January 20, 2014 (Date), between CCA '
    'Industries, Inc. ("Company"), and Emerson HealthCare, LLC, a Pennsylvania limited liability company '
    '("Contractor").\n\n'
    'This agreement shall automatically renew for successive six (6) month periods unless written notice is '
    "provided of either party's intent not to renew at least three (3) months before the end of the then-current term."
)
# cuad_COOLTECHNOLOGIES_Strategic_Alliance.txt
COOL_TECH = (
    'This Strategic Alliance Agreement (this "Agreement") is entered into as of the 26t h day of May, 2017 '
    "(hereinafter referred to as the effective date of the Agreement), by and between Cool Technologies Inc.., a "
    'Nevada corporation (hereinafter referred to as "COOL TECH"), and VETERAN TECHNOLOGY GROUP, LLC, a Missouri '
    'corporation (hereinafter referred to as "VET TECH"). F. Governing Law: This Agreement shall be governed by '
    "and construed in accordance with the laws of the State of Missouri."
)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.chdir(tmp_path)


def request(kind, text, context, schema=None, **kw):
    chunk = Chunk(id="c_test", doc_id="d_test", index=0, text=text, start=0, end=len(text))
    schema = schema or {ENTITIES: ENTITIES_SCHEMA, RELATIONS: RELATIONS_SCHEMA}[kind]
    return PassRequest(kind=kind, stage=kind, chunk=chunk, schema=schema, context=context, prompt=f"{kind}.j2", **kw)


def core(text, domain, skills=()):
    backend = OfflineBackend()
    ents = backend.run(request(ENTITIES, text, {"domain": domain, "skills": list(skills)}))
    assert ents.ok, ents.error
    nodes = [{"name": e["name"], "type": e["type"], "aliases": e.get("aliases", [])} for e in ents.data["entities"]]
    rels = backend.run(request(RELATIONS, text, {"domain": domain, "entities": nodes, "skills": list(skills)}))
    assert rels.ok, rels.error
    return ents.data["entities"], {(r["head"], r["relation"], r["tail"]) for r in rels.data["relations"]}


@pytest.fixture(scope="module")
def legal():
    return load_domain("legal_contracts")


def test_is_a_backend_and_describes_itself():
    backend = OfflineBackend()
    assert isinstance(backend, Backend)
    assert backend.describe() == {"backend": "offline", "version": "8"}


def test_contract_preamble_gives_parties_with_their_defined_roles_dates_and_governing_law(legal):
    entities, relations = core(DISTRIBUTOR, legal)
    by_name = {e["name"]: e for e in entities}
    assert by_name["VendingData Corporation"]["type"] == "Party"
    assert by_name["VendingData Corporation"]["aliases"] == ["Vendor"]
    assert by_name["Technical Casino Supplies Ltd"]["aliases"] == ["Distributor"]
    assert by_name["January 21, 2005"]["type"] == "Date"  # named as written; nodes get the ISO value
    assert by_name["Ontario, Canada"]["type"] == "Jurisdiction"
    assert "Nevada corporation" not in " ".join(by_name)  # "a Nevada corporation" describes, it does not name
    assert all(e["evidence"] in DISTRIBUTOR for e in entities)  # evidence is the sentence, verbatim
    assert by_name["Ontario, Canada"]["evidence"].startswith("This Agreement shall be governed")


def test_contract_relations_are_headed_by_the_agreement(legal):
    _, relations = core(OUTSOURCING, legal)
    agreement = "SERVICES OUTSOURCING AGREEMENT"
    assert {
        (agreement, "HAS_PARTY", "CCA Industries, Inc."),
        (agreement, "HAS_PARTY", "Emerson HealthCare, LLC"),
        (agreement, "AGREEMENT_DATE", "January 20, 2014"),
        (agreement, "RENEWAL_TERM", "successive six (6) month periods"),
        (agreement, "NOTICE_PERIOD_TO_TERMINATE_RENEWAL", "three (3) months"),
    } <= relations
    # "renew" inside "intent not to renew" is the notice trigger, not a second renewal term
    assert (agreement, "RENEWAL_TERM", "three (3) months") not in relations


def test_broken_ordinals_and_hereinafter_definitions(legal):
    entities, relations = core(COOL_TECH, legal)
    by_name = {e["name"]: e for e in entities}
    assert by_name["Cool Technologies Inc."]["aliases"] == ["COOL TECH"]
    assert by_name["VETERAN TECHNOLOGY GROUP, LLC"]["aliases"] == ["VET TECH"]
    assert ("Strategic Alliance Agreement", "AGREEMENT_DATE", "26t h day of May, 2017") in relations  # as written
    assert ("Strategic Alliance Agreement", "GOVERNING_LAW", "Missouri") in relations
    assert ("Strategic Alliance Agreement", "HAS_PARTY", "VETERAN TECHNOLOGY GROUP, LLC") in relations


def test_same_request_same_answer_whatever_the_temperature(legal):
    """At temperature 0 every sample is the one answer; above it a sample may leave rules
    out (kgkit.backends.offline.sampling), but the same sample answers alike every time and
    only loses what the rules find."""
    backend = OfflineBackend()
    cold = backend.run(request(ENTITIES, COOL_TECH, {"domain": legal}))
    assert all(backend.run(request(ENTITIES, COOL_TECH, {"domain": legal}, sample=i)).data == cold.data
               for i in range(3))
    for i in range(3):
        hot = [backend.run(request(ENTITIES, COOL_TECH, {"domain": legal}, temperature=0.9, sample=i))
               for _ in range(2)]
        assert hot[0].data == hot[1].data
        assert all(e in cold.data["entities"] for e in hot[0].data["entities"])
    assert cold.requests == 0 and cold.model == "offline"


def test_relation_skills_act_as_triggers():
    domain = load_domain("general")
    text = "Mr. John Smith, a longtime staffer at Acme Corp., retired."
    skill = {"id": "sk_1", "kind": "relation", "target": "Work_For",  # an alias of works_for
             "pattern": {"phrases": ["staffer at"], "regex": []}}
    _, without = core(text, domain)
    _, with_skill = core(text, domain, [skill])
    assert ("John Smith", "works_for", "Acme Corp.") not in without
    assert ("John Smith", "works_for", "Acme Corp.") in with_skill


def test_entity_skills_add_patterns():
    domain = load_domain("general")
    skill = {"id": "sk_2", "kind": "entity", "target": "Organization", "pattern": {"phrases": ["Globex"]}}
    names = {(e["name"], e["type"]) for e in core("Globex hired Jane.", domain, [skill])[0]}
    assert ("Globex", "Organization") in names
    assert ("Globex", "Organization") not in {(e["name"], e["type"]) for e in core("Globex hired Jane.", domain)[0]}


def test_answers_are_checked_against_the_request_schema_once(legal):
    """Extraction answers are checked by the engine (validate_answer), not again here;
    answers of kinds the engine does not check (the skill passes) are checked here."""
    strict = {"type": "object", "required": ["entities", "nothing_like_this"]}
    result = OfflineBackend().run(request(ENTITIES, DISTRIBUTOR, {"domain": legal}, schema=strict))
    assert result.ok and "entities" in result.data
    assert "nothing_like_this" in validate_answer(result.data, strict)
    register_handler("test_off_schema", lambda req: {"echo": 1})
    req = PassRequest(kind="test_off_schema", stage="skills", chunk=Chunk("c", "d", 0, "x", 0, 1),
                      schema={"type": "object", "required": ["nothing_like_this"]}, context={}, prompt="x")
    result = OfflineBackend().run(req)
    assert not result.ok and "does not match the pass schema" in result.error and result.raw


def test_unknown_pass_kind_is_a_failure_not_a_crash():
    req = PassRequest(kind="no_such_pass", stage="x", chunk=Chunk("c", "d", 0, "x", 0, 1), schema={}, context={},
                      prompt="x")
    result = OfflineBackend().run(req)
    assert not result.ok and "cannot answer 'no_such_pass' passes" in result.error


def test_other_modules_register_pass_kinds():
    register_handler("test_echo", lambda req: {"echo": req.chunk.text})
    req = PassRequest(kind="test_echo", stage="skills", chunk=Chunk("c", "d", 0, "hi", 0, 2),
                      schema={"type": "object", "required": ["echo"]}, context={}, prompt="x")
    assert OfflineBackend().run(req).data == {"echo": "hi"}


def _upgrade(view_name, text, domain, entities=(), skeleton=()):
    view = load_view(view_name)
    ctx = {"domain": domain, "view": view, "entities": list(entities), "skeleton": list(skeleton)}
    if view.template is not None:
        ctx["template"] = view.template
    result = OfflineBackend().run(request(UPGRADE, text, ctx, schema=view.output_schema))
    assert result.ok, result.error
    return result.data


def test_nary_fills_roles_by_type():
    domain = load_domain("biomedical")
    text = "Coadministration of ketoconazole with midazolam, a CYP3A4 substrate, caused sedation."
    entities = [{"name": "ketoconazole", "type": "Drug", "aliases": []}, {"name": "midazolam", "type": "Drug", "aliases": []},
                {"name": "CYP3A4", "type": "Gene", "aliases": []}, {"name": "sedation", "type": "AdverseEffect", "aliases": []}]
    hyper = _upgrade("nary", text, domain, entities)["hyperedges"]
    ddi = next(h for h in hyper if h["relation"] == "DrugInteraction")
    assert ddi["roles"] == {"perpetrator": "ketoconazole", "victim": "midazolam", "enzyme": "CYP3A4", "effect": "sedation"}


def test_temporal_qualifies_skeleton_edges_with_declared_qualifiers():
    domain = load_domain("general")
    text = "Mr. John Doe has worked for Acme Corp. since March 3, 2015."
    entities = [{"name": "John Doe", "type": "Person", "aliases": []}, {"name": "Acme Corp.", "type": "Organization", "aliases": []}]
    skeleton = [{"id": "e1", "head": "John Doe", "relation": "works_for", "tail": "Acme Corp."}]
    [edge] = _upgrade("temporal", text, domain, entities, skeleton)["edges"]
    assert edge["qualifiers"] == {"start_date": "March 3, 2015"}


def test_event_has_trigger_arguments_and_time():
    domain = load_domain("legal_contracts")
    entities = [{"name": "VendingData Corporation", "type": "Party", "aliases": ["Vendor"]}]
    text = "Vendor shall pay $25,000 on January 21, 2005."
    [event] = [e for e in _upgrade("event", text, domain, entities)["events"] if e["type"] == "Payment"]
    assert event["trigger"] == "pay"
    assert event["arguments"]["payer"] == "VendingData Corporation"
    assert event["arguments"]["amount"] == {"literal": "$25,000", "type": "money"}
    assert event["time"] == "January 21, 2005"


def test_diy_uses_only_the_template():
    text = "Licensee shall pay Licensor a fee of $10,000 within thirty (30) days of invoice."
    answer = _upgrade("diy:contract_review", text, load_domain("general"))
    assert {"name": "Licensor", "type": "Party"}.items() <= next(e for e in answer["entities"] if e["name"] == "Licensor").items()
    payment = next(r for r in answer["relations"] if r["relation"] == "payment")
    assert payment["roles"] == {"payer": "Licensee", "payee": "Licensor", "amount": "$10,000", "due_in": "thirty (30) days"}


def test_temporal_reads_values_that_are_also_entities(legal):
    """A date that is a V_doc node (named by its ISO value) still qualifies an edge."""
    entities = [{"name": "DISTRIBUTOR AGREEMENT", "type": "Agreement", "aliases": []},
                {"name": "VendingData Corporation", "type": "Party", "aliases": ["Vendor"]},
                {"name": "2005-01-21", "type": "Date", "aliases": []}]
    skeleton = [{"id": "e1", "head": "DISTRIBUTOR AGREEMENT", "relation": "HAS_PARTY", "tail": "VendingData Corporation"}]
    [edge] = _upgrade("temporal", DISTRIBUTOR.split("\n\n")[0], legal, entities, skeleton)["edges"]
    assert edge["qualifiers"] == {"effective_date": "January 21, 2005"}


def test_boilerplate_fragments_and_role_words_are_no_entities(legal):
    """Shape rules, not word lists of one document: an all-caps run of clause words is
    boilerplate, a pattern find ending in a function word is cut back, a year closing a
    capitalised title is part of the title, a document title is never a person."""
    text = ("IF ANY REMEDY IN THIS AGREEMENT FAILS, THE TWELVE MONTH PERIOD SHALL BE LIMITED.\n"
            "Benefits are taxed under the Internal Revenue Code of 1986, as amended.\n"
            "The Stock Purchase Agreement was signed by Mary Quinn, Chief Executive Officer.")
    legal_names = {e["name"] for e in core(text, legal)[0]}
    assert not [n for n in legal_names if "REMEDY" in n or "SHALL" in n]
    heading = "4.1 Duties and Obligations Company. The Company warrants that Acme Holdings Company is solvent."
    assert {e["name"] for e in core(heading, legal)[0] if e["type"] == "Party"} == {"Acme Holdings Company"}
    general_entities = core(text, load_domain("general"))[0]
    assert not [e for e in general_entities if e["type"] == "Date"]  # "of 1986" names the Code
    assert not [e for e in general_entities if e["type"] == "Person" and e["name"] in
                ("Stock Purchase Agreement", "Chief Executive Officer", "Officer")]
    answer = _upgrade("diy:contract_review", "The Supplier shall perform the\nservices and shall reimburse i\n",
                      load_domain("general"))
    obligations = {e["name"] for e in answer["entities"] if e["type"] == "Obligation"}
    assert obligations and not [o for o in obligations if o.split()[-1] in ("the", "i")]


def test_validate_answer_fast_yes_and_python_no_agree():
    """The compiled check only lets valid answers through early; every no, and every schema
    it cannot judge like jsonschema (pattern), is decided and worded by jsonschema."""
    schema = {"type": "object", "required": ["items"], "properties": {"items": {"type": "array", "items": {
        "type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}}}}
    assert validate_answer({"items": [{"name": "a"}]}, schema) is None
    assert "items/0/name" in validate_answer({"items": [{"name": 3}]}, schema)
    patterned = {"type": "object", "properties": {"code": {"type": "string", "pattern": "^[A-Z]+$"}}}
    assert validate_answer({"code": "ABC"}, patterned) is None
    assert "code" in validate_answer({"code": "abc"}, patterned)


def test_grouped_phrase_regex_matches_as_the_flat_alternation():
    """compile_phrases groups phrases by first character; the matches are the flat
    alternation's, overlaps, case, spacing, non-ASCII and window ends included."""
    import re

    from kgkit.backends.offline.phrases import compile_phrases, phrase_pattern

    text = ("In the United States of America, US and U.S. firms (AT&T) met. \u212aelvin k K x\ty xy É é "
            "UNITED\n STATES USA us-based united states of america")
    ascii_phrases = ("US", "U.S.", "United States", "united  states of america", "Kelvin", "k", "AT&T", "x y")
    for phrases in (ascii_phrases, ascii_phrases + ("É",)):  # a non-ASCII first character: the flat form
        ordered = sorted(set(phrases), key=lambda p: (-len(p), p))
        flat = re.compile(r"(?<![\w])(?:" + "|".join(phrase_pattern(p) for p in ordered) + r")(?![\w])", re.I)
        grouped = compile_phrases(phrases)
        assert [m.span() for m in grouped.finditer(text)] == [m.span() for m in flat.finditer(text)]
        for start in range(0, len(text), 7):
            assert ([m.span() for m in grouped.finditer(text, start, start + 20)]
                    == [m.span() for m in flat.finditer(text, start, start + 20)])
        assert (grouped.pattern != flat.pattern) == (phrases == ascii_phrases)
