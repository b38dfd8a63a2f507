"""Write commented starter domain files: from scratch, extending a domain, or from gold data.

The starter is generated as text, not with ``yaml.dump``, because its comments are the
point: they teach the format in place. Every starter validates as written (the tests
check it), and its first line points editors at the published JSON Schema so they can
autocomplete and flag mistakes while the author types.
"""
from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgkit.errors import InputError
from kgkit.formats.json_schemas import SCHEMA_DIR
from kgkit.formats.yaml_source import quoted, scalar

SCHEMA_FILE = SCHEMA_DIR / "domain.schema.json"
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]*$")
_TYPE_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-/]*$")


def flow(items: list[str]) -> str:
    return "[" + ", ".join(scalar(i) for i in items) + "]"


def header(name: str, lines: list[str]) -> str:
    intro = "\n".join(f"# {line}".rstrip() for line in lines)
    return (
        f"# yaml-language-server: $schema={SCHEMA_FILE}\n"
        f"#\n"
        f"# kgkit domain {name!r}.\n"
        f"{intro}\n"
        f"#\n"
        f"# Check it:   kgkit domain validate domains/{name}.yaml\n"
        f"# Use it:     kgkit extract DOCUMENT --domain {name}   (from the folder holding domains/;\n"
        f"#             elsewhere, or saved under another path, give the file's path instead)\n"
        f"# Reference:  docs/authoring-domains.md and `kgkit schema domain`\n"
    )


_TAIL = """
# Views built when --view is not given (binary, person, nary, temporal, event, diy:TEMPLATE):
# default_views: [binary]

# How documents are cut for extraction, in characters.
chunking:
  size: 2000
  overlap: 200
"""


def starter(name: str) -> str:
    """A self-contained starter: two entity types, one relation, one example."""
    return header(name, ["Replace the example types below with your own."]) + f"""
name: {scalar(name)}
description: What kind of documents this domain is for.
version: 1

# To inherit a built-in domain's types and only add or override some, uncomment:
# extends: general

# Entity types: the kinds of things to find. For the offline backend, `patterns`
# lists phrases (matched case-insensitively) and/or Python regexes.
entity_types:
  - name: Organization
    description: A company, agency or other institution.
    aliases: [organisation, company]
    examples: [Acme Corp]
    patterns:
      regex: ['\\b[A-Z][A-Za-z]+ (?:Inc|Ltd|LLC|Corp)\\b\\.?']
  - name: Person
    description: A named human being.
    patterns:
      regex: ['\\b(?:Mr|Ms|Mrs|Dr)\\.? [A-Z][a-z]+(?: [A-Z][a-z]+)?']

# Relation types are strictly binary: allowed head types -> allowed tail types
# ("*" allows any type). `triggers` are cue words the offline backend looks for.
relation_types:
  - name: works_for
    description: A person is employed by an organization.
    head: [Person]
    tail: [Organization]
    triggers: [works for, employed by, employee of]

# Also possible (see the tutorial): nary_relation_types (named roles),
# event_types (triggers and argument roles) and qualifiers (dates, amounts, ...).

# Few-shot examples: a text and what an extractor should return for it.
examples:
  - text: Dr. Jane Smith works for Acme Corp.
    entities:
      - {{name: Jane Smith, type: Person}}
      - {{name: Acme Corp, type: Organization}}
    relations:
      - {{head: Jane Smith, relation: works_for, tail: Acme Corp}}
""" + _TAIL


def starter_extending(name: str, parent_ref: str, parent) -> str:
    """A starter that ``extends`` an existing domain and lists what it inherits."""
    entity = ", ".join(t.name for t in parent.entity_types) or "none"
    relation = ", ".join(r.name for r in parent.relation_types) or "none"
    return header(name, [f"Extends {parent.name!r}: it inherits every type and example of it."]) + f"""
name: {scalar(name)}
description: {scalar(f'What kind of documents this domain is for (extends {parent.name}).')}
version: 1
extends: {scalar(parent_ref)}

# Inherited entity types: {entity}
# Inherited relation types: {relation}
#
# Add types below, or override an inherited one by giving an entry the same name
# (the child's entry replaces the parent's whole). Examples are added to the parent's.
#
# entity_types:
#   - name: Clause
#     description: A numbered section of the document.
#
# relation_types:
#   - name: part_of
#     head: [Clause]
#     tail: ["*"]
""" + _TAIL


