"""Snapshots and readers shared by the graph export tests."""
from __future__ import annotations

import re

import csv
from pathlib import Path

from antlr4 import CommonTokenStream, InputStream, ParserRuleContext
from antlr4.error.ErrorListener import ErrorListener
from antlr4_cypher import CypherLexer, CypherParser

from kgkit.graph.snapshot import GraphSnapshot


def make_snapshot(name: str = "Acme Widgets Inc.", relation: str = "SUPPLIES", quote: str = "Acme supplies Borealis.",
                  alias: str = "Acme", role: str = "buyer", qualifier: str = "since") -> GraphSnapshot:
    """A small graph with one of each kind of item; the strings are parameters so a test can make them hostile."""
    return GraphSnapshot(
        tenant="t1", version=7,
        nodes=[
            {"id": "n_a", "type": "Organization", "name": name, "aliases": [alias], "documents": ["d_1", "d_2"],
             "scope": "corpus"},
            {"id": "n_b", "type": "Organization", "name": "Borealis Trading LLC", "aliases": [], "documents": ["d_1"],
             "scope": "corpus"},
            {"id": "n_c", "type": "Date", "name": "2021-03-03", "aliases": [], "documents": ["d_2"], "scope": "value",
             "value": "2021-03-03"},
        ],
        edges=[{"id": "e_1", "head": "n_a", "relation": relation, "tail": "n_b", "views": ["binary"],
                "confidence": 0.8, "documents": ["d_1", "d_2"]},
               {"id": "e_2", "head": "n_b", "relation": "PARTNER_OF", "tail": "n_a", "views": ["binary"],
                "confidence": None, "documents": ["d_1"]}],
        hyperedges=[{"id": "h_1", "relation": "Supply", "roles": {role: ["n_b"], "seller": ["n_a"]},
                     "views": ["nary"], "documents": ["d_1"]}],
        events=[{"id": "v_1", "type": "Signing", "trigger": "signed", "time": {"text": "March 3, 2021",
                                                                                "value": "2021-03-03"},
                 "arguments": {"party": ["n_a", "n_b"], "signatory": ["n_a"], "date": ["n_c"]}, "views": ["event"],
                 "documents": ["d_2"]}],
        temporal=[{"id": "t_1", "head": "n_a", "relation": relation, "tail": "n_b",
                   "qualifiers": {qualifier: {"text": "3 March 2021", "type": "date", "value": "2021-03-03"}},
                   "views": ["temporal"], "documents": ["d_1"]}],
        evidence=[
            {"item": "e_1", "document": "d_1", "chunk": "c_1", "page": 1, "span": [0, 10], "quote": quote,
             "view": "binary"},
            {"item": "e_1", "document": "d_2", "chunk": "c_9", "page": None, "span": None, "quote": None,
             "view": "binary"},
            {"item": "n_a", "document": "d_1", "chunk": "c_1", "page": 1, "span": [0, 4], "quote": None,
             "view": "core"},
            {"item": "v_1", "document": "d_2", "chunk": "c_9", "page": 2, "span": [5, 40], "quote": quote,
             "view": "event"},
        ],
        documents=[{"id": "d_1", "name": "supply.txt", "source": "/docs/supply.txt", "sha256": "ab" * 32,
                    "title": "Supply Agreement", "pages": None, "added": "2026-01-02T03:04:05+00:00", "node": None},
                   {"id": "d_2", "name": "signing.pdf", "source": None, "sha256": "cd" * 32, "title": None,
                    "pages": 3, "added": "2026-01-02T03:04:06+00:00", "node": None}],
    )


