"""The places a contract's law may be named after by an adjective ("governed by English law").

A law is as often called by the adjective of its country as by the country's name; the
graph names the place ("England"), so that "English law" and "the laws of England" are
one jurisdiction. Only adjectives that name one place are listed ("British law" names no
single legal system, and is left out).
"""
from __future__ import annotations

PLACE_OF_ADJECTIVE: dict[str, str] = {
    "English": "England", "Scottish": "Scotland", "Scots": "Scotland", "Welsh": "Wales", "Irish": "Ireland",
    "German": "Germany", "French": "France", "Swiss": "Switzerland", "Dutch": "Netherlands",
    "Belgian": "Belgium", "Austrian": "Austria", "Italian": "Italy", "Spanish": "Spain",
    "Portuguese": "Portugal", "Swedish": "Sweden", "Danish": "Denmark", "Norwegian": "Norway",
    "Finnish": "Finland", "Polish": "Poland", "Greek": "Greece", "Cypriot": "Cyprus", "Israeli": "Israel",
    "Indian": "India", "Japanese": "Japan", "Chinese": "China", "Korean": "Korea",
    "Singaporean": "Singapore", "Canadian": "Canada", "Australian": "Australia",
    "Mexican": "Mexico", "Brazilian": "Brazil", "Russian": "Russia", "Turkish": "Turkey",
}
_ADJECTIVES_OF: dict[str, list[str]] = {}
for _adjective, _place in PLACE_OF_ADJECTIVE.items():
    _ADJECTIVES_OF.setdefault(_place, []).append(_adjective)


def place_of(adjective: str) -> str | None:
    """The place an adjective names ("English" -> "England"), or None for one not listed."""
    return PLACE_OF_ADJECTIVE.get(adjective.strip())


def adjectives_of(place: str) -> list[str]:
    """The adjectives that name ``place`` ("England" -> ["English"]); [] for a place not listed."""
    return list(_ADJECTIVES_OF.get(place.strip(), ()))
