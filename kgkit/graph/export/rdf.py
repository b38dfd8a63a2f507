"""RDF: the graph as triples, written as Turtle (``graph.ttl``) and JSON-LD (``graph.jsonld``).

Both files hold exactly the same triples, built once here. Vocabulary: ``kg:`` =
``https://kgkit.dev/ns#``; items are IRIs under a base per graph (``--base-iri``, by
default ``https://kgkit.dev/graph/<tenant>/``) followed by their kgkit id. Reified as in
the other formats: hyperedges and events are resources with one ``kg:Role`` per filler
(``kg:roleName``, ``kg:filler``); a binary edge is a ``kg:Edge`` resource (``kg:head``,
``kg:relation``, ``kg:tail``, ``kg:confidence``) and also the direct triple
``head <https://kgkit.dev/ns/relation/REL> tail`` for plain SPARQL, with a ``kg:Property``
(``kg:propertyName``, ``kg:value``) per stored edge property; temporal edges carry
``kg:Qualifier`` resources; every evidence row is a ``kg:Evidence`` resource. Literals
are escaped (control characters as ``\\uXXXX`` in Turtle); numbers are typed xsd:integer
or xsd:double, booleans xsd:boolean; a structured value (an amount of money with its
currency) is its JSON text typed ``rdf:JSON``. docs/graph-export.md lists every class and property.
"""
from __future__ import annotations

import re
from collections import defaultdict
from functools import lru_cache
from typing import NamedTuple
from urllib.parse import quote

from kgkit.errors import InputError
from kgkit.graph.export.escape import backslash_escaper
from kgkit.graph.export.json_dump import write_json_document
from kgkit.graph.export.order import by_id, evidence_sorted
from kgkit.graph.export.property_graph import scalar
from kgkit.graph.export.registry import DEFAULT_BASE_IRI, ExportOptions
from kgkit.graph.export.staging import StagedOutput
from kgkit.graph.snapshot import GraphSnapshot, Item

KG = "https://kgkit.dev/ns#"
RELATION = "https://kgkit.dev/ns/relation/"
XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = RDF + "type"
RDF_JSON = RDF + "JSON"  # RDF 1.1's datatype for a JSON value (JSON-LD 1.1)
_NOT_IN_IRI = re.compile(r'[\x00-\x20<>"{}|^`\\]')
_turtle_escape = backslash_escaper({"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"})


class Iri(NamedTuple):
    value: str


class Lit(NamedTuple):
    lexical: str
    datatype: str | None = None  # a full IRI; None for a plain string


Triple = tuple[Iri, Iri, Iri | Lit]


def _num(value: int | float) -> Lit:
    return Lit(repr(value), XSD + ("integer" if isinstance(value, int) else "double"))


_DATE_FORMS = ((re.compile(r"\d{4}-\d{2}-\d{2}"), "date"), (re.compile(r"\d{4}-\d{2}"), "gYearMonth"),
               (re.compile(r"\d{4}"), "gYear"))
_XSD_DURATION = re.compile(r"P(?=\d|T\d)(\d+Y)?(\d+M)?(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?")
_WEEKS = re.compile(r"P(\d+)W")


def typed_value(value: object) -> Lit | None:
    """A value node's normalised value as a typed literal: an ISO date as xsd:date (or
    xsd:gYearMonth, xsd:gYear), an ISO duration as xsd:duration (weeks as days, which
    xsd:duration lacks), an amount as xsd:decimal; None when it is none of these."""
    if isinstance(value, dict) and isinstance(value.get("amount"), (int, float)) and not isinstance(value["amount"], bool):
        return Lit(format(value["amount"], "f") if isinstance(value["amount"], float) else str(value["amount"]),
                   XSD + "decimal")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return _num(value)
    if not isinstance(value, str):
        return None
    for form, datatype in _DATE_FORMS:
        if form.fullmatch(value):
            return Lit(value, XSD + datatype)
    if m := _WEEKS.fullmatch(value):
        return Lit(f"P{int(m.group(1)) * 7}D", XSD + "duration")
    if _XSD_DURATION.fullmatch(value):
        return Lit(value, XSD + "duration")
    return None


def base_iri(snapshot: GraphSnapshot, options: ExportOptions) -> str:
    """The graph's base IRI; InputError when a given one has characters no IRI may hold."""
    base = options.base_iri or DEFAULT_BASE_IRI.format(tenant=quote(snapshot.tenant, safe=""))
    if _NOT_IN_IRI.search(base) or ":" not in base:
        raise InputError(f"base IRI {base!r} is not an absolute IRI (no spaces, <>\"{{}}|^`\\ or control characters)")
    return base


def triples(snapshot: GraphSnapshot, options: ExportOptions) -> list[Triple]:
    """Every triple of the export, in a fixed order: the graph and its documents, entities,
    edges, temporal edges, hyperedges, events, then the evidence."""
    w = _Triples(base_iri(snapshot, options))
    w.graph(snapshot)
    literal = w.entities(snapshot)
    w.edges(snapshot, literal)
    w.temporal(snapshot)
    w.hyperedges(snapshot)
    w.events(snapshot)
    w.evidence(snapshot)
    return w.out


