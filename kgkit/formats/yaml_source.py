"""Safe YAML that remembers where every key and value came from.

``yaml.safe_load`` throws positions away and silently keeps the last of two equal keys.
Authors need both: a message is only useful with ``file:line:column``, and a duplicated
``name:`` is almost always a copy-paste slip. So we ``compose`` the node tree with the
safe loader and build plain Python data ourselves, recording the mark of every value and
every mapping key by its key path, and reporting duplicates as issues.

Problems that stop parsing (binary data, invalid UTF-8, tabs, syntax errors, an empty
file, a top level that is not a mapping) come back as issues too; nothing here raises
for bad input.
"""
from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from kgkit.errors import Issue
from kgkit.guards.input_file import YAML_MAX_BYTES, UnusableFile, open_regular, read_bounded

KeyPath = tuple[str | int, ...]
Mark = tuple[int, int]  # 1-based line, column


class _Constructor(yaml.constructor.SafeConstructor):
    """Safe scalars, except that dates stay text: kgkit files are JSON-shaped."""


_Constructor.add_constructor("tag:yaml.org,2002:timestamp", yaml.constructor.SafeConstructor.construct_yaml_str)


@dataclass
class Source:
    """A parsed YAML file: its data (None when it could not be read) and where things are."""

    file: str
    data: Any = None
    values: dict[KeyPath, Mark] = field(default_factory=dict)  # path -> mark of the value
    keys: dict[KeyPath, Mark] = field(default_factory=dict)  # path -> mark of the mapping key
    issues: list[Issue] = field(default_factory=list)

    @property
    def fatal(self) -> bool:
        """True when the file could not be turned into a mapping at all."""
        return not isinstance(self.data, dict)

    def mark(self, path: KeyPath, *, key: bool = False) -> Mark | None:
        """Mark of the value (or, with ``key``, of the key) at ``path``, else its nearest parent."""
        path = tuple(path)
        if key and path in self.keys:
            return self.keys[path]
        while path:
            if path in self.values:
                return self.values[path]
            path = path[:-1]
        return self.values.get(())

    def issue(self, path: KeyPath, message: str, hint: str | None = None, *, key: bool = False) -> Issue:
        """An issue located at ``path`` in this file (list items shown by their ``name``)."""
        where = self.mark(path, key=key)
        line, column = where if where else (None, None)
        return Issue(self.file, line, column, display_path(self.data, path), message, hint)


def excerpt(text: str, limit: int = 40) -> str:
    """At most the first ``limit`` characters of the first line of ``text``, quoted.

    Messages quote what the author wrote so they can find it, but a file read by mistake
    (``--domain /etc/passwd``) may parse as one long text value: it must never be printed whole.
    """
    lines = str(text).splitlines() or [""]
    first = lines[0]
    cut = len(first) > limit or len(lines) > 1
    return repr(first[:limit] + ("…" if cut else ""))


def display_path(data: Any, path: KeyPath) -> KeyPath:
    """``("relation_types", 3, "head")`` -> ``("relation_types", "Work_For", "head")``.

    An author finds a relation by its name faster than by its position in the list.
    """
    shown: list[str | int] = []
    node = data
    for step in path:
        label: str | int = step
        if isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node):
            node = node[step]
            if isinstance(node, dict) and isinstance(node.get("name"), str) and node["name"]:
                label = node["name"]
        elif isinstance(node, dict) and step in node:
            node = node[step]
        else:
            node = None
        shown.append(label)
    return tuple(shown)


def _position(text: str, index: int) -> Mark:
    line = text.count("\n", 0, index) + 1
    return line, index - (text.rfind("\n", 0, index) + 1) + 1


def _decode(source: Source, raw: bytes) -> str | None:
    if raw.startswith((b"\xff\xfe", b"\xfe\xff")):  # what some Windows editors save by default
        source.issues.append(Issue(source.file, 1, 1, (), "UTF-16 text; save the file as UTF-8"))
        return None
    if b"\x00" in raw:
        source.issues.append(Issue(source.file, 1, 1, (), "not a text file (binary data); expected YAML text"))
        return None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = len(raw[raw.rfind(b"\n", 0, exc.start) + 1 : exc.start].decode("utf-8", "replace")) + 1
        source.issues.append(
            Issue(source.file, line, column, (), f"invalid UTF-8 (byte 0x{raw[exc.start]:02x}); save the file as UTF-8")
        )
        return None


