"""Evidence quotes checked against chunk text, and mentions located, through kgkit.text.evidence."""
from __future__ import annotations

import json

import pytest

from kgkit.text.evidence import locate_mention, verify
from support.shared_data import DATA, DOCUMENT_SETS

CHUNK = "On 1 May, ACME  Corp. hired\nJohn Smith as CEO. The \u201cCompany\u201d is based in Stra\u00dfe 5."


def test_exact_quote():
    ev = verify("hired\nJohn Smith", CHUNK)
    assert (ev.span, ev.score, ev.verified, ev.method) == ((22, 38), 100.0, True, "exact")
    assert CHUNK[ev.span[0]:ev.span[1]] == "hired\nJohn Smith"


@pytest.mark.parametrize(
    "quote, found",
    [
        ("acme corp. HIRED john smith", "ACME  Corp. hired\nJohn Smith"),  # case and whitespace
        ('The "Company" is', "The \u201cCompany\u201d is"),  # straight for curly quotes
        ("in STRASSE 5", "in Stra\u00dfe 5"),  # casefold turns one character into two
    ],
)
def test_normalised_quote_maps_back_to_original_offsets(quote, found):
    ev = verify(quote, CHUNK)
    assert ev.verified and ev.method == "normalised" and ev.score == 100.0
    assert CHUNK[ev.span[0]:ev.span[1]] == found


def test_fuzzy_quote_finds_the_right_window():
    ev = verify("ACME Corp hired Jon Smith", CHUNK)
    assert ev.verified and ev.method == "fuzzy" and 85 <= ev.score < 100
    assert CHUNK[ev.span[0]:ev.span[1]] == "ACME  Corp. hired\nJohn Smith"


def test_threshold_decides():
    assert verify("ACME Corp hired Jon Smith", CHUNK, threshold=85).verified
    strict = verify("ACME Corp hired Jon Smith", CHUNK, threshold=99)
    assert not strict.verified and strict.span is None
    assert strict.reason.startswith("quote not found in chunk (best match 9")


def test_unsupported_quote_is_unverified_with_reason():
    ev = verify("Globex fired Carol Jones as treasurer", CHUNK)
    assert not ev.verified and ev.span is None and ev.score < 85
    assert ev.reason == f"quote not found in chunk (best match {ev.score:.1f} < 85)"


@pytest.mark.parametrize("quote", [None, "", "   \n"])
def test_missing_quote_is_unverified_with_reason(quote):
    ev = verify(quote, CHUNK)
    assert (ev.span, ev.score, ev.verified, ev.reason) == (None, 0.0, False, "no evidence quote given")


def test_quote_padded_beyond_the_chunk_does_not_pass():
    ev = verify(CHUNK + " The board also approved a merger with Globex and a dividend.", CHUNK)
    assert not ev.verified


def test_quote_with_omissions_needs_every_part():
    assert verify("ACME Corp. hired ... is based in Strasse 5", CHUNK).verified
    assert verify("ACME Corp. hired \u2026 is based in Strasse 5", CHUNK).span == (10, len(CHUNK) - 1)
    missing = verify("ACME Corp. hired ... is based in Berlin, Germany", CHUNK)
    assert not missing.verified and missing.reason.startswith("part of a quote with omissions not found")


def test_unpacks_as_span_score_verified():
    span, score, verified = verify("John Smith", CHUNK)
    assert (span, score, verified) == ((28, 38), 100.0, True)


def test_chunk_without_text():
    assert verify("anything", "  ").reason == "chunk has no text"


@pytest.mark.corpus
def test_gold_evidence_sentences_verify_against_their_documents():
    """Gold evidence is re-spaced (SciERC, CoNLL) or stitched with '...' (CUAD); all of it is real."""
    checked = failed = 0
    # the document sets (wikis/ and scholarly/ keep gold of their own format, with no .txt)
    for gold_path in sorted(g for s in DOCUMENT_SETS for g in (DATA / s).glob("*.gold.json")):
        gold = json.loads(gold_path.read_text(encoding="utf-8"))
        with open(gold_path.with_name(gold_path.name.replace(".gold.json", ".txt")), encoding="utf-8", newline="") as f:
            text = f.read()
        for item in gold["relations"] + gold["hyperedges"]:
            if item.get("evidence"):
                checked += 1
                failed += not verify(item["evidence"], text).verified
    assert checked > 500
    assert failed <= checked // 100


def test_evidence_of_another_document_does_not_verify():
    other = "Photosynthesis converts light energy into chemical energy stored in glucose molecules."
    assert not verify(other, CHUNK).verified


# --------------------------------------------------------------------------- locate_mention


def test_locate_whole_words_case_insensitive():
    text = "Apple sued apple growers; Pineapple Inc. and APPLE were not amused."
    upper = text.index("APPLE")
    assert locate_mention("Apple", text) == [(0, 5), (11, 16), (upper, upper + 5)]


def test_locate_across_line_breaks_and_quote_styles():
    text = "McDonald\u2019s and ACME\nCorp. signed."
    assert [text[s:e] for s, e in locate_mention("McDonald's", text)] == ["McDonald\u2019s"]
    assert [text[s:e] for s, e in locate_mention("ACME Corp.", text)] == ["ACME\nCorp."]


def test_locate_prefers_the_longer_surface():
    text = "Acme Corp. (the Company) and Acme agree; the Company pays."
    spans = locate_mention("Acme", text, aliases=("Acme Corp.", "the Company"))
    assert [text[s:e] for s, e in spans] == ["Acme Corp.", "the Company", "Acme", "the Company"]


def test_locate_nothing():
    assert locate_mention("", "text") == []
    assert locate_mention("Globex", "Acme only") == []
    assert locate_mention("a.b", "axb a.b") == [(4, 7)]  # regex characters are literal


def test_a_name_looked_for_in_its_own_text_is_found_as_the_plain_search_finds_it():
    import random

    from kgkit.text import evidence as ev

    rng = random.Random(3)
    taken = 0
    for _ in range(20000):
        name = "".join(rng.choice("aA b`'\"-.\t\n  Z9_") for _ in range(rng.randint(0, 6)))
        surface = name.strip()
        if not surface or ev._ODD_SPACE.search(name):
            continue  # the plain search does not read these
        taken += 1
        assert ev.locate_mention(name, name) == ev._plain_spans(" ".join(surface.translate(ev._QUOTES).split()).lower(),
                                                                name)
    assert taken > 3000