def expected_counts(snap: GraphSnapshot) -> tuple[int, int, int]:
    """(vertices, links, value properties) a property-graph export of ``snap`` must hold,
    counted from the snapshot alone: documents, non-value entities, hyperedges and events;
    edges between non-values, role links to non-values, MENTIONED_IN and SUPPORTED_BY; and
    one value entry per edge or role filler that is a value."""
    literal = {n["id"] for n in snap.nodes if n.get("scope") == "value"}
    valued = [e for e in snap.edges + snap.temporal if e["head"] in literal or e["tail"] in literal]
    fillers = [n for item in snap.hyperedges for ids in item["roles"].values() for n in ids] + \
        [n for item in snap.events for ids in item["arguments"].values() for n in ids]
    vertices = len(snap.documents) + len(snap.nodes) - len(literal) + len(snap.hyperedges) + len(snap.events)
    links = len(snap.edges) + len(snap.temporal) - len(valued) + sum(n not in literal for n in fillers) + \
        sum(len(n["documents"]) for n in snap.nodes if n["id"] not in literal) + \
        sum(len(i["documents"]) for i in snap.hyperedges + snap.events)
    return vertices, links, len(valued) + sum(n in literal for n in fillers)


def value_entries(graph) -> int:
    """How many values a networkx graph read from GraphML holds as properties."""
    import json

    return sum(len(json.loads(v)) for _, data in graph.nodes(data=True) for k, v in data.items()
               if k.startswith(("value.", "role.")) and k.count(".") == (2 if k.startswith("value.temporal.") else 1))


class _Errors(ErrorListener):
    def __init__(self):
        self.errors: list[str] = []

    def syntaxError(self, recognizer, symbol, line, column, msg, e):  # noqa: N802 (antlr's name)
        self.errors.append(f"{line}:{column}: {msg}")


# Neo4j 5's schema command, which the openCypher grammar (queries only) does not cover.
CONSTRAINT = re.compile(r"CREATE CONSTRAINT `(?:[^`]|``)+` IF NOT EXISTS FOR \(n:`(?:[^`]|``)+`\) "
                        r"REQUIRE n\.id IS UNIQUE;")


_TOKENS = re.compile(r"'(?:[^'\\]|\\.)*'|`(?:[^`]|``)*`")


def _simple_names(statement: str) -> str:
    """Each backquoted name as a plain one: openCypher escapes a backquote in a name by
    doubling it, a rule this grammar's lexer lacks (string literals are left as they are)."""
    return _TOKENS.sub(lambda m: "`name`" if m.group().startswith("`") and "``" in m.group() else m.group(),
                       statement)


def cypher_errors(script: str) -> list[str]:
    """Syntax errors of a Cypher script: constraints against Neo4j's documented form, every
    other statement through the openCypher grammar (antlr4-cypher)."""
    errors = []
    for number, line in enumerate(script.split("\n"), 1):  # not splitlines(): U+0085 may sit in a string
        if not line or line.startswith("//"):
            continue
        if line.startswith("CREATE CONSTRAINT"):
            if not CONSTRAINT.fullmatch(line):
                errors.append(f"line {number}: malformed constraint")
            continue
        listener = _Errors()
        lexer = CypherLexer(InputStream(_simple_names(line)))
        lexer.removeErrorListeners()
        lexer.addErrorListener(listener)
        parser = CypherParser(CommonTokenStream(lexer))
        parser.removeErrorListeners()
        parser.addErrorListener(listener)
        parser.script()
        errors += [f"line {number}: {e}" for e in listener.errors]
    return errors


# neo4j-admin database import, "CSV header format": special fields and typed properties.
_TYPES = ("int|long|float|double|boolean|byte|short|char|string|point|date|localtime|time|localdatetime|"
          "datetime|duration")
_ID_SPACE = r"(?:\([^()]+\))?"
NODE_FIELD = re.compile(rf"[^:]*:ID{_ID_SPACE}|:LABEL|:IGNORE|[^:]+(?::(?:{_TYPES})(?:\[\])?)?")
RELATIONSHIP_FIELD = re.compile(rf":START_ID{_ID_SPACE}|:END_ID{_ID_SPACE}|:TYPE|:IGNORE|[^:]+(?::(?:{_TYPES})(?:\[\])?)?")


def _parse(statement: str):
    return CypherParser(CommonTokenStream(CypherLexer(InputStream(_simple_names(statement))))).script()


_UNESCAPES = {"\\": "\\", "'": "'", '"': '"', "n": "\n", "r": "\r", "t": "\t", "b": "\b", "f": "\f"}


