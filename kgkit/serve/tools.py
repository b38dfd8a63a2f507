"""The tools a graph server offers: each a name, a description an agent reads, a JSON Schema
for its arguments and one for its answer, and the call it makes.

Arguments are checked against their schema here, before any query runs, so a bad call is a
clear error naming the argument, never a half-run query. The schemas carry the server's
limits as maximums (``query.limit`` results, ``query.max_hops`` hops, ``query.fanout``
neighbours per hop: a call may ask for less, never more), so an agent sees the limits before
it calls and a call over them is refused with the limit named. The query operators' answers
follow the published ``query`` schema (``kgkit schema query``); the corpus tools' answers
(evidence, documents, document) have schemas of their own below.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Callable

from kgkit.config.model import QueryConfig
from kgkit.errors import ConfigError, InputError
from kgkit.query import Query
from kgkit.query.named import NamedQuery
from kgkit.formats.json_schemas import schema_for
from kgkit.serve.corpus import Corpus

#: MCP tool names: letters, digits, ``_``, ``-`` and ``.``, 1 to 128 of them
TOOL_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")
TEXT_MAX = 2000  # a mention, pattern, seed or name an argument may hold
NOVELTY_TEXT_MAX = 50_000  # a text novelty compares (an abstract, a claim, a page)
LIST_MAX = 50  # seeds, types or relations one call may name


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    input_schema: dict[str, Any]
    output_schema: dict[str, Any]
    call: Callable[[dict[str, Any]], dict[str, Any]]  # checked arguments -> the answer as JSON data


# ---------------------------------------------------------------- schema pieces
def _text(description: str, max_length: int = TEXT_MAX) -> dict[str, Any]:
    return {"type": "string", "minLength": 1, "maxLength": max_length, "description": description}


def _names(description: str) -> dict[str, Any]:
    return {"type": "array", "items": {"type": "string", "minLength": 1, "maxLength": TEXT_MAX},
            "maxItems": LIST_MAX, "description": description}


def _count(description: str, maximum: int, minimum: int = 1) -> dict[str, Any]:
    return {"type": "integer", "minimum": minimum, "maximum": maximum, "description": description}


def _object(properties: dict[str, Any], required: tuple[str, ...] = ()) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": list(required), "additionalProperties": False}


class Limits:
    """The argument schemas that carry a server's ceilings (its ``query.*`` settings)."""

    def __init__(self, config: QueryConfig):
        self.config = config

    def limit(self) -> dict[str, Any]:
        return _count(f"Results at most (default and most: {self.config.limit}).", self.config.limit)

    def walk(self, with_types: bool = True) -> dict[str, Any]:
        c = self.config
        out = {"hops": _count(f"Hops at most (default {c.hops}, most {c.max_hops}).", c.max_hops),
               "fanout": _count(f"Neighbours kept per node and hop (default and most: {c.fanout}).", c.fanout),
               "limit": self.limit(),
               "min_confidence": {"type": "number", "minimum": 0, "maximum": 1,
                                  "description": "Leave out items under this confidence."},
               "relations": _names("Walk only these relations.")}
        if with_types:
            out["types"] = _names("Only nodes of these types.")
        return out


# ---------------------------------------------------------------- answers' schemas
def answer_schema() -> dict[str, Any]:
    """The query operators' answer: the published ``query`` schema, its ``$defs`` written in
    where they are used. The same schema, cheaper to check: a client checks every answer
    against it, and resolving a ``$ref`` at each node, edge and evidence row was a sixth of
    that check's cost."""
    return inline_refs(schema_for("query"))


def inline_refs(schema: dict[str, Any]) -> dict[str, Any]:
    """``schema`` with each ``{"$ref": "#/$defs/NAME"}`` replaced by that definition (they do
    not refer to themselves) and ``$defs`` dropped."""
    defs = schema.get("$defs", {})

    def walk(value: Any) -> Any:
        if isinstance(value, dict):
            ref = value.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/$defs/") and len(value) == 1:
                return walk(defs[ref.removeprefix("#/$defs/")])
            return {k: walk(v) for k, v in value.items() if k != "$defs"}
        if isinstance(value, list):
            return [walk(v) for v in value]
        return value

    return walk(schema)