def _safe_type(name: str) -> str:
    if _TYPE_NAME_RE.match(name):
        return name
    fixed = re.sub(r"[^A-Za-z0-9_.\-/]", "_", name)
    return fixed if re.match(r"[A-Za-z_]", fixed) else "_" + fixed


def _safe_role(name: str) -> str:
    fixed = re.sub(r"[^A-Za-z0-9_.\-]", "_", name)
    return fixed if re.match(r"[A-Za-z_]", fixed) else "_" + fixed


def read_gold(directory: Path) -> list[dict[str, Any]]:
    files = sorted(Path(directory).glob("*.gold.json"))
    if not Path(directory).is_dir():
        raise InputError(f"no gold folder at {directory}")
    if not files:
        raise InputError(f"no *.gold.json files in {directory}", hint="see the gold format in the README of the data folder")
    docs = []
    for path in files:
        try:
            docs.append(json.loads(path.read_text(encoding="utf-8")))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise InputError(f"{path}: not a gold JSON file ({exc})") from None
    return docs


@dataclass
class _GoldTally:
    """What a gold folder declares, counted: the types, relation ends, event and n-ary roles."""

    type_count: Counter[str] = field(default_factory=Counter)
    names_by_type: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    relations: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: {"head": set(),
                                                                                                   "tail": set()}))
    relation_count: Counter[str] = field(default_factory=Counter)
    temporal_only: set[str] = field(default_factory=set)
    roles: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))
    event_triggers: dict[str, Counter[str]] = field(default_factory=lambda: defaultdict(Counter))
    nary: dict[str, dict[str, set[str]]] = field(default_factory=lambda: defaultdict(lambda: defaultdict(set)))

    @classmethod
    def of(cls, docs: list[dict[str, Any]]) -> "_GoldTally":
        tally = cls()
        for doc in docs:
            tally._add(doc)
        tally.temporal_only -= {_safe_type(r["relation"]) for doc in docs for r in doc.get("relations", [])}
        tally.nary = {k: v for k, v in tally.nary.items() if k not in tally.roles}  # events repeat as hyperedges
        return tally

    def _add(self, doc: dict[str, Any]) -> None:
        types = {e["name"]: _safe_type(e["type"]) for e in doc.get("entities", [])}
        for e in doc.get("entities", []):
            self.type_count[_safe_type(e["type"])] += 1
            self.names_by_type[_safe_type(e["type"])][e["name"]] += 1
        for key in ("relations", "temporal"):
            for r in doc.get(key, []):
                label = _safe_type(r["relation"])
                self.relation_count[label] += 1
                (self.temporal_only.add if key == "temporal" else self.temporal_only.discard)(label)
                for end in ("head", "tail"):
                    if r.get(end) in types:
                        self.relations[label][end].add(types[r[end]])
        for ev in doc.get("events", []):
            label = _safe_type(ev["type"])
            self.event_triggers[label][ev.get("trigger") or ""] += 1
            self.roles[label]  # an event type with no argument in gold is still declared
            for role, filler in (ev.get("arguments") or {}).items():
                for who in filler if isinstance(filler, list) else [filler]:
                    self.roles[label][_safe_role(role)].add(types.get(who, ""))
        for h in doc.get("hyperedges", []):
            label = _safe_type(h["relation"])
            for role, filler in (h.get("roles") or {}).items():
                for who in filler if isinstance(filler, list) else [filler]:
                    self.nary[label][_safe_role(role)].add(types.get(who, ""))


def starter_from_gold(name: str, directory: Path, seed_from: Path | None = None) -> str:
    """Scaffold entity, relation, n-ary and event types (ends and roles inferred) from gold.

    Relation types come from ``relations`` and ``temporal`` (CUAD's PARTY_TO lives only
    there); event types from ``events``, with their argument roles and the roles' types.
    Gold types that look like the built-in ``general`` domain's (``seed_from`` overrides
    the file) get its description and patterns, and relations named like one of its
    relations get its triggers (:func:`general_seeds`), each with a comment saying so.
    """
    docs = read_gold(directory)
    tally = _GoldTally.of(docs)
    if not tally.type_count:
        raise InputError(f"the gold files in {directory} declare no entities; nothing to scaffold")
    seeds = general_seeds(list(tally.type_count), tally.relations, seed_from)
    out = [header(name, [f"Scaffolded from the gold folder {directory} ({len(docs)} documents).",
                         "Add descriptions, patterns and triggers: the offline backend needs them."]
                  + seeds.summary())]
    out.append(f"\nname: {scalar(name)}\ndescription: {scalar(f'Types found in the gold annotations of {Path(directory).name}.')}\nversion: 1\n")
    out += _entity_lines(tally, seeds) + _relation_lines(tally, seeds) + _role_lines(tally)
    out.append(_gold_examples(docs))
    out.append(_TAIL)
    return "".join(out)


