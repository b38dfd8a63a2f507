"""A run folder, as ``kgkit extract`` writes it, read into one document's contribution.

The store never re-extracts: it takes the folder's ``manifest.json`` (which document, its
content hash), ``nodes.json`` (the document's resolved nodes), ``views/*.json`` (its items
with evidence) and ``review.jsonl`` (what extraction held back), each checked first
(:mod:`kgkit.graph.run_check`): a folder the store could not serve is refused whole. Items a view kept but
marked -- unverified evidence, confidence under ``review.confidence_threshold`` -- are
*held*: stored with their provenance but outside the graph until a reviewer accepts them.
Rejects (unknown relation, type mismatch, unparsable answer) have no item in any view;
they are kept as review entries.
"""
from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgkit import ids
from kgkit.config.model import CanonConfig, ReviewConfig
from kgkit.errors import InputError
from kgkit.formats.scopes import SCOPES
from kgkit.graph import run_check as check
from kgkit.text.name_keys import canonical_key

#: review.jsonl reasons whose item is still in its view (held there, not rejected).
HELD_IN_VIEW = ("unverified evidence", "low confidence")


@dataclass
class Contribution:
    """Everything one document adds to the graph."""

    doc: str  # the document's name: the run folder's name; an edited document keeps it
    doc_id: str  # d_ + hash of the text, as the run folder says
    source: str | None
    sha256: str
    fingerprint: str  # hash of everything below: equal means re-adding changes nothing
    title: str | None = None  # the document node's title, else the loader's (the first line, a PDF's title)
    pages: int | None = None  # page count (None: a format without pages)
    doc_node: str | None = None  # graph id of the node that IS the document (a domain's document_type)
    nodes: list[dict[str, Any]] = field(default_factory=list)  # {node, type, key, name, aliases, scope, value}
    claims: list[tuple[str, str, str]] = field(default_factory=list)  # (node, type, alias key)
    items: list[dict[str, Any]] = field(default_factory=list)  # {view, item, kind, body, confidence, held, review_key}
    evidence: list[tuple] = field(default_factory=list)  # (item, view, chunk, page, start, end, quote)
    review: list[dict[str, Any]] = field(default_factory=list)  # {key, stage, chunk, item, reason}


def _evidence_row(item_id: str, view: str, ev: dict[str, Any] | None) -> tuple:
    ev = ev or {}
    span = ev.get("span") or [None, None]
    return (item_id, view, ev.get("chunk"), ev.get("page"), span[0], span[1], ev.get("quote"))


def scoped_ids(doc: str, nodes: list[dict[str, Any]]) -> dict[str, str]:
    """Run-folder node id -> graph id, for the nodes whose identity is their document's.

    A run folder names a node by its type and name, so "Effective Date" or "SUPPLY
    AGREEMENT" has one id in every document; in the graph a ``document`` or ``value`` node
    is its document's own, so its id is made from the document's name (which an edited
    document keeps) and its run-folder id, and the node that IS the document from the
    document's name alone."""
    out = {}
    for node in nodes:
        if node.get("document"):
            out[node["id"]] = ids.document_node_id(doc)
        elif (node.get("scope") or "corpus") != "corpus":
            out[node["id"]] = ids.scoped_node_id(doc, node["id"])
    return out


def repoint(body: Any, rename: dict[str, str]) -> Any:
    """An item body with the node ids of ``rename`` replaced (ends, role and argument fillers)."""
    if not rename:
        return body
    if isinstance(body, list):
        return [repoint(v, rename) for v in body]
    if isinstance(body, dict):
        out: dict[str, Any] = {}
        for k, v in body.items():
            if k in ("head", "tail", "node") and isinstance(v, str):
                out[k] = rename.get(v, v)
            elif k in ("roles", "arguments") and isinstance(v, dict):
                out[k] = {role: repoint(f, rename) if isinstance(f, (list, dict)) else rename.get(f, f)
                          for role, f in v.items()}
            else:
                out[k] = v
        return out
    return body


def _kind(payload: dict[str, Any]) -> tuple[str, str] | None:
    """(item kind, list key) of a view payload, by its mode."""
    mode = str(payload.get("mode", ""))
    if "relations" in payload and "template" in payload:
        return "hyperedge", "relations"
    if mode.startswith("temporal"):
        return "temporal", "edges"
    if "hyperedges" in payload:
        return "hyperedge", "hyperedges"
    if "events" in payload:
        return "event", "events"
    if "edges" in payload:
        return "edge", "edges"
    return None


