"""The pattern language of O3 match, parsed with column-precise errors.

Two shapes, each optionally followed by temporal conditions::

    Agreement -GOVERNING_LAW-> Jurisdiction{name: "New York"}
    Party -PARTY_TO-> Agreement where after 2019-01-01
    Agreement -HAS_PARTY-> Party{name: $party} <-HAS_PARTY- Agreement
    Evaluation(method: Method, dataset: Dataset{name: "CoNLL04"}, metric: Metric)
    Date{in: "2019"} <-AGREEMENT_DATE- Agreement

* A node is a type (``*`` or nothing for any) with optional properties in braces:
  ``name`` (matched by canonical key against names and aliases), ``id``, and ``in`` (a
  node whose name is a date lying within the given time value).
* An edge is ``-REL->`` or ``<-REL-``; ``REL`` may list alternatives (``-A|B->``) or be ``*``.
* A role pattern ``REL(role: node, ...)`` matches hyperedges and events of that relation
  (event type) whose fillers of each named role include a node matching its pattern.
* ``where document X`` keeps what document X (its name or ``d_`` id) states.
* ``where`` conditions compare an item's temporal values as intervals: ``[QUALIFIER]
  after|before|during VALUE`` (``after D``: the interval reaches past D; ``before D``: it
  starts before D; ``during V``: it overlaps V, a year ``2019`` or ``A..B``), joined by
  ``and``. Without a qualifier name, the item's whole span counts.
* A value is a quoted string ("..." or '...'), a bare word, or ``$name``: a parameter of a named query.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from kgkit.errors import InputError

OPS = ("after", "before", "during")
DOCUMENT = "document"  # where document X: only what document X states (its name or d_ id)
_TOKEN = re.compile(r'\s*(?:(?P<arrow><-|->|-)|(?P<string>"(?:[^"\\]|\\.)*"|\'[^\']*\')|(?P<param>\$[A-Za-z_]\w*)'
                    r'|(?P<word>[A-Za-z0-9_.*+/\-]+?(?=\s|$|[{}(),|<:]|->|-(?=[A-Za-z*\s])|-$))'
                    r'|(?P<punct>[{}(),|:]))')


@dataclass(frozen=True)
class NodeSpec:
    type: str | None = None
    props: tuple[tuple[str, str], ...] = ()
    column: int = 0

    def prop(self, name: str) -> str | None:
        return next((v for k, v in self.props if k == name), None)


@dataclass(frozen=True)
class EdgeSpec:
    relations: tuple[str, ...]  # empty: any
    forward: bool  # -R-> (left is head) or <-R- (right is head)
    column: int = 0


@dataclass(frozen=True)
class Condition:
    qualifier: str | None
    op: str
    value: str
    column: int = 0


@dataclass
class Pattern:
    text: str
    nodes: list[NodeSpec] = field(default_factory=list)  # a chain: nodes[i] -edges[i]- nodes[i+1]
    edges: list[EdgeSpec] = field(default_factory=list)
    relation: str | None = None  # a role pattern: the relation; nodes/roles pair up
    roles: list[str] = field(default_factory=list)
    where: list[Condition] = field(default_factory=list)

    def params(self) -> set[str]:
        values = [v for n in self.nodes for _, v in n.props] + [c.value for c in self.where]
        return {v[1:] for v in values if v.startswith("$")}


class PatternError(InputError):
    pass


def _fail(text: str, column: int, message: str) -> PatternError:
    caret = " " * (len("  hint: in: ") + column - 1) + "^"  # under the column, as KgkitError.format prints it
    return PatternError(f"pattern column {column}: {message}", hint=f"in: {text}\n{caret}")


class _Tokens:
    def __init__(self, text: str):
        self.text = text
        self.items: list[tuple[str, str, int]] = []
        pos = 0
        while pos < len(text):
            if text[pos:].strip() == "":
                break
            m = _TOKEN.match(text, pos)
            if not m or m.end() == pos:
                col = pos + len(text[pos:]) - len(text[pos:].lstrip()) + 1
                raise _fail(text, col, f"unexpected {text[col - 1]!r}")
            kind = m.lastgroup
            assert kind is not None  # every alternative of _TOKEN is a named group
            value = m.group(kind)
            self.items.append((kind, value, m.start(kind) + 1))
            pos = m.end()
        self.i = 0

    def peek(self, offset: int = 0) -> tuple[str, str, int]:
        j = self.i + offset
        return self.items[j] if j < len(self.items) else ("end", "", len(self.text) + 1)

    def take(self) -> tuple[str, str, int]:
        tok = self.peek()
        self.i += 1
        return tok

    def expect(self, value: str) -> int:
        kind, got, col = self.take()
        if got != value:
            raise _fail(self.text, col, f"expected {value!r}, found {got or 'the end'!r}")
        return col


def _value(tokens: _Tokens) -> str:
    kind, value, col = tokens.take()
    if kind == "string":
        return bytes(value[1:-1], "utf-8").decode("unicode_escape") if "\\" in value else value[1:-1]
    if kind in ("word", "param"):
        return value
    raise _fail(tokens.text, col, f"expected a value (\"text\", a word or $param), found {value or 'the end'!r}")


PROPS = ("name", "id", "in")


def _node(tokens: _Tokens) -> NodeSpec:
    kind, value, col = tokens.peek()
    etype = None
    if kind == "word" and value not in OPS + ("where",):
        tokens.take()
        etype = None if value == "*" else value
    elif not (kind == "punct" and value == "{"):
        raise _fail(tokens.text, col, f"expected a node (a type, * or {{...}}), found {value or 'the end'!r}")
    props = []
    if tokens.peek()[1] == "{":
        tokens.take()
        while True:
            kind, key, kcol = tokens.take()
            if key not in PROPS:
                raise _fail(tokens.text, kcol, f"unknown node property {key!r}; properties: {', '.join(PROPS)}")
            tokens.expect(":")
            props.append((key, _value(tokens)))
            kind, value, pcol = tokens.take()
            if value == "}":
                break
            if value != ",":
                raise _fail(tokens.text, pcol, f"expected ',' or '}}', found {value or 'the end'!r}")
    return NodeSpec(etype, tuple(props), col)


def _edge(tokens: _Tokens) -> EdgeSpec | None:
    kind, value, col = tokens.peek()
    if kind != "arrow":
        return None
    tokens.take()
    if value not in ("-", "<-"):
        raise _fail(tokens.text, col, "an edge starts with '-' or '<-'")
    relations = []
    while True:
        rkind, rel, rcol = tokens.take()
        if rkind != "word":
            raise _fail(tokens.text, rcol, f"expected a relation name or *, found {rel or 'the end'!r}")
        relations.append(rel)
        if tokens.peek()[1] != "|":
            break
        tokens.take()
    akind, close, acol = tokens.take()
    want = "->" if value == "-" else "-"
    if close != want:
        raise _fail(tokens.text, acol, f"expected {want!r} to close the edge, found {close or 'the end'!r}")
    return EdgeSpec(tuple(r for r in relations if r != "*"), value == "-", col)


def _conditions(tokens: _Tokens) -> list[Condition]:
    out = []
    while True:
        kind, word, col = tokens.take()
        qualifier = None
        if word == DOCUMENT:
            out.append(Condition(None, DOCUMENT, _value(tokens), col))
            if tokens.peek()[1] != "and":
                return out
            tokens.take()
            continue
        if word not in OPS:
            if kind != "word":
                raise _fail(tokens.text, col, f"expected after, before or during, found {word or 'the end'!r}")
            qualifier = word
            kind, word, col = tokens.take()
            if word not in OPS:
                raise _fail(tokens.text, col, f"expected after, before or during, found {word or 'the end'!r}")
        out.append(Condition(qualifier, word, _value(tokens), col))
        if tokens.peek()[1] != "and":
            return out
        tokens.take()


def parse(text: str) -> Pattern:
    if not isinstance(text, str) or not text.strip():
        raise PatternError("empty pattern", hint='e.g. Agreement -GOVERNING_LAW-> Jurisdiction{name: "New York"}')
    tokens = _Tokens(text)
    pattern = Pattern(text)
    kind, value, col = tokens.peek()
    if kind == "word" and tokens.peek(1)[1] == "(":
        tokens.take()
        tokens.take()
        pattern.relation = value
        while True:
            rkind, role, rcol = tokens.take()
            if rkind != "word":
                raise _fail(text, rcol, f"expected a role name, found {role or 'the end'!r}")
            tokens.expect(":")
            pattern.roles.append(role)
            pattern.nodes.append(_node(tokens))
            kind, sep, scol = tokens.take()
            if sep == ")":
                break
            if sep != ",":
                raise _fail(text, scol, f"expected ',' or ')', found {sep or 'the end'!r}")
    else:
        pattern.nodes.append(_node(tokens))
        while (edge := _edge(tokens)) is not None:
            pattern.edges.append(edge)
            pattern.nodes.append(_node(tokens))
    kind, value, col = tokens.peek()
    if value == "where":
        tokens.take()
        pattern.where = _conditions(tokens)
    kind, value, col = tokens.peek()
    if kind != "end":
        raise _fail(text, col, f"unexpected {value!r} after the pattern")
    return pattern


def bind(pattern: Pattern, params: dict[str, str]) -> Pattern:
    """``pattern`` with every ``$name`` replaced by its parameter's value."""
    missing = sorted(pattern.params() - set(params))
    if missing:
        raise InputError(f"pattern needs parameter {missing[0]!r}", hint=f"pass {', '.join('--param ' + m + '=VALUE' for m in missing)}")

    def sub(v: str) -> str:
        return str(params[v[1:]]) if v.startswith("$") else v

    nodes = [NodeSpec(n.type, tuple((k, sub(v)) for k, v in n.props), n.column) for n in pattern.nodes]
    where = [Condition(c.qualifier, c.op, sub(c.value), c.column) for c in pattern.where]
    return Pattern(pattern.text, nodes, list(pattern.edges), pattern.relation, list(pattern.roles), where)
