"""A run folder checked before the store takes anything from it.

``kgkit graph add`` reads folders that anyone may have written or edited. What the store
keeps is served to every later command of the tenant (stats, show, every export), so a
folder is refused whole, with exit 2 and the file and item named, unless:

* each file is a regular file of bounded size (no FIFO, device or symbolic link is
  opened: :func:`read_file`), strict JSON (no ``NaN``/``Infinity``, no number too large
  for a double, no lone surrogate or NUL character, which neither a UTF-8 file nor the
  stores hold), read once, so the bytes checked are the bytes stored;
* ``nodes.json``, every ``views/*.json``, every line of ``review.jsonl`` and the
  ``input`` of ``manifest.json`` (all the store reads of it) conform to the published
  payload schema (``kgkit/schemas/payload.schema.json``);
* kgkit's own invariants hold: a node's id is the one kgkit computes from its type and
  name (so no folder can give another document's node a new name or type), node ids are
  unique, every edge, role and argument names a node of ``nodes.json``, spans lie within
  the document's text and pages and spans fit the stores' integers, confidences are
  between 0 and 1.
"""
from __future__ import annotations

import functools
import json
import math
import os
import re
import stat
from pathlib import Path
from typing import Any, Iterator

from kgkit import ids
from kgkit.errors import InputError
from kgkit.guards.input_file import DEFAULT_MAX_BYTES, UnusableFile, open_regular, read_bounded
from kgkit.text.name_keys import canonical_key

MAX_FILE_BYTES = DEFAULT_MAX_BYTES  # a run folder's file is never larger than the largest document
INT_MAX = 2**31 - 1
KGKIT_NODE_ID = re.compile(r"n_[0-9a-f]{16}")  # kgkit's own ids: a hash of type and canonical name  # spans and pages are INTEGER columns in the stores


class BadRunFolder(InputError):
    """A run folder the store refuses; the message names the file and the item."""


def read_file(path: Path) -> bytes:
    """The bytes of a run folder's file: a regular file that is no symbolic link, of at most
    MAX_FILE_BYTES; BadRunFolder otherwise (a FIFO or /dev/zero is refused unopened or unread)."""
    try:
        if stat.S_ISLNK(os.lstat(path).st_mode):
            raise BadRunFolder(f"{path}: is a symbolic link; a run folder's files are read only as kgkit wrote them")
        with open_regular(path, MAX_FILE_BYTES, what="a file kgkit extract wrote",
                          limit_name="the run file limit") as fh:
            return read_bounded(fh, MAX_FILE_BYTES, str(path), limit_name="the run file limit")
    except FileNotFoundError:
        raise BadRunFolder(f"{path}: missing; is this a run folder written by kgkit extract?") from None
    except UnusableFile as exc:
        raise BadRunFolder(str(exc)) from None
    except OSError as exc:
        raise BadRunFolder(f"{path}: cannot be read ({exc.strerror or exc})") from None


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def _finite(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"the number {text[:40]} is too large for a double")
    return value


