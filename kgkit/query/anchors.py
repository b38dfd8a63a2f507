"""O4 anchors: the figures, tables and equations a graph's documents are anchored to.

Documents carry no anchors yet: reading them out of PDFs is scholarly reading's work.
Until a store holds them this operator answers with nothing and a note saying why, so a
consumer can tell "no anchors here" from "anchors not read".
"""
from __future__ import annotations

from kgkit.query.reader import Reader
from kgkit.query.results import Answer

KINDS = ("figure", "table", "equation")


def anchors(reader: Reader, *, kind: str | None = None, document: str | None = None) -> Answer:
    answer = Answer("anchors", reader.tenant, reader.version, {"kind": kind, "document": document}, limits={})
    answer.note = "no anchors: documents in this store carry no figure, table or equation anchors yet"
    return answer
