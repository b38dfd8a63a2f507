"""The offline rules' shortcuts (issue 11, speed) answer exactly as the plain ways they replace.

Each test runs the shortcut and a reference written the slow way on random input built to
reach the edge cases (odd whitespace, headings, abbreviations, characters beyond ASCII).
"""
from __future__ import annotations

import random
import re
import sys

import regex

from kgkit.guards import safe_regex
from kgkit.text import sentences
from kgkit.backends.offline.mentions import collapse
from kgkit.backends.offline.entity_mentions import _head_nouns
from kgkit.text.sentences import is_heading, runs_on, sentence_at, split_sentences

# Every character ``\s`` matches, a few that look like spaces but are not, and text.
_WHITESPACE = [c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace()]
_PIECES = ["Acme", "Corp.", "Inc.", "J.", "Smith", "said", "the", "U.S.", "Mr.", "e.g.", "ARTICLE IV", "7.1",
           "Section", "Heading Line", "é", "\u200b", "\u00ad", ".", "!", "?", "\"", "”", ")", ",", "x", "42"]


def _random_text(rng: random.Random, n: int) -> str:
    out = []
    for _ in range(n):
        out.append(rng.choice(_PIECES))
        out.append(rng.choice([" ", " ", " ", "  ", "\n", "\n\n", rng.choice(_WHITESPACE), ""]))
    return "".join(out)


def test_collapse_equals_the_regex_on_random_text():
    rng = random.Random(1)
    for _ in range(3000):
        text = _random_text(rng, rng.randint(0, 6))
        assert collapse(text) == re.sub(r"\s+", " ", text).strip()


def test_only_the_plain_space_is_both_whitespace_and_printable():
    # collapse's shortcut rests on this: a printable text's only whitespace is " "
    assert [c for c in _WHITESPACE if c.isprintable()] == [" "]
    assert all(re.fullmatch(r"\s", c) for c in _WHITESPACE)


def _heading_cuts_by_regex(text: str) -> list[tuple[int, int]]:
    """The line walk as it was written before (a regex per line); a line that reads on into
    the next (:func:`runs_on`) is no heading."""
    cuts = []
    for m in re.finditer(r"[^\n]*\n", text):
        nxt = text[m.end():m.end() + 1]
        if nxt and (nxt.isupper() or nxt.isdigit()) and is_heading(m.group(0)) and not runs_on(m.group(0)):
            cuts.append((m.end() - 1, m.end()))
    return cuts


def test_heading_cuts_equal_the_regex_walk():
    rng = random.Random(2)
    for _ in range(2000):
        text = _random_text(rng, rng.randint(0, 30))
        assert sentences._heading_cuts(text) == _heading_cuts_by_regex(text)


def test_sentences_are_kept_per_text_and_returned_afresh():
    text = "Acme Corp. hired J. Smith in Paris. He left.\n\nSECOND PART\nIt ended."
    first = split_sentences(text)
    first.append("not a sentence")  # a caller's changes do not reach the next caller
    again = split_sentences(text)
    assert [s.text for s in again] == ["Acme Corp. hired J. Smith in Paris.", "He left.", "SECOND PART", "It ended."]
    assert all(text[s.start:s.end] == s.text for s in again)


def test_sentence_at_equals_a_scan():
    rng = random.Random(3)
    for _ in range(500):
        text = _random_text(rng, rng.randint(0, 40))
        found = split_sentences(text)
        for offset in range(len(text) + 1):
            assert sentence_at(found, offset) == next((s for s in found if s.start <= offset < s.end), None)


# --------------------------------------------------------------------------- safe_regex: required text

_ATOMS = ["a", "b", "K", "s", "i", "\\.", "-", " ", "[ab]", "\\w", ".", "\\s", "x", "ab", "\\b", "^", "$", "\\1"]
_GROUPS = ["(?:", "(", "(?=", "(?!", "(?>", "(?-i:", "(?i:", "(?P<g>", "(?s:"]


def _random_pattern(rng: random.Random, depth: int = 0) -> str:
    parts = []
    for _ in range(rng.randint(1, 4)):
        if rng.random() < 0.25 and depth < 3:
            kind = rng.choice(_GROUPS + ["(?<=", "(?<!"])
            if kind in ("(?<=", "(?<!"):
                inner = rng.choice(["a", "b", "ab", "K", "x|y"])  # a look-behind has a fixed width
            else:
                inner = "|".join(_random_pattern(rng, depth + 1) for _ in range(rng.randint(1, 3)))
            atom = kind + inner + ")"
        else:
            atom = rng.choice(_ATOMS)
        if atom not in ("\\b", "^", "$") and rng.random() < 0.3:
            atom += rng.choice(["*", "+", "?", "{2}", "{0,2}", "{1,3}", "+?", "*+", "++", "{,2}"])
        parts.append(atom)
    return ("(?x)" if rng.random() < 0.1 else "") + "".join(parts)


