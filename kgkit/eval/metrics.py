"""Standard set-level precision, recall and F1 against gold, micro and macro, per type.

Each document's gold and predicted items become sets of tuples; a prediction is right
when its tuple is in the gold set. Names are first mapped onto the gold entities of the
same document (:class:`NameMatcher`), so that "I.B.M." can count for "IBM" when the gold
says so, and two predictions that map to the same gold item count once (sets, not lists).

Tuples, by category:

* ``entities``: (name, type)
* ``relations``: (head, relation, tail) — unordered ends when the domain says symmetric
* ``hyperedges``: (relation, {role: {names}})
* ``events``: (type, trigger, {role: {names}}) — trigger compared case- and space-insensitively
* ``temporal``: (head, relation, tail); ``temporal_timed``: that plus (start, end), the times
  compared by :func:`kgkit.text.timex.matches` (at the coarser precision of the two)

Literal entities (dates, durations, money, …) match gold by value as well as by name, one
way for entity names and relation ends alike (:class:`NameMatcher`); an entity of a date or
duration type matches a gold entity of its type by time value first.

Counts add up over documents (micro). Macro averages the per-type P, R and F1 over the
types present in gold or predictions. A ratio with a zero denominator is 0, except that
a category with neither gold nor predicted items has no score at all (``None``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Iterable, Mapping

from kgkit.text import timex
from kgkit.text.literals import recurring
from kgkit.text.type_kinds import GENERIC_KINDS, literal_types
from kgkit.canon.names import entity_type_name
from kgkit.text.name_keys import canonical_key
from kgkit.text.place_names import place_key
from kgkit.formats.model import Domain

CATEGORIES = ("entities", "relations", "hyperedges", "events", "temporal", "temporal_timed")
DEFAULT_FUZZY_THRESHOLD = 90.0  # rapidfuzz ratio (0-100) on normalised names; the third matching step


def name_key(name: str) -> str:
    """The form names are compared in: kgkit's canonical key (case, accents, punctuation, legal
    suffixes folded — :func:`kgkit.text.name_keys.canonical_key`), the same rule extraction merges by."""
    return canonical_key(str(name))


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, other: "Counts") -> None:
        self.tp += other.tp
        self.fp += other.fp
        self.fn += other.fn

    @property
    def precision(self) -> float:
        return self.tp / (self.tp + self.fp) if self.tp + self.fp else 0.0

    @property
    def recall(self) -> float:
        return self.tp / (self.tp + self.fn) if self.tp + self.fn else 0.0

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 2 * p * r / (p + r) if p + r else 0.0

    @property
    def empty(self) -> bool:
        return not (self.tp or self.fp or self.fn)

    def to_dict(self) -> dict[str, Any]:
        return {"tp": self.tp, "fp": self.fp, "fn": self.fn, "precision": round(self.precision, 4),
                "recall": round(self.recall, 4), "f1": round(self.f1, 4)}


@dataclass
class CategoryScore:
    """Counts per type for one category; micro and macro derived from them."""

    per_type: dict[str, Counts] = field(default_factory=dict)

    def counts(self, type_name: str) -> Counts:
        return self.per_type.setdefault(type_name, Counts())

    def add(self, other: "CategoryScore") -> None:
        for name, counts in other.per_type.items():
            self.counts(name).add(counts)

    @property
    def micro(self) -> Counts:
        total = Counts()
        for counts in self.per_type.values():
            total.add(counts)
        return total

    @property
    def macro(self) -> dict[str, float] | None:
        types = list(self.per_type.values())
        if not types:
            return None
        return {
            "precision": round(sum(c.precision for c in types) / len(types), 4),
            "recall": round(sum(c.recall for c in types) / len(types), 4),
            "f1": round(sum(c.f1 for c in types) / len(types), 4),
        }

    def to_dict(self) -> dict[str, Any] | None:
        micro = self.micro
        if micro.empty:
            return None
        return {"micro": micro.to_dict(), "macro": self.macro,
                "per_type": {k: self.per_type[k].to_dict() for k in sorted(self.per_type)}}


@dataclass
class Score:
    """Category -> CategoryScore, for one document or summed over many."""

    categories: dict[str, CategoryScore] = field(default_factory=dict)
    # how the document's own node met gold ("name", "document", "none") -> documents
    document_match: dict[str, int] = field(default_factory=dict)

    def add(self, other: "Score") -> None:
        for name, cat in other.categories.items():
            self.categories.setdefault(name, CategoryScore()).add(cat)
        for how, n in other.document_match.items():
            self.document_match[how] = self.document_match.get(how, 0) + n

    def f1(self, category: str) -> float:
        cat = self.categories.get(category)
        return cat.micro.f1 if cat else 0.0

    def to_dict(self) -> dict[str, Any]:
        return {name: self.categories[name].to_dict() for name in CATEGORIES if name in self.categories}


TIME_KINDS = ("date", "duration")


def value_kinds(type_names: Iterable[str], domain: Domain | None) -> dict[str, str]:
    """Entity type -> literal kind ("date", "duration", "money", …), for the types among
    ``type_names`` that hold literal values: the offline backend's generic words for dates and
    durations ("Date", "Time", "Period", …), and the domain's literal types."""
    out = {}
    for name in type_names:
        key = re.sub(r"[^a-z]", "", str(name).lower())
        out.update({name: kind for kind in TIME_KINDS if key in GENERIC_KINDS[kind]})
    if domain is not None:
        out.update(literal_types(domain.entity_types))
    return out