def _syntax_issue(source: Source, text: str, exc: yaml.YAMLError) -> Issue:
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    line: int | None
    column: int | None
    if isinstance(exc, yaml.reader.ReaderError):
        line, column = _position(text, exc.position)
        char = exc.character if isinstance(exc.character, int) else ord(exc.character)
        return Issue(source.file, line, column, (), f"unexpected control character U+{char:04X}; expected plain text")
    line, column = (mark.line + 1, mark.column + 1) if mark else (None, None)
    problem = getattr(exc, "problem", None) or str(exc)
    if "\\t" in problem or "\t" in problem:
        return Issue(source.file, line, column, (), "tab character in indentation; YAML indents with spaces only")
    if "could not determine a constructor for the tag" in problem:
        tag = problem.rsplit(" ", 1)[-1].strip("'").replace("tag:yaml.org,2002:", "!!")
        return Issue(source.file, line, column, (), f"unsupported tag {tag}; expected plain YAML values (no tags)")
    context = getattr(exc, "context", None)
    opened = getattr(exc, "context_mark", None)
    if mark and opened and str(context).startswith(_UNCLOSED):
        return _unclosed_issue(source, text, opened, mark, problem)
    plain = _indentation_issue(source, text, exc, mark) if mark else None
    if plain:
        return plain
    message = f"YAML syntax error: {problem}" + (f" ({context})" if context else "")
    return Issue(source.file, line, column, (), message)


def _line_indent(text: str, line: int) -> tuple[str, int]:
    """(the text, the indentation) of 0-based ``line`` of ``text``."""
    lines = text.splitlines()
    body = lines[line] if 0 <= line < len(lines) else ""
    return body, len(body) - len(body.lstrip(" "))


def _previous_line(text: str, line: int) -> int | None:
    """The 0-based number of the last line before ``line`` that holds more than a comment."""
    lines = text.splitlines()
    for n in range(min(line, len(lines)) - 1, -1, -1):
        if lines[n].strip() and not lines[n].lstrip().startswith("#"):
            return n
    return None


def _indentation_issue(source: Source, text: str, exc: yaml.YAMLError, mark: yaml.Mark) -> Issue | None:
    """PyYAML's words for a line indented wrong ("expected <block end>, but found '?'",
    "mapping values are not allowed here") in the author's: which line, and what is wrong
    with its indentation. None when the error is of another kind."""
    problem, context = str(getattr(exc, "problem", "")), str(getattr(exc, "context", ""))
    opened = getattr(exc, "context_mark", None)
    _, indent = _line_indent(text, mark.line)
    where = (source.file, mark.line + 1, mark.column + 1, ())
    if (problem.startswith(("expected <block end>", "did not find expected key"))
            and context.startswith("while parsing a block mapping") and opened is not None):
        block = opened.column
        how = "deeper" if indent > block else "less deep"
        return Issue(*where, f"indentation: line {mark.line + 1} is indented {how} than the block it belongs to "
                             f"(the keys from line {opened.line + 1}, at column {block + 1}); "
                             "indent it like the keys of its block")
    if problem.startswith("did not find expected '-' indicator") and opened is not None:
        return Issue(*where, f"indentation: line {mark.line + 1} is not in line with the list that starts at line "
                             f"{opened.line + 1}; start each item with '- ' at column {opened.column + 1}")
    if problem.startswith("could not find expected ':'") and opened is not None:
        body, _ = _line_indent(text, opened.line)
        return Issue(source.file, opened.line + 1, opened.column + 1, (),
                     f"line {opened.line + 1} ({body.strip()[:40]!r}) is neither 'key: value' nor '- item': "
                     "add the ':' after its key, or start a list item with '- '")
    if problem.startswith("mapping values are not allowed here"):
        body, _ = _line_indent(text, mark.line)
        if ": " in body[:mark.column].lstrip():
            return Issue(*where, f"line {mark.line + 1}: a value holds ': ' (a colon and a space), which YAML "
                                 "reads as another key; put the value in quotes")
        above = _previous_line(text, mark.line)
        if above is None:
            return None
        if indent > _line_indent(text, above)[1]:
            return Issue(*where, f"indentation: line {mark.line + 1} is indented deeper than the block it belongs "
                                 f"to, under line {above + 1}, which already has a value; indent it like the keys "
                                 f"of its block (or, if line {above + 1} should hold it, leave its value empty)")
        return Issue(source.file, above + 1, 1, (), f"line {above + 1} has no ':', so YAML reads it and line "
                                                    f"{mark.line + 1} as one text; write it as 'key:' or '- item'")
    return None


