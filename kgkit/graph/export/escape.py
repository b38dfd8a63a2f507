"""Escaping strings for the text formats that cannot take every character as it is.

Each escaper is one ``str.translate`` table built once, so escaping runs at C speed on
graphs with hundreds of thousands of quotes.
"""
from __future__ import annotations

from collections.abc import Callable

_CONTROL = [*range(0x20), 0x7F]
# XML 1.0 cannot carry these at all, not even as character references
_NOT_XML = [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF]
_XML_SAFE = {c: "\ufffd" for c in _NOT_XML}


def backslash_escaper(table: dict[str, str]) -> Callable[[str], str]:
    """A function escaping the characters in ``table`` as given and every other control
    character as ``\\uXXXX`` (the escape both Cypher and Turtle string literals read)."""
    mapping = {c: f"\\u{c:04X}" for c in _CONTROL} | {ord(k): v for k, v in table.items()}
    return lambda text: text.translate(mapping)


def xml_escaper(table: dict[str, str]) -> Callable[[str], str]:
    """A function making text XML-safe (see :func:`xml_safe`) and escaping ``table``'s characters."""
    mapping = _XML_SAFE | {ord(k): v for k, v in table.items()}
    return lambda text: text.translate(mapping)


def xml_safe(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot carry replaced by U+FFFD: what a
    GraphML reader gets back."""
    return text.translate(_XML_SAFE)