def literal_value(kind: str, entity: Mapping[str, Any]) -> Any:
    """The value an entity of a ``kind`` literal type stands for: its ``value`` (literal nodes
    keep the name as written and add the normalised value) when that reads as one, else its
    name read as a ``kind`` ("March 23, 2013", "sixty (60) days", "$5 million"). Dates and
    durations become :mod:`kgkit.text.timex` values; other kinds their normal form."""
    for text in (entity.get("value"), entity.get("name")):
        if isinstance(text, str):
            value = timex.normalise(kind, text)
            if kind in TIME_KINDS:
                value = timex.parse_or_none(value)
            if value is not None:
                return value
    return None


def _value_text(value: Any) -> str:
    return value.text if isinstance(value, (timex.Point, timex.Duration, timex.Interval, timex.Reference)) else repr(value)


class NameMatcher:
    """Map predicted names onto one document's gold entity names.

    Steps, first hit wins: **exact** (same :func:`name_key` as a gold name), **alias** (the
    predicted name, or one of its aliases, has the key of a gold name or gold alias), **place**
    (a gold entity of the predicted type has the same :func:`~kgkit.text.place_names.place_key`:
    "the State of New York" is gold's "New York", "the PRC" gold's "China"), **value**
    (with ``literal_kinds``, gold type -> literal kind from :func:`value_kinds`: the predicted
    name reads as a literal of the same value as a gold entity of such a type — "26th day of
    May, 2017" is gold's "2017-05-26"), **fuzzy** (rapidfuzz ``ratio`` of keys at or above
    ``threshold`` against gold names and aliases; best score wins). Within the name steps a
    candidate of the predicted type is preferred, then gold order. A name that matches nothing
    is kept as its own key, so it can only be a false positive.

    Values are read by :func:`literal_value` (dates and durations as :mod:`kgkit.text.timex`
    values). When the predicted type is a date or duration type, a value step comes first,
    over gold of that type, at the coarser precision of the two (:func:`kgkit.text.timex.same`), so
    a date counts by the time it names before its wording. The value step after the alias step
    (any name, relation ends among them) asks for the same value in its canonical text ("twelve (12) months" is P12M there, not gold's P1Y). Among gold of the
    same value, the same value text wins first (2013-03-20 is that day before it is a day of
    2013-W12), then the same name, then gold order.
    """

    def __init__(self, gold_entities: Iterable[Mapping[str, Any]], threshold: float = DEFAULT_FUZZY_THRESHOLD,
                 literal_kinds: Mapping[str, str] | None = None):
        self.threshold = threshold
        self.pinned: dict[str, str] = {}  # name key -> gold name, before any other rule (the document's own node)
        self.entities = list(gold_entities)
        self.literal_kinds = dict(literal_kinds or {})
        self.values = [(ent, kind, value) for ent in self.entities
                       for kind in [self.literal_kinds.get(ent["type"])] if kind
                       for value in [literal_value(kind, ent)] if value is not None]
        self.kinds = sorted({kind for _, kind, _ in self.values})
        self.by_name: dict[str, list[Mapping[str, Any]]] = {}
        self.by_any: dict[str, list[Mapping[str, Any]]] = {}
        self.by_place: dict[tuple[str, str], list[Mapping[str, Any]]] = {}  # (type, place key) -> gold
        for ent in self.entities:
            for label in [ent["name"], *ent.get("aliases", ())]:
                places = self.by_place.setdefault((ent["type"], place_key(label)), [])
                if ent not in places:
                    places.append(ent)
            self.by_name.setdefault(name_key(ent["name"]), []).append(ent)
            for label in [ent["name"], *ent.get("aliases", ())]:
                bucket = self.by_any.setdefault(name_key(label), [])
                if ent not in bucket:
                    bucket.append(ent)

    def resolve(self, name: str, aliases: Iterable[str] = (), type_name: str | None = None,
                value: Any = None) -> tuple[str, str]:
        """Return (gold name or ``?key``, how: "exact" | "alias" | "place" | "value" | "fuzzy" | "none").

        ``value`` is the normalised value a literal node carries beside its name as written."""
        key = name_key(name)
        if key in self.pinned and type_name in (None, *(e["type"] for e in self.entities
                                                         if e["name"] == self.pinned[key])):
            return self.pinned[key], "document"
        kind = self.literal_kinds.get(type_name) if type_name is not None else None
        if kind is not None and kind in TIME_KINDS:
            hit = self._by_value(kind, {"name": name, "value": value}, type_name)
            if hit is not None:
                return hit, "value"

        def pick(candidates: list[Mapping[str, Any]]) -> str:
            same = [c for c in candidates if c["type"] == type_name]
            return (same or candidates)[0]["name"]

        if key in self.by_name:
            return pick(self.by_name[key]), "exact"
        for label in [name, *aliases]:
            hits = self.by_any.get(name_key(label))
            if hits:
                return pick(hits), "alias"
        if type_name is not None:
            for label in [name, *aliases]:
                places = self.by_place.get((type_name, place_key(label)))
                if places:
                    return places[0]["name"], "place"
        for kind in self.kinds:
            hit = self._by_value(kind, {"name": name})
            if hit is not None:
                return hit, "value"
        best: tuple[float, int, Mapping[str, Any]] | None = None
        if key:
            from rapidfuzz import fuzz

            for order, ent in enumerate(self.entities):
                for label in [ent["name"], *ent.get("aliases", ())]:
                    score = fuzz.ratio(key, name_key(label))
                    if score < self.threshold:
                        continue
                    rank = (score + (0.5 if ent["type"] == type_name else 0.0), -order, ent)
                    if best is None or rank[:2] > best[:2]:
                        best = rank
        if best is not None:
            return best[2]["name"], "fuzzy"
        return "?" + key, "none"

    def _by_value(self, kind: str, entity: Mapping[str, Any], type_name: str | None = None) -> str | None:
        """The name of the gold ``kind`` literal with the value of ``entity``, by the tie rule of
        the class doc; None when there is none. With ``type_name``, gold of that type at the
        coarser precision (:func:`kgkit.text.timex.same`); without, the same value text. A
        recurring duration ("successive 6 months", :func:`recurring`) matches only a recurring
        one; one written plainly matches a plain one first."""
        mine = literal_value(kind, entity)
        if mine is None:
            return None
        again = recurring(entity["name"])  # "successive 6 months" is not gold's "6 months"
        found = sorted(((ent, v) for ent, k, v in self.values if k == kind and (recurring(ent["name"]) or not again)
                        and (ent["type"] == type_name and timex.same(v, mine) if type_name
                             else _value_text(v) == _value_text(mine))),
                       key=lambda hit: (_value_text(hit[1]) != _value_text(mine),
                                        recurring(hit[0]["name"]) != again,
                                        name_key(hit[0]["name"]) != name_key(entity["name"])))
        return found[0][0]["name"] if found else None


