"""The core stage through kgkit.extract: merge into V_doc, relations restricted to it."""
from __future__ import annotations

import pytest

import kgkit
from kgkit.config.model import Config

from support.engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.chdir(tmp_path)


def extract(tmp_path, extra=None, views=("binary",), admit_unverified=False):
    inputs = write_inputs(tmp_path / "in")
    config = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0)
    config.review.admit_unverified = admit_unverified
    return kgkit.extract(inputs["doc"], domain=inputs["domain"], views=list(views), config=config,
                         out_dir=tmp_path / "out", backend=ScriptedBackend(extra=extra))[0]


def test_rejected_relations_are_counted_by_reason_and_reviewed(tmp_path):
    extra = {"relations": [
        {"head": "Zed Nobody", "relation": "Work_For", "tail": "Acme Corp"},   # unknown head
        {"head": "Ann Lee", "relation": "Work_For", "tail": "Gamma Inc"},      # unknown tail
        {"head": "Acme Corp", "relation": "Work_For", "tail": "Beta Ltd"},     # Org -> Org not allowed
        {"head": "Ann Lee", "relation": "Likes", "tail": "Acme Corp"},         # undeclared relation
    ]}
    result = extract(tmp_path, extra)
    # each of the 8 relation passes returned the four bad relations
    assert result.manifest["counts"]["rejects"]["core"] == {
        "unknown_head": 8, "unknown_tail": 8, "type_not_allowed": 8, "unknown_relation": 8}
    reasons = sorted({r["reason"] for r in result.review if r["stage"] == "relations"})
    assert reasons == [
        "type_not_allowed: Work_For does not allow Org -> Org",
        "unknown_head: 'Zed Nobody' is not an entity of the document",
        "unknown_relation: 'Likes' is not a relation of staff",
        "unknown_tail: 'Gamma Inc' is not an entity of the document",
    ]
    assert len(result.views["binary"]["edges"]) == 8


def test_relation_aliases_are_normalised_and_ends_resolve_through_the_merge(tmp_path):
    # "employed_by" is a declared alias of Work_For; "ACME CORP." is Acme Corp by canonical name
    extra = {"relations": [{"head": "ann lee", "relation": "employed_by", "tail": "ACME CORP.",
                            "evidence": "Ann Lee joined Acme Corp"}]}
    result = extract(tmp_path, extra)
    assert {e["relation"] for e in result.views["binary"]["edges"]} == {"Work_For"}
    assert len(result.views["binary"]["edges"]) == 8  # the alias copy is the same edge


def test_a_name_the_text_does_not_hold_is_held_back_though_its_quote_is_there(tmp_path):
    # every chunk's answer names "Acme Corporation", written nowhere in the document
    extra = {"entities": [{"name": "Acme Corporation", "type": "organisation", "evidence": "The team met"}]}
    result = extract(tmp_path, extra)
    assert not [n for n in result.nodes if n["name"] == "Acme Corporation"]
    assert result.manifest["counts"]["held_back"]["entities"] == {"name_not_in_text": 8}
    assert sum(r["reason"] == "held back (name_not_in_text): 'Acme Corporation' does not occur in the chunk"
               for r in result.review) == 8


def test_a_category_type_is_placed_by_its_checked_quote_though_its_name_is_not_in_the_text(tmp_path):
    # "Meeting Notes" names a category ("category: true"): the text says "The team met", never
    # the name. It is kept with its quote's characters as span; the same name as an Org is not.
    inputs = write_inputs(tmp_path / "in")
    domain = inputs["domain"].read_text(encoding="utf-8").replace(
        "entity_types:\n", "entity_types:\n  - {name: Topic, category: true}\n", 1)
    inputs["domain"].write_text(domain, encoding="utf-8")
    extra = {"entities": [{"name": "Meeting Notes", "type": "Topic", "evidence": "The team met"},
                          {"name": "Meeting Notes", "type": "Org", "evidence": "The team met"}]}
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"],
                           config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0), out_dir=tmp_path / "out",
                           backend=ScriptedBackend(extra=extra))[0]
    (topic,) = [n for n in result.nodes if n["name"] == "Meeting Notes"]
    assert topic["type"] == "Topic"
    text = inputs["doc"].read_text(encoding="utf-8")
    assert {text[m["span"][0]:m["span"][1]] for m in topic["mentions"]} == {"The team met"}
    assert result.manifest["counts"]["held_back"]["entities"] == {"name_not_in_text": 8}