def _string(token: str) -> str:
    """A Cypher string literal's value (openCypher escapes: \\uXXXX and the one-letter ones)."""
    return re.sub(r"\\(u[0-9a-fA-F]{4}|.)",
                  lambda m: chr(int(m.group(1)[1:], 16)) if len(m.group(1)) == 5 else _UNESCAPES[m.group(1)],
                  token[1:-1])


def _literal(ctx):
    """The value of a literal expression in the parse tree: maps, lists, strings, numbers, booleans."""
    if isinstance(ctx, CypherParser.MapLitContext):
        return {pair.name().getText().strip("`").replace("``", "`"): _literal(pair.expression())
                for pair in ctx.mapPair()}
    if isinstance(ctx, CypherParser.ListLitContext):
        chain = ctx.expressionChain()
        return [_literal(e) for e in chain.expression()] if chain else []
    if isinstance(ctx, (CypherParser.StringLitContext, CypherParser.CharLitContext)):  # 'x' lexes as a char
        return _string(ctx.getText())
    if isinstance(ctx, CypherParser.NumLitContext):
        text = ctx.getText()
        return float(text) if any(c in text for c in ".eE") else int(text)
    if isinstance(ctx, CypherParser.BoolLitContext):
        return ctx.getText().lower() == "true"
    rules = [c for c in ctx.getChildren() if isinstance(c, ParserRuleContext)]
    if not rules and re.fullmatch(r"\d+", ctx.getText()):  # an integer is a bare token in this grammar
        return int(ctx.getText())
    if len(rules) != 1:
        raise ValueError(f"not a literal: {ctx.getText()[:80]}")
    return _literal(rules[0])


def _unwind(ctx):
    if isinstance(ctx, CypherParser.UnwindStContext):
        return ctx
    for child in ctx.getChildren() if isinstance(ctx, ParserRuleContext) else ():
        found = _unwind(child)
        if found is not None:
            return found
    return None


_NAME = r"`((?:[^`]|``)*)`"
_NODE_MERGE = re.compile(rf"\] AS row MERGE \(n((?::{_NAME})+) \{{id: row\.id\}}\) SET n \+= row;$")
_REL_MERGE = re.compile(rf"MERGE \(a\)-\[r:{_NAME} \{{id: row\.props\.id\}}\]->\(b\) SET r \+= row\.props;$")


def cypher_graph(script: str) -> tuple[dict, dict]:
    """What the script's statements create: ``{id: (label, props)}`` and
    ``{id: (start, type, end, props)}``, read from the parse tree's literals."""
    nodes, rels = {}, {}
    for line in script.split("\n"):
        if not line.startswith("UNWIND"):
            continue
        rows = _literal(_unwind(_parse(line)).expression())
        if m := _NODE_MERGE.search(line):
            names = ";".join(n.replace("``", "`") for n in re.findall(_NAME, m.group(1)))
            nodes.update({row["id"]: (names, row) for row in rows})
        else:
            m = _REL_MERGE.search(line)
            assert m, line[-200:]
            rels.update({row["props"]["id"]: (row["start"], m.group(1).replace("``", "`"), row["end"], row["props"])
                         for row in rows})
    return nodes, rels


def _typed(header: list[str], row: list[str]) -> dict:
    props = {}
    for cell, value in zip(header, row):
        name, _, kind = cell.partition(":")
        if name and value != "":
            props[name] = int(value) if kind == "int" else float(value) if kind == "double" else value
    return props


def neo4j_csv_graph(folder: Path) -> tuple[dict, dict]:
    """What ``neo4j-admin database import`` would create from the CSV files, in the shape of :func:`cypher_graph`."""
    nodes, rels = {}, {}
    for path in sorted(folder.glob("nodes_*.csv")):
        rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
        for row in rows[1:]:
            cells = dict(zip(rows[0], row))
            nodes[cells["id:ID"]] = (cells[":LABEL"], _typed(rows[0], row))
    for path in sorted(folder.glob("relationships_*.csv")):
        rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
        for row in rows[1:]:
            cells = dict(zip(rows[0], row))
            rels[cells["id"]] = (cells[":START_ID"], cells[":TYPE"], cells[":END_ID"], _typed(rows[0], row))
    return nodes, rels