def test_required_text_is_in_every_match():
    """Wherever a pattern matches, one of its required strings is in the folded text: the
    shortcut never hides a match (random patterns of groups, look-arounds, quantifiers and
    case-folding letters, on random texts with the letters that fold to ASCII)."""
    rng = random.Random(4)
    letters = "abKsxiI .-\u212a\u017f\u0130\u0131ABS\n"
    analysed = skipped = 0
    for _ in range(4000):
        pattern = _random_pattern(rng)
        try:
            rx = regex.compile(pattern, safe_regex.FLAGS)
        except regex.error:
            continue
        needed = safe_regex.required_text(pattern)
        if needed is None:
            continue
        analysed += 1
        for _ in range(6):
            text = "".join(rng.choice(letters) for _ in range(rng.randint(0, 12)))
            folded = safe_regex._folded(text)
            if not any(s in folded for s in needed):
                skipped += 1
                assert rx.search(text) is None, (pattern, needed, text)
    assert analysed > 1000 and skipped > 1000  # the test reaches both sides


def test_only_four_characters_beyond_ascii_match_an_ascii_one():
    everything = "".join(map(chr, range(128, sys.maxunicode + 1)))
    ascii_any = regex.compile("(?:" + "|".join(regex.escape(chr(c)) for c in range(128)) + ")", safe_regex.FLAGS)
    matched = {ord(m.group()) for m in ascii_any.finditer(everything)}
    assert matched == set(safe_regex._TO_ASCII)
    for code, ascii_char in safe_regex._TO_ASCII.items():  # folded to the lower case of what it matches
        assert any(regex.fullmatch(regex.escape(c), chr(code), safe_regex.FLAGS) for c in (ascii_char, ascii_char.upper()))
    # offsets of the folded text are the text's: only U+0130 lowers to two characters
    assert [c for c in range(sys.maxunicode + 1) if len(chr(c).lower()) != 1] == [0x130]


def test_required_text_reads_literals_groups_and_assertions():
    assert safe_regex.required_text(r"\bfoo(?:bar|baz)+") == ("foo",)
    assert safe_regex.required_text(r"\b(?:Mr|Dr)\.?\s+(?P<name>[A-Z]\w+)") == ("dr", "mr")
    assert safe_regex.required_text(r"(?=x)ab(?!c)cd") == ("abcd",)  # look-arounds consume nothing
    assert safe_regex.required_text(r"a?b*") is None
    assert safe_regex.required_text(r"(?:abc|)") is None  # an empty branch needs nothing
    assert safe_regex.required_text(r"(?:abc|)d") == ("d",)
    assert safe_regex.required_text(r"(a)?(?(1)bc|de)") is None  # conditionals are not read
    assert safe_regex.required_text(r"a(?x: b c )d") is None  # verbose for a part only
    assert safe_regex.required_text(r"(?x) a b \ c # note") is None  # verbose: "a ?" quantifies the a
    assert safe_regex.required_text(r"\p{Lu}abc") is None  # regex-only syntax


def test_a_pattern_without_its_required_text_finds_nothing_and_keeps_its_budget():
    with safe_regex.chunk_budget(0.05) as budget:
        # would run out of time on this text, but it holds no "z", which every match needs
        assert safe_regex.finditer("(?:a|aa)+z", "a" * 60 + "!") == []
        assert [m.group() for m in safe_regex.finditer("(?:a|aa)+z", "aaz", 0, 3)] == ["aaz"]
        assert safe_regex.finditer("(?:a|aa)+z", "aaz", 0, 2) == []  # only within pos..endpos
    assert budget.skipped == {}



# --------------------------------------------------------------------------- relations: "this Agreement"

