"""Offline answers for the upgrade passes: nary, temporal, event and diy.

Each works sentence by sentence, like the core passes, over the chunk's V_doc entities
plus the ends of the chunk's skeleton edges (a term clause says "this Agreement" in a
chunk where the agreement's full name never appears):

* nary — a domain n-ary relation type whose trigger is in the sentence becomes a
  hyperedge; its roles are filled by the sentence's entities by type, and by its literals
  (money, percent, duration, date) by kind;
* temporal — a skeleton edge gets the qualifiers the domain declares for its relation,
  from the sentence that mentions both its ends, and from a sentence *about its head*
  ("This Agreement shall be effective as of …", "… shall expire on …") for those that one
  leaves empty;
* event — an event type's trigger makes an event; roles filled as for nary; its time is
  the sentence's date nearest the trigger;
* diy — the template's entity patterns, plus the V_doc entities of its types, give its
  entities; its relations' triggers and roles give its (binary or n-ary) relations, with
  its qualifiers.

How a literal goes to a role: a role named like a declared qualifier (``notice_period``,
``deadline``, ``effective_date``…) takes the literal that qualifier's triggers bind
("sixty (60) days advance written **notice**"); any other literal role takes the literal
of its kind nearest the relation's trigger. A literal that is also a V_doc node (a Date
node "2017-05-26", a Duration node "30 days") is answered by the node's name, so the item
joins the skeleton; any other by ``{"literal", "type"}``.

How a qualifier binds: a qualifier with triggers takes a literal of its type within
:data:`NEAR` characters of one of them (nearest first; one literal per qualifier, one
qualifier per literal); one without triggers takes any literal of its type. An edge's own
ends are never its qualifiers.
"""
from __future__ import annotations

import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

from kgkit.backends.offline.entities import find_entities
from kgkit.backends.offline.mentions import name_key
from kgkit.backends.offline.phrases import compile_phrases, pattern_matches, trigger_spans
from kgkit.text.literals import KINDS as LITERAL_KINDS, Literal, find_literals, normalise
from kgkit.text.type_kinds import literal_types
from kgkit.backends.offline.entity_mentions import EntityMention, find_mentions
from kgkit.backends.offline.relations import find_relations
from kgkit.text.sentences import Sentence, split_sentences
from kgkit.documents.types import Chunk
from kgkit.formats.model import EntityType, Qualifier, RelationType, Role

NEAR = 60  # characters: how far a qualifier's trigger may stand from its value
SUBJECT_REACH = 120  # characters: how far after a sentence's subject its predicate's trigger may stand


@dataclass(frozen=True)
class Value:
    """A literal of the sentence; ``node`` is the V_doc node it also is, if any."""

    lit: Literal
    node: str | None = None

    @property
    def kind(self) -> str:
        return self.lit.kind

    @property
    def start(self) -> int:
        return self.lit.start

    @property
    def end(self) -> int:
        return self.lit.end

    def answer(self) -> Any:
        """A role filler: the node's name, else the literal as written with its kind."""
        return self.node if self.node else {"literal": self.lit.surface, "type": self.lit.kind}

    def text(self) -> str:
        """A qualifier value: the text as written (the mode normalises it)."""
        return self.lit.surface


@dataclass(frozen=True)
class Part:
    """One sentence with its entity mentions (non-literal) and its literal values."""

    sent: Sentence
    mentions: list[EntityMention]
    values: list[Value]


def _distance(value: Value | EntityMention, hits: Sequence[tuple[int, int]]) -> int:
    start, end = value.start, value.end
    return min((max(s - end, start - e, 0) for s, e in hits), default=10_000)


def _literal_kinds(roles: Sequence[Role], types: Sequence[EntityType] = ()) -> list[str]:
    literal_of = literal_types(types)
    wanted = {r.literal for r in roles} | {literal_of[t] for r in roles for t in r.types if t in literal_of}
    return [k for k in LITERAL_KINDS if k in wanted]