_EVIDENCE = _object({"document": {"type": "string"}, "document_id": {"type": "string"},
                     "page": {"type": ["integer", "null"]}, "quote": {"type": ["string", "null"]},
                     "chunk": {"type": ["string", "null"]},
                     "span": {"type": ["array", "null"], "items": {"type": "integer"}},
                     "view": {"type": ["string", "null"]}})
_ITEM = _object({"id": {"type": "string"}, "kind": {"type": "string"}, "relation": {"type": "string"},
                 "ends": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
                 "confidence": {"type": ["number", "null"]}, "views": {"type": "array", "items": {"type": "string"}},
                 "documents": {"type": "array", "items": {"type": "string"}}})
_WHERE = {"tenant": {"type": "string"}, "version": {"type": "integer"}}
EVIDENCE_SCHEMA = _object({**_WHERE, "item": _ITEM,
                           "nodes": {"type": "array", "items": _object(
                               {"id": {"type": "string"}, "type": {"type": "string"}, "name": {"type": "string"}})},
                           "evidence": {"type": "array", "items": _EVIDENCE}},
                          ("tenant", "version", "item", "nodes", "evidence"))
DOCUMENTS_SCHEMA = _object({**_WHERE, "total": {"type": "integer"}, "cut": {"type": "integer"},
                            "documents": {"type": "array", "items": _object(
                                {"id": {"type": "string"}, "name": {"type": "string"},
                                 "title": {"type": ["string", "null"]}, "nodes": {"type": "integer"},
                                 "items": {"type": "integer"}})}},
                           ("tenant", "version", "total", "cut", "documents"))
_COUNTS = {"type": "object", "additionalProperties": {"type": "integer"}}
DOCUMENT_SCHEMA = _object({**_WHERE, "document": {"type": "object"}, "counts": _COUNTS, "types": _COUNTS,
                           "relations": _COUNTS, "shared_nodes": {"type": "integer"}},
                          ("tenant", "version", "document", "counts", "types", "relations", "shared_nodes"))


# ---------------------------------------------------------------- the catalogue
def operator_tools(query: Query) -> list[Tool]:
    """One tool per query operator, over ``query`` (its config is the server's limits)."""
    lim, answer = Limits(query.config), answer_schema()

    def tool(name: str, description: str, properties: dict[str, Any], required: tuple[str, ...], call) -> Tool:
        return Tool(name, description, _object(properties, required), answer,
                    lambda args: call(dict(args)).to_json())

    return _walk_tools(query, lim, tool) + _read_tools(query, lim, tool)


def _walk_tools(query: Query, lim: Limits, tool) -> list[Tool]:
    """The operators that resolve mentions and walk the graph from them."""
    return [
        tool("find", "The nodes a mention may name: exact name key, alias, fuzzy, full text; best first.",
             {"mention": _text("A name as a document or a person would write it."),
              "types": _names("Only nodes of these types."), "limit": lim.limit()}, ("mention",),
             lambda a: query.find(a.pop("mention"), **a)),
        tool("neighbours", "The neighbourhood of seed nodes (ids or names) within hops; with two or more "
             "seeds, their connecting paths first. Items carry their evidence.",
             {"seeds": {**_names("Node ids or names."), "minItems": 1}, **lim.walk()}, ("seeds",),
             lambda a: query.neighbours(a.pop("seeds"), **a)),
        tool("lineage", "What a node leads to (forward: head to tail) or comes from (backward) along the "
             "given relations, by weighted shortest paths.",
             {"seed": _text("A node id or name."), "direction": {"enum": ["forward", "backward"],
                                                                 "description": "Default forward."},
              **lim.walk()}, ("seed",),
             lambda a: query.lineage(a.pop("seed"), **a)),
        tool("path", "Shortest paths between two nodes (ids or names).",
             {"source": _text("A node id or name."), "target": _text("A node id or name."),
              **lim.walk(with_types=False)}, ("source", "target"),
             lambda a: query.path(a.pop("source"), a.pop("target"), **a)),
    ]