# A quote or bracket left open is only noticed where the parser gives up, often the end of
# the file; where it was opened is what the author needs (PyYAML's context mark).
_UNCLOSED = ("while scanning a quoted scalar", "while parsing a flow sequence", "while parsing a flow mapping")


def _unclosed_issue(source: Source, text: str, opened: yaml.Mark, mark: yaml.Mark, problem: str) -> Issue:
    char = text[opened.index] if 0 <= opened.index < len(text) else "?"
    what = {"[": "bracket '['", "{": "brace '{'"}.get(char, f"quote {char}")
    closer = {"[": "]", "{": "}"}.get(char, char)
    if "end of stream" in problem or "<stream end>" in problem:
        found = f"the file ends at line {mark.line + 1} without closing it"
    else:  # PyYAML's "expected ',' or ']', but got ':'": the next line began before it was closed
        found = f"line {mark.line + 1} goes on, at column {mark.column + 1}, before a '{closer}' closes it"
    return Issue(source.file, opened.line + 1, opened.column + 1, (),
                 f"YAML syntax error: the {what} opened here is never closed ({found})")


_FAST_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # same marks, C speed when libyaml is there
_PLAIN_COLLECTIONS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


MAX_VALUES = 50_000  # values added by alias expansion; a file's own values are not limited here


class _TooBig(Exception):
    pass


class _Builder:
    """Walk a composed node tree into plain data, recording marks and duplicate keys."""

    def __init__(self, source: Source):
        self.source = source
        self.constructor = _Constructor()
        self.active: set[int] = set()  # node ids on the current path: guards alias cycles
        self.built: set[int] = set()  # node ids built once: building one again is an alias expansion
        self.expanded = 0  # values added by aliases: guards "billion laughs" files

    def build(self, node: yaml.Node, path: KeyPath) -> Any:
        if id(node) in self.built:
            self.expanded += 1
            if self.expanded > MAX_VALUES:
                raise _TooBig
        else:
            self.built.add(id(node))
        self.source.values.setdefault(path, (node.start_mark.line + 1, node.start_mark.column + 1))
        if id(node) in self.active:
            self.source.issues.append(self.source.issue(path, "an alias refers to itself; expected a finite value"))
            return None
        self.active.add(id(node))
        try:
            if not isinstance(node, yaml.ScalarNode) and node.tag not in _PLAIN_COLLECTIONS:
                raise yaml.constructor.ConstructorError(
                    None, None, f"could not determine a constructor for the tag {node.tag!r}", node.start_mark
                )
            if isinstance(node, yaml.MappingNode):
                return self._mapping(node, path)
            if isinstance(node, yaml.SequenceNode):
                return [self.build(item, path + (i,)) for i, item in enumerate(node.value)]
            return self.constructor.construct_object(node, deep=True)
        finally:
            self.active.discard(id(node))

    def _mapping(self, node: yaml.MappingNode, path: KeyPath) -> dict[str, Any]:
        result: dict[str, Any] = {}
        seen: dict[str, Mark] = {}
        merged: dict[str, Any] = {}
        for key_node, value_node in node.value:
            key_mark = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            if key_node.tag == "tag:yaml.org,2002:merge":
                # ``<<: *anchor`` — the anchored mapping's keys, overridden by this mapping's own
                for source_node in value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]:
                    value = self.build(source_node, path)
                    if isinstance(value, dict):
                        merged = {**value, **merged}
                continue
            if not isinstance(key_node, yaml.ScalarNode):
                self.source.issues.append(
                    Issue(self.source.file, *key_mark, path, "a key must be plain text, not a list or mapping")
                )
                continue
            key = str(key_node.value)  # raw text: `on:` and `yes:` stay names, not booleans
            if key in seen:
                first = seen[key]
                self.source.issues.append(
                    Issue(self.source.file, *key_mark, path + (key,),
                          f"duplicate key {key!r} (first defined at line {first[0]}); "
                          "expected each key once — the later value would silently win")
                )
            seen[key] = key_mark
            self.source.keys[path + (key,)] = key_mark
            self.source.values[path + (key,)] = (value_node.start_mark.line + 1, value_node.start_mark.column + 1)
            result[key] = self.build(value_node, path + (key,))
        return {**merged, **result} if merged else result