def context_entities(entities: Sequence[Mapping[str, Any]], skeleton: Sequence[Mapping[str, Any]],
                     relation_types: Sequence[RelationType]) -> list[Mapping[str, Any]]:
    """The chunk's V_doc entities plus the ends of its skeleton edges that are not among
    them, typed by the relation when it admits one type at that end (an edge's evidence
    may name "this Agreement" only, so the agreement's own name is not in the chunk)."""
    out = list(entities)
    known = {e["name"] for e in entities}
    by_name = {r.name: r for r in relation_types}
    for edge in skeleton:
        rel = by_name.get(edge.get("relation", ""))
        if rel is None:
            continue
        for end, types in ((edge["head"], rel.head), (edge["tail"], rel.tail)):
            if end not in known and len(types) == 1 and types[0] != "*":
                out.append({"name": end, "type": types[0], "aliases": []})
                known.add(end)
    return out


def sentence_parts(text: str, entities: Sequence[Mapping[str, Any]], types: Sequence[EntityType],
                   literal_kinds: Sequence[str], keep: Callable[[EntityMention], bool] | None = None) -> list[Part]:
    """Each sentence with its mentions and literals.

    A literal stays a literal even where it is also a V_doc node (a Date entity found by
    its value): it remembers the node instead, so it can fill a literal role, be an
    event's time or qualify an edge. Mentions of literal-typed nodes at a literal's place
    are dropped (the literal stands for them), and so are those ``keep`` refuses.
    """
    mentions = find_mentions(text, entities, types) if entities else []
    if keep is not None:
        mentions = [m for m in mentions if keep(m)]
    literals = find_literals(text, literal_kinds) if literal_kinds else []
    literal_of = literal_types(types)
    node_of: dict[tuple[str, str], str] = {}  # (kind, normalised value) -> the literal node's name (as written somewhere)
    for e in entities:
        if e["type"] in literal_of:
            node_of.setdefault((literal_of[e["type"]], repr(normalise(literal_of[e["type"]], e["name"]))), e["name"])
    values = [Value(lit, node_of.get((lit.kind, repr(lit.value)))) for lit in literals]
    mentions = [m for m in mentions if not (m.type in literal_of and any(
        v.start < m.end and m.start < v.end for v in values))]
    parts = []
    for sent in split_sentences(text):
        parts.append(Part(sent, [m for m in mentions if sent.start <= m.start and m.end <= sent.end],
                          [v for v in values if sent.start <= v.start and v.end <= sent.end]))
    return parts


_READINGS: "weakref.WeakKeyDictionary[Chunk, dict[tuple, tuple[Sequence[EntityType], list[Part]]]]" = \
    weakref.WeakKeyDictionary()
_READINGS_LOCK = threading.Lock()


def chunk_parts(text: str, chunk: Chunk | None, entities: Sequence[Mapping[str, Any]], types: Sequence[EntityType],
                literal_kinds: Sequence[str]) -> list[Part]:
    """:func:`sentence_parts` of ``text``, read once per chunk for every view that reads it
    alike: the n-ary, event and temporal passes on a chunk see the same entities and, in
    most domains, the same literal kinds. Kept while ``chunk`` (the one ``text`` is) lives,
    and only where the reading runs no domain regex (a type's label cues): such a regex may
    be skipped on a chunk that uses up its time, which each pass records for itself.
    Read the parts; do not change them."""
    if chunk is None or chunk.text is not text or any(t.patterns.labels for t in types):
        return sentence_parts(text, entities, types, literal_kinds)
    key = (tuple((e["name"], e["type"], tuple(e.get("aliases") or ())) for e in entities), id(types),
           tuple(literal_kinds))
    with _READINGS_LOCK:
        hit = _READINGS.setdefault(chunk, {}).get(key)
    if hit is not None and hit[0] is types:
        return hit[1]
    parts = sentence_parts(text, entities, types, literal_kinds)
    with _READINGS_LOCK:
        _READINGS.setdefault(chunk, {})[key] = (types, parts)
    return parts