def _read_tools(query: Query, lim: Limits, tool) -> list[Tool]:
    """The operators that read the graph whole: patterns, gaps, retrieval, novelty, anchors."""
    return [
        tool("match", "Every match of a graph pattern, e.g. "
             "'Agreement -GOVERNING_LAW-> Jurisdiction{name: \"New York\"}' or "
             "'Signing(party: Party, date: Date)'; $name placeholders take params. Rows list the documents "
             "that state the whole match.",
             {"pattern": _text("The pattern (docs/query.md, match)."),
              "params": {"type": "object", "additionalProperties": {"type": "string", "maxLength": TEXT_MAX},
                         "maxProperties": LIST_MAX, "description": "Values for $name placeholders."},
              "limit": lim.limit(),
              "min_confidence": {"type": "number", "minimum": 0, "maximum": 1,
                                 "description": "Leave out items under this confidence."}}, ("pattern",),
             lambda a: query.match(a.pop("pattern"), **a)),
        tool("gaps", "What the graph lacks: orphans, singletons, nodes outside the largest component, "
             "documents that contribute nothing, sparse type x type cells.",
             {"limit": lim.limit(), "sparse": _count("A type x type cell with at most this many statements "
                                                     "is sparse (default 0).", 10_000, minimum=0)}, (),
             lambda a: query.gaps(**a)),
        tool("search", "Typed retrieval: names and quotes of every type ranked, fused and reduced to their "
             "documents (default), entities, or kept as they are.",
             {"text": _text("What to look for."), "limit": lim.limit(),
              "reduce": {"enum": ["document", "entity", "none"], "description": "Default document."},
              "intent": {"enum": ["general", "lookup", "comparison", "lineage"], "description": "Default general."},
              "types": _names("Only these entity types.")}, ("text",),
             lambda a: query.search(a.pop("text"), **a)),
        tool("novelty", "How new a text is against its nearest graph neighbourhoods (lexical overlap).",
             {"text": _text("The text to compare.", NOVELTY_TEXT_MAX),
              "k": _count("Neighbourhoods compared (default 5).", query.config.limit)}, ("text",),
             lambda a: query.novelty(a.pop("text"), **a)),
        tool("anchors", "Figures, tables, equations and paragraphs about a term (all of them without one), "
             "with caption, table rows, text, page and bounding box (empty, with a note, until documents "
             "carry anchors).",
             {"about": _text("A term the anchors are about (a method, data set, metric...); all anchors without one."),
              "kind": {"enum": ["figure", "table", "equation", "paragraph"], "description": "Only anchors of this kind."},
              "document": _text("A document name or id."), "limit": lim.limit()}, (),
             lambda a: query.anchors(a.pop("about", None), **a)),
    ]


def corpus_tools(corpus: Corpus, config: QueryConfig) -> list[Tool]:
    lim = Limits(config)
    return [
        Tool("evidence", "Every document, page and quote that supports one item (an edge, hyperedge, event or "
             "temporal edge id from an answer's items), with the item and its nodes' names.",
             _object({"item": _text("An item id.")}, ("item",)), EVIDENCE_SCHEMA,
             lambda a: corpus.evidence(a["item"])),
        Tool("documents", "The documents in the graph by name, with how many nodes and items each states.",
             _object({"limit": lim.limit()}), DOCUMENTS_SCHEMA,
             lambda a: corpus.documents(a.get("limit", config.limit))),
        Tool("document", "One document's summary: its record (title, source, pages), its nodes and items by "
             "kind, types, relations, and how many of its nodes other documents name too.",
             _object({"document": _text("A document name or d_ id.")}, ("document",)), DOCUMENT_SCHEMA,
             lambda a: corpus.document(a["document"])),
    ]


HELD_SCHEMA = _object({**_WHERE, "total": {"type": "integer"}, "cut": {"type": "integer"},
                      "entries": {"type": "array", "items": {"type": "object"}}},
                     ("tenant", "version", "total", "cut", "entries"))
DECIDED_SCHEMA = _object({**_WHERE, "entry": {"type": "object"}}, ("tenant", "version", "entry"))