def _body(kind: str, raw: dict[str, Any], template: str | None) -> dict[str, Any]:
    """The item without its evidence: what the graph keeps of it (an edge's relation kind,
    where its domain tags one, as its ``kind`` property)."""
    if kind == "edge":
        edge = {"head": raw["head"], "relation": raw["relation"], "tail": raw["tail"]}
        if isinstance(raw.get("kind"), str):
            edge["properties"] = {"kind": raw["kind"]}
        return edge
    if kind == "temporal":
        return {"head": raw["head"], "relation": raw["relation"], "tail": raw["tail"],
                "qualifiers": raw.get("qualifiers") or {}}
    if kind == "event":
        return {"type": raw["type"], "trigger": raw.get("trigger"), "arguments": raw.get("arguments") or {},
                "time": raw.get("time")}
    body = {"relation": raw["relation"], "roles": raw.get("roles") or {}}
    if template:
        body["template"] = template
        body["qualifiers"] = raw.get("qualifiers") or {}
    return body


def read_run(run_dir: str | Path, *, confidence_threshold: float = ReviewConfig.confidence_threshold,
             legal_suffixes: bool = CanonConfig.legal_suffixes) -> Contribution:
    """Read one run folder, checked whole first (:mod:`kgkit.graph.run_check`). Raises
    InputError naming the file and the item when it is not a usable run."""
    run = Path(run_dir)
    if not run.is_dir():
        raise InputError(f"{run}: not a folder; give the run folder kgkit extract wrote (with nodes.json)")
    # of the manifest the store reads only what it says of the input: checked, and the rest left to its writer
    # (a reader of its own, such as a vault's, records its views in its own way)
    manifest_raw, manifest = _read(run / "manifest.json", "manifest_input")
    characters = check.document_characters(manifest, str(run / "manifest.json"))
    nodes_raw, nodes_file = _read(run / "nodes.json", "nodes_file")
    node_ids = check.check_nodes(nodes_file, str(run / "nodes.json"), characters)
    doc_id = manifest["input"]["doc_id"]
    if nodes_file["doc_id"] != doc_id:
        raise check.BadRunFolder(f"{run / 'nodes.json'}: doc_id {nodes_file['doc_id']} is not the manifest's {doc_id}")
    source = manifest["input"]
    contribution = Contribution(doc=run.name, doc_id=doc_id, source=source.get("path"), sha256=source["sha256"],
                                fingerprint="")
    digest = hashlib.sha256()
    digest.update(f"{contribution.sha256}\x1f{confidence_threshold}\x1f{legal_suffixes}".encode())
    digest.update(nodes_raw)

    contribution.title = source.get("title")
    contribution.pages = source.get("pages") or None
    rename = _read_nodes(contribution, nodes_file, run / "nodes.json", legal_suffixes)
    _read_views(contribution, run, digest, rename, _Checked(doc_id, node_ids, characters), confidence_threshold)

    from kgkit.scholarly.corpus import add_structure

    add_structure(contribution, run, digest, rename)
    contribution.claims = sorted(set(contribution.claims))
    _read_review(contribution, run / "review.jsonl", digest)
    contribution.fingerprint = digest.hexdigest()
    return contribution


@dataclass(frozen=True)
class _Checked:
    """What the checks of the manifest and nodes.json gave the checks of each view file."""

    doc_id: str
    node_ids: set[str]
    characters: int | None


