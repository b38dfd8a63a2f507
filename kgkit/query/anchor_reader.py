"""O4's reads of a store: the ``Anchor`` nodes a layout read added (their payload is the
node's stored value, kgkit/scholarly/anchor_nodes.py) and the entities a term names.

It reads the store's own rows (``doc_nodes``, ``groups``, ``claims``), not the query
index, inside the caller's read transaction, so an answer sees one graph version.
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Iterable

from kgkit.text.name_keys import canonical_key

ANCHOR = "Anchor"
#: Node types of the layout layer: an entity named X is never one of them.
LAYOUT_TYPES = ("Anchor", "Section")
SLICE = 500  # node ids per IN list


@dataclass(frozen=True)
class StoredAnchor:
    node: str
    doc: str  # the document's name in the store
    name: str
    payload: dict[str, Any]


def _like(text: str) -> str:
    """A LIKE pattern for ``text`` inside a node's JSON value ('\\' escapes)."""
    inner = json.dumps(text, ensure_ascii=False)[1:-1]
    return "%" + inner.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def anchors(reader, *, kind: str | None = None, document: str | None = None,
            contains: str | None = None, nodes: Iterable[str] | None = None) -> list[StoredAnchor]:
    """The tenant's anchors, of ``kind`` and in ``document`` (a name or ``d_`` id) when
    given; ``contains``: only those whose payload holds the text (ASCII case folded; the
    caller checks words); ``nodes``: only these anchor nodes."""
    sql = "SELECT n.node, n.doc, n.name, n.value FROM doc_nodes n"
    args: list[Any] = []
    where = ["n.tenant = ?", "n.type = ?"]
    args.append(ANCHOR)  # the store's _q binds the tenant first
    if document:
        sql += " JOIN documents d ON d.tenant = n.tenant AND d.doc = n.doc"
        where.append("(d.doc = ? OR d.id = ?)")
        args += [document, document]
    if kind:
        where.append("n.value LIKE ?")  # canonical JSON: sorted keys, no spaces
        args.append(f'%"kind":"{kind}"%')
    if contains and contains.isascii():
        where.append("LOWER(n.value) LIKE ? ESCAPE '\\'")
        args.append(_like(contains.lower()))
    sql = f"{sql} WHERE {' AND '.join(where)}"
    if nodes is None:
        rows = reader.store._q(sql + " ORDER BY n.doc, n.node", *args)
    else:  # in slices: a common term is grounded in more anchors than a statement takes parameters
        wanted, rows = sorted(set(nodes)), []
        for i in range(0, len(wanted), SLICE):
            part = wanted[i:i + SLICE]
            rows += reader.store._q(f"{sql} AND n.node IN ({','.join('?' * len(part))})", *args, *part)
        rows.sort(key=lambda r: (r[1], r[0]))
    out = []
    for node, doc, name, value in rows:
        try:
            payload = json.loads(value) if value else {}
        except json.JSONDecodeError:
            continue  # a value this module did not write: not an anchor it can show
        if isinstance(payload, dict) and (not kind or payload.get("kind") == kind):
            out.append(StoredAnchor(node, doc, name, payload))
    return out


def any_stored(reader, document: str | None = None) -> bool:
    """Whether the tenant (or ``document``, a name or ``d_`` id) has any anchor at all."""
    sql = ("SELECT 1 FROM doc_nodes n JOIN documents d ON d.tenant = n.tenant AND d.doc = n.doc "
           "WHERE n.tenant = ? AND n.type = ?")
    args = [ANCHOR]
    if document:
        sql += " AND (d.doc = ? OR d.id = ?)"
        args += [document, document]
    return bool(reader.store._q(sql + " LIMIT 1", *args))


def named(reader, term: str) -> set[str]:
    """Entities (not layout nodes) whose key or a claimed alias key is ``term``'s."""
    key = canonical_key(term, legal_suffixes=reader.store.legal_suffixes)
    if not key:
        return set()
    marks = ",".join("?" * len(LAYOUT_TYPES))
    found = {r[0] for r in reader.store._q(
        f"SELECT entity FROM groups WHERE tenant = ? AND key = ? AND type NOT IN ({marks})",
        key, *LAYOUT_TYPES)}
    claimed = [r[0] for r in reader.store._q(
        f"SELECT node FROM claims WHERE tenant = ? AND alias_key = ? AND type NOT IN ({marks})",
        key, *LAYOUT_TYPES)]
    if claimed:
        found |= set(reader.entity_of(claimed).values())
    return found
