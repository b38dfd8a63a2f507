"""Check any kgkit file -- domain, view, DIY template, config or gold -- before it is used.

``kgkit validate FILE...`` is the one door (``kgkit domain validate`` and ``kgkit gold
validate`` remain for their own kinds). A file's kind is, in order: what the caller says;
a gold folder or ``*.gold.json``; the ``$schema`` it names (``# yaml-language-server:
$schema=.../view.schema.json`` or a JSON ``"$schema"`` key); a file called ``kgkit.yaml``;
else its top-level keys, matched against each kind's published schema. Every kind is then
checked by the same code its loader runs, so the messages are the same
``file:line:column: key -> path: message`` lines.
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgkit.errors import ConfigError, Issue, KgkitError, ValidationError
from kgkit.guards.input_file import YAML_MAX_BYTES, UnusableFile, open_regular

KINDS = ("domain", "view", "template", "config", "gold")
_SCHEMA_REF = re.compile(r"\$schema[\"']?\s*[:=]\s*[\"']?[^\s\"']*?\b(" + "|".join(KINDS) + r")\.schema\.json")
_HEAD_BYTES = 2048  # a $schema line is at the top of the file


@dataclass
class FileReport:
    """What ``kgkit validate`` found in one file or gold folder."""

    path: Path
    kind: str | None  # None: the kind could not be told
    issues: list[Issue] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.issues


def check_file(path: str | os.PathLike, kind: str | None = None, project_dir: Path | None = None) -> FileReport:
    """Validate one kgkit file (or gold folder) of ``kind`` (found from the file when None)."""
    path = Path(path)
    if kind is not None and kind not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    try:
        kind = kind or detect_kind(path)
    except KgkitError as exc:
        return FileReport(path, None, [Issue(str(path), None, None, (), exc.message, exc.hint)])
    if kind is None:  # not YAML, or not a mapping: what any kind's loader would say first
        from kgkit.formats.yaml_source import load

        return FileReport(path, None, load(path).issues)
    return FileReport(path, kind, _issues(path, kind, project_dir))


def detect_kind(path: Path) -> str | None:
    """The kind of a kgkit file: by folder, name, ``$schema`` reference, then top-level keys;
    None for a file that is not a YAML mapping (its syntax error says more than a guess)."""
    if path.is_dir():
        return "gold"
    if path.name.endswith(".gold.json"):
        return "gold"
    head = _head(path)
    named = _SCHEMA_REF.search(head)
    if named:
        return named.group(1)
    if path.name in ("kgkit.yaml", "kgkit.yml"):
        return "config"
    return _kind_by_keys(path)


def _head(path: Path) -> str:
    try:
        with open_regular(path, YAML_MAX_BYTES, what="a kgkit file", limit_name="the size limit for kgkit files") as fh:
            return fh.read(_HEAD_BYTES).decode("utf-8", "replace")
    except UnusableFile as exc:
        raise KgkitError(exc.reason) from None
    except FileNotFoundError:
        raise KgkitError("file not found") from None
    except OSError as exc:
        raise KgkitError(f"cannot read file: {exc.strerror or exc}") from None


def _kind_by_keys(path: Path) -> str | None:
    from kgkit.formats.json_schemas import schema_for
    from kgkit.formats.yaml_source import load

    data = load(path).data
    if not isinstance(data, dict):
        return None
    keys = set(data)
    fits: dict[str, tuple[bool, int]] = {}
    for kind in ("domain", "view", "template", "config", "gold"):
        known = set(schema_for(kind).get("properties") or {})
        fits[kind] = (keys <= known, len(keys & known))
    best = max(fits.values())
    if best[1] == 0:
        raise KgkitError("cannot tell what kind of kgkit file this is: none of its top-level keys belongs to a "
                         "domain, view, template, config or gold file",
                         hint="name its schema in a first line such as "
                              "'# yaml-language-server: $schema=kgkit/schemas/domain.schema.json', or use --kind")
    tied = [k for k, fit in fits.items() if fit == best]
    if set(tied) >= {"domain", "template"}:  # both have name, entity_types, relation_types
        return "template" if _has_roles(data) or path.parent.name == "templates" else "domain"
    return tied[0]


def _has_roles(data: dict[str, Any]) -> bool:
    """A template's relations have roles; a domain's have head and tail."""
    relations = data.get("relation_types")
    return isinstance(relations, list) and any(isinstance(r, dict) and "roles" in r for r in relations)


def _issues(path: Path, kind: str, project_dir: Path | None) -> list[Issue]:
    try:
        if kind == "gold":
            return _gold_issues(path)
        if kind == "config":
            from kgkit.config.loader import load_config

            load_config(path)
        else:
            from kgkit.catalog.validation import validate_file

            validate_file(kind, path, project_dir)
    except (ValidationError, ConfigError) as exc:
        return list(exc.issues) or [Issue(str(path), None, None, (), exc.message, exc.hint)]
    except KgkitError as exc:
        return [Issue(str(path), None, None, (), exc.message, exc.hint)]
    return []


def _gold_issues(path: Path) -> list[Issue]:
    from kgkit.eval.gold import check_gold, check_gold_file

    if path.is_dir():
        return check_gold(path)[1]
    _head(path)  # a FIFO or device named *.gold.json is refused before it is read
    return check_gold_file(path)
