"""Checking a draft against its evidence, and nothing else.

Every claim (head, relation, tail) must cite evidence ids that exist, and one cited item
must state it: a graph statement of that relation whose ends hold the claim's head and
tail (by canonical name key, aliases included), or a text passage whose quote holds both
names and a word of the relation. Every answer element must cite evidence that names it
(as an end, or as the document stating it). What fails is reported by reason, which the
reasoner gets back once.
"""
from __future__ import annotations

import re

from kgkit.ask.record import Check, Claim, EvidenceItem
from kgkit.text.name_keys import canonical_key


class Keys:
    """Name keys of the evidence's nodes: a name and its aliases share a node's keys."""

    def __init__(self, names: dict[str, tuple[str, list[str]]], legal_suffixes: bool = True):
        self.legal = legal_suffixes
        self.by_name: dict[str, set[str]] = {}
        for name, aliases in names.values():
            keys = {self.key(x) for x in [name, *aliases]}
            self.by_name.setdefault(name, set()).update(keys)

    def key(self, text: str) -> str:
        return canonical_key(text, legal_suffixes=self.legal)

    def of(self, name: str) -> set[str]:
        return self.by_name.get(name, {self.key(name)})


def _loose(text: str) -> str:
    return re.sub(r"[\W_]+", " ", text or "").strip().casefold()


def states(item: EvidenceItem, claim: Claim, keys: Keys) -> bool:
    if item.source == "text":
        quote = " ".join(_loose(s.quote or "") for s in item.sources)
        words = [w.casefold()[:4] for w in re.split(r"[_\W]+", claim.relation) if len(w) > 2]
        return (_loose(claim.head) in quote and _loose(claim.tail) in quote
                and any(w in quote for w in words))
    if item.relation.casefold() != claim.relation.casefold():
        return False
    head, tail = keys.key(claim.head), keys.key(claim.tail)
    if set(item.ends) == {"head", "tail"}:
        return (any(head in keys.of(n) for n in item.ends["head"])
                and any(tail in keys.of(n) for n in item.ends["tail"]))
    fillers = [n for ns in item.ends.values() for n in ns]
    return any(head in keys.of(n) for n in fillers) and any(tail in keys.of(n) for n in fillers)


def names(item: EvidenceItem, element: str, keys: Keys) -> bool:
    key = keys.key(element)
    return (any(key in keys.of(n) for ns in item.ends.values() for n in ns)
            or element in item.documents)


def verify(claims: list[Claim], answer: list[tuple[str, list[str]]], evidence: list[EvidenceItem],
           keys: Keys) -> list[Check]:
    """A check per claim, then one per answer element (``claim`` None)."""
    by_id = {e.id: e for e in evidence}
    checks = []
    for i, claim in enumerate(claims):
        checks.append(_check_claim(i, claim, by_id, keys))
    for element, cited in answer:
        unknown = [c for c in cited if c not in by_id]
        if not cited:
            checks.append(Check(None, False, f"answer {element!r} cites no evidence"))
        elif unknown:
            checks.append(Check(None, False, f"answer {element!r} cites evidence that was not given: {', '.join(unknown)}"))
        elif not any(names(by_id[c], element, keys) for c in cited):
            checks.append(Check(None, False, f"answer {element!r}: no cited evidence names it"))
        else:
            checks.append(Check(None, True, f"answer {element!r}: named by {', '.join(cited)}"))
    return checks


def _check_claim(i: int, claim: Claim, by_id: dict[str, EvidenceItem], keys: Keys) -> Check:
    said = f"{claim.head} -{claim.relation}-> {claim.tail}"
    if not claim.evidence:
        return Check(i, False, f"{said} cites no evidence")
    unknown = [c for c in claim.evidence if c not in by_id]
    if unknown:
        return Check(i, False, f"{said} cites evidence that was not given: {', '.join(unknown)}")
    for c in claim.evidence:
        if states(by_id[c], claim, keys):
            return Check(i, True, f"{said} stated by {c}")
    return Check(i, False, f"{said}: no cited evidence states it (cited: {', '.join(claim.evidence)})")