def _read_nodes(contribution: Contribution, nodes_file: dict[str, Any], path: Path,
                legal_suffixes: bool) -> dict[str, str]:
    """nodes.json's nodes, their alias claims and mention evidence into ``contribution``; the
    renames of its document-scoped ids (:func:`scoped_ids`)."""
    try:
        rename = scoped_ids(contribution.doc, nodes_file["nodes"])
        for node in nodes_file["nodes"]:
            nid = rename.get(node["id"], node["id"])
            scope = node.get("scope") or "corpus"
            if scope not in SCOPES:
                raise InputError(f"{path}: node {node['id']} has scope {scope!r}; "
                                 f"expected one of {', '.join(SCOPES)}")
            key = canonical_key(node["name"], legal_suffixes=legal_suffixes)
            aliases = sorted(set(node.get("aliases") or []))
            contribution.nodes.append({"node": nid, "type": node["type"], "key": key, "name": node["name"],
                                       "aliases": aliases, "scope": scope, "value": node.get("value")})
            if node.get("document"):
                contribution.doc_node = nid
                if node.get("mentions"):  # a title the text states, not a stand-in
                    contribution.title = node["name"]
            for alias in aliases if scope == "corpus" else ():  # a local name claims nothing corpus-wide
                akey = canonical_key(alias, legal_suffixes=legal_suffixes)
                if akey != key:
                    contribution.claims.append((nid, node["type"], akey))
            view = node.get("origin") or "core"
            for m in node.get("mentions") or []:
                contribution.evidence.append(_evidence_row(nid, view, {**m, "quote": None}))
    except (KeyError, TypeError) as exc:
        raise InputError(f"{path}: a node lacks {exc}") from None
    contribution.claims = sorted(set(contribution.claims))
    return rename


def _read_views(contribution: Contribution, run: Path, digest: Any, rename: dict[str, str], checked: _Checked,
                confidence_threshold: float) -> None:
    """Each views/*.json file's items into ``contribution``, held when unverified or under the
    confidence threshold."""
    views = run / "views"
    if os.path.islink(views):
        raise check.BadRunFolder(f"{views}: is a symbolic link; a run folder's files are read only as kgkit wrote them")
    for path in sorted(views.glob("*.json")):
        raw, payload = _read(path, "view_file")
        digest.update(path.name.encode() + b"\0" + raw)
        found = _kind(payload)
        if found is None:
            raise InputError(f"{path}: not a view file kgkit knows (no edges, hyperedges, events or relations)")
        kind, list_key = found
        if payload["doc_id"] != checked.doc_id:
            raise check.BadRunFolder(f"{path}: doc_id {payload['doc_id']} is not the manifest's {checked.doc_id}")
        items = payload[list_key]
        if not isinstance(items, list) or not all(isinstance(raw_item, dict) for raw_item in items):
            raise check.BadRunFolder(f"{path}: {list_key} is not a list of items")
        check.check_items(items, kind, str(path), list_key, checked.node_ids, checked.characters)
        view = str(payload.get("view") or path.stem)
        try:
            for raw_item in items:
                held = None
                if raw_item.get("verified") is False:
                    held = "unverified evidence"
                elif raw_item.get("confidence") is not None and raw_item["confidence"] < confidence_threshold:
                    held = f"low confidence ({raw_item['confidence']} < {confidence_threshold})"
                contribution.items.append({
                    "view": view, "item": raw_item["id"], "kind": kind,
                    "body": repoint(_body(kind, raw_item, payload.get("template")), rename),
                    "confidence": raw_item.get("confidence"),
                    "held": held, "review_key": f"{view}:{raw_item['id']}" if held else None,
                })
                contribution.evidence.append(_evidence_row(raw_item["id"], view, raw_item.get("evidence")))
        except (KeyError, TypeError, AttributeError) as exc:
            raise InputError(f"{path}: an item lacks {exc}") from None


def _read_review(contribution: Contribution, review_path: Path, digest: Any) -> None:
    """review.jsonl's entries whose item is not held in its view (those are read with the view)."""
    if not os.path.lexists(review_path):
        return
    raw = check.read_file(review_path)
    digest.update(raw)
    for n, line in enumerate(raw.split(b"\n"), 1):
        if not line.strip():
            continue
        entry = check.parse_json(line, f"{review_path}:{n}")
        check.conform(entry, "review_item", f"{review_path}:{n}")
        reason = entry["reason"]
        if reason.startswith(HELD_IN_VIEW):
            continue  # the item is in its view, held there
        key = ids.content_id("r", {"stage": entry.get("stage"), "item": entry.get("item"), "reason": reason})
        contribution.review.append({"key": key, "stage": entry.get("stage"), "chunk": entry.get("chunk"),
                                    "item": entry.get("item"), "reason": reason})


def _read(path: Path, definition: str) -> tuple[bytes, Any]:
    """(bytes, parsed JSON) of one file, checked against the payload schema's ``definition``."""
    raw = check.read_file(path)
    data = check.parse_json(raw, str(path))
    check.conform(data, definition, str(path))
    return raw, data
