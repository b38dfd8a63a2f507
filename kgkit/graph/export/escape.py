"""Escaping strings for the text formats that cannot take every character as it is.

Each escaper is one ``str.translate`` table built once, so escaping runs at C speed on
graphs with hundreds of thousands of quotes.
"""
from __future__ import annotations

import re
from collections.abc import Callable

# control characters, and the ones other than \n and \r that some readers (Python's splitlines, JavaScript,
# editors) take for a line break: escaped, a Cypher or Turtle statement stays on its one line for every reader
_CONTROL = [*range(0x20), 0x7F, 0x85, 0x2028, 0x2029]
# XML 1.0 cannot carry these at all, not even as character references
_NOT_XML = [*range(0x09), 0x0B, 0x0C, *range(0x0E, 0x20), *range(0xD800, 0xE000), 0xFFFE, 0xFFFF]
_XML_SAFE = {c: "\ufffd" for c in _NOT_XML}


def backslash_escaper(table: dict[str, str]) -> Callable[[str], str]:
    """A function escaping the characters in ``table`` as given and every other control
    character (and U+0085, U+2028, U+2029, which some readers break lines at) as
    ``\\uXXXX`` (the escape both Cypher and Turtle string literals read)."""
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


# A spreadsheet runs a cell that begins with one of these as a formula (OWASP, "CSV Injection").
_FORMULA = re.compile(r"'*[=+\-@\t\r]")


def spreadsheet_safe(value: object) -> object:
    r"""A CSV cell a spreadsheet shows as text: a string that begins with ``= + - @``, a tab
    or a carriage return (after any run of ``'``) gets one more leading ``'``, so it is
    never run as a formula. Reversible: drop one leading ``'`` from a cell matching
    ``'+[=+\-@\t\r]``. Other values are returned as they are."""
    if isinstance(value, str) and _FORMULA.match(value):
        return "'" + value
    return value


def spreadsheet_text(cell: str) -> str:
    """The exact text of a cell :func:`spreadsheet_safe` wrote: its inverse."""
    return cell[1:] if cell.startswith("'") and _FORMULA.match(cell, 1) else cell
