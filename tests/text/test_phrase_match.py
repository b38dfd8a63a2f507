"""kgkit.text.phrase_match finds what the regex it stands in for finds, and declines where it cannot."""
from __future__ import annotations

import random
import re

import pytest

from kgkit.text import evidence, phrase_match
from kgkit.backends.offline import entity_mentions
from kgkit.backends.offline.phrases import phrase_pattern

# Letters of both cases, every kind of space, quotes and dashes a class stands for, word
# characters that are not letters, and characters whose case re folds beyond ASCII.
ALPHABET = list("aAbBkKsS iI__77") + [" ", " ", "\n", "\t", "\u00a0", "\u2018", "\u2019", "'", '"', "\u201c",
                                     "-", "\u2013", "\u2014", ".", ",", "(", ")", "\u00e9", "\u212a", "\u017f",
                                     "\u0130", "\u0131", "\u00df"]
PLAIN = [c for c in ALPHABET if c.isascii()] + ["\u2018", "\u2013", "\u00a0"]


def _regex(phrases, text):
    rx = re.compile(r"(?<![\w])(?:" + "|".join(phrase_pattern(p) for p in phrases) + r")(?![\w])", re.I)
    return [(m.start(), m.end()) for m in rx.finditer(text)]


def _random(rng, alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def _phrase(rng, alphabet, text):
    """A random phrase, or a piece of the text with its case swapped and its spaces made single."""
    if rng.random() < 0.5 or len(text) < 2:
        return _random(rng, alphabet, rng.randint(1, 5))
    start = rng.randrange(len(text) - 1)
    return " ".join(text[start:start + rng.randint(1, 8)].swapcase().split())


@pytest.mark.parametrize("alphabet, least", [(PLAIN, 2000), (ALPHABET, 100)], ids=["plain", "any"])
def test_find_alternation_matches_the_regex_or_declines(alphabet, least):
    rng = random.Random(5)
    answered = matched = 0
    for _ in range(3000):
        text = _random(rng, alphabet, rng.randint(0, 40))
        phrases = [p for p in (_phrase(rng, alphabet, text) for _ in range(rng.randint(1, 4))) if p.split()]
        if not phrases:
            continue
        # the order the callers use: longest first, so an alternative can hide a later one
        phrases = sorted(set(phrases), key=lambda p: (-len(p), p))
        found = phrase_match.find_alternation(text, phrases)
        if found is None:
            continue
        answered += 1
        matched += bool(found)
        assert [(s, e) for s, e, _ in found] == _regex(phrases, text), (text, phrases)
        for s, e, k in found:  # the phrase reported is one that matches there
            assert re.fullmatch(phrase_pattern(phrases[k]), text[s:e], re.I)
    assert answered > least and matched > least / 10  # the fast path is taken, and finds things


def test_overlapping_names_and_spacing():
    text = "Acme Corp. and ACME  corp\nLtd bought acme corporation; xAcme Corp is not one."
    phrases = ["acme corp ltd", "acme corp", "acme"]
    found = phrase_match.find_alternation(text, phrases)
    assert [(s, e) for s, e, _ in found] == _regex(phrases, text)
    assert [phrases[k] for _, _, k in found] == ["acme corp", "acme corp ltd", "acme"]


def test_declines_where_case_folds_beyond_ascii():
    assert phrase_match.find_alternation("the \u212aelvin scale", ["kelvin"]) is None  # re matches K to k
    assert phrase_match.find_alternation("Caf\u00e9 Noir", ["caf\u00e9 noir"]) is None
    assert phrase_match.find_alternation("a b", [" "]) is None  # an empty phrase matches everywhere in re
    assert phrase_match.find_alternation("Caf\u00e9 Noir", ["noir"]) is None


def test_locate_mention_is_unchanged(monkeypatch):
    rng = random.Random(9)
    cases = []
    for _ in range(1500):
        text = _random(rng, ALPHABET, rng.randint(1, 40))
        name = _random(rng, ALPHABET, rng.randint(1, 6))
        aliases = [_random(rng, ALPHABET, rng.randint(1, 4)) for _ in range(rng.randint(0, 2))]
        cases.append((name, text, aliases, evidence.locate_mention(name, text, aliases)))
    monkeypatch.setattr(evidence, "find_alternation", lambda *a: None)  # the regex path alone
    for name, text, aliases, fast in cases:
        assert evidence.locate_mention(name, text, aliases) == fast, (name, text, aliases)
    assert sum(1 for *_, fast in cases if fast) > 100


def test_find_mentions_is_unchanged(monkeypatch):
    from kgkit.catalog.load import load_domain

    types = load_domain("general").entity_types
    rng = random.Random(3)
    words = ["Acme", "Corp.", "acme", "Jane", "Smith", "Ltd", "Boston", "Bank", "of", "the"]
    cases = []
    for _ in range(300):
        text = " ".join(rng.choice(words + ["\n", ",", "and"]) for _ in range(30))
        entities = [{"name": " ".join(rng.choice(words) for _ in range(rng.randint(1, 3))),
                     "type": rng.choice(["Person", "Organization", "Location"]),
                     "aliases": [rng.choice(words)] if rng.random() < 0.3 else []} for _ in range(6)]
        cases.append((text, entities, entity_mentions.find_mentions(text, entities, types)))
    monkeypatch.setattr(entity_mentions, "find_alternation", lambda *a: None)
    for text, entities, fast in cases:
        assert entity_mentions.find_mentions(text, entities, types) == fast
    assert sum(len(fast) for *_, fast in cases) > 300


def test_standalone_surname_matches_its_regex():
    from kgkit.backends.offline.names import _standalone

    rng = random.Random(2)
    pieces = ["Kennedy", "kennedy", "Kennedy-Smith", "Smith", ".", "-", "_", " ", "\n", "x", "7", "\u00e9"]
    found = 0
    for _ in range(2000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 16)))
        word = rng.choice(["Kennedy", "Smith", "Kennedy-Smith"])
        expected = [m.span() for m in re.finditer(rf"(?<![\w.-]){re.escape(word)}(?![\w-])", text)]
        assert list(_standalone(text, word)) == expected, (text, word)
        found += len(expected)
    assert found > 100


def test_a_folded_text_is_kept_per_text_and_table():
    """The fold cache answers for the same text and table only: another table (the evidence
    gate's quote classes or none) or another text folds anew."""
    text = "the \u2018Acme\u2019 deal"
    quotes = {0x2018: "'", 0x2019: "'"}
    assert phrase_match.find_alternation(text, ["'acme'"], quotes) == [(4, 10, 0)]
    assert phrase_match.find_alternation(text, ["'acme'"]) == []  # no table: a curly quote is itself
    assert phrase_match.find_alternation(text, ["'acme'"], dict(quotes)) == [(4, 10, 0)]  # an equal table
    assert phrase_match.find_alternation(text.replace("deal", "Deal"), ["deal"]) == [(11, 15, 0)]