def review_tools(store, config: QueryConfig, *, decide: bool) -> list[Tool]:
    """The review queue (read-only), and with ``decide`` the one tool that writes: a decision."""
    lim = Limits(config)

    def held(args: dict[str, Any]) -> dict[str, Any]:
        entries = store.review_queue(pending_only=args.get("pending", True))
        limit = args.get("limit", config.limit)
        return {"tenant": store.tenant, "version": store.version(), "total": len(entries),
                "cut": max(0, len(entries) - limit), "entries": entries[:limit]}

    def decided(args: dict[str, Any]) -> dict[str, Any]:
        who = "mcp" + (f": {args['who']}" if args.get("who") else "")
        version = store.decide(args["entry"], args["decision"], who=who)
        return {"tenant": store.tenant, "version": version, "entry": store.review_entry(args["entry"])}

    tools = [Tool("held", "What extraction held back from the graph (unverified evidence, low confidence, rejected "
                  "answers), waiting for review: never part of the other tools' answers. Pending entries unless "
                  "pending is false.",
                  _object({"pending": {"type": "boolean", "description": "Only entries not yet decided (default)."},
                           "limit": lim.limit()}), HELD_SCHEMA, held)]
    if decide:
        tools.append(Tool("decide", "Accept or reject one review entry (an id from held); recorded with who and "
                          "when, it survives re-adding the document. The one tool that writes.",
                          _object({"entry": _text("A review entry id from held."),
                                   "decision": {"enum": ["accept", "reject"]},
                                   "who": _text("Who decided, recorded with the decision.", 200)},
                                  ("entry", "decision")), DECIDED_SCHEMA, decided))
    return tools


_PARAM_TYPES: dict[str, dict[str, Any]] = {"string": {"type": "string", "minLength": 1, "maxLength": TEXT_MAX},
                "date": {"type": "string", "description": "An ISO date, e.g. 2019-06-30."},
                "year": {"type": ["string", "integer"], "description": "A year, e.g. 2019."},
                "number": {"type": ["string", "number"]}}


def named_tool(query: Query, named: NamedQuery) -> Tool:
    """A domain's named query as a tool of its own: its parameters are the tool's arguments."""
    lim = Limits(query.config)
    params = {name: {**_PARAM_TYPES.get(kind, _PARAM_TYPES["string"]), "title": f"{name} ({kind})"}
              for name, kind in named.params}
    description = (named.description or f"The named query {named.name}.") + (
        f" Pattern: {named.pattern}. Answers with {named.returns}"
        + (" in report.answer." if named.returns in ("documents", "nodes") else "."))

    def call(args: dict[str, Any]) -> dict[str, Any]:
        values = {k: v for k, v in args.items() if k != "limit"}
        return query.named(named, values, limit=args.get("limit")).to_json()

    return Tool(named.name, description, _object({**params, "limit": lim.limit()}, tuple(p for p, _ in named.params)),
                answer_schema(), call)


def catalogue(query: Query, corpus: Corpus, named: dict[str, NamedQuery], *, decide: bool = False) -> dict[str, Tool]:
    """Every tool of a server, by name; a named query may not take a built-in tool's name."""
    tools = {t.name: t for t in operator_tools(query) + corpus_tools(corpus, query.config)
             + review_tools(query.store, query.config, decide=decide)}
    for name, nq in sorted(named.items()):
        if name in tools:
            raise ConfigError(f"named query {name!r} has the name of a built-in tool",
                              hint="rename the query in its domain file: built-in tools are " + ", ".join(tools))
        if not TOOL_NAME.match(name):
            raise ConfigError(f"named query {name!r} cannot be a tool name",
                              hint="use letters, digits, '_', '-' and '.' (at most 128)")
        tools[name] = named_tool(query, nq)
    return tools


def check_arguments(tool: Tool, arguments: dict[str, Any] | None) -> dict[str, Any]:
    """``arguments`` if they fit the tool's schema, else an InputError naming the first misfit."""
    from jsonschema import Draft202012Validator

    args = {} if arguments is None else arguments
    errors = sorted(Draft202012Validator(tool.input_schema).iter_errors(args), key=lambda e: list(e.path))
    if not errors:
        return args
    first = errors[0]
    where = ".".join(str(p) for p in first.path) or "arguments"
    if first.validator == "maximum" and first.path and first.path[-1] in ("limit", "hops", "fanout", "k"):
        raise InputError(f"{tool.name}: {where} {first.instance!r} is over this server's limit of {first.validator_value}",
                         hint=f"ask for {first.validator_value} or fewer")
    if first.validator == "additionalProperties":
        allowed = list(tool.input_schema["properties"])
        raise InputError(f"{tool.name}: {first.message}", hint="arguments: " + (", ".join(allowed) or "none"))
    raise InputError(f"{tool.name}: {where}: {_short(first.message)}")


def _short(message: str, n: int = 300) -> str:
    """A validator message quotes the value it refused; a long or hostile one is cut."""
    return message if len(message) <= n else message[:n] + "…"