def _bound(q: Qualifier, text: str, sent: Sentence, values: Sequence[Value]) -> list[tuple[int, int, Value]]:
    """(distance to the nearest trigger, trigger start, value) for each value ``q`` may take."""
    cands = [v for v in values if v.kind == q.type]
    if not cands:
        return []
    if not q.triggers:
        return [(NEAR + 1, sent.start, v) for v in cands]
    hits = trigger_spans(q.triggers, text, sent)
    out = []
    for v in cands:
        near = [(max(s - v.end, v.start - e, 0), s) for s, e in hits]
        near = [x for x in near if x[0] <= NEAR]
        if near:
            dist, at = min(near)
            out.append((dist, at, v))
    return out


def fill_roles(roles: Sequence[Role], part: Part, text: str, triggers: Sequence[tuple[int, int]],
               qualifiers: Sequence[Qualifier] = (), types: Sequence[EntityType] = ()) -> dict[str, Any]:
    """Role -> filler(s) from the sentence, each entity or literal used once.

    An entity role takes every fitting mention unless a later role accepts the same type,
    in which case it takes the first one (payer before payee, as contracts write them). A
    literal role takes one literal: the one its cue (the declared qualifier of the same
    name) binds — unless another qualifier's trigger stands nearer that literal ("for a
    period of six (6) months **following expiration**" is a survival period, not a term) —
    or, when it has no cue, the one of its kind nearest the trigger.
    """
    cues = _cues(roles, qualifiers)
    literal_of = literal_types(types)
    mentions, values = part.mentions, part.values
    used_m: set[str] = set()  # entity names
    used_v: set[int] = set()
    out: dict[str, Any] = {}

    def kind_of(role: Role) -> str | None:
        if role.literal in LITERAL_KINDS:
            return role.literal
        return next((literal_of[t] for t in role.types if t in literal_of), None)

    # literal roles with a cue first: "notice" binds the notice period, whatever comes first
    for role in roles:
        kind, cue = kind_of(role), cues.get(role.name)
        if kind is None or cue is None or cue.type != kind:
            continue
        claims = sorted((d, values.index(v)) for d, _, v in _bound(cue, text, part.sent, values)
                        if values.index(v) not in used_v and not _nearer_rival(v, d, cue, qualifiers, text, part))
        if claims:
            used_v.add(claims[0][1])
            out[role.name] = values[claims[0][1]].answer()
    for i, role in enumerate(roles):
        if role.name in out or (role.name in cues and role.literal):
            continue  # a cued literal role takes what its cue binds or nothing
        later = roles[i + 1:]
        fillers: list[Any] = []
        entity_types = [t for t in role.types if t not in literal_of]
        if entity_types:
            cands = [m.name for m in mentions if m.name not in used_m and ("*" in entity_types or m.type in entity_types)]
            cands = list(dict.fromkeys(cands))
            shared = any(set(entity_types) & set(r.types) for r in later)
            fillers = cands[:1] if shared else cands
            used_m.update(fillers)
        kind = kind_of(role)
        if kind and not fillers:
            valued = sorted((_distance(v, triggers), j) for j, v in enumerate(values)
                            if j not in used_v and v.kind == kind and not _cue_elsewhere(v, role, roles, cues, text, part))
            if valued:
                used_v.add(valued[0][1])
                fillers.append(values[valued[0][1]].answer())
        if fillers:
            out[role.name] = fillers[0] if len(fillers) == 1 else fillers
    return {r.name: out[r.name] for r in roles if r.name in out}


def _nearer_rival(v: Value, dist: int, cue: Qualifier, qualifiers: Sequence[Qualifier], text: str, part: Part) -> bool:
    return any(q.name != cue.name and q.type == v.kind and q.triggers and any(
        d < dist for d, _, _ in _bound(q, text, part.sent, [v])) for q in qualifiers)