def _filler_set(value: Any, resolve) -> frozenset[str]:
    values = value if isinstance(value, list) else [value]
    return frozenset(resolve(str(v)) for v in values if v is not None)


def _roles_key(roles: Mapping[str, Any], resolve) -> frozenset:
    return frozenset((role, _filler_set(value, resolve)) for role, value in roles.items())


def _trigger_key(text: str | None) -> str:
    return " ".join(str(text or "").casefold().split())


def _time_key(value: Any) -> str | None:
    """A time in its canonical text (so duplicates collapse), other text as written."""
    if value is None:
        return None
    parsed = timex.parse_or_none(value)
    return parsed.text if parsed is not None else " ".join(str(value).split())


def _score_timed(gold: set[tuple], predicted: set[tuple]) -> CategoryScore:
    """(edge, start, end) items, one-to-one: the same edge with start and end that match as
    time values; equal texts are paired first, then matches at a coarser precision."""
    score = CategoryScore()
    free = sorted(gold, key=repr)
    paired: list[tuple[tuple, tuple]] = []
    for same_text in (True, False):
        for item in sorted(predicted - {p for p, _ in paired}, key=repr):
            hit = next((g for g in free if g[0] == item[0] and (
                g[1:] == item[1:] if same_text else timex.matches(g[1], item[1]) and timex.matches(g[2], item[2]))), None)
            if hit is not None:
                free.remove(hit)
                paired.append((item, hit))
    matched = {p for p, _ in paired}
    for item in predicted:
        c = score.counts(item[0][1])
        if item in matched:
            c.tp += 1
        else:
            c.fp += 1
    for item in free:
        score.counts(item[0][1]).fn += 1
    return score


