"""The passage of document text around each evidence span, for the page's evidence panel.

Neither a run folder nor the store keeps document text; a document's ``source`` (the path
``kgkit extract`` read) does. Its text is read again only when the file is still there and
its sha256 is the one the store recorded, so a passage is never taken from an edited file;
otherwise the panel shows the stored quote alone. ``--no-text`` leaves all text out of the
page (to share a page without the documents' wording beyond their quotes).
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from kgkit.errors import KgkitError

#: Characters of context shown on each side of an evidence span.
CONTEXT = 240


class Passages:
    """Evidence rows with their passage; each document's text is loaded at most once."""

    def __init__(self, enabled: bool = True):
        self.enabled = enabled
        self.documents: list[dict[str, Any]] = []
        self._texts: dict[int, str | None] = {}

    def text(self, doc: int | None) -> str | None:
        if not self.enabled or doc is None or doc >= len(self.documents):
            return None
        if doc not in self._texts:
            self._texts[doc] = self._load(self.documents[doc])
        return self._texts[doc]

    def _load(self, document: dict[str, Any]) -> str | None:
        from kgkit.documents.load import load_document

        source = document.get("source")
        if not source or source == "-":
            return None
        path = Path(source)  # as extract was given it: relative to the folder it ran in
        if not path.is_file():
            return None
        try:
            loaded = load_document(path)
        except (KgkitError, OSError):
            return None
        return loaded.text if loaded.sha256 == document.get("sha256") else None

    def row(self, doc: int | None, page: int | None, span, quote: str | None, view: str) -> dict[str, Any]:
        """One evidence row; with the document's text, the span's own text (``mark``) and the
        passage around it, cut at word boundaries."""
        out: dict[str, Any] = {"doc": doc, "page": page, "view": view, "quote": quote}
        text = self.text(doc)
        if text is None or not span or not (0 <= span[0] <= span[1] <= len(text)):
            return out
        start, end = span
        lo, hi = max(0, start - CONTEXT), min(len(text), end + CONTEXT)
        if lo > 0 and " " in text[lo:start]:
            lo = text.index(" ", lo, start) + 1
        if hi < len(text) and " " in text[end:hi]:
            hi = text.rindex(" ", end, hi)
        out.update(pre=("…" if lo > 0 else "") + text[lo:start], mark=text[start:end],
                   post=text[end:hi] + ("…" if hi < len(text) else ""))
        return out
