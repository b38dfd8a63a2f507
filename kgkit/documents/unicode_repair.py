"""Text from a PDF's text layer made valid Unicode before anything hashes or writes it.

A font's ToUnicode map may send a glyph to one half of a UTF-16 surrogate pair; pypdf then
returns a ``str`` holding a lone surrogate, which no UTF-8 encoder accepts (hashing the
text for the document id, writing JSON or SQLite all fail). A pair split over two code
points is joined back into the character it encodes; a half on its own becomes U+FFFD and
is counted, so the loader can say how much was lost.
"""
from __future__ import annotations

import re

_SURROGATE = re.compile("[\ud800-\udfff]")
REPLACEMENT = "\ufffd"


def valid_unicode(text: str) -> tuple[str, int]:
    """``text`` with surrogate pairs joined and lone surrogates replaced by U+FFFD, and how
    many were replaced. Text without surrogates is returned as is (one regex scan)."""
    if not _SURROGATE.search(text):
        return text, 0
    before = text.count(REPLACEMENT)
    # UTF-16 with surrogatepass keeps every code unit; decoding joins the valid pairs and
    # replaces each unpaired unit with U+FFFD.
    fixed = text.encode("utf-16-le", "surrogatepass").decode("utf-16-le", "replace")
    return fixed, fixed.count(REPLACEMENT) - before


def surrogate_warning(source: str, count: int) -> str:
    return (f"{source}: {count} character(s) of the PDF's text layer were unpaired UTF-16 surrogates "
            "(a font's broken ToUnicode map); replaced by U+FFFD")
