"""Escaping strings for the text formats that cannot take every character as it is."""
from __future__ import annotations

import re

_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff]")


def backslash_escaped(text: str, table: dict[str, str]) -> str:
    """``text`` with the characters in ``table`` replaced, and every other control
    character as ``\\uXXXX`` (the escape both Cypher and Turtle string literals read)."""
    def escape(c: str) -> str:
        if c in table:
            return table[c]
        return f"\\u{ord(c):04X}" if ord(c) < 0x20 or ord(c) == 0x7F else c
    return "".join(escape(c) for c in text)


def xml_safe(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot carry (not even as references) replaced
    by U+FFFD: what a GraphML reader gets back."""
    return _NOT_XML.sub("\ufffd", text)
