"""Chunking: offsets that slice, sentences kept whole, page provenance, stable ids."""
from __future__ import annotations

import hashlib
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgkit.documents import Document, Page, chunk_document, load_document
from kgkit.errors import ConfigError

from support.shared_data import CONTRACT_PDF as ALLIANCE


def make_doc(text: str, pages: tuple[Page, ...] = ()) -> Document:
    return Document(id="d_" + hashlib.sha256(text.encode()).hexdigest()[:16], name="t", text=text,
                    source="t.txt", media_type="text/plain", sha256="0" * 64, pages=pages)


def check_invariants(doc: Document, chunks, size: int) -> None:
    covered = bytearray(len(doc.text))
    for i, c in enumerate(chunks):
        assert c.index == i and c.doc_id == doc.id
        assert doc.text[c.start:c.end] == c.text
        assert 0 < len(c.text) <= size
        assert c.text == c.text.strip()
        covered[c.start:c.end] = b"\x01" * (c.end - c.start)
    for before, after in zip(chunks, chunks[1:]):
        assert before.start < after.start and before.end < after.end
    missing = [i for i, ch in enumerate(doc.text) if not covered[i] and not ch.isspace()]
    assert missing == []


def test_real_pdf_chunks_keep_offsets_and_pages():
    doc = load_document(ALLIANCE)
    chunks = chunk_document(doc, 1500, 200)
    check_invariants(doc, chunks, 1500)
    assert len(chunks) >= len(doc.text) // 1500
    assert chunks[0].pages == (1,)
    assert chunks[-1].pages[-1] == doc.pages[-1].number
    spanning = [c for c in chunks if len(c.pages) > 1]
    assert spanning, "some chunk should cross a page break"
    for c in spanning:
        assert c.pages == doc.pages_for(c.start, c.end)


def test_sentences_are_not_cut_when_they_fit():
    sentences = [f"Sentence number {i} says {'a little ' * (i % 7)}more." for i in range(60)]
    doc = make_doc(" ".join(sentences))
    chunks = chunk_document(doc, 200, 50)
    check_invariants(doc, chunks, 200)
    for c in chunks:
        assert c.text.endswith("more."), c.text
        assert c.text.startswith("Sentence number"), c.text


def test_abbreviations_and_initials_do_not_end_sentences():
    doc = make_doc("Acme Inc. hired J. Smith as CEO of the firm. " * 3 + "Then it rained all day long.")
    chunks = chunk_document(doc, 60, 0)
    assert [c.text for c in chunks[:3]] == ["Acme Inc. hired J. Smith as CEO of the firm."] * 3


@pytest.mark.parametrize("number", ["2.1.", "iv.", "(a).", "B."])
def test_clause_numbers_at_line_start_do_not_end_sentences(number):
    text = f"Intro sentence ends here.\n{number} Term of the deal runs on."
    size = text.index("Term") + 4
    assert [c.text for c in chunk_document(make_doc(text), size, 0)] == [
        "Intro sentence ends here.", f"{number} Term of the deal runs on."]


def test_a_year_before_a_period_still_ends_a_sentence():
    text = "It was signed in 2017. Then it ran for years."
    assert chunk_document(make_doc(text), 30, 0)[0].text == "It was signed in 2017."


def test_paragraph_break_preferred_over_a_later_sentence_end():
    first = "First paragraph sentence one. Sentence two is here."
    second = "Second paragraph starts. It goes on for a while longer than the first one did."
    doc = make_doc(first + "\n\n" + second)
    chunks = chunk_document(doc, len(first) + 40, 0)
    assert chunks[0].text == first
    assert chunks[1].text == second


def test_no_overlap_rather_than_a_sentence_fragment():
    doc = make_doc("A short one. " + "This second sentence is long enough to fill the chunk. " * 2)
    chunks = chunk_document(doc, 70, 20)
    assert [c.text for c in chunks] == [
        "A short one. This second sentence is long enough to fill the chunk.",
        "This second sentence is long enough to fill the chunk.",
    ]


def test_a_giant_sentence_is_split_at_the_size():
    doc = make_doc("x" * 1000)
    chunks = chunk_document(doc, 300, 0)
    assert [(c.start, c.end) for c in chunks] == [(0, 300), (300, 600), (600, 900), (900, 1000)]
    words = make_doc(" ".join(["word"] * 200))  # one sentence, no stop: cut at spaces
    for c in chunk_document(words, 100, 10):
        assert re.fullmatch(r"word( word)*", c.text)


def test_overlap_starts_at_a_sentence_and_stays_within_bounds():
    doc = make_doc(" ".join(f"Fact {i} is stated here." for i in range(100)))
    chunks = chunk_document(doc, 240, 60)
    check_invariants(doc, chunks, 240)
    for before, after in zip(chunks, chunks[1:]):
        shared = before.end - after.start
        assert 0 < shared <= 60
        assert after.text.startswith("Fact ")


def test_ids_are_stable_and_follow_the_design():
    doc = make_doc("One. Two. Three. Four. Five. Six.")
    a = chunk_document(doc, 12, 0)
    b = chunk_document(doc, 12, 0)
    assert [c.id for c in a] == [c.id for c in b]
    assert len({c.id for c in a}) == len(a)
    c0 = a[0]
    expected = hashlib.sha256(f"{doc.id}\x1f0\x1f{c0.start}\x1f{c0.end}".encode()).hexdigest()[:16]
    assert c0.id == "c_" + expected


@pytest.mark.parametrize("size, overlap", [(0, 0), (100, 100), (100, -1), (10, 20)])
def test_impossible_sizes_are_config_errors(size, overlap):
    with pytest.raises(ConfigError, match="chunking needs size >= 1 and 0 <= overlap < size"):
        chunk_document(make_doc("text"), size, overlap)


def test_whitespace_only_tail_and_head_are_left_out():
    doc = make_doc("\n\n   Only this.   \n\n")
    [chunk] = chunk_document(doc, 100, 10)
    assert (chunk.start, chunk.text) == (5, "Only this.")


TEXT = st.lists(st.sampled_from(list("abcXY .!?\n\"')\t") + ["Inc.", "J. ", "\n\n", "word "]), max_size=300).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=TEXT, size=st.integers(1, 120), data=st.data())
def test_property_offsets_slice_cover_and_bound(text, size, data):
    overlap = data.draw(st.integers(0, size - 1))
    doc = make_doc(text)
    chunks = chunk_document(doc, size, overlap)
    check_invariants(doc, chunks, size)
    if text.strip():
        assert chunks


@settings(max_examples=100, deadline=None)
@given(lengths=st.lists(st.integers(1, 80), min_size=1, max_size=8), size=st.integers(5, 100))
def test_property_pages_match_offsets(lengths, size):
    parts, pages, offset = [], [], 0
    for number, length in enumerate(lengths, start=1):
        body = ("Word. " * length)[:length].strip() or "W"
        if parts:
            parts.append("\n\n")
            offset += 2
        pages.append(Page(number, offset, offset + len(body)))
        parts.append(body)
        offset += len(body)
    doc = make_doc("".join(parts), tuple(pages))
    for c in chunk_document(doc, size, size // 3):
        assert c.pages == tuple(p.number for p in pages if p.start < c.end and p.end > c.start)