def _entity_lines(tally: _GoldTally, seeds: "Seeds") -> list[str]:
    out = ["\n# Entity types, most frequent first; examples are frequent gold names.\nentity_types:\n"]
    for t, n in tally.type_count.most_common():
        examples = [s for s, _ in tally.names_by_type[t].most_common(3)]
        out.append(f"  - name: {scalar(t)}  # {n} in gold\n")
        out.append(seeds.entity_block(t))
        out.append(f"    examples: {flow(examples)}\n")
    return out


def _relation_lines(tally: _GoldTally, seeds: "Seeds") -> list[str]:
    if not tally.relations:
        return []
    out = ["\n# Relation types; head and tail types are those seen in gold.\nrelation_types:\n"]
    for label, _ in tally.relation_count.most_common():
        head = sorted(tally.relations[label]["head"]) or ["*"]
        tail = sorted(tally.relations[label]["tail"]) or ["*"]
        where = " (only in temporal)" if label in tally.temporal_only else ""
        out.append(f"  - name: {scalar(label)}  # {tally.relation_count[label]} in gold{where}\n"
                   f"    head: {flow(head)}\n    tail: {flow(tail)}\n")
        out.append(seeds.relation_block(label))
    return out


def _role_lines(tally: _GoldTally) -> list[str]:
    """The n-ary relation and event types, with their roles and the roles' types."""
    out: list[str] = []
    for key, table in (("nary_relation_types", tally.nary), ("event_types", tally.roles)):
        if not table:
            continue
        out.append(f"\n{key}:\n")
        for label in sorted(table):
            out.append(f"  - name: {scalar(label)}\n")
            if key == "event_types" and tally.event_triggers[label]:
                words = [w for w, _ in tally.event_triggers[label].most_common(5) if w]
                if words:
                    out.append(f"    triggers: {flow(words)}\n")
            if not table[label]:
                out.append("    roles:  # no argument in gold: a placeholder, rename or type it\n"
                           "      argument: {literal: text}\n")
                continue
            out.append("    roles:\n")
            for role in sorted(table[label]):
                typed = sorted(t for t in table[label][role] if t)
                spec = f"{{types: {flow(typed)}}}" if typed else "{literal: text}"
                out.append(f"      {scalar(role)}: {spec}\n")
    return out


class Seeds:
    """What a scaffold borrows from the general domain: per gold type, the general type it
    looks like; per gold relation, the general relation it is named like."""

    def __init__(self, source: Path, entities: dict[str, Any], relations: dict[str, Any],
                 ambiguous: dict[str, list[str]], mismatched: dict[str, Any] | None = None):
        self.source, self.entities, self.relations, self.ambiguous = source, entities, relations, ambiguous
        self.mismatched = mismatched or {}  # gold relation -> general relation named like it, other ends

    def summary(self) -> list[str]:
        if not (self.entities or self.relations or self.ambiguous or self.mismatched):
            return []
        lines = [f"Seeded from the built-in general domain ({self.source}); no gold names were copied:"]
        lines += [f"  entity type {t}: description and patterns of general's {g.name}" for t, g in self.entities.items()]
        lines += [f"  relation {r}: triggers of general's {g.name}" for r, g in self.relations.items()]
        lines += [f"  not seeded: {', '.join(ts)} all look like general's {g}; copy its patterns to the right one"
                  for g, ts in self.ambiguous.items()]
        lines += [f"  not seeded: relation {r} is named like general's {g.name}, but its gold ends are not all "
                  f"ones {g.name} allows" for r, g in self.mismatched.items()]
        return lines

    def entity_block(self, gold_type: str) -> str:
        general = self.entities.get(gold_type)
        return _seeded_block(general, "patterns", general.patterns, "") if general else ""

    def relation_block(self, label: str) -> str:
        general = self.relations.get(label)
        return _seeded_block(general, "triggers", general.triggers, " (same name by alias, same ends)") if general else ""


