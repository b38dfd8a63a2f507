"""One key for the names a place's law goes by: "the State of New York" is "New York".

Contracts and gold sets name a jurisdiction in several ways that all mean one legal
system: with its form of state ("the State of", "the Commonwealth of", "the Province of",
"the Republic of", "the Kingdom of"), with the country after a state or province
("Ontario, Canada", "Oregon, U.S.A."), by an official short form ("the PRC", "Hong Kong
SAR") or by one of its names ("People's Republic of China", "England and Wales" for the
law of England). :func:`place_key` reduces each to one key, so a scorer can say two names
are one place without a table per document.
"""
from __future__ import annotations

import functools
import re

from kgkit.text.name_keys import fold_tokens

# "the State of X", "Commonwealth of X", "Province of X", "Republic of X", "Kingdom of X"
_FORM = re.compile(r"^(?:the )?(?:state|commonwealth|province|territory|republic|kingdom|federal republic|"
                   r"principality|grand duchy) of (?:the )?(?=\S)")
# A country written after a state or province: "Ontario, Canada", "Oregon USA"
_COUNTRY_AFTER = re.compile(r"(?<=\S) (?:canada|australia|usa|us|u s a|united states(?: of america)?|"
                            r"united kingdom|uk|england|india|china|prc)$")
_STATE_AFTER = re.compile(r"(?<=\S) state$")  # "New York State"
_SAR = re.compile(r"(?<=\S) (?:sar|special administrative region(?: of (?:the )?(?:peoples republic of china|prc))?)$")
# One legal system, several names (keys after the reductions above).
_SAME = {
    "prc": "china", "peoples republic of china": "china", "peoples china": "china", "mainland china": "china",
    "england and wales": "england",
    "usa": "united states", "us": "united states", "u s a": "united states", "united states of america": "united states",
    "america": "united states",
    "uk": "united kingdom", "great britain": "united kingdom",
    "hong kong sar": "hong kong", "macau sar": "macau", "macao": "macau",
    "korea": "south korea", "republic of korea": "south korea",
}


@functools.lru_cache(maxsize=4096)
def place_key(name: str) -> str:
    """The key of a place's name: "the State of New York", "New York State" and "New York"
    are "new york"; "the PRC" and "People's Republic of China" "china"; "Ontario, Canada"
    "ontario". A name that is no place's keeps its folded form."""
    key = " ".join(fold_tokens(name))
    key = re.sub(r"^the ", "", key)
    key = _SAME.get(key, key)
    if key in _SAME.values():
        return key
    key = _FORM.sub("", key)
    key = _SAR.sub("", key)
    if key not in _SAME.values():
        key = _COUNTRY_AFTER.sub("", key)
        key = _STATE_AFTER.sub("", key)
    return _SAME.get(key, key)
