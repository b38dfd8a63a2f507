"""The canonical key of a name: the one place that decides when two spellings are the same name.

Both the merge (:mod:`kgkit.canon.merge`) and node ids (:mod:`kgkit.ids`) need it, and node ids
must not depend on the merge, so the key lives here on its own.
"""
from __future__ import annotations

import functools
import re
import unicodedata

#: Legal-form words, in key form (lower case, dots removed: "L.L.C." -> "llc").
#: Stripped from the end of a key, repeatedly ("Co., Ltd.", "Pty Ltd"), while a word
#: remains. Ambiguous two-letter forms that are also ordinary words (AS, AB, SE) are
#: left out on purpose.
LEGAL_SUFFIXES = frozenset(
    {
        "inc", "incorporated", "corp", "corporation", "co", "company", "ltd", "limited",
        "llc", "llp", "lp", "lllp", "pllc", "plc", "gmbh", "ag", "kgaa", "sa", "nv", "bv",
        "pty", "pte", "pvt", "sarl", "srl", "spa", "bhd", "sdn", "ulc",
    }
)

# Apostrophes of every style become "'", which the fold then drops, so "O\u2019Brien" keys
# like "O'Brien" and "OBrien". Other quote marks need no table: they are punctuation,
# which becomes a space.
_APOSTROPHES = str.maketrans(dict.fromkeys("\u2018\u2019\u201a\u201b\u2032`", "'"))
_WS = re.compile(r"\s+")
_ABBREV_DOT = re.compile(r"(?<=[^\W\d_])\.")  # "Inc." / "L.L.C." lose their dots
_NON_WORD = re.compile(r"[^\w]|_")


# The three pure functions below are cached: a document's names recur in every stage of the
# merge, in every relation end and every view, and across the documents of a corpus run.
_MEMO = 1 << 16


@functools.lru_cache(maxsize=_MEMO)
def squash(name: str) -> str:
    """Level 0: NFKC and collapsed whitespace -- differences nobody would call a spelling."""
    return _WS.sub(" ", unicodedata.normalize("NFKC", name)).strip()


def fold_tokens(name: str) -> list[str]:
    """Level 1: case, accents, quotes, punctuation, "&", spaced initials, a leading "the"."""
    text = squash(name)
    if text.isascii():  # most names: no curly quotes, accents or decompositions, and casefold is lower
        text = text.replace("`", "'").lower()
    else:
        text = text.translate(_APOSTROPHES).casefold()
        text = "".join(c for c in unicodedata.normalize("NFKD", text) if not unicodedata.combining(c))
        text = unicodedata.normalize("NFC", text)
    text = text.replace("&", " and ").replace("'", "")
    text = _NON_WORD.sub(" ", _ABBREV_DOT.sub("", text))
    tokens: list[str] = []
    in_initials = False
    for tok in text.split():
        # "J. R. R." and "L L C" become "jrr" and "llc", like their undotted spellings.
        single = len(tok) == 1 and tok.isalpha()
        if single and in_initials:
            tokens[-1] += tok
        else:
            tokens.append(tok)
        in_initials = single
    if len(tokens) > 1 and tokens[0] == "the":
        tokens = tokens[1:]
    return tokens


def strip_legal(tokens: list[str]) -> list[str]:
    tokens = list(tokens)
    while len(tokens) > 1 and tokens[-1] in LEGAL_SUFFIXES:
        tokens.pop()
        if len(tokens) > 1 and tokens[-1] == "and":  # "Smith & Co." -> "smith"
            tokens.pop()
    return tokens


_TRADE_NAME = re.compile(
    r"^(?P<name>.+?)[,\s]+(?:d\.?\s?/?b\.?\s?/?a\.?|doing\s+business\s+as|trading\s+as|t/a|a\.?/?k\.?/?a\.?"
    r"|also\s+known\s+as|f\.?/?k\.?/?a\.?|formerly\s+known\s+as)\s+(?P<alias>\S.*)$",
    re.IGNORECASE,
)


@functools.lru_cache(maxsize=_MEMO)
def split_trade_name(name: str) -> tuple[str, str | None]:
    """``"Solutions Media, Inc., dba SpinRecords.com"`` -> ``("Solutions Media, Inc.", "SpinRecords.com")``.

    A name carrying a trade-name clause (d/b/a, doing business as, a/k/a, f/k/a, trading
    as) names the entity before the clause and declares the one after it as an alias.
    Names without one come back unchanged with None.
    """
    m = _TRADE_NAME.match(squash(name))
    if not m:
        return name, None
    return m.group("name").rstrip(" ,"), m.group("alias").strip()


@functools.lru_cache(maxsize=_MEMO)
def canonical_key(name: str, *, legal_suffixes: bool = True) -> str:
    """The comparison key of a name: equal keys (within a type) mean the same entity.

    NFKC, whitespace collapsed, case and accents folded, curly quotes straightened,
    punctuation removed ("L.L.C." -> "llc", "Coca-Cola" -> "coca cola", "&" -> "and"),
    a leading "the" dropped and, when ``legal_suffixes``, trailing legal forms (Inc.,
    Corp., Ltd., GmbH, Pty Ltd, ...) stripped -- each only while something remains, so
    "The Company" keys to "company" and "Inc." to "inc". A trade-name clause is cut off
    ("X d/b/a Y" keys like "X"; see :func:`split_trade_name`). A name with no letters or
    digits keys to its case-folded self rather than to "".
    """
    tokens = fold_tokens(split_trade_name(name)[0])
    if legal_suffixes:
        tokens = strip_legal(tokens)
    return " ".join(tokens) if tokens else squash(name).casefold()