def parse_json(raw: bytes, where: str) -> Any:
    """Strict JSON of ``raw``: BadRunFolder naming ``where`` for anything else."""
    try:
        data = json.loads(raw.decode("utf-8"), parse_constant=_no_constant, parse_float=_finite)
    except UnicodeDecodeError as exc:
        raise BadRunFolder(f"{where}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
    except RecursionError:
        raise BadRunFolder(f"{where}: JSON nested too deep") from None
    except ValueError as exc:
        raise BadRunFolder(f"{where}: not strict JSON ({str(exc)[:200]})") from None
    _check_strings(data, where)
    return data


def _check_strings(value: Any, where: str, path: str = "") -> None:
    """No lone surrogate (no UTF-8 can hold it) and no NUL (PostgreSQL text cannot) anywhere."""
    stack = [(path, value)]
    while stack:
        at, item = stack.pop()
        if isinstance(item, dict):
            for key, child in item.items():
                stack.append((f"{at}/{key}"[:200], key))
                stack.append((f"{at}/{key}"[:200], child))
        elif isinstance(item, list):
            stack.extend((f"{at}/{i}", child) for i, child in enumerate(item))
        elif isinstance(item, str) and not item.isprintable():
            if "\x00" in item:
                raise BadRunFolder(f"{where}: {at or 'value'}: a text holds a NUL character, which the store "
                                   "cannot keep")
            if any("\ud800" <= c <= "\udfff" for c in item):
                raise BadRunFolder(f"{where}: {at or 'value'}: a text holds a lone surrogate (no character)")


@functools.cache
def _schema(definition: str):
    import jsonschema_rs

    from kgkit.formats.json_schemas import schema_for

    payload = schema_for("payload")
    # a reader of its own (a Markdown vault's) names nodes by its own ids: any short text without spaces;
    # ids of kgkit's n_ form are checked against type and name below, every id against the store's
    # (a vault's nodes also carry fields of their own, which the store does not read)
    nodes_file = json.loads(json.dumps(payload["$defs"]["nodes_file"]))
    node = nodes_file["properties"]["nodes"]["items"]
    node.pop("additionalProperties", None)
    node["required"] = ["id", "type", "name"]  # what the store reads; the rest has defaults
    payload = {**payload, "$defs": {**payload["$defs"], "nodes_file": nodes_file,
                                    "node_id": {"type": "string", "pattern": r"^\S{1,200}$"}}}
    if definition == "manifest_input":  # an object whose input is the manifest's
        target = {"type": "object", "required": ["input"],
                  "properties": {"input": {"$ref": "#/$defs/manifest/properties/input"}}}
    else:
        target = {"$ref": f"#/$defs/{definition}"}
    return jsonschema_rs.Draft202012Validator({"$defs": payload["$defs"], **target}, validate_formats=False)


def conform(data: Any, definition: str, where: str) -> None:
    """BadRunFolder naming the place of the first way ``data`` breaks the payload schema's ``definition``."""
    error = next(iter(_schema(definition).iter_errors(data)), None)
    if error is not None:
        place = "/".join(str(p) for p in error.instance_path) or "the top level"
        message = error.message if len(error.message) <= 200 else error.message[:200] + "…"
        raise BadRunFolder(f"{where}: {place}: {message} (kgkit/schemas/payload.schema.json, $defs/{definition})")


def check_nodes(nodes_file: dict[str, Any], where: str, characters: int | None) -> set[str]:
    """The ids of ``nodes.json``'s nodes; BadRunFolder for an id reused or not the node's own."""
    seen: set[str] = set()
    for n, node in enumerate(nodes_file["nodes"]):
        at = f"{where}: nodes/{n} ({node['id']})"
        if node["id"] in seen:
            raise BadRunFolder(f"{at}: the id is used by another node of this file")
        seen.add(node["id"])
        own = {ids.key_node_id(node["type"], canonical_key(node["name"], legal_suffixes=legal))
               for legal in (True, False)}
        if KGKIT_NODE_ID.fullmatch(node["id"]) and node["id"] not in own:
            raise BadRunFolder(f"{at}: the id is not the one of a {node['type'][:40]!r} named "
                               f"{node['name'][:40]!r}; a node's id comes from its type and name")
        for m, mention in enumerate(node.get("mentions") or []):
            check_span(mention.get("span"), mention.get("page"), f"{at}: mentions/{m}", characters)
    return seen


def check_span(span: Any, page: Any, at: str, characters: int | None) -> None:
    if span is not None:
        start, end = span
        top = INT_MAX if characters is None else characters
        if not start <= end <= top:
            raise BadRunFolder(f"{at}: span [{start}, {end}] is not within the document's {top} characters")
    if page is not None and not 1 <= page <= INT_MAX:
        raise BadRunFolder(f"{at}: page {page} is out of range")


def _referenced(value: Any) -> Iterator[str]:
    """Node ids a role or argument filler names."""
    if isinstance(value, list):
        for v in value:
            yield from _referenced(v)
    elif isinstance(value, dict) and "node" in value:
        yield value["node"]


def check_items(items: list[dict[str, Any]], kind: str, where: str, list_key: str, nodes: set[str],
                characters: int | None) -> None:
    """References, spans and confidences of one view's items."""
    for n, raw in enumerate(items):
        at = f"{where}: {list_key}/{n} ({raw.get('id')})"
        if kind in ("edge", "temporal"):
            named = [raw["head"], raw["tail"]]
        elif kind == "event":
            named = [node for filler in (raw.get("arguments") or {}).values() for node in _referenced(filler)]
        else:
            named = [node for filler in (raw.get("roles") or {}).values() for node in _referenced(filler)]
        for node in named:
            if node not in nodes:
                raise BadRunFolder(f"{at}: names node {node}, which nodes.json does not hold")
        confidence = raw.get("confidence")
        if confidence is not None and not (isinstance(confidence, (int, float)) and 0 <= confidence <= 1):
            raise BadRunFolder(f"{at}: confidence {confidence!r} is not between 0 and 1")
        evidence = raw.get("evidence") or {}
        check_span(evidence.get("span"), evidence.get("page"), f"{at}: evidence", characters)


def document_characters(manifest: dict[str, Any], where: str) -> int | None:
    """The document's length the manifest states (spans must lie within it), if it states one."""
    characters = manifest["input"].get("characters")
    if characters is None:
        return None
    if not isinstance(characters, int) or isinstance(characters, bool) or not 0 <= characters <= INT_MAX:
        raise BadRunFolder(f"{where}: input/characters {str(characters)[:40]} is not a length")
    return characters