def _cue_elsewhere(v: Value, role: Role, roles: Sequence[Role], cues: Mapping[str, Qualifier], text: str,
                   part: Part) -> bool:
    """Whether another role's cue binds ``v`` (it is that role's, even if that role took another)."""
    for other in roles:
        cue = cues.get(other.name)
        if other is role or cue is None or cue.type != v.kind:
            continue
        if any(b is v for _, _, b in _bound(cue, text, part.sent, [v])):
            return True
    return False


def _complete(roles: Sequence[Role], filled: Mapping[str, Any]) -> bool:
    return len(filled) >= 2 and all(r.name in filled for r in roles if r.required)


def _cues(roles: Sequence[Role], qualifiers: Sequence[Qualifier]) -> dict[str, Qualifier]:
    """Role name -> the declared qualifier of that name with triggers (its cue); made once
    per relation type's roles, which every sentence of every chunk fills (read it only)."""
    key = (id(roles), id(qualifiers))
    hit = _CUES.get(key)
    if hit is None or hit[0] is not roles or hit[1] is not qualifiers:
        by_name = {q.name: q for q in qualifiers if q.triggers}
        if len(_CUES) > 256:  # a process that loads domain after domain
            _CUES.clear()
        hit = _CUES[key] = (roles, qualifiers, {r.name: by_name[r.name] for r in roles if r.name in by_name})
    return hit[2]


_CUES: dict[tuple[int, int], tuple[Sequence[Role], Sequence[Qualifier], dict[str, Qualifier]]] = {}


def nary_answer(text: str, domain, entities: Sequence[Mapping[str, Any]],
                skeleton: Sequence[Mapping[str, Any]] = (),
                chunk: Chunk | None = None) -> dict[str, Any]:
    entities = context_entities(entities, skeleton, domain.relation_types)
    kinds = _literal_kinds([r for t in domain.nary_relation_types for r in t.roles], domain.entity_types)
    hyperedges: list[dict[str, Any]] = []
    for part in chunk_parts(text, chunk, entities, domain.entity_types, kinds):
        for rel in domain.nary_relation_types:
            hits = trigger_spans(rel.triggers, text, part.sent)
            if not hits:
                continue
            roles = fill_roles(rel.roles, part, text, hits, domain.qualifiers, domain.entity_types)
            item = {"relation": rel.name, "roles": roles, "evidence": part.sent.text, "confidence": 0.6}
            if _complete(rel.roles, roles) and not any(h["relation"] == rel.name and h["roles"] == roles
                                                       for h in hyperedges):
                hyperedges.append(item)
    return {"hyperedges": hyperedges}


def event_answer(text: str, domain, entities: Sequence[Mapping[str, Any]],
                 skeleton: Sequence[Mapping[str, Any]] = (),
                 chunk: Chunk | None = None) -> dict[str, Any]:
    entities = context_entities(entities, skeleton, domain.relation_types)
    kinds = sorted(set(_literal_kinds([r for t in domain.event_types for r in t.roles], domain.entity_types)) | {"date"},
                   key=LITERAL_KINDS.index)
    events = []
    for part in chunk_parts(text, chunk, entities, domain.entity_types, kinds):
        for ev in domain.event_types:
            hits = trigger_spans(ev.triggers, text, part.sent)
            if not hits:
                continue
            args = fill_roles(ev.roles, part, text, hits, domain.qualifiers, domain.entity_types)
            if not args:
                continue
            dates = sorted((_distance(v, hits), v.start, v) for v in part.values if v.kind == "date")
            s, e = hits[0]
            events.append({"type": ev.name, "trigger": text[s:e], "arguments": args,
                           "time": dates[0][2].text() if dates else None, "evidence": part.sent.text,
                           "confidence": 0.6})
    return {"events": events}


