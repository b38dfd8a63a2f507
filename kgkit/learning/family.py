"""Cue families: clean relation cues too rare to stand alone, pooled and gated as one skill.

Most clean cues a learn run proposes fire in one or two documents ("chief" for Work_For:
3 right relations and none wrong as applied on CoNLL04's tune half, but in two of its
documents). Alone such a cue cannot show a development gain under the cross-validated gate:
the learner scored on its second document sees it fire once and would not learn it. Pooled
with the other clean cues proposed for the same relation, it can.

A **family** is one relation skill — a cue list with one instruction, never a name list —
formed by a fixed rule from the run's relation candidates for one target that the library
does not hold yet. A candidate joins when, on the documents the rule is given:

* an edge of those documents proposed it (its provenance there is not empty);
* its pattern spells no training name, and its precision against gold mentions reaches
  ``min_precision`` (vetting without the support rule: support is what pooling is for);
* applied alone by extraction it is **clean**: at least one right relation added and at
  most ``family_max_wrong`` wrong.

A cue phrase that holds another member's phrase ("station chief", "chief") is left out:
wherever it fires, the shorter one does; so is a tight cue of a member phrase (the shape
"Name chief Name"). The members are ordered by right relations (most first), then wrong
(fewest), phrases before regexes, then text, and capped at ``family_size``; a family needs
two. It is then vetted (support counts for the family as a whole), applied and gated like
any candidate. Honest under the cross-validated gate only because the rule itself is
cross-validated: in fold k the family scored is the one :meth:`FamilyRule.form` makes from
the other folds' documents alone — the members that learner would have seen proposed and
found clean — not the family the whole run formed (``Gate.gain``'s ``former``).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from kgkit.backends.offline.skills import tight_cue
from kgkit.skills.library import Library, make_skill, merge_provenance, normalise_pattern
from kgkit.learning.vetting import Vetter, pattern_text

MIN_MEMBERS = 2  # one clean cue is not a family: alone it was already folded and gated


@dataclass
class FamilyRule:
    """The family-forming rule for one relation, over the run's candidates for it.

    ``pool``: (candidate, the edges that proposed it) for every relation candidate of the
    target the run did not accept; ``lib``: the library the family would join (members are
    measured against it).
    """

    target: str
    pool: list[tuple[dict[str, Any], list[Any]]]  # (candidate, kgkit.learning.loop.EdgeLabel list)
    loop: Any  # kgkit.learning.loop._Loop (which imports this module): applied(lib, trial, doc_ids), domain
    lib: Library
    settings: Any  # kgkit.learning.loop.LearnSettings: family_size, family_max_wrong

    def members(self, doc_ids: list[str], vetter: Vetter) -> list[tuple[dict[str, Any], list[Any], int, int]]:
        """The clean candidates on these documents: (candidate restricted to them, its edges there, right, wrong)."""
        docs = set(doc_ids)
        clean = []
        for cand, by in self.pool:
            here = [x for x in by if x.doc in docs]
            if not here:
                continue  # no edge of these documents proposed it: this learner never saw it
            pattern = normalise_pattern(cand["pattern"])
            if any(vetter.spells_name(p) for p in pattern["phrases"] + pattern["regex"]):
                continue
            if vetter.vet(cand, min_support=1).verdict != "skill":
                continue
            trial = self.lib.copy()
            alone = make_skill(cand["kind"], cand["target"], pattern, cand["instruction"], cand.get("example", ""),
                               [], "")
            trial.skills[alone["id"]] = alone
            applied = self.loop.applied(self.lib, trial, doc_ids)
            if applied["new_right"] < 1 or applied["new_wrong"] > self.settings.family_max_wrong:
                continue
            prov = [p for p in cand["provenance"] if p["doc"] in docs]
            clean.append(({**cand, "pattern": pattern, "provenance": prov}, here,
                          applied["new_right"], applied["new_wrong"]))
        phrases = [p for c, *_ in clean for p in c["pattern"]["phrases"]]
        tight = {tight_cue(f" {p} ") for p in phrases}
        clean = [m for m in clean if not any(_holds(p, q) for p in m[0]["pattern"]["phrases"] for q in phrases
                                             if q != p) and not set(m[0]["pattern"]["regex"]) & tight]
        clean.sort(key=lambda m: (-m[2], m[3], not m[0]["pattern"]["phrases"], _text(m[0])))
        return clean[:self.settings.family_size]

    def form(self, doc_ids: list[str], vetter: Vetter) -> tuple[dict[str, Any], list[Any]] | None:
        """The family this rule makes from these documents (None: fewer than two clean members)."""
        members = self.members(doc_ids, vetter)
        if len(members) < MIN_MEMBERS:
            return None
        pattern = normalise_pattern({"phrases": [p for c, *_ in members for p in c["pattern"]["phrases"]],
                                     "regex": [r for c, *_ in members for r in c["pattern"]["regex"]]})
        instruction, example = pattern_text("relation", self.target, pattern, self.loop.domain)
        provenance: list[dict[str, Any]] = []
        by: list[Any] = []
        for cand, here, *_ in members:
            provenance = merge_provenance(provenance, cand["provenance"])
            by += [x for x in here if x not in by]
        cand = {"kind": "relation", "target": self.target, "pattern": pattern, "instruction": instruction,
                "example": example, "provenance": provenance,
                "members": [_text(c) for c, *_ in members]}
        return cand, by


def family_pools(groups: dict[str, tuple[dict[str, Any], list[Any]]], lib: Library
                 ) -> dict[str, list[tuple[dict[str, Any], list[Any]]]]:
    """The run's relation candidates per target, less those the library holds (in proposal order)."""
    held = {(s["target"], p) for s in lib.skills.values() if s["kind"] == "relation"
            for p in s["pattern"]["phrases"] + s["pattern"]["regex"]}
    pools: dict[str, list[tuple[dict[str, Any], list[Any]]]] = {}
    for cand, by in groups.values():
        pattern = normalise_pattern(cand["pattern"])
        if cand["kind"] != "relation" or all((cand["target"], p) in held
                                             for p in pattern["phrases"] + pattern["regex"]):
            continue
        pools.setdefault(cand["target"], []).append((cand, by))
    return dict(sorted(pools.items()))


def _holds(longer: str, shorter: str) -> bool:
    """Whether phrase ``longer`` contains ``shorter`` as a word sequence."""
    return bool(re.search(r"(?<!\w)" + re.escape(shorter) + r"(?!\w)", longer))


def _text(cand: dict[str, Any]) -> str:
    pattern = cand["pattern"]
    return (pattern.get("phrases") or pattern.get("regex") or [""])[0]
