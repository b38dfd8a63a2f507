"""A contracting party's name as the offline backend keeps it: an organisation's or a
person's name, never the clause fragment, address tail, role word or pair of names a
capitalised run of a contract also gives.

A pattern that reads "a capitalised run ending in a legal form" finds the party in
"located in Ontario, Canada N3C2A7 and PageMaster Corporation" as the whole run; this
module cuts it to the name it ends with, or drops what names no one ("ANY FAILURE OF
ESSENTIAL PURPOSE OF ANY LIMITED", "Provider").
"""
from __future__ import annotations

import re

from kgkit.text.name_keys import LEGAL_SUFFIXES, fold_tokens

#: words a clause has and a name does not (in capitals they still read as a clause)
CLAUSE_WORDS = frozenset("any such shall will not failure hereunder herein thereof which who may must "
                         "whether including pursuant notwithstanding".split())
#: words that open a run before the name: "At PageMaster Corporation", "By Acme Inc."
LEADING = frozenset("at by to from with for of in on and between among attn attention".split())
#: a contract's role words: a party's defined alias, never a party's name by itself
ROLE_WORDS = frozenset(
    "party parties provider company licensor licensee distributor customer client vendor supplier consultant "
    "contractor subcontractor seller buyer purchaser reseller sponsor manufacturer developer franchisee franchisor "
    "landlord tenant lender borrower employer employee agent partner member affiliate business unit date "
    "recipient discloser owner operator servicer".split())
_POSTCODE = re.compile(r"\b(?:[A-Z]\d[A-Z] ?\d[A-Z]\d|\d{5}(?:-\d{4})?)\b")


def _legal_end(words: list[str]) -> bool:
    tokens = fold_tokens(" ".join(words))
    return bool(tokens) and tokens[-1] in LEGAL_SUFFIXES


def clean_party_name(name: str) -> tuple[int, int] | None:
    """(start, end) of the party's name inside ``name``, or None when it names no one."""
    words = name.split()
    if not words:
        return None
    lead, tail = 0, len(words)
    while lead < tail - 1 and words[lead].lower().rstrip(".,:") in LEADING:
        lead += 1
    # "Canada N3C2A7 and PageMaster Corporation", "Vendor and TCS Aces Pty Limited": the
    # name is the part after the last "and" that ends in a legal form
    joins = [i for i in range(lead + 1, tail - 1) if words[i].lower() == "and"]
    if joins and _legal_end(words[joins[-1] + 1:tail]):
        lead = joins[-1] + 1
    elif joins and _legal_end(words[lead:joins[0]]):
        tail = joins[0]  # "Acme Inc. and its Affiliates"
    # "Solutions Media SOLUTIONS MEDIA, INC.": a name written twice keeps its full form
    folded = [w.lower().strip(",.") for w in words]
    for k in range(1, (tail - lead) // 2 + 1):
        if folded[lead:lead + k] == folded[lead + k:lead + 2 * k]:
            lead += k
            break
    kept = words[lead:tail]
    low = {w.lower().strip(",.;:()") for w in kept}
    if low & CLAUSE_WORDS or _POSTCODE.search(" ".join(kept)):
        return None
    if " ".join(w.lower().strip(",.") for w in kept) in ROLE_WORDS or all(w in ROLE_WORDS for w in low):
        return None
    if _heading_and_role(kept):
        return None
    start = sum(len(w) + 1 for w in words[:lead])
    # offsets into the collapsed name: callers give names with single spaces
    return start, start + len(" ".join(kept))


def _heading_and_role(words: list[str]) -> bool:
    """A heading run into a role written in capitals ("Indemnification COMPANY"): the role
    is a defined alias, and the words before it are not written as part of one name."""
    last = words[-1].strip(",.;:()")
    return (len(words) > 1 and last.isupper() and last.lower() in ROLE_WORDS
            and not any(w.isupper() for w in words[:-1]))


#: words of a signature block or an address, which a cue such as "Name:" or "Attn:" may
#: put where a person's name should be
FORM_WORDS = frozenset("date signature title name its by street avenue road suite floor east west north south "
                       "such terms account holiday department".split())


def names_a_person(name: str) -> bool:
    """Whether a cued person's name in a contract is a name, not a role, form or address word
    ("Provider", "Date", "Street East", "Such")."""
    words = [w.lower().strip(",.;:()") for w in name.split()]
    return bool(words) and not all(w in ROLE_WORDS or w in FORM_WORDS or w in CLAUSE_WORDS for w in words)