class _Triples:
    """The triples of one export as they are written, one method per kind of item."""

    def __init__(self, base: str) -> None:
        self.base = base
        self.out: list[Triple] = []

    def iri(self, item_id: str) -> Iri:
        return Iri(self.base + quote(item_id, safe=""))

    def add(self, s: Iri, prop: str, o: Iri | Lit | str | int | float | None) -> None:
        if o is None:
            return
        if isinstance(o, str):
            o = Lit(o)
        elif isinstance(o, bool):
            o = Lit("true" if o else "false", XSD + "boolean")
        elif isinstance(o, (int, float)):
            o = _num(o)
        elif not isinstance(o, (Iri, Lit)):  # an amount with its currency, a range: its JSON text
            o = Lit(scalar(o), RDF_JSON)
        self.out.append((s, Iri(RDF_TYPE) if prop == "a" else Iri(KG + prop), o))

    def views_and_documents(self, s: Iri, item: Item) -> None:
        for view in sorted(item.get("views", [])):
            self.add(s, "view", view)
        for doc in sorted(item.get("documents", [])):
            self.add(s, "inDocument", self.iri(doc))

    def roles(self, s: Iri, item: Item, key: str) -> None:
        for role in sorted(item.get(key, {})):
            for node in item[key][role]:
                r = Iri(f"{s.value}/role/{quote(role, safe='')}/{quote(node, safe='')}")
                self.add(s, "role", r)
                self.add(r, "a", Iri(KG + "Role"))
                self.add(r, "roleName", role)
                self.add(r, "filler", self.iri(node))

    def graph(self, snapshot: GraphSnapshot) -> None:
        add, iri = self.add, self.iri
        graph = Iri(self.base)
        add(graph, "a", Iri(KG + "Graph"))
        add(graph, "tenant", snapshot.tenant)
        add(graph, "version", snapshot.version)
        for d in by_id(snapshot.documents):
            s = iri(d["id"])
            add(s, "a", Iri(KG + "Document"))
            add(s, "name", d["name"])
            add(s, "source", d.get("source"))
            add(s, "sha256", d.get("sha256"))
            add(s, "title", d.get("title"))
            add(s, "pages", d.get("pages"))
            add(s, "added", None if d.get("added") is None else Lit(d["added"], XSD + "dateTime"))
            add(s, "documentNode", iri(d["node"]) if d.get("node") else None)

    def entities(self, snapshot: GraphSnapshot) -> dict[str, Lit]:
        """The entities; returns the value nodes' typed literals (or their names, as plain ones)."""
        add, iri = self.add, self.iri
        literal: dict[str, Lit] = {}
        for n in by_id(snapshot.nodes):
            s = iri(n["id"])
            add(s, "a", Iri(KG + "Entity"))
            add(s, "entityType", n["type"])
            add(s, "name", n["name"])
            add(s, "scope", n.get("scope"))
            if n.get("scope") == "value":
                literal[n["id"]] = typed_value(n.get("value")) or Lit(n["name"])
                add(s, "a", Iri(KG + "Value"))
                add(s, "value", literal[n["id"]])
                if isinstance(n.get("value"), dict):
                    add(s, "currency", n["value"].get("currency"))
            for alias in sorted(n.get("aliases", [])):
                add(s, "alias", alias)
            for doc in sorted(n.get("documents", [])):
                add(s, "inDocument", iri(doc))
        return literal

    def edges(self, snapshot: GraphSnapshot, literal: dict[str, Lit]) -> None:
        add, iri = self.add, self.iri
        for e in by_id(snapshot.edges):
            s = iri(e["id"])
            self.out.append((iri(e["head"]), Iri(RELATION + quote(e["relation"], safe="")),
                             literal.get(e["tail"]) or iri(e["tail"])))  # a value as a typed literal
            add(s, "a", Iri(KG + "Edge"))
            add(s, "head", iri(e["head"]))
            add(s, "relation", e["relation"])
            add(s, "tail", iri(e["tail"]))
            conf = e.get("confidence")
            add(s, "confidence", None if conf is None else float(conf))
            for name, value in sorted((e.get("properties") or {}).items()):  # a CITES edge's intent, strength
                ps = Iri(f"{s.value}/property/{quote(name, safe='')}")
                add(s, "property", ps)
                add(ps, "a", Iri(KG + "Property"))
                add(ps, "propertyName", name)
                add(ps, "value", value)
            self.views_and_documents(s, e)

    def temporal(self, snapshot: GraphSnapshot) -> None:
        add, iri = self.add, self.iri
        for t in by_id(snapshot.temporal):
            s = iri(t["id"])
            add(s, "a", Iri(KG + "TemporalEdge"))
            add(s, "head", iri(t["head"]))
            add(s, "relation", t["relation"])
            add(s, "tail", iri(t["tail"]))
            for name, q in sorted(t.get("qualifiers", {}).items()):
                qs = Iri(f"{s.value}/qualifier/{quote(name, safe='')}")
                add(s, "qualifier", qs)
                add(qs, "a", Iri(KG + "Qualifier"))
                add(qs, "qualifierName", name)
                add(qs, "text", q.get("text"))
                add(qs, "valueType", q.get("type"))
                add(qs, "value", q.get("value"))
            self.views_and_documents(s, t)

    def hyperedges(self, snapshot: GraphSnapshot) -> None:
        for h in by_id(snapshot.hyperedges):
            s = self.iri(h["id"])
            self.add(s, "a", Iri(KG + "Hyperedge"))
            self.add(s, "relation", h["relation"])
            self.roles(s, h, "roles")
            self.views_and_documents(s, h)

    def events(self, snapshot: GraphSnapshot) -> None:
        add = self.add
        for v in by_id(snapshot.events):
            s = self.iri(v["id"])
            add(s, "a", Iri(KG + "Event"))
            add(s, "eventType", v["type"])
            add(s, "trigger", v.get("trigger"))
            add(s, "timeText", (v.get("time") or {}).get("text"))
            add(s, "timeValue", (v.get("time") or {}).get("value"))
            self.roles(s, v, "arguments")
            self.views_and_documents(s, v)

    def evidence(self, snapshot: GraphSnapshot) -> None:
        add = self.add
        seen: dict[str, int] = defaultdict(int)
        for row in evidence_sorted(snapshot.evidence):
            item = self.iri(row["item"])
            ev = Iri(f"{item.value}/evidence/{seen[row['item']]}")
            seen[row["item"]] += 1
            add(item, "evidence", ev)
            add(ev, "a", Iri(KG + "Evidence"))
            add(ev, "document", self.iri(row["document"]))
            add(ev, "chunk", row.get("chunk"))
            add(ev, "page", row.get("page"))
            span = row.get("span") or [None, None]
            add(ev, "spanStart", span[0])
            add(ev, "spanEnd", span[1])
            add(ev, "quote", row.get("quote"))
            add(ev, "view", row.get("view"))


