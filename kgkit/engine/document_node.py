"""The node that IS the document, for a domain that declares a ``document_type`` (a
contract domain's Agreement).

Relations a contract states about itself ("This Agreement shall be governed by the laws
of New York") need an end to attach to whether or not a title pattern found the
contract's name, so every document gets exactly one such node: the node of that type the
document names first in its opening chunk (its title), else a stand-in named by the
document. It is marked ``"document": true`` in nodes.json; its scope is document, so the
corpus graph never merges it with another document's, and "this Agreement" in any
sentence means it.
"""
from __future__ import annotations

from typing import Any, Callable

from kgkit import ids
from kgkit.documents.types import Document
from kgkit.text.name_keys import canonical_key
from kgkit.formats.model import Domain

#: how a relation answer may name the document's own node besides its name
DEICTIC = ("this", "the")


def _first_start(node: dict[str, Any]) -> int | None:
    starts = [m["span"][0] for m in node.get("mentions") or () if m.get("span")]
    return min(starts) if starts else None


def mark_document_node(nodes: list[dict[str, Any]], domain: Domain, doc: Document, opening_end: int,
                       legal_suffixes: bool = True) -> dict[str, Any] | None:
    """Mark (or add) the document's own node in ``nodes``; None when the domain declares
    no ``document_type``. The title is the ``document_type`` node mentioned first, if that
    mention starts before ``opening_end`` (the opening chunk's end)."""
    dtype = domain.document_type
    if not dtype:
        return None
    titled = [(start, i) for i, n in enumerate(nodes) if n["type"] == dtype
              for start in [_first_start(n)] if start is not None and start < opening_end]
    if titled:
        node = nodes[min(titled)[1]]
    else:
        nid = ids.node_id(dtype, doc.name, legal_suffixes=legal_suffixes)
        found: dict[str, Any] | None = next((n for n in nodes if n["id"] == nid), None)
        if found is not None:
            node = found
        else:
            node = {"id": nid, "type": dtype, "name": doc.name, "aliases": [], "mentions": [], "merged_from": [],
                    "origin": "core"}
            nodes.append(node)
    node["document"] = True
    return node


def document_resolver(resolve: Callable[[str, str | None], str | None], node: dict[str, Any] | None,
                      legal_suffixes: bool = True) -> Callable[[str, str | None], str | None]:
    """``resolve`` (name, type -> node id) that also takes the document's own node by its
    name, its type's name or "this <type>" ("this Agreement", "the Agreement")."""
    if node is None:
        return resolve
    tname = node["type"].lower()
    own = {canonical_key(node["name"], legal_suffixes=legal_suffixes), tname,
           *(f"{article} {tname}" for article in DEICTIC)}

    def with_document(name: str, type_: str | None) -> str | None:
        if type_ in (None, node["type"]):
            said = " ".join(name.lower().split())
            if said in own or canonical_key(name, legal_suffixes=legal_suffixes) in own:
                return node["id"]
        return resolve(name, type_)

    return with_document