def test_head_nouns_equal_the_regex():
    rng = random.Random(5)
    words = ["agreement", "Agreement", "AGREEMENT", "agreements", "university", "Bank", "bank", "s", "ſ", "kit",
             "\u212ait", "the", "The", "THIS", "this", "thistle", "x_y", "Co.", "co", "é", "Inc", "inc."]
    pool = ["agreement", "university", "bank", "kit", "s", "co", "co.", "inc", "inc.", "the", "x_y", "agreements", "é"]
    for _ in range(3000):
        text = "".join(rng.choice(words) + rng.choice([" ", "  ", "\n", "", ".", ",", "\u00a0"])
                       for _ in range(rng.randint(0, 12)))
        heads = set(rng.sample(pool, rng.randint(1, 5)))
        rx = re.compile(r"\b(this|the)\s+(" + "|".join(re.escape(h) for h in sorted(heads)) + r")\b", re.I)
        expected = [(m.start(), m.end(), m.group(1), m.group(2)) for m in rx.finditer(text)]
        assert list(_head_nouns(text, heads)) == expected, (text, heads)


# --------------------------------------------------------------------------- literals: kept per text and kind

def test_kept_literals_equal_a_fresh_scan():
    from kgkit.text import literals

    rng = random.Random(7)
    pieces = ["on May 26, 2017", "for $5 million", "30 days", "12.5%", "sixty (60) days", "5 mg", "in 1998",
              "the 26th day of May, 2017", "2014-01-20", "one year", "and", ",", "\n"]
    for _ in range(300):
        text = " ".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        kinds = rng.sample(literals.KINDS, rng.randint(1, len(literals.KINDS)))
        fresh = literals._longest_first([lit for k in kinds for lit in literals._FINDERS[k](text)])
        first = literals.find_literals(text, kinds)
        first.clear()  # a caller's changes do not reach the next caller
        assert literals.find_literals(text, kinds) == fresh


# --------------------------------------------------------------------------- phrase_match: odd spaces

def test_odd_space_runs_equal_the_plain_regex():
    from kgkit.text.phrase_match import _ODD_SPACE

    plain = re.compile(r"\s{2,}|[^\S ]")
    rng = random.Random(6)
    for _ in range(3000):
        text = "".join(rng.choice(["a", "b.", " ", " ", "\n", "\t", "\u00a0", "\u2003", "x y"])
                       for _ in range(rng.randint(0, 20)))
        assert [m.span() for m in _ODD_SPACE.finditer(text)] == [m.span() for m in plain.finditer(text)]


# --------------------------------------------------------------------------- entities: overlaps by bisection

def test_resolve_overlaps_equals_the_pairwise_test():
    from kgkit.backends.offline.shapes import clause_long, resolve_overlaps
    from kgkit.backends.offline.mentions import Mention

    def pairwise(mentions):
        ordered = sorted(mentions, key=lambda m: (-m.priority, -(m.end - m.start), m.start, m.type, m.name))
        kept = []
        for m in ordered:
            if all(m.end <= k.start or m.start >= k.end or clause_long(m) != clause_long(k) for k in kept):
                kept.append(m)
        return sorted(kept, key=lambda m: (m.start, m.end))

    rng = random.Random(8)
    names = ["Acme", "Acme Corp", "the court finds that the party shall pay", "Jane Smith", "x"]
    for _ in range(2000):
        mentions = []
        for _ in range(rng.randint(0, 12)):
            start = rng.randint(0, 80)
            end = start + rng.choice([0, 1, 3, 8, 20, 45, 60]) if rng.random() < 0.05 else start + rng.randint(1, 60)
            mentions.append(Mention(rng.choice(names), rng.choice(["Person", "Organization"]), start, end,
                                    rng.randint(1, 3), 0.5))
        assert resolve_overlaps(list(mentions)) == pairwise(mentions)


def test_surname_aliases_equal_the_scan_of_every_mention():
    from kgkit.backends.offline import names
    from kgkit.backends.offline.mentions import Mention

    def by_scan(text, mentions, person_type):  # the rule as written before, a scan per occurrence
        persons = [m for m in mentions if m.type == person_type and len(m.name.split()) > 1]
        by_surname = {}
        for m in persons:
            by_surname.setdefault(m.name.split()[-1], set()).add(m.name.lower())
        for m in persons:
            surname = m.name.split()[-1]
            if len(by_surname[surname]) > 1 or not re.fullmatch(r"[A-Z][a-z]+(?:-[A-Z][a-z]+)?", surname):
                continue
            for start, end in names._standalone(text, surname):
                if not any(o.start <= start and end <= o.end for o in mentions) and not re.match(
                        r"[ \t]+[A-Z]", text[end:end + 2]):
                    m.aliases.append(surname)
                    break

    rng = random.Random(9)
    words = ["Jane Smith", "Smith", "Bob Lee", "Lee", "said", "met", "Lee Corp", "and", "Smith."]
    for _ in range(1000):
        pieces, at = [], 0
        for _ in range(rng.randint(1, 12)):
            pieces.append(rng.choice(words))
        text = " ".join(pieces)
        spans = []
        for w in ("Jane Smith", "Bob Lee", "Lee Corp", "Smith"):
            at = text.find(w)
            while at >= 0:
                if rng.random() < 0.6:
                    spans.append((w, at, at + len(w)))
                at = text.find(w, at + 1)
        def build():
            return [Mention(w, "Person" if w != "Lee Corp" else "Organization", s, e, 1, 0.5) for w, s, e in spans]
        fast, slow = build(), build()
        names.add_surname_aliases(text, fast, "Person")
        by_scan(text, slow, "Person")
        assert [m.aliases for m in fast] == [m.aliases for m in slow], text


