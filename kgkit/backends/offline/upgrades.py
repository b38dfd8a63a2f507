"""Offline answers for the upgrade passes: nary, temporal, event and diy.

Each works sentence by sentence, like the core passes:

* nary — a domain n-ary relation type whose trigger is in the sentence becomes a
  hyperedge; its roles are filled by the sentence's entities and literals by type;
* temporal — a skeleton edge whose two ends are in a sentence gets the qualifiers the
  domain declares for its relation, filled by literals of the qualifier's type (the one
  nearest one of the qualifier's triggers when it declares triggers);
* event — an event type's trigger makes an event; roles filled as for nary; time is the
  sentence's first date;
* diy — the template's entity patterns give its entities; its relations' triggers and
  roles give its (binary or n-ary) relations, with its qualifiers.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from kgkit.backends.offline.entities import compile_phrases, compile_regex, find_entities, generic_type_map
from kgkit.backends.offline.literals import KINDS as LITERAL_KINDS, Literal, find_literals
from kgkit.backends.offline.relations import EntityMention, find_mentions, find_relations
from kgkit.backends.offline.sentences import Sentence, split_sentences
from kgkit.model import EntityType, Patterns, Qualifier, RelationType, Role

NEAR = 60  # characters: how far a qualifier's trigger may stand from its value


def _trigger_hits(patterns: Patterns, text: str, sent: Sentence) -> list[tuple[int, int]]:
    hits = []
    for rx in patterns.regex:
        hits += [m.span() for m in compile_regex(rx).finditer(text, sent.start, sent.end)]
    if patterns.phrases:
        hits += [m.span() for m in compile_phrases(tuple(patterns.phrases)).finditer(text, sent.start, sent.end)]
    return sorted(hits)


def _literal_kinds(roles: Sequence[Role]) -> list[str]:
    return [k for k in LITERAL_KINDS if any(r.literal == k for r in roles)]


def fill_roles(roles: Sequence[Role], mentions: Sequence[EntityMention], literals: Sequence[Literal],
               types: Sequence[EntityType] = ()) -> dict[str, Any]:
    """Role -> filler(s) from the sentence, each mention or literal used once.

    A role takes every fitting filler unless a later role accepts the same kind of filler,
    in which case it takes the first one (payer before payee, as contracts write them).
    Entities of a literal-like type (a Date entity) also fill literal roles.
    """
    kinds = generic_type_map(types)
    literal_type_of = {kinds[k]: k for k in LITERAL_KINDS if k in kinds}
    used_m: set[int] = set()
    used_l: set[int] = set()
    out: dict[str, Any] = {}
    for i, role in enumerate(roles):
        later = roles[i + 1:]
        fillers: list[Any] = []
        if role.types:
            cands = [j for j, m in enumerate(mentions) if j not in used_m and ("*" in role.types or m.type in role.types)]
            shared = any(set(role.types) & set(r.types) for r in later)
            for j in cands[:1] if shared else cands:
                used_m.add(j)
                if mentions[j].name not in fillers:
                    fillers.append(mentions[j].name)
        if role.literal in LITERAL_KINDS and not fillers:
            cands = [j for j, lit in enumerate(literals) if j not in used_l and lit.kind == role.literal]
            shared = any(r.literal == role.literal for r in later)
            for j in cands[:1] if shared else cands:
                used_l.add(j)
                fillers.append({"literal": literals[j].surface, "type": role.literal})
            if not fillers:  # a V_doc entity of the literal's type ("2014-01-20" as a Date node)
                cands = [j for j, m in enumerate(mentions) if j not in used_m and literal_type_of.get(m.type) == role.literal]
                for j in cands[:1]:
                    used_m.add(j)
                    fillers.append(mentions[j].name)
        if fillers:
            out[role.name] = fillers[0] if len(fillers) == 1 else fillers
    return out


def _complete(roles: Sequence[Role], filled: Mapping[str, Any]) -> bool:
    return len(filled) >= 2 and all(r.name in filled for r in roles if r.required)


def _sentence_parts(text: str, entities: Sequence[Mapping[str, Any]], types: Sequence[EntityType],
                    literal_kinds: Sequence[str], entity_literals: bool = False):
    """(sentence, entity mentions, literals) per sentence; a literal that is also an entity
    mention counts as the entity unless ``entity_literals`` (qualifiers read values)."""
    mentions = find_mentions(text, entities, types) if entities else []
    literals = find_literals(text, literal_kinds) if literal_kinds else []
    for sent in split_sentences(text):
        in_m = [m for m in mentions if sent.start <= m.start and m.end <= sent.end]
        # a literal that is also an entity mention is the entity
        in_l = [lit for lit in literals if sent.start <= lit.start and lit.end <= sent.end
                and (entity_literals or not any(m.start <= lit.start and lit.end <= m.end for m in in_m))]
        yield sent, in_m, in_l


def nary_answer(text: str, domain, entities: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    kinds = _literal_kinds([r for t in domain.nary_relation_types for r in t.roles])
    hyperedges = []
    for sent, mentions, literals in _sentence_parts(text, entities, domain.entity_types, kinds):
        for rel in domain.nary_relation_types:
            if not _trigger_hits(rel.triggers, text, sent):
                continue
            roles = fill_roles(rel.roles, mentions, literals, domain.entity_types)
            if _complete(rel.roles, roles):
                hyperedges.append({"relation": rel.name, "roles": roles, "evidence": sent.text, "confidence": 0.6})
    return {"hyperedges": hyperedges}


def event_answer(text: str, domain, entities: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    kinds = sorted(set(_literal_kinds([r for t in domain.event_types for r in t.roles])) | {"date"},
                   key=LITERAL_KINDS.index)
    events = []
    for sent, mentions, literals in _sentence_parts(text, entities, domain.entity_types, kinds):
        dates = [lit for lit in literals if lit.kind == "date"]
        for ev in domain.event_types:
            hits = _trigger_hits(ev.triggers, text, sent)
            if not hits:
                continue
            args = fill_roles(ev.roles, mentions, literals, domain.entity_types)
            if not args:
                continue
            s, e = hits[0]
            events.append({"type": ev.name, "trigger": text[s:e], "arguments": args,
                           "time": dates[0].surface if dates else None, "evidence": sent.text, "confidence": 0.6})
    return {"events": events}


def _qualifier_values(qualifiers: Sequence[Qualifier], text: str, sent: Sentence,
                      literals: Sequence[Literal]) -> dict[str, str]:
    """Qualifier name -> value text; a literal goes to the qualifier whose trigger is nearest."""
    claims: list[tuple[int, int, str, str]] = []  # (distance, literal index, qualifier, text)
    for q in qualifiers:
        if q.type == "enum":
            for value in q.values:
                if compile_phrases((value,)).search(text, sent.start, sent.end):
                    claims.append((0, -1 - len(claims), q.name, value))
                    break
            continue
        cands = [(j, lit) for j, lit in enumerate(literals) if lit.kind == q.type]
        if not cands:
            continue
        hits = _trigger_hits(q.triggers, text, sent)
        for j, lit in cands:
            if hits:
                dist = min(min(abs(lit.start - e), abs(s - lit.end)) for s, e in hits)
                if dist > NEAR:
                    continue
            else:
                dist = NEAR + 1
            claims.append((dist, j, q.name, lit.surface))
    out: dict[str, str] = {}
    used: set[int] = set()
    for dist, j, name, value in sorted(claims):
        if name not in out and j not in used:
            out[name] = value
            used.add(j)
    return out


def temporal_answer(text: str, domain, entities: Sequence[Mapping[str, Any]],
                    skeleton: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    kinds = [k for k in LITERAL_KINDS if any(q.type == k for q in domain.qualifiers)]
    edges = []
    seen: set[tuple[str, str, str]] = set()
    for sent, mentions, literals in _sentence_parts(text, entities, domain.entity_types, kinds, entity_literals=True):
        names = {m.name for m in mentions}
        for edge in skeleton:
            key = (edge["head"], edge["relation"], edge["tail"])
            if key in seen or edge["head"] not in names or edge["tail"] not in names:
                continue
            declared = [q for q in domain.qualifiers if "*" in q.relations or edge["relation"] in q.relations]
            quals = _qualifier_values(declared, text, sent, literals)
            if quals:
                seen.add(key)
                edges.append({"head": edge["head"], "relation": edge["relation"], "tail": edge["tail"],
                              "qualifiers": quals, "evidence": sent.text, "confidence": 0.6})
    return {"edges": edges}


def _as_binary(rel) -> RelationType:
    roles = {r.name: r for r in rel.roles}
    return RelationType(name=rel.name, head=roles["head"].types or ("*",), tail=roles["tail"].types or ("*",),
                        triggers=rel.triggers)


def diy_answer(text: str, template) -> dict[str, Any]:
    found = find_entities(text, template.entity_types)
    entities = [{"name": f.name, "type": f.type, "evidence": f.evidence, "confidence": f.confidence} for f in found]
    nodes = [{"name": f.name, "type": f.type, "aliases": list(f.aliases)} for f in found]
    kinds = _literal_kinds([r for rel in template.relation_types for r in rel.roles])
    kinds = sorted(set(kinds) | {q.type for q in template.qualifiers if q.type in LITERAL_KINDS}, key=LITERAL_KINDS.index)
    qualifier = {q.name: q for q in template.qualifiers}
    relations = []
    binary = {rel.name: _as_binary(rel) for rel in template.relation_types if {r.name for r in rel.roles} == {"head", "tail"}}
    for sent, mentions, literals in _sentence_parts(text, nodes, template.entity_types, kinds):
        for rel in template.relation_types:
            if not rel.triggers or not _trigger_hits(rel.triggers, text, sent):
                continue
            if rel.name in binary:  # head/tail relations pair up as in the relations pass
                for found in find_relations(sent.text, nodes, template.entity_types, [binary[rel.name]]):
                    relations.append({"relation": rel.name, "roles": {"head": found.head, "tail": found.tail},
                                      "evidence": sent.text, "confidence": found.confidence})
                continue
            roles = fill_roles(rel.roles, mentions, literals, template.entity_types)
            if not _complete(rel.roles, roles):
                continue
            item: dict[str, Any] = {"relation": rel.name, "roles": roles, "evidence": sent.text, "confidence": 0.6}
            # qualifiers read every literal of the sentence that no role took (entity or literal)
            taken = {v["literal"] if isinstance(v, dict) else v for vals in roles.values()
                     for v in (vals if isinstance(vals, list) else [vals])}
            rest = [lit for lit in find_literals(sent.text, kinds) if lit.surface not in taken and lit.name not in taken]
            rest = [Literal(lit.kind, lit.surface, lit.start + sent.start, lit.end + sent.start, lit.value, lit.name)
                    for lit in rest]
            quals = _qualifier_values([qualifier[n] for n in rel.qualifiers if n in qualifier], text, sent, rest)
            if quals:
                item["qualifiers"] = quals
            relations.append(item)
    return {"entities": entities, "relations": relations}
