"""The published JSON Schemas, and their errors explained the way an author needs them.

jsonschema's own messages ("'x' is not valid under any of the given schemas") name
neither the place nor the fix. Here each error becomes issues (:class:`~kgkit.errors.Issue`) at
the key or value it concerns, saying what was expected, with a did-you-mean for
misspelt keys (from the schema's properties at that place) and enum values. All schemas
in ``kgkit/schemas`` are registered by ``$id``, so their ``$ref``s to each other resolve
offline.
"""
from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from kgkit.errors import Issue, did_you_mean
from kgkit.formats.yaml_source import KeyPath, Source, excerpt
from kgkit.guards.secrets import looks_like_key

_SECRET_PATH = re.compile(r"key|token|secret|password", re.IGNORECASE)  # values never echoed

SCHEMA_DIR = Path(__file__).resolve().parent.parent / "schemas"  # published path: users' $schema lines name it


@functools.cache
def _registry():
    """Every published schema, by ``$id``, so relative ``$ref``s between them resolve offline."""
    from referencing import Registry, Resource

    resources = []
    for path in sorted(SCHEMA_DIR.glob("*.schema.json")):
        contents = json.loads(path.read_text(encoding="utf-8"))
        resources.append((contents.get("$id", path.name), Resource.from_contents(contents)))
    return Registry().with_resources(resources)