def _by_subject(found: list[Triple]) -> dict[Iri, list[tuple[Iri, Iri | Lit]]]:
    grouped: dict[Iri, list[tuple[Iri, Iri | Lit]]] = {}
    for s, p, o in found:
        grouped.setdefault(s, []).append((p, o))
    return grouped


def turtle_string(text: str) -> str:
    return '"' + _turtle_escape(text) + '"'


@lru_cache(maxsize=4096)  # the vocabulary is small; item IRIs miss and are cheap anyway
def _turtle_iri(value: str) -> str:
    if value == RDF_TYPE:
        return "a"
    if value.startswith(KG) and re.fullmatch(r"[A-Za-z][A-Za-z0-9]*", value[len(KG):]):
        return "kg:" + value[len(KG):]
    return f"<{value}>"


def _turtle_term(term: Iri | Lit) -> str:
    if isinstance(term, Iri):
        return _turtle_iri(term.value)
    if term.datatype is None:
        return turtle_string(term.lexical)
    return f"{turtle_string(term.lexical)}^^{_datatype(term.datatype)}"


def _datatype(datatype: str) -> str:
    return "xsd:" + datatype[len(XSD):] if datatype.startswith(XSD) else "rdf:" + datatype[len(RDF):]


def write_turtle(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    fh = out.open("graph.ttl")
    fh.write(f"@prefix kg: <{KG}> .\n@prefix xsd: <{XSD}> .\n@prefix rdf: <{RDF}> .\n")
    for subject, pairs in _by_subject(triples(snapshot, options)).items():
        body = " ;\n    ".join(f"{_turtle_term(p)} {_turtle_term(o)}" for p, o in pairs)
        fh.write(f"\n<{subject.value}> {body} .\n")


@lru_cache(maxsize=4096)
def _jsonld_key(prop: str) -> str:
    return "kg:" + prop[len(KG):] if prop.startswith(KG) else prop


def _jsonld_value(term: Iri | Lit) -> dict | str:
    if isinstance(term, Iri):
        return {"@id": term.value}
    if term.datatype is None:
        return term.lexical  # a plain JSON string is an xsd:string literal
    return {"@value": term.lexical, "@type": _datatype(term.datatype)}


def write_jsonld(snapshot: GraphSnapshot, out: StagedOutput, options: ExportOptions) -> None:
    graph = []
    for subject, pairs in _by_subject(triples(snapshot, options)).items():
        node: dict = {"@id": subject.value}
        for p, o in pairs:
            if p.value == RDF_TYPE and isinstance(o, Iri):  # a type is always an IRI
                node.setdefault("@type", []).append("kg:" + o.value[len(KG):])
            else:
                node.setdefault(_jsonld_key(p.value), []).append(_jsonld_value(o))
        graph.append(node)
    write_json_document(out.open("graph.jsonld"), {"@context": {"kg": KG, "xsd": XSD, "rdf": RDF}, "@graph": graph})