def _score_sets(gold: set[tuple], predicted: set[tuple], type_of) -> CategoryScore:
    score = CategoryScore()
    for item in predicted:
        c = score.counts(type_of(item))
        if item in gold:
            c.tp += 1
        else:
            c.fp += 1
    for item in gold - predicted:
        score.counts(type_of(item)).fn += 1
    return score


def _gold_mapping(gold: Any) -> Mapping[str, Any]:
    return gold if isinstance(gold, Mapping) else gold.__dict__


def type_label(domain: Domain | None, label: str | None) -> str:
    """An entity type label in the domain's terms: a declared alias becomes the type's name
    (gold "Peop" is general's "Person"); a label the domain lacks stays as it is."""
    return entity_type_name(domain, label or "") or (label or "?")


def _typed_entities(entities: Iterable[Mapping[str, Any]], domain: Domain | None) -> list[Mapping[str, Any]]:
    if domain is None:
        return list(entities)
    return [{**e, "type": type_label(domain, e.get("type"))} for e in entities]


def _relation_rules(domain: Domain | None):
    """(label normaliser, triple normaliser): relation aliases to names; symmetric ends ordered."""

    def rel_label(label: str) -> str:
        rt = domain.relation_type(label) if domain else None
        return rt.name if rt else label

    def ends(head: str, label: str, tail: str) -> tuple[str, str, str]:
        rt = domain.relation_type(label) if domain else None
        if rt is not None and rt.symmetric and tail < head:
            head, tail = tail, head
        return head, label, tail

    return rel_label, ends


def relation_sets(gold: Any, predicted_relations: Iterable[Mapping[str, Any]], *, domain: Domain | None = None,
                  fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
                  matcher: NameMatcher | None = None) -> tuple[set[tuple], set[tuple]]:
    """(gold triples, predicted triples) in comparable form: names mapped onto gold, labels normalised.

    The skill loop uses it to ask, per rollout, which gold edges came out.
    """
    g = _gold_mapping(gold)
    gold_entities = _typed_entities(g["entities"], domain)
    matcher = matcher or NameMatcher(gold_entities, fuzzy_threshold, value_kinds({e["type"] for e in gold_entities}, domain))
    rel_label, ends = _relation_rules(domain)
    gold_rel = {ends(r["head"], rel_label(r["relation"]), r["tail"]) for r in g["relations"]}
    pred_rel = {ends(matcher.resolve(r["head"])[0], rel_label(r["relation"]), matcher.resolve(r["tail"])[0])
                for r in predicted_relations}
    return gold_rel, pred_rel