def _seeded_block(general, key: str, patterns, why: str) -> str:
    """The description and ``key`` (patterns or triggers) of a general type, under a comment saying so."""
    out = [f"    # description and {key} copied from the general domain's {general.name}{why}\n"]
    if general.description:
        out.append(f"    description: {scalar(general.description)}\n")
    out.append(f"    {key}:\n")
    if patterns.phrases:
        out.append(f"      phrases: {flow(list(patterns.phrases))}\n")
    if patterns.regex:
        out.append("      regex:\n" + "".join(f"        - {scalar(rx)}\n" for rx in patterns.regex))
    return "".join(out)


def general_seeds(gold_types: list[str], relations: dict[str, dict[str, set[str]]],
                  source: Path | None = None) -> Seeds:
    """Match gold labels to the built-in general domain, conservatively.

    A gold entity type looks like a general type when the label equals its name or one of
    its declared aliases (case-insensitive: CoNLL04's Peop, WikiEvents' PER). When two gold
    types look like the same general type (WikiEvents' LOC and GPE) neither is seeded: the
    author knows which one the patterns fit. A gold relation gets a general relation's
    triggers only when its label is that relation's name or alias *and* every gold head and
    tail type maps onto a type that relation allows. Only the general domain's own text is
    copied, never anything from the gold documents.
    """
    from kgkit.catalog.load import load_domain
    from kgkit.formats.search_path import builtin_root

    source = source or builtin_root() / "domains" / "general.yaml"
    if not source.is_file():
        return Seeds(source, {}, {}, {})
    general = load_domain(source)
    by_general: dict[str, list[str]] = defaultdict(list)
    for t in gold_types:
        key = t.casefold()
        match = next((g for g in general.entity_types
                      if g.name.casefold() == key or any(a.casefold() == key for a in g.aliases)), None)
        if match is not None and match.patterns:
            by_general[match.name].append(t)
    entities = {ts[0]: general.entity_type(g) for g, ts in by_general.items() if len(ts) == 1}
    ambiguous = {g: ts for g, ts in by_general.items() if len(ts) > 1}
    mapped = {t: g.name for t, g in entities.items()}
    seeded_relations, mismatched = {}, {}
    for label, ends in relations.items():
        rel = general.relation_type(label)
        if rel is None or not rel.triggers or not ends["head"] or not ends["tail"]:
            continue
        if all(mapped.get(h) in rel.head or "*" in rel.head for h in ends["head"]) and \
                all(mapped.get(t) in rel.tail or "*" in rel.tail for t in ends["tail"]):
            seeded_relations[label] = rel
        else:
            mismatched[label] = rel
    return Seeds(source, entities, seeded_relations, ambiguous, mismatched)


def _gold_examples(docs: list[dict[str, Any]], limit: int = 2) -> str:
    """Few-shot examples from gold sentences whose relation ends appear verbatim in them."""
    candidates = []
    for doc in docs:
        types = {e["name"]: _safe_type(e["type"]) for e in doc.get("entities", [])}
        by_sentence: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for r in doc.get("relations", []):
            text = r.get("evidence")
            if text and r["head"] in text and r["tail"] in text and r["head"] in types and r["tail"] in types:
                by_sentence[text].append(r)
        for text, rels in by_sentence.items():
            if len(text) <= 300:
                candidates.append((abs(len(rels) - 2), len(text), text, rels, types))  # short, a few relations
    if not candidates:
        return ""
    out = ["\n# Few-shot examples taken from gold sentences.\nexamples:\n"]
    for _, _, text, rels, types in sorted(candidates, key=lambda c: c[:3])[:limit]:
        names = list(dict.fromkeys(n for r in rels for n in (r["head"], r["tail"])))
        names += [n for n in types if n not in names and len(n) > 2 and re.search(rf"\b{re.escape(n)}\b", text)]
        out.append(f"  - text: {quoted(text)}\n    entities:\n")
        out.extend(f"      - {{name: {scalar(n)}, type: {scalar(types[n])}}}\n" for n in names)
        out.append("    relations:\n")
        out.extend(
            f"      - {{head: {scalar(r['head'])}, relation: {scalar(_safe_type(r['relation']))}, tail: {scalar(r['tail'])}}}\n"
            for r in rels
        )
    return "".join(out)