def parse(text: str, file: str) -> Source:
    """Parse YAML text into a :class:`Source`; problems are collected, never raised."""
    source = Source(file)
    try:
        node = yaml.compose(text, Loader=_FAST_LOADER)
    except yaml.YAMLError as fast_exc:
        # libyaml is ~10x faster but words errors worse; re-read to explain the problem
        try:
            yaml.compose(text, Loader=yaml.SafeLoader)
        except yaml.YAMLError as exc:
            source.issues.append(_syntax_issue(source, text, exc))
        except RecursionError:  # the pure-Python parser recurses per nesting level
            source.issues.append(Issue(file, 1, 1, (), "nesting is too deep; expected a small configuration file"))
        else:  # pragma: no cover - the two parsers disagree
            source.issues.append(_syntax_issue(source, text, fast_exc))
        return source
    if node is None:
        source.issues.append(Issue(file, 1, 1, (), "file is empty; expected a mapping such as 'name: my_name'"))
        return source
    try:
        data = _Builder(source).build(node, ())
    except yaml.YAMLError as exc:  # a scalar the safe constructor refuses (e.g. a python tag)
        source.issues.append(_syntax_issue(source, text, exc))
        return source
    except _TooBig:
        source.issues.append(Issue(file, 1, 1, (), f"aliases expand to more than {MAX_VALUES} values; "
                                   "expected a configuration file that uses few aliases (a YAML alias bomb?)"))
        return source
    except RecursionError:
        source.issues.append(Issue(file, 1, 1, (), "nesting is too deep; expected a small configuration file"))
        return source
    source.data = data
    source.issues = [
        Issue(i.file, i.line, i.column, display_path(data, i.path), i.message, i.hint) for i in source.issues
    ]
    if not isinstance(source.data, dict):
        if isinstance(source.data, list):
            got = "a list"
        elif isinstance(source.data, str):  # not echoed: this is how a stray file (a .env) parses
            got = f"plain text ({len(source.data)} characters)"
        else:
            got = f"the value {source.data!r}"
        line, column = source.values[()]
        source.issues.append(
            Issue(file, line, column, (), f"expected a mapping (key: value lines) at the top level, got {got}")
        )
    return source


def load(path: str | os.PathLike) -> Source:
    """Read and parse one file; a missing, unreadable or special file becomes an issue too."""
    file = os.fspath(path)
    limit = f"the {YAML_MAX_BYTES:,}-byte limit for kgkit files"
    try:
        with open_regular(path, YAML_MAX_BYTES, what="a YAML file", limit_name=limit) as fh:
            raw = read_bounded(fh, YAML_MAX_BYTES, file, limit_name=limit)
    except UnusableFile as exc:  # a FIFO or /dev/zero would block or never end
        return Source(file, issues=[Issue(file, None, None, (), exc.reason)])
    except FileNotFoundError:
        return Source(file, issues=[Issue(file, None, None, (), "file not found")])
    except OSError as exc:
        return Source(file, issues=[Issue(file, None, None, (), f"cannot read file: {exc.strerror or exc}")])
    source = Source(file)
    text = _decode(source, raw)
    if text is None:
        return source
    return parse(text, file)


_PLAIN_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/ ]*[A-Za-z0-9_.\-/]$|^[A-Za-z_]$")


# characters YAML forbids raw (or reads as line breaks) inside a quoted scalar
_UNPRINTABLE = re.compile("[^\x09\x0a\x0d\x20-\x7e\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]|[\u2028\u2029]")


# YAML 1.1 reads these as booleans or null when unquoted
_RESERVED = {"y", "n", "yes", "no", "on", "off", "true", "false", "null", "none", "~"}


def quoted(text: str) -> str:
    """``text`` as a double-quoted YAML scalar that reads back unchanged (JSON is valid YAML)."""
    return _UNPRINTABLE.sub(lambda m: f"\\u{ord(m.group()):04x}", json.dumps(text, ensure_ascii=False))


def scalar(text: str) -> str:
    """A YAML scalar for ``text``: plain when unambiguous, else :func:`quoted`."""
    if _PLAIN_RE.fullmatch(text) and text.lower() not in _RESERVED and ": " not in text and " #" not in text:
        return text
    return quoted(text)