# --------------------------------------------------------------------------- names: role nouns by first letter

def test_role_cues_grouped_by_first_letter_match_as_the_flat_list():
    from kgkit.backends.offline import names

    flat = {rx: re.compile(rx.pattern.replace(names.ROLE_ALTERNATION, names._ROLE_NOUNS))
            for rx in (names._PERSON_BEFORE, names._PERSON_AFTER)}
    assert all(fast.pattern != slow.pattern for fast, slow in flat.items())
    rng = random.Random(12)
    roles = names._ROLE_NOUNS.split("|")
    words = roles[:40] + ["said", "his", "her", "former", "the", "a", "Smith", "who", "45", "'s", "wife", "x"]
    found = 0
    for _ in range(3000):
        text = "".join(rng.choice(words) + rng.choice([" ", ", ", "s ", "s, ", "", "\n"])
                       for _ in range(rng.randint(0, 6)))
        for fast, slow in flat.items():
            m, n = fast.search(text), slow.search(text)
            assert (m and m.span()) == (n and n.span()), text
            found += bool(m)
    assert found > 500


# --------------------------------------------------------------------------- phrases in the lower-cased text

def test_phrase_spans_equal_the_case_folding_regex():
    """phrase_spans finds in the lower-cased text what compile_phrases (re.IGNORECASE) finds
    in the text, windows included; where case folds beyond ASCII it asks the regex itself."""
    from kgkit.text import phrase_match
    from kgkit.backends.offline.phrases import compile_phrases, phrase_spans

    rng = random.Random(11)
    letters = list("aAbBkKsSiI .,'-&\n\t_7") + ["U.S.", "of", "In"]
    odd = ["\u212a", "\u017f", "\u0130", "\u0131", "\u00e9", "\u00c9", "\u00df", "\u4e2d"]
    lowered = 0
    for _ in range(3000):
        alphabet = letters + (odd if rng.random() < 0.3 else [])
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 40)))
        phrases = tuple("".join(rng.choice(alphabet) for _ in range(rng.randint(1, 5)))
                        for _ in range(rng.randint(1, 6)))
        if not any(p.strip() for p in phrases):
            continue
        rx = compile_phrases(phrases)
        pos = rng.randint(0, len(text))
        end = rng.choice([None, rng.randint(pos, len(text))])
        expected = [m.span() for m in rx.finditer(text, pos, len(text) if end is None else end)]
        assert phrase_spans(phrases, text, pos, end) == expected, (text, phrases, pos, end)
        lowered += phrase_match.lowered(text) is not None
    assert lowered > 1500  # the lower-cased way is the one mostly taken


def test_lowered_declines_where_case_folds_beyond_ascii():
    from kgkit.text.phrase_match import lowered

    assert lowered("Acme IN Texas") == "acme in texas"
    assert lowered("caf\u00c9") is None and lowered("\u212aelvin") is None
    assert lowered("\u4e2d Acme") == "\u4e2d acme"  # a character without case is itself


# --------------------------------------------------------------------------- capital-led name patterns

