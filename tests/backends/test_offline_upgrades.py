"""The offline upgrade views (nary, temporal, event, diy) on real documents.

The README quickstart's contract (examples/cooltech_strategic_alliance.pdf, CUAD v1,
CC BY 4.0) goes through ``kgkit.extract`` and the view files are read back by node name;
short excerpts go through the backend's public contract where one rule is the point.
"""
from __future__ import annotations

from pathlib import Path

import pytest

import kgkit
from kgkit.backends.base import UPGRADE, PassRequest
from kgkit.backends.offline import OfflineBackend
from kgkit.catalog.load import load_domain, load_view
from kgkit.config.model import Config
from kgkit.documents.types import Chunk

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cooltech_strategic_alliance.pdf"
VIEWS = ["nary", "temporal", "event", "diy:contract_review"]
AGREEMENT, COOL, VET = "Strategic Alliance Agreement", "Cool Technologies Inc.", "VETERAN TECHNOLOGY GROUP, LLC"


def _extract(out: Path):
    [run] = kgkit.extract(str(EXAMPLE), domain="legal_contracts", views=VIEWS, config=Config(), out_dir=str(out))
    return run


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    mp = pytest.MonkeyPatch()
    mp.setenv("KGKIT_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))
    mp.setenv("KGKIT_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    mp.chdir(tmp_path_factory.mktemp("cwd"))
    try:
        yield _extract(tmp_path_factory.mktemp("out"))
    finally:
        mp.undo()


def _named(run):
    """A reader that turns a role filler into a node name or (literal text, normalised value)."""
    names = {n["id"]: n["name"] for n in run.nodes}

    def show(filler):
        if isinstance(filler, list):
            return [show(f) for f in filler]
        return names[filler["node"]] if "node" in filler else (filler["literal"], filler["value"])

    return names, show


def test_quickstart_views_are_filled(run):
    counts = {view: len(next(v for k, v in payload.items() if isinstance(v, list)))
              for view, payload in run.views.items()}
    # before this rule set: nary 1, temporal 2, event 7 (one with the header's date), diy 0
    assert counts["nary"] >= 8 and counts["temporal"] >= 4 and counts["event"] >= 6
    assert counts["diy:contract_review"] >= 9  # fragments ("perform the") now join their obligation ("perform")


def test_party_edges_carry_the_effective_date_and_not_the_header_date(run):
    names, _ = _named(run)
    edges = {(names[e["head"]], e["relation"], names[e["tail"]]): e for e in run.views["temporal"]["edges"]}
    for party in (COOL, VET):
        qualifiers = edges[(AGREEMENT, "HAS_PARTY", party)]["qualifiers"]
        assert qualifiers["effective_date"]["value"] == "2017-05-26"
        # "May 04, 2017" heads the exhibit: no expiration trigger binds it
        assert "expiration_date" not in qualifiers
    renewal = edges[(AGREEMENT, "RENEWAL_TERM", "successive one year periods")]["qualifiers"]
    assert renewal["notice_period"]["value"] == "P30D"
    # the term comes from the sentence before, whose subject is the agreement ("shall expire … five (5) years")
    assert renewal["term"]["value"] == "P5Y"
    assert all(e["verified"] for e in edges.values())


def test_contract_clauses_become_hyperedges_with_roles_by_type(run):
    _, show = _named(run)
    hyper = [(h["relation"], {role: show(f) for role, f in h["roles"].items()}) for h in run.views["nary"]["hyperedges"]]
    assert ("Renewal", {"agreement": AGREEMENT, "renewal_term": "successive one year periods",
                        "notice_period": "thirty (30) days"}) in hyper
    assert ("Termination", {"agreement": AGREEMENT, "notice_period": "sixty (60) days"}) in hyper  # "upon sixty (60) days … notice"
    assert ("Term", {"agreement": AGREEMENT, "effective_date": "26th day of May, 2017"}) in hyper
    assert ("Term", {"agreement": AGREEMENT, "term": "five (5) years"}) in hyper
    assert ("GoverningLaw", {"agreement": AGREEMENT, "law": "Missouri"}) in hyper
    assert ("Indemnification", {"indemnitor": VET, "indemnitee": COOL}) in hyper
    solicitation = next(roles for rel, roles in hyper if rel == "NonSolicitation")
    assert sorted(solicitation["party"]) == sorted([COOL, VET]) and solicitation["period"] == "six (6) months"
    # "for a period of six (6) months following expiration" outlives the term: it is not one
    assert not any(rel == "Term" and roles.get("term") == "six (6) months" for rel, roles in hyper)


def test_signing_event_is_timed_by_the_date_its_trigger_binds(run):
    _, show = _named(run)
    signing = next(e for e in run.views["event"]["events"] if e["type"] == "Signing" and e["time"])
    assert signing["time"]["value"] == "2017-05-26"
    assert show(signing["arguments"]["date"]) == "26th day of May, 2017"
    assert sorted(show(signing["arguments"]["party"])) == sorted([COOL, VET])


def test_contract_review_roles_point_at_the_skeleton_nodes(run):
    names, show = _named(run)
    view = run.views["diy:contract_review"]
    relations = [(r["relation"], {role: show(f) for role, f in r["roles"].items()}) for r in view["relations"]]
    assert ("governed_by", {"head": AGREEMENT, "tail": "Missouri"}) in relations
    right = next(roles for rel, roles in relations if rel == "termination_right")
    assert right["notice_period"] == "sixty (60) days"
    obligors = {roles["obligor"] for rel, roles in relations if rel == "owes_obligation"}
    assert {COOL, VET} <= obligors  # "COOL TECH" and "VET TECH" are read as the V_doc parties they define
    # the template's own finds add "Each party", never a second node for a party or its defined name
    core_names = {a.lower() for n in run.nodes if n["type"] == "Party" and n["origin"] == "core"
                  for a in [n["name"], *n["aliases"]]}
    added = {n["name"].lower() for n in run.nodes if n["origin"] == "diy:contract_review" and n["type"] == "Party"}
    assert added and not added & core_names


def test_same_document_same_views(run, tmp_path):
    again = _extract(tmp_path / "again")
    assert again.views == run.views


def _answer(view_name, text, domain, entities=(), skeleton=()):
    view = load_view(view_name)
    ctx = {"domain": domain, "view": view, "entities": list(entities), "skeleton": list(skeleton)}
    if view.template is not None:
        ctx["template"] = view.template
    chunk = Chunk(id="c_test", doc_id="d_test", index=0, text=text, start=0, end=len(text))
    result = OfflineBackend().run(PassRequest(kind=UPGRADE, stage=view.name, chunk=chunk, schema=view.output_schema,
                                              context=ctx, prompt="x.j2"))
    assert result.ok, result.error
    return result.data


def _nodes(*pairs):
    return [{"name": n, "type": t, "aliases": []} for n, t in pairs]


def test_a_sentence_about_the_agreement_dates_its_edges_even_where_its_dates_are_nodes():
    text = ("This Supply Agreement is made by and between Acme Corp. and Globex Ltd. "
            "This Agreement shall commence on March 1, 2024 and shall terminate on February 28, 2026.")
    entities = _nodes(("Supply Agreement", "Agreement"), ("Acme Corp.", "Party"), ("Globex Ltd.", "Party"),
                      ("2024-03-01", "Date"), ("2026-02-28", "Date"))
    skeleton = [{"id": "e1", "head": "Supply Agreement", "relation": "HAS_PARTY", "tail": "Acme Corp."},
                {"id": "e2", "head": "Supply Agreement", "relation": "HAS_PARTY", "tail": "Globex Ltd."}]
    edges = _answer("temporal", text, load_domain("legal_contracts"), entities, skeleton)["edges"]
    assert [e["qualifiers"] for e in edges] == [{"effective_date": "March 1, 2024", "expiration_date": "February 28, 2026"}] * 2
    assert all(e["evidence"] == text for e in edges)  # both sentences: the parties' and the dates'


OBLIGATIONS = """name: obligations
extends: legal_contracts
entity_types: [{name: Obligation}]
relation_types:
  - {name: OBLIGED_TO, head: [Party], tail: [Obligation], triggers: [shall, must, agrees to, will]}
qualifiers:
  - {name: deadline, type: duration, relations: [OBLIGED_TO], triggers: [within, no later than]}
  - {name: expiration_date, type: date, relations: [OBLIGED_TO], triggers: [until, expire]}
"""


def test_a_sentence_stating_another_obligation_keeps_its_deadline(tmp_path):
    """"Acme shall pay within 30 days" is about Acme, but it states an obligation of its own
    (the relation's trigger "shall" is in it): its deadline is not the delivery's."""
    (tmp_path / "obligations.yaml").write_text(OBLIGATIONS, encoding="utf-8")
    domain = load_domain(str(tmp_path / "obligations.yaml"))
    text = "Acme Corp. shall deliver the goods. Acme Corp. shall pay within thirty (30) days of invoice."
    entities = _nodes(("Acme Corp.", "Party"), ("deliver the goods", "Obligation"))
    skeleton = [{"id": "e1", "head": "Acme Corp.", "relation": "OBLIGED_TO", "tail": "deliver the goods"}]
    assert _answer("temporal", text, domain, entities, skeleton)["edges"] == []
    statement = "Acme Corp. is bound until December 31, 2026."  # no obligation stated: it dates Acme's edges
    edges = _answer("temporal", text + " " + statement, domain, entities, skeleton)["edges"]
    assert [e["qualifiers"] for e in edges] == [{"expiration_date": "December 31, 2026"}]


def test_a_cued_role_takes_the_value_its_trigger_binds_not_the_first_one():
    text = ("Either party may terminate this Agreement, which runs for two (2) years, upon ninety (90) days "
            "prior written notice to Acme Corp.")
    hyper = _answer("nary", text, load_domain("legal_contracts"), _nodes(("Acme Corp.", "Party")))["hyperedges"]
    termination = next(h for h in hyper if h["relation"] == "Termination")
    assert termination["roles"]["notice_period"] == {"literal": "ninety (90) days", "type": "duration"}


# A drug label's interaction section, written for this test in the style of US labels.
LABEL = """7 DRUG INTERACTIONS
7.1 Strong CYP3A4 Inhibitors
Coadministration of ketoconazole 400 mg daily, a strong inhibitor of CYP3A4, increased simvastatin exposure by 500%; the combination is contraindicated because of the risk of rhabdomyolysis. Clarithromycin inhibits CYP3A4 and P-gp.
7.2 Anticoagulants
Concomitant use of fluconazole with warfarin increased the INR and may cause bleeding (major).
7.3 CYP3A4 Inducers
Rifampin induces CYP3A4: coadministration with midazolam decreased midazolam exposure by 90%. Midazolam is a substrate of CYP3A4.
"""


def test_drug_interaction_template_on_a_label_section():
    answer = _answer("diy:drug_interaction", LABEL, load_domain("general"))
    assert ("500%", "Exposure") in {(e["name"], e["type"]) for e in answer["entities"]}  # the template's percent type
    relations = [(r["relation"], r["roles"], r.get("qualifiers", {})) for r in answer["relations"]]
    interactions = [(roles, q) for rel, roles, q in relations if rel == "interaction"]
    assert ({"perpetrator": "ketoconazole", "victim": "simvastatin", "enzyme": "CYP3A4", "effect": "rhabdomyolysis",
             "severity": "contraindicated", "change": "500%"},
            {"dose": "400 mg"}) in interactions
    assert any(roles == {"perpetrator": "fluconazole", "victim": "warfarin", "effect": "bleeding", "severity": "major"}
               for roles, _ in interactions)
    assert any(roles["perpetrator"] == "Rifampin" and roles["victim"] == "midazolam" for roles, _ in interactions)
    binary = {(rel, roles["head"], roles["tail"]) for rel, roles, _ in relations if "head" in roles}
    assert {("inhibits", "ketoconazole", "CYP3A4"), ("inhibits", "Clarithromycin", "P-gp"),
            ("induces", "Rifampin", "CYP3A4"), ("substrate_of", "midazolam", "CYP3A4")} <= binary
    # the heading "7.1 Strong CYP3A4 Inhibitors" is its own sentence: no drug below it inhibits through it
    assert ("inhibits", "simvastatin", "CYP3A4") not in binary