def verify_aggregate(agg, seeds: dict[str, set[str]], evidence: list[EvidenceItem], keys: Keys) -> list[Check]:
    """Count (or date) again from the cited evidence alone: every counted element cites
    evidence that was given and names it (and, for a named thing's group, names that thing
    too); every date is stated by its cited statement; the result is what the groups and
    dates give (:func:`kgkit.ask.aggregate.compute` on what survived the checks)."""
    from dataclasses import replace

    from kgkit.ask import aggregate

    by_id = {e.id: e for e in evidence}
    checks: list[Check] = []
    related = set(agg.relations) if agg.without is None else set()  # an absence's elements cite any statement
    groups: dict[str, dict[str, list[str]]] = {}
    for group, elements in agg.groups.items():
        owners = seeds.get(group, set())
        kept = {}
        for element, cited in elements.items():
            items = [by_id[c] for c in cited if c in by_id]
            if not cited or len(items) != len(cited):
                checks.append(Check(None, False, f"{group}: {element!r} cites evidence that was not given"))
            elif not any(names(i, element, keys) and (not owners or any(names(i, o, keys) for o in owners))
                         and (not related or i.relation in related) for i in items):
                checks.append(Check(None, False, f"{group}: no cited evidence names {element!r}"
                                    + (f" with {group!r}" if owners else "")
                                    + (f" in a {'/'.join(sorted(related))} statement" if related else "")))
            else:
                kept[element] = cited
        groups[group] = kept
    if agg.without is not None:
        checks += _absent(agg, groups, by_id, keys)
    dates = {}
    for element, d in agg.dates.items():
        item = by_id.get(d["evidence"])
        if item is None or not names(item, element, keys) or not any(
                aggregate.date_of(n) == d["date"] for ns in item.ends.values() for n in ns):
            checks.append(Check(None, False, f"{element!r} dated {d['date']}: {d['evidence']} does not state it"))
        else:
            dates[element] = d
    again = aggregate.compute(replace(agg, groups=groups, dates=dates, value=None, result=[]))
    if again.result != agg.result or again.value != agg.value:
        checks.append(Check(None, False, f"{agg.op}: the cited evidence gives {again.result} ({again.value}), "
                                         f"not {agg.result} ({agg.value})"))
    else:
        checks.append(Check(None, True, f"{agg.op}: {', '.join(agg.result)} ({agg.value}), counted again from "
                                        f"{sum(len(g) for g in groups.values())} cited elements"))
    return checks


def verify_combined(answer: list[tuple[str, list[str]]], values: list[list[str]], combine: str,
                    evidence: list[EvidenceItem], keys: Keys) -> list[Check]:
    """An answer joined over two or more names ("the contracts X and Y both sign"): each
    element must cite, for every name ("all") or for one of them ("any"), an item that
    names the element together with that name."""
    by_id = {e.id: e for e in evidence}
    checks = []
    for element, cited in answer:
        items = [by_id[c] for c in cited if c in by_id]
        held = [vs for vs in values if any(names(i, element, keys) and all(names(i, v, keys) for v in vs)
                                             for i in items)]
        want = len(values) if combine == "all" else 1
        said = " and ".join("/".join(vs) for vs in values) if combine == "all" else " or ".join(
            "/".join(vs) for vs in values)
        if len(held) >= want:
            checks.append(Check(None, True, f"answer {element!r}: cited with {said}"))
        else:
            missing = [vs for vs in values if vs not in held]
            checks.append(Check(None, False, f"answer {element!r}: no cited evidence names it with "
                                             + " or ".join("/".join(vs) for vs in missing)))
    return checks


def _absent(agg, groups: dict[str, dict[str, list[str]]], by_id: dict[str, EvidenceItem], keys: Keys) -> list[Check]:
    """An absence, checked: each element said to have the relations cites a statement of them
    naming it, and no statement of them that was given names an element said to lack them
    (such an element is dropped from ``groups``, so the recount differs and fails)."""
    from kgkit.ask.aggregate import ANSWER

    checks = []
    related = set(agg.relations)
    for element, cited in (agg.without or {}).items():
        if not any(c in by_id and by_id[c].relation in related and names(by_id[c], element, keys) for c in cited):
            checks.append(Check(None, False, f"{element!r} is said to have {'/'.join(agg.relations)}: "
                                             "no cited statement of it names it"))
    stated = [e for e in by_id.values() if e.source == "graph" and e.relation in related]
    listed = groups.get(ANSWER, {})
    for element in list(listed):
        against = next((e for e in stated if names(e, element, keys)), None)
        if against is not None or element in (agg.without or {}):
            listed.pop(element)
            checks.append(Check(None, False, f"{element!r} is said to have no {'/'.join(agg.relations)} statement, "
                                             f"but {against.id if against else 'the answer'} gives one"))
    return checks