def test_capital_led_patterns_match_as_without_their_first_look():
    """The name patterns that open on a capital letter say so first ("(?=[A-Z])"); they
    match exactly what they match without it. The source credit is looked for only where
    its tail is, and found the same."""
    from kgkit.backends.offline import names

    plain = {rx: re.compile(rx.pattern.replace("(?=[A-Z])", "", 1), rx.flags)
             for rx in (names._CAPS_NAME, names._SINGLE, names._ACRONYM)}
    assert all(rx.pattern.startswith("(?=[A-Z])") for rx in plain)
    rng = random.Random(12)
    pieces = ["Anna", "Lark", "of", "the", "NATO", "FBI", "Mr.", "J.", "McDonald", "Chung-hee", "Marlow's", "and",
              "OSLO", "DAGBLADET", "in", "Norwegian", "3", "Jan", "95", "said", "x", "É", ".", ",", "-", "&", "'"]
    credits = 0
    for _ in range(2000):
        text = "".join(rng.choice(pieces) + rng.choice([" ", " ", "\n", "\t", ""]) for _ in range(rng.randint(0, 14)))
        if rng.random() < 0.3:  # a credit, or most of one, somewhere in it
            cut = rng.randint(0, len(text))
            credit = rng.choice(["OSLO DAGBLADET in Norwegian 3 Jan 95", "FBI  in English 12 March. 1995 p 4",
                                 "Oslo AP in  Norwegian 3 Jan 95x", "X in Norwegian 3 Jan 95"])
            text = text[:cut] + credit[:rng.randint(len(credit) - 3, len(credit))] + text[cut:]
        for rx, reference in plain.items():
            assert [m.span() for m in rx.finditer(text)] == [m.span() for m in reference.finditer(text)]
        kinds = {"organization": "Organization"}
        expected = [(m.start("name"), m.end("name")) for m in names._SOURCE_CREDIT.finditer(text)]
        assert [(m.start, m.end) for m in names.source_credit_mentions(text, kinds)] == expected
        credits += bool(expected)
    assert credits > 20


# --------------------------------------------------------------------------- entities: section headings

def test_heading_equals_the_section_number_search():
    from kgkit.backends.offline.shapes import _HEADING_END, _SECTION_NUMBER, is_heading
    from kgkit.backends.offline.mentions import Mention

    rng = random.Random(13)
    pieces = ["Section", "ARTICLE", "6.02", "IV", "7", ".", " ", "  ", "\t", "\n", "Acme Corp", "said", "x" * 30]
    headings = 0
    for _ in range(3000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 12)))
        if rng.random() < 0.5:  # a name right after a section number, the number on a line of its own or not
            text += rng.choice(["\n", "", "x\n", " "]) + rng.choice(["6.02", "Section 5.", "IV", "7"]) + \
                rng.choice([" ", "\t ", " " * 38]) + "Acme Corp" + rng.choice([".", ":", "\n", " x", ""])
            start = text.rindex("Acme Corp")
            end = start + len("Acme Corp")
        else:
            start = rng.randint(0, len(text))
            end = rng.randint(start, len(text))
        m = Mention(text[start:end], "Organization", start, end, 1, 0.5)
        expected = bool(_SECTION_NUMBER.search(text, max(0, start - 40), start)) and bool(
            _HEADING_END.match(text[end:end + 3]))
        assert is_heading(m, text) == expected, (text, start, end)
        headings += expected
    assert headings > 50


# --------------------------------------------------------------------------- relations: mentions and heads

def test_longest_mentions_equal_the_pairwise_test():
    """The bisection keeps what the pairwise test (find_mentions before it, and its way
    still where a span is empty) keeps: repeats of one span, both granularities."""
    from kgkit.backends.offline.entity_mentions import EntityMention, _longest, _longest_pairwise

    rng = random.Random(14)
    repeats = 0
    for _ in range(3000):
        found = []
        for _ in range(rng.randint(0, 14)):
            if found and rng.random() < 0.2:  # the same span again, for another node
                start, end = rng.choice([(x.start, x.end) for x in found])
                repeats += 1
            else:
                start = rng.randint(0, 90)
                end = start + (rng.choice([0, 1]) if rng.random() < 0.03 else rng.choice([2, 5, 12, 39, 40, 41, 70]))
            found.append(EntityMention(rng.choice(["Acme", "Jane"]), rng.choice(["Party", "Organization"]), start, end))
        found.sort(key=lambda x: (-(x.end - x.start), x.start))
        assert _longest(found) == _longest_pairwise(found)
    assert repeats > 500


def test_heads_equal_the_scan_of_every_other_mention():
    from kgkit.backends.offline.entity_mentions import EntityMention
    from kgkit.backends.offline.relations import _heads

    rng = random.Random(15)
    types = ["Person", "Organization", "Location"]
    for _ in range(3000):
        in_sent = [EntityMention(rng.choice("abcd"), rng.choice(types), i, i + 1) for i in range(rng.randint(2, 7))]
        names_of: dict[str, set[str]] = {}
        for m in in_sent:
            names_of.setdefault(m.type, set()).add(m.name)
        pairs = {(a, b) for a in types for b in types if rng.random() < 0.4}
        expected = [m for m in in_sent if any((m.type, t.type) in pairs for t in in_sent if t.name != m.name)]
        assert _heads(in_sent, names_of, pairs) == expected
