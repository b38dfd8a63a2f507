"""Stable identifiers: the same input gives the same ids in every view, run and process.

Ids are content hashes (sha256, first 16 hex digits = 64 bits) with a kind prefix, so a
cross-view join is a dictionary lookup and a re-run on the same input reproduces every
id. Nothing here uses Python's ``hash()``, which is salted per process.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

from kgkit.text.name_keys import canonical_key

_SEP = "\x1f"  # ASCII unit separator: cannot occur in the parts by accident


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def canonical_json(obj: Any) -> str:
    """JSON with sorted keys, no spaces, UTF-8 text: one text per value.

    Raises ValueError for NaN/infinity and TypeError for values JSON cannot hold
    (sets, objects), rather than hashing an unstable ``repr``.
    """
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


def node_id(type: str, name: str, *, legal_suffixes: bool = True) -> str:
    """``n_`` + hash of the entity type and the canonical key of ``name``.

    Every spelling that :func:`kgkit.text.name_keys.canonical_key` folds together ("ACME Corp.",
    "Acme Corporation") gets the same id; the same name under two types gets two ids.
    ``legal_suffixes`` must match the setting the merge used (config ``canon.legal_suffixes``).
    """
    return key_node_id(type, canonical_key(name, legal_suffixes=legal_suffixes))


def key_node_id(type: str, key: str) -> str:
    """:func:`node_id` from the canonical key itself, for a caller that has it already (the merge)."""
    return "n_" + _digest(type + _SEP + key)


def document_node_id(doc: str) -> str:
    """``n_`` + hash of a document's name: the graph id of the node that IS the document
    (a domain's ``document_type``), whatever title it carries, so it never merges across documents."""
    return "n_" + _digest("document" + _SEP + doc)


def scoped_node_id(doc: str, node: str) -> str:
    """``n_`` + hash of a document's name and a run-folder node id: the graph id of a
    ``document`` or ``value`` node, which belongs to its document alone."""
    return "n_" + _digest(doc + _SEP + node)


def edge_id(head_id: str, relation: str, tail_id: str) -> str:
    """``e_`` + hash of (head id, relation, tail id): the same edge in every view."""
    return "e_" + _digest(_SEP.join((head_id, relation, tail_id)))


def content_id(prefix: str, obj: Any) -> str:
    """``<prefix>_`` + hash of the canonical JSON of ``obj``.

    For items identified by all of their content: hyperedges (``h``), events (``v``),
    temporal edges (``t``). Key order in ``obj`` does not matter; list order does.
    """
    prefix = prefix.rstrip("_")
    if not prefix:
        raise ValueError("content_id needs a prefix such as 'h', 'v' or 't'")
    return f"{prefix}_" + _digest(canonical_json(obj))


def chunk_id(doc_id: str, index: int, start: int, end: int) -> str:
    """``c_`` + hash of the document id, the chunk's index and its character offsets."""
    return "c_" + _digest(_SEP.join((doc_id, str(int(index)), str(int(start)), str(int(end)))))


def doc_id(text: str) -> str:
    """``d_`` + hash of the document text (UTF-8): the same text has the same id anywhere."""
    return "d_" + _digest(text)