def qualifier_values(qualifiers: Sequence[Qualifier], text: str, sent: Sentence,
                     values: Sequence[Value], exclude: frozenset[str] = frozenset()) -> dict[str, Value | str]:
    """Qualifier name -> its value in the sentence (an enum qualifier: the value's text).

    A literal goes to the qualifier whose trigger is nearest; values naming ``exclude``
    (the edge's own ends) are skipped.
    """
    claims: list[tuple[int, int, str, Any]] = []  # (distance, literal index, qualifier, value)
    for q in qualifiers:
        if q.type == "enum":
            for value in q.values:
                if compile_phrases((value,)).search(text, sent.start, sent.end):
                    claims.append((0, -1 - len(claims), q.name, value))
                    break
            continue
        pool = [v for v in values if not (v.node and v.node in exclude)]
        for dist, _, v in _bound(q, text, sent, pool):
            claims.append((dist, values.index(v), q.name, v))
    out: dict[str, Any] = {}
    used: set[int] = set()
    for dist, j, name, value in sorted(claims, key=lambda c: (c[0], c[1], c[2])):
        if name not in out and j not in used:
            out[name] = value
            used.add(j)
    return out


def _statement(part: Part, text: str, qualifiers: Sequence[Qualifier]) -> tuple[str, dict[str, Value]] | None:
    """What a sentence says of its subject: (subject name, {qualifier: value}).

    The subject is the sentence's first entity mention; a value counts when the trigger
    binding it stands after the subject, in its predicate ("This Agreement shall be
    effective as of …", "… shall expire on …"), with no other entity before the trigger.
    """
    if not part.mentions:
        return None
    subject = min(part.mentions, key=lambda m: m.start)
    others = [m.start for m in part.mentions if m.name != subject.name]
    said: dict[str, Value] = {}
    for name, value in qualifier_values(qualifiers, text, part.sent, part.values).items():
        if not isinstance(value, Value):
            continue
        q = next(q for q in qualifiers if q.name == name)
        if any(subject.end <= s <= subject.end + SUBJECT_REACH and not any(o < s for o in others)
               for _, s, _ in _bound(q, text, part.sent, [value])):
            said[name] = value
    return (subject.name, said) if said else None


def temporal_answer(text: str, domain, entities: Sequence[Mapping[str, Any]],
                    skeleton: Sequence[Mapping[str, Any]], chunk: Chunk | None = None) -> dict[str, Any]:
    entities = context_entities(entities, skeleton, domain.relation_types)
    kinds = [k for k in LITERAL_KINDS if any(q.type == k for q in domain.qualifiers)]
    parts = chunk_parts(text, chunk, entities, domain.entity_types, kinds)
    named = [{m.name for m in part.mentions} | {v.node for v in part.values if v.node} for part in parts]
    said_by: dict[tuple[int, tuple[str, ...]], Any] = {}  # (sentence, qualifiers) -> statement
    edges = []
    seen: set[tuple[str, str, str]] = set()
    for edge in skeleton:
        key = (edge["head"], edge["relation"], edge["tail"])
        relation = domain.relation_type(edge["relation"])
        declared = [q for q in domain.qualifiers if "*" in q.relations or edge["relation"] in q.relations]
        if key in seen or not declared:
            continue
        seen.add(key)
        ends = frozenset((edge["head"], edge["tail"]))
        quals: dict[str, Any] = {}
        used: list[Sentence] = []
        for part, names in zip(parts, named):  # the sentence stating the edge
            if edge["head"] in names and edge["tail"] in names:
                quals = qualifier_values(declared, text, part.sent, part.values, ends)
                if quals:
                    used.append(part.sent)
                    break
        for i, part in enumerate(parts):  # sentences about its head, for what that one leaves empty
            if part.sent in used:
                continue
            said_key = (i, tuple(q.name for q in declared))
            if said_key not in said_by:
                said_by[said_key] = _statement(part, text, declared)
            said = said_by[said_key]
            if said is None or said[0] != edge["head"]:
                continue
            if relation is not None and trigger_spans(relation.triggers, text, part.sent):
                continue  # the sentence states a relation of its own kind: its values are that one's
            extra = {n: v for n, v in said[1].items() if n not in quals and not (v.node and v.node in ends)}
            if extra:
                quals.update(extra)
                used.append(part.sent)
        if quals:
            start, end = min(s.start for s in used), max(s.end for s in used)
            edges.append({"head": edge["head"], "relation": edge["relation"], "tail": edge["tail"],
                          "qualifiers": {n: (v.text() if isinstance(v, Value) else v) for n, v in quals.items()},
                          "evidence": text[start:end], "confidence": 0.6})
    return {"edges": edges}