def document_match(gold_entities: list[Mapping[str, Any]], predicted: Iterable[Mapping[str, Any]],
                   domain: Domain | None, matcher: "NameMatcher") -> tuple[str, str, str] | None:
    """(predicted name, gold name, how) for the document's own node (``"document": true``
    in nodes.json, of the domain's ``document_type``): matched by name when its name meets
    the gold entity of that type, else by document (gold names one contract per document,
    by its title, so the document's own node is that entity whatever it is called);
    "none" when gold has no entity of that type. None without a document node."""
    dtype = domain.document_type if domain is not None else None
    own = next((e for e in predicted if e.get("document") and dtype and type_label(domain, e.get("type")) == dtype),
               None)
    if own is None:
        return None
    gold = [e for e in gold_entities if e["type"] == dtype]
    if not gold:
        return own["name"], "?" + name_key(own["name"]), "none"
    hit, how = matcher.resolve(own["name"], own.get("aliases", ()), dtype)
    if how != "none" and any(e["name"] == hit for e in gold):
        return own["name"], hit, "name"
    return own["name"], gold[0]["name"], "document"


def score_document(
    gold: Any,
    predicted: Mapping[str, Any],
    *,
    domain: Domain | None = None,
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD,
) -> Score:
    """Score one document's predictions against its gold.

    ``gold`` is a :class:`kgkit.eval.gold.GoldDoc` or a gold.json mapping. ``predicted`` uses
    the same shapes (``entities`` with name/type/aliases, ``relations``, ``hyperedges``,
    ``events``, ``temporal``); a category is scored only when its key is present, so a run
    without a temporal view is not charged for missing temporal edges. ``domain`` maps gold
    and predicted labels onto its names through its declared aliases — entity types
    (:func:`type_label`) and relations (``Domain.relation_type``) — and makes symmetric
    relations order-free.
    """
    g = _gold_mapping(gold)
    gold_entities = _typed_entities(g["entities"], domain)
    matcher = NameMatcher(gold_entities, fuzzy_threshold, value_kinds({e["type"] for e in gold_entities}, domain))
    score = Score()
    own = document_match(gold_entities, predicted.get("entities", ()), domain, matcher)
    if own is not None:
        score.document_match[own[2]] = 1
        if own[2] == "document":
            matcher.pinned[name_key(own[0])] = own[1]

    def resolve(name: str) -> str:
        return matcher.resolve(name)[0]

    rel_label, ends = _relation_rules(domain)
    gold_ents = {(e["name"], e["type"]) for e in gold_entities}
    pred_ents = set()
    for e in predicted.get("entities", ()):
        type_name = type_label(domain, e.get("type"))
        pred_ents.add((matcher.resolve(e["name"], e.get("aliases", ()), type_name, e.get("value"))[0], type_name))
    score.categories["entities"] = _score_sets(gold_ents, pred_ents, lambda t: t[1])

    if "relations" in predicted:
        gold_rel, pred_rel = relation_sets(g, predicted["relations"], domain=domain, matcher=matcher)
        score.categories["relations"] = _score_sets(gold_rel, pred_rel, lambda t: t[1])
    if "hyperedges" in predicted:
        gold_h = {(h["relation"], _roles_key(h["roles"], str)) for h in g["hyperedges"]}
        pred_h = {(h["relation"], _roles_key(h.get("roles", {}), resolve)) for h in predicted["hyperedges"]}
        score.categories["hyperedges"] = _score_sets(gold_h, pred_h, lambda t: t[0])
    if "events" in predicted:
        gold_e = {(e["type"], _trigger_key(e["trigger"]), _roles_key(e["arguments"], str)) for e in g["events"]}
        pred_e = {(e["type"], _trigger_key(e.get("trigger")), _roles_key(e.get("arguments", {}), resolve))
                  for e in predicted["events"]}
        score.categories["events"] = _score_sets(gold_e, pred_e, lambda t: t[0])
    if "temporal" in predicted:
        gold_t = {(ends(t["head"], rel_label(t["relation"]), t["tail"]), _time_key(t["start"]), _time_key(t["end"]))
                  for t in g["temporal"]}
        pred_t = {(ends(resolve(t["head"]), rel_label(t["relation"]), resolve(t["tail"])),
                   _time_key(t.get("start")), _time_key(t.get("end"))) for t in predicted["temporal"]}
        score.categories["temporal"] = _score_sets({t[0] for t in gold_t}, {t[0] for t in pred_t}, lambda t: t[1])
        score.categories["temporal_timed"] = _score_timed(gold_t, pred_t)
    return score
