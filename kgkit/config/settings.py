"""The settings :mod:`kgkit.config.model` declares, as records, and what is made from them.

:func:`declared` walks the dataclasses once: every setting's place in kgkit.yaml, its
default and its description. The published config JSON Schema takes its descriptions and
defaults from them (:func:`schema_with_declarations`; ``python -m kgkit.config.settings``
rewrites ``kgkit/schemas/config.schema.json``, and a test fails when the file lags), the
starter ``kgkit.yaml`` its comments, ``kgkit config show`` its layout (:func:`to_data`).
The schema keeps what only it says: types, ranges, enums, patterns.
"""
from __future__ import annotations

import dataclasses
import json
import os
import sys
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, cast

from kgkit.config.model import Config

SCHEMA_FILE = Path(__file__).resolve().parent.parent / "schemas" / "config.schema.json"


@dataclass(frozen=True)
class Setting:
    """One configuration key."""

    key: tuple[str, ...]  # its place in kgkit.yaml: ("llm", "model"), ("chunking", "size"), ("domain",)
    attr: tuple[str, ...]  # its place on Config: ("llm", "model"), ("chunk_size",)
    default: Any
    doc: str


@dataclass(frozen=True)
class Section:
    """A kgkit.yaml mapping of settings (``llm``, ``canon``, …), declared by one dataclass;
    a section may hold sections of its own."""

    key: tuple[str, ...]  # ("llm",); ("query", "search")
    doc: str


def _default(f: dataclasses.Field) -> Any:
    factory = cast(Callable[[], Any], f.default_factory)
    return factory() if f.default is dataclasses.MISSING else f.default


@lru_cache(maxsize=1)
def declared() -> tuple[Setting | Section, ...]:
    """Every section and setting, in declaration order (a section before its settings)."""
    return tuple(_walk(Config, (), ()))


def _walk(cls: type, key: tuple[str, ...], attr: tuple[str, ...]) -> list[Setting | Section]:
    out: list[Setting | Section] = []
    for f in dataclasses.fields(cls):
        if "doc" not in f.metadata:
            continue  # not a setting (Config.source)
        if f.metadata.get("section"):
            out.append(Section(key + (f.name,), f.metadata["doc"]))
            out += _walk(type(_default(f)), key + (f.name,), attr + (f.name,))
        else:
            own = tuple(f.metadata["key"].split(".")) if "key" in f.metadata else (f.name,)
            out.append(Setting(key + own, attr + (f.name,), _default(f), f.metadata["doc"]))
    return out


def settings() -> list[Setting]:
    return [s for s in declared() if isinstance(s, Setting)]


def comments() -> dict[str, dict[str, str]]:
    """Setting descriptions by section (a top-level key is its own section), for the starter."""
    out: dict[str, dict[str, str]] = {}
    for s in settings():
        out.setdefault(s.key[0], {})[s.key[-1]] = s.doc
    return out


def plain(value: Any) -> Any:
    """A value as kgkit.yaml holds it: paths as text, stage overrides as mappings of what they set."""
    if isinstance(value, os.PathLike):
        return os.fspath(value)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {k: v for k, v in vars(value).items() if v is not None}
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return list(value)
    return value


def to_data(config: Config) -> dict[str, Any]:
    """``config`` in the file's layout, as plain YAML-ready data."""
    out: dict[str, Any] = {}
    for s in settings():
        value: Any = config
        for part in s.attr:
            value = getattr(value, part)
        node = out
        for part in s.key[:-1]:
            node = node.setdefault(part, {})
        node[s.key[-1]] = plain(value)
    return out


def schema_with_declarations(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` (the config JSON Schema) with every declared description and default set."""
    schema = json.loads(json.dumps(schema))
    for item in declared():
        node = schema
        for part in item.key:
            node = node["properties"][part]
        node["description"] = item.doc
        if isinstance(item, Setting):
            node["default"] = plain(item.default)
    return schema


def schema_text() -> str:
    """The config JSON Schema file's text as the declarations make it."""
    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return json.dumps(schema_with_declarations(schema), indent=2, ensure_ascii=False) + "\n"


if __name__ == "__main__":  # python -m kgkit.config.settings: bring the published schema up to date
    SCHEMA_FILE.write_text(schema_text(), encoding="utf-8")
    sys.exit(0)