@functools.cache
def schema_for(name: str) -> dict[str, Any]:
    """The published schema ``name`` (domain, view, template, …)."""
    return json.loads((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"))


@functools.cache
def validator(name: str):
    """A Draft 2020-12 validator for schema ``name`` that resolves refs between our schemas."""
    from jsonschema import Draft202012Validator

    return Draft202012Validator(schema_for(name), registry=_registry())


def _conforms(name: str, data: Any) -> bool:
    """Whether ``data`` certainly conforms to schema ``name``: jsonschema_rs's yes, in
    compiled code, so a valid file (every run reads a config, a domain and its views) costs
    neither importing jsonschema nor its validation in Python. Its no is never trusted:
    jsonschema then finds (or clears) the errors. False where the answer might differ: a
    value JSON cannot hold (a YAML date) or a pattern beyond ASCII classes and literals."""
    fast = _compiled(name)
    if fast is None:
        return False
    try:
        return fast.is_valid(data)
    except (TypeError, ValueError, OverflowError):
        return False


# A pattern whose matches Python's re and Rust's regex may not agree on: a shorthand class
# reads Unicode differently. Patterns without one (ASCII classes and literals between ^ and
# $) agree, except that Python's $ also matches before a final newline: there jsonschema_rs
# says no and jsonschema is asked.
_UNSHARED_PATTERN = re.compile(r"\\[wWdDsSbB]|[^\x00-\x7f]")


@functools.cache
def _compiled(name: str):
    """A jsonschema_rs validator for schema ``name`` (the published schemas registered, formats
    not checked, as jsonschema's default), or None where its yes might not be jsonschema's."""
    if any(_UNSHARED_PATTERN.search(p) for p in _patterns([schema_for(n) for n in _published()])):
        return None
    import jsonschema_rs

    registry = jsonschema_rs.Registry([(schema.get("$id", f"{n}.schema.json"), schema)
                                       for n, schema in ((n, schema_for(n)) for n in _published())])
    return jsonschema_rs.Draft202012Validator(schema_for(name), registry=registry, validate_formats=False)


def _published() -> list[str]:
    return sorted(path.name.removesuffix(".schema.json") for path in SCHEMA_DIR.glob("*.schema.json"))


def _patterns(value: Any) -> Iterator[str]:
    """Every ``pattern`` (and ``patternProperties`` key) in a schema."""
    if isinstance(value, dict):
        for key, child in value.items():
            if key == "pattern" and isinstance(child, str):
                yield child
            elif key == "patternProperties" and isinstance(child, dict):
                yield from child
            yield from _patterns(child)
    elif isinstance(value, list):
        for child in value:
            yield from _patterns(child)


_NAME_RULES = {
    "^[A-Za-z_][A-Za-z0-9_.\\-]*$": "letters, digits, '_', '.' or '-', starting with a letter or '_'",
    "^[A-Za-z_*][A-Za-z0-9_.\\-/]*$": "letters, digits, '_', '.', '-' or '/', starting with a letter or '_'",
    "^[A-Za-z_][A-Za-z0-9_\\-]*$": "letters, digits, '_' or '-', starting with a letter or '_'",
}
_TYPE_WORDS = {
    "object": "a mapping (key: value)",
    "array": "a list",
    "string": "text",
    "boolean": "true or false",
    "integer": "a whole number",
    "number": "a number",
    "null": "nothing",
}


def _describe_value(value: Any) -> str:
    if isinstance(value, dict):
        return "a mapping"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, bool):
        return f"{str(value).lower()}"
    if value is None:
        return "nothing (an empty value)"
    if isinstance(value, (int, float)):
        return f"the number {value}"
    return f"the text {excerpt(value)}"


def _expected_types(types: str | list[str]) -> str:
    types = [types] if isinstance(types, str) else list(types)
    return " or ".join(_TYPE_WORDS.get(t, t) for t in types)


def schema_issues(src: Source, name: str) -> list[Issue]:
    """Every way ``src.data`` breaks schema ``name``, as located issues."""
    foreign = _foreign_file(src, name)
    if foreign:
        return [foreign]
    if _conforms(name, src.data):
        return []
    issues: list[Issue] = []
    for error in validator(name).iter_errors(src.data):
        issues.extend(explain(src, error))
    return issues


def _foreign_file(src: Source, name: str) -> Issue | None:
    """One issue for a mapping none of whose top-level keys belongs to schema ``name``.

    Such a file is not a kgkit file at all (``--view /etc/shadow`` parses as a mapping of
    its lines): reporting each unknown key would print the file line by line.
    """
    known = schema_for(name).get("properties") or {}
    if not isinstance(src.data, dict) or not src.data or not known or any(k in known for k in src.data):
        return None
    n = len(src.data)
    return src.issue((), f"not a {name} file: none of its {n} top-level key{'s' if n != 1 else ''} is a {name} key; "
                         f"expected keys such as {', '.join(list(known)[:4])}")


def explain(src: Source, error) -> Iterator[Issue]:
    """Turn one jsonschema error into issues that say what was expected, where."""
    path: KeyPath = tuple(error.absolute_path)
    kind, value, instance = error.validator, error.validator_value, error.instance
    if kind == "additionalProperties" and isinstance(instance, dict):
        allowed = list(error.schema.get("properties", {}))
        for key in instance:
            if key in allowed:
                continue
            hint = did_you_mean(key, allowed) or ("expected one of: " + ", ".join(allowed) if allowed else None)
            yield src.issue(path + (key,), f"unknown key {key!r}", hint, key=True)
    elif kind == "required":
        for name in value:
            if isinstance(instance, dict) and name not in instance:
                yield src.issue(path, f"missing required key {name!r}", key=True)
    elif kind == "type":
        yield src.issue(path, f"expected {_expected_types(value)}, got {_describe_value(instance)}")
    elif kind == "enum":
        hint = did_you_mean(instance, [str(v) for v in value]) if isinstance(instance, str) else None
        shown = excerpt(instance) if isinstance(instance, str) else repr(instance)
        yield src.issue(path, f"{shown} is not allowed; expected one of: {', '.join(map(str, value))}", hint)
    elif kind == "const":
        yield src.issue(path, f"expected {value!r}, got {_describe_value(instance)}")
    elif kind == "pattern":
        rule = _NAME_RULES.get(value, f"text matching {value}")
        if "propertyNames" in error.schema_path or "propertyNames" in error.relative_schema_path:
            yield src.issue(path + (instance,), f"{excerpt(instance)} is not a valid name; expected {rule}", key=True)
        elif isinstance(instance, str) and looks_like_key(instance) and _SECRET_PATH.search(str(path[-1:])):
            yield src.issue(path, f"the value (not shown: it looks like a key) is not a valid name; expected {rule}")
        else:
            yield src.issue(path, f"{excerpt(instance)} is not a valid name; expected {rule}")
    elif kind == "minItems":
        yield src.issue(path, f"expected at least {value} item{'s' if value != 1 else ''}, got {len(instance)}")
    elif kind == "minLength":
        yield src.issue(path, "expected non-empty text")
    elif kind == "minProperties":
        yield src.issue(path, f"expected at least {value} entr{'ies' if value != 1 else 'y'}, got none")
    elif kind in ("minimum", "maximum"):
        word = "at least" if kind == "minimum" else "at most"
        yield src.issue(path, f"expected a number {word} {value}, got {_describe_value(instance)}")
    elif kind in ("oneOf", "anyOf"):
        yield from _explain_alternatives(src, error, path)
    elif kind == "not" and isinstance(value, dict) and "required" in value:
        context = f" with strategy: {src.data.get('strategy')}" if path == () and "strategy" in src.data else ""
        for name in value["required"]:
            yield src.issue(path + (name,), f"key {name!r} is not allowed{context}", key=True)
    else:
        yield src.issue(path, error.message)


def _explain_alternatives(src: Source, error, path: KeyPath) -> Iterator[Issue]:
    """oneOf/anyOf: explain the branch the author evidently meant, else list the choices."""
    branches: dict[int, list] = {}
    for sub in error.context or ():
        branches.setdefault(sub.relative_schema_path[0], []).append(sub)
    # a branch whose failures are all "wrong type at this very place" was not meant
    meant = [
        errs for errs in branches.values()
        if not any(e.validator == "type" and tuple(e.absolute_path) == path for e in errs)
    ]
    if len(meant) == 1:
        for sub in meant[0]:
            yield from explain(src, sub)
        return
    if branches and all(e.validator == "required" and tuple(e.absolute_path) == path
                        for errs in branches.values() for e in errs):
        names = [n for errs in branches.values() for e in errs for n in e.validator_value]
        yield src.issue(path, "missing key: expected " + " or ".join(repr(n) for n in names), key=True)
        return
    options = [s for s in error.validator_value if isinstance(s, dict)]
    words = []
    for option in options:
        if option.get("type") == "array":
            words.append("a list")
        elif option.get("type") == "object":
            keys = ", ".join(option.get("properties", {}))
            words.append(f"a mapping with {keys}" if keys else "a mapping")
        elif "type" in option:
            words.append(_expected_types(option["type"]))
    expected = " or ".join(words) if words else "one of the allowed forms"
    yield src.issue(path, f"expected {expected}, got {_describe_value(error.instance)}")