def test_admitted_unverified_mentions_merge_across_chunks_with_recorded_reasons(tmp_path):
    # every chunk's answer also names "Acme Corporation" (type given by a declared type alias),
    # a name not written in the text: review.admit_unverified lets it in
    extra = {"entities": [{"name": "Acme Corporation", "type": "organisation", "evidence": "Acme Corp"}]}
    result = extract(tmp_path, extra, admit_unverified=True)
    acme = [n for n in result.nodes if n["type"] == "Org" and "acme" in n["name"].lower()]
    assert len(acme) == 1
    assert acme[0]["name"] == "Acme Corporation"  # the most frequent surface form
    assert [(m["name"], m["reason"]) for m in acme[0]["merged_from"]] == [("Acme Corp", "legal-suffix")]
    chunks = {m["chunk"] for m in acme[0]["mentions"]}
    assert len(chunks) == 8  # named (by the extra answer) in every chunk


def test_entities_of_undeclared_types_are_reported_not_dropped_silently(tmp_path):
    extra = {"entities": [{"name": "team", "type": "City", "evidence": "The team met"}]}
    result = extract(tmp_path, extra)
    assert not [n for n in result.nodes if n["name"] == "team"]
    assert result.manifest["counts"]["rejects"]["core"]["unknown_type"] == 8
    assert any(r["item"] == {"name": "team", "type": "City"} and r["reason"].startswith("unknown_type")
               for r in result.review)


def test_blank_entity_names_are_counted_as_invalid_entities(tmp_path):
    result = extract(tmp_path, {"entities": [{"name": "  ", "type": "PER"}]})
    assert result.manifest["counts"]["rejects"]["core"]["invalid_entity"] == 8
    assert "invalid_entity: empty entity name" in [r["reason"] for r in result.review]


def test_a_symmetric_relation_read_both_ways_is_one_edge(tmp_path):
    extra = {"relations": [{"head": "Acme Corp", "relation": "Partner_Of", "tail": "Beta Ltd", "evidence": "Acme Corp"},
                           {"head": "Beta Ltd", "relation": "Partner_Of", "tail": "Acme Corp", "evidence": "Beta Ltd"}]}
    inputs = write_inputs(tmp_path / "in")
    domain = inputs["domain"].read_text().replace("{name: Partner_Of, head: [Org], tail: [Org]}",
                                                  "{name: Partner_Of, head: [Org], tail: [Org], symmetric: true}")
    inputs["domain"].write_text(domain)
    result = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"],
                           config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0), out_dir=tmp_path / "out",
                           backend=ScriptedBackend(extra=extra))[0]
    partners = [e for e in result.views["binary"]["edges"] if e["relation"] == "Partner_Of"]
    assert len(partners) == 1


def test_an_answer_without_the_pass_shape_is_reviewed_not_a_crash(tmp_path):
    extra = {"relations": [{"head": "Ann Lee", "tail": "Acme Corp"}]}  # no relation: off the pass schema
    result = extract(tmp_path, extra)
    assert result.manifest["counts"]["rejects"]["core"]["invalid_answer"] == 8
    reasons = [r["reason"] for r in result.review if r["stage"] == "relations"]
    assert reasons[0] == ("invalid_answer: answer does not match the pass schema at relations/1: "
                          "'relation' is a required property")
    assert result.views["binary"]["edges"] == []


def test_aliases_an_entities_answer_declares_are_not_taken_on_trust(tmp_path):
    """A node's aliases come from the merge, which checks them against the text
    (docs/design.md, "Pass answers"); an answer's own ``aliases`` key is not read."""
    extra = {"entities": [{"name": "Ann Lee", "type": "PER", "evidence": "Ann Lee", "aliases": ["the Engineer"]}]}
    result = extract(tmp_path, extra)
    ann = next(n for n in result.nodes if n["name"] == "Ann Lee")
    assert ann["aliases"] == []


def test_a_value_given_normalised_from_its_checked_quote_is_kept_without_a_span(tmp_path):
    """Dates and durations may come normalised ("5 years" for "five (5) years"): kept, with no
    span rather than the whole sentence; a name of another type must be written in the text."""
    from kgkit.documents.chunking import chunk_document
    from kgkit.documents.load import load_document
    from kgkit.modes.base import Locator

    path = tmp_path / "lease.txt"
    path.write_text("The lease runs for five (5) years from 7/1/98.\n", encoding="utf-8")
    doc = load_document(path)
    [chunk] = chunk_document(doc, 1000, 0)
    review, held = [], {}
    locate = Locator(doc, chunk, "entities", 85.0, 0.5, review, held)
    quote = "The lease runs for five (5) years from 7/1/98"
    for name, type_ in (("5 years", "Duration"), ("1998-07-01", "Date")):
        place, verified = locate.mention({"name": name, "type": type_}, name, quote)
        assert verified and place["span"] is None and place["quote"] == quote
    place, _ = locate.mention({"name": "lease", "type": "Org"}, "lease", quote)
    assert doc.text[place["span"][0]:place["span"][1]] == "lease"  # the name's own characters
    place, _ = locate.mention({"name": "Lease Corp", "type": "Org"}, "Lease Corp", quote)
    assert place is None and held == {"name_not_in_text": 1}
