"""Why a gold edge was missed: one diagnosis per miss, so an author sees what the domain lacks.

In this order, the first that applies:

* ``entity not found`` — an end was not extracted in any rollout (a relation cannot come
  out without both ends: the domain lacks entity patterns or cues);
* ``wrong type`` — an end was extracted, but never with its gold type;
* ``relation across sentences`` — no sentence holds both ends (the offline rules and a
  sentence-level trigger cannot bind them);
* ``no cue in the sentence`` — both ends share a sentence but no lowercase word stands
  between them (an apposition such as "Chattanooga, Tenn."): no trigger can be learned;
* ``other`` — ends found, a cue is there, and still no edge: the trigger is missing.
"""
from __future__ import annotations

from typing import Any, Mapping, Sequence

from kgkit.text.sentences import split_sentences
from kgkit.backends.offline.skills import between_words
from kgkit.canon.names import entity_type_name
from kgkit.eval.gold import GoldDoc
from kgkit.text.name_keys import canonical_key
from kgkit.formats.model import Domain
from kgkit.learning.vetting import mention_spans

DIAGNOSES = ("entity not found", "wrong type", "relation across sentences", "no cue in the sentence", "other")


def diagnose(doc: GoldDoc, rel: Mapping[str, Any], samples: Sequence[Mapping[str, Any]], domain: Domain) -> str:
    """The diagnosis of gold relation ``rel`` of ``doc`` given the rollouts' predictions."""
    typed: dict[str, set[str]] = {}
    for s in samples:
        for e in s.get("entities", ()):
            typed.setdefault(canonical_key(e["name"]), set()).add(entity_type_name(domain, e.get("type") or "") or "?")
    for which in ("head", "tail"):
        if canonical_key(rel[which]) not in typed:
            return "entity not found"
    for which in ("head", "tail"):
        gold = doc.entity(rel[which])
        want = entity_type_name(domain, gold["type"]) if gold else None
        if want and want not in typed[canonical_key(rel[which])]:
            return "wrong type"
    sentence = shared_sentence(doc, rel)
    if sentence is None:
        return "relation across sentences"
    if not between_words(sentence, rel["head"], rel["tail"]):
        return "no cue in the sentence"
    return "other"


def shared_sentence(doc: GoldDoc, rel: Mapping[str, Any]) -> str | None:
    """The gold evidence, else the first sentence holding a mention of both ends."""
    if rel.get("evidence"):
        return rel["evidence"]
    spans = {}
    for which in ("head", "tail"):
        ent = doc.entity(rel[which])
        spans[which] = mention_spans(doc, ent) if ent else set()
    for sent in split_sentences(doc.text):
        if all(any(sent.start <= a and b <= sent.end for a, b in spans[w]) for w in ("head", "tail")):
            return sent.text
    return None