def _as_binary(rel) -> RelationType:
    roles = {r.name: r for r in rel.roles}
    return RelationType(name=rel.name, head=roles["head"].types or ("*",), tail=roles["tail"].types or ("*",),
                        triggers=rel.triggers)


def diy_answer(text: str, template, entities: Sequence[Mapping[str, Any]] = ()) -> dict[str, Any]:
    """The template's entities and relations. V_doc entities whose type the template also
    declares (a Party and its defined names) are found too and named as in V_doc, so the
    view's roles point at the skeleton's nodes."""
    declared = {t.name for t in template.entity_types}
    # proper names only: a clause-like node ("perform") would be "found" at every use of the word
    shared = [{"name": e["name"], "type": e["type"], "aliases": list(e.get("aliases") or ())}
              for e in entities if e.get("type") in declared and e["name"][:1].isupper()]
    shared_names = {(name_key(n), e["type"]) for e in shared for n in [e["name"], *e["aliases"]]}
    found = [f for f in find_entities(text, template.entity_types) if (name_key(f.name), f.type) not in shared_names]
    answer_entities = [{"name": f.name, "type": f.type, "evidence": f.evidence, "confidence": f.confidence}
                       for f in found]
    nodes = shared + [{"name": f.name, "type": f.type, "aliases": list(f.aliases)} for f in found]
    kinds = _literal_kinds([r for rel in template.relation_types for r in rel.roles], template.entity_types)
    kinds = sorted(set(kinds) | {q.type for q in template.qualifiers if q.type in LITERAL_KINDS}, key=LITERAL_KINDS.index)
    qualifier = {q.name: q for q in template.qualifiers}
    relations: list[dict[str, Any]] = []
    binary = {rel.name: _as_binary(rel) for rel in template.relation_types if {r.name for r in rel.roles} == {"head", "tail"}}
    # a clause-like find ("perform", "bill the client directly") is mentioned where its
    # pattern matches ("VET TECH will perform"), not at every use of its words
    clause_like = {f.name for f in found if not f.name[:1].isupper()}
    spans = {(t.name, s, e) for t in template.entity_types if t.patterns for s, e in pattern_matches(t.patterns, text)}
    keep = (lambda m: m.name not in clause_like or (m.type, m.start, m.end) in spans)
    for part in sentence_parts(text, nodes, template.entity_types, kinds, keep):
        for rel in template.relation_types:
            hits = trigger_spans(rel.triggers, text, part.sent) if rel.triggers else []
            if not hits:
                continue
            if rel.name in binary:  # head/tail relations pair up as in the relations pass
                for f in find_relations(part.sent.text, nodes, template.entity_types, [binary[rel.name]]):
                    relations.append({"relation": rel.name, "roles": {"head": f.head, "tail": f.tail},
                                      "evidence": part.sent.text, "confidence": f.confidence})
                continue
            declared_q = [qualifier[n] for n in rel.qualifiers if n in qualifier]
            roles = fill_roles(rel.roles, part, text, hits, template.qualifiers, template.entity_types)
            if not _complete(rel.roles, roles):
                continue
            item: dict[str, Any] = {"relation": rel.name, "roles": roles, "evidence": part.sent.text, "confidence": 0.6}
            # qualifiers read the literals of the sentence that no role took
            taken = [v for v in part.values if v.answer() in roles.values()
                     or any(isinstance(x, list) and v.answer() in x for x in roles.values())]
            rest = [v for v in part.values if v not in taken]
            quals = qualifier_values(declared_q, text, part.sent, rest)
            if quals:
                item["qualifiers"] = {n: (v.text() if isinstance(v, Value) else v) for n, v in quals.items()}
            if item not in relations:
                relations.append(item)
    return {"entities": answer_entities, "relations": relations}
