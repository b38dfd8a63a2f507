"""Which candidates may become skills: patterns that generalise, not names that memorise.

Before a candidate reaches the acceptance gate it is checked against the gold of the
*train* split (never dev or held-out):

* a **literal name** — an entity candidate whose only cues are phrases that name gold
  entities — is not a skill: it becomes a *gazetteer* entry of the domain (capped,
  listed and counted apart); a relation cue or an entity regex that spells a gold name
  is refused outright; a name enters the gazetteer only if it recurs in at least
  ``min_support`` train documents;
* a **pattern** must *fire* in at least ``min_support`` train documents, or *explain*
  at least ``min_support`` gold items (relation edges it would bind, distinct names it
  would find), and its **precision** on train — how often what it fires on is gold —
  must reach ``min_precision``. A relation cue fires where it stands between two gold
  mentions of a pair whose types the relation allows, in one sentence; it is right
  when gold has that relation between such a pair. An entity cue fires on each match
  (its ``name`` group, else the whole match); it is right when that names a gold
  entity of the target type.

And the words a candidate puts in a prompt: its instruction and example must not quote a
training name or a gold passage; when they do, they are rewritten from the pattern
alone (:func:`pattern_text`).
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Iterable

from kgkit.guards import safe_regex
from kgkit.backends.offline.phrases import trigger_spans
from kgkit.skills.cues import cue_ends
from kgkit.backends.offline.skills import nearest_pair, split_shaped
from kgkit.text.sentences import split_sentences
from kgkit.canon.names import entity_type_name
from kgkit.eval.gold import GoldDoc
from kgkit.text.name_keys import canonical_key
from kgkit.formats.model import Domain, Patterns

GAZETTEER = "gazetteer"


@dataclass(frozen=True)
class Vetting:
    verdict: str  # "skill" | "gazetteer" | "refused"
    reason: str = ""
    fires_in: int = 0  # train documents it fires in
    explains: int = 0  # gold edges (relation) or distinct gold names (entity) it gets right
    precision: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {"verdict": self.verdict, "reason": self.reason, "fires_in": self.fires_in,
                "explains": self.explains, "precision": round(self.precision, 4)}


@dataclass(frozen=True)
class _Mention:
    name: str
    type: str | None  # the domain's type name
    start: int
    end: int


class Vetter:
    """Checks candidates against the train split's gold (built once per learn run)."""

    def __init__(self, domain: Domain, train: Iterable[GoldDoc], *, min_support: int, min_precision: float):
        self.domain, self.min_support, self.min_precision = domain, min_support, min_precision
        self.docs = list(train)
        self.names: set[str] = set()  # canonical keys of every gold name and alias
        self.forms = {" ".join(e["name"].lower().split()) for d in self.docs for e in d.entities}
        self._mentions: dict[str, list[_Mention]] = {}
        self._typed: dict[str, dict[str, set[str]]] = {}  # doc -> name key -> domain types
        for doc in self.docs:
            typed: dict[str, set[str]] = {}
            mentions = []
            for e in doc.entities:
                t = entity_type_name(domain, e.get("type") or "")
                for form in [e["name"], *(e.get("aliases") or ())]:
                    self.names.add(canonical_key(form))
                    typed.setdefault(canonical_key(form), set()).add(t or "?")
                mentions += [_Mention(e["name"], t, a, b) for a, b in mention_spans(doc, e)]
            self._mentions[doc.doc_id] = sorted(set(mentions), key=lambda m: (m.start, m.name))
            self._typed[doc.doc_id] = typed

    # -- names ------------------------------------------------------------------------
    def is_name(self, phrase: str) -> bool:
        return canonical_key(phrase) in self.names

    def spells_name(self, text: str) -> bool:
        """Whether ``text`` contains a training name of two or more letters as a word sequence."""
        lowered = " ".join(text.lower().split())
        return any(len(n) > 2 and re.search(r"(?<!\w)" + re.escape(n) + r"(?!\w)", lowered) for n in self.forms)

    # -- the check --------------------------------------------------------------------
    def vet(self, cand: dict[str, Any], *, min_support: int | None = None) -> Vetting:
        """The verdict on ``cand``; ``min_support`` overrides the run's (a cue family's member: 1)."""
        support = self.min_support if min_support is None else min_support
        pattern = cand["pattern"]
        phrases, regexes = list(pattern.get("phrases", ())), list(pattern.get("regex", ()))
        if cand["kind"] == "entity" and phrases and not regexes and all(self.is_name(p) for p in phrases):
            fires, explains, right, total = self._entity_stats(cand["target"], Patterns((), tuple(phrases)))
            if fires < self.min_support:  # a name of one document is memory, not knowledge
                return Vetting("refused", f"a literal name in {fires} train document(s) (needs {self.min_support})",
                               fires, explains, right / total if total else 0.0)
            return Vetting(GAZETTEER, "a literal name", fires, explains, right / total if total else 0.0)
        if any(self.spells_name(p) for p in phrases) or any(self.spells_name(r) for r in regexes):
            return Vetting("refused", "its pattern spells a training name")
        if cand["kind"] == "relation":
            fires, explains, right, total = self._relation_stats(cand["target"], Patterns(tuple(regexes), tuple(phrases)))
        else:
            fires, explains, right, total = self._entity_stats(cand["target"], Patterns(tuple(regexes), tuple(phrases)))
        precision = right / total if total else 0.0
        if max(fires, explains) < support:
            return Vetting("refused", f"fires in {fires} train document(s) and explains {explains} "
                                      f"(needs {support})", fires, explains, precision)
        if precision < self.min_precision:
            return Vetting("refused", f"precision {precision:.2f} on train < {self.min_precision}", fires, explains,
                           precision)
        return Vetting("skill", "", fires, explains, precision)

    def _relation_stats(self, target: str, cues: Patterns) -> tuple[int, int, int, int]:
        rt = self.domain.relation_type(target)
        assert rt is not None, f"a relation skill's target {target!r} is a relation of the domain"
        plain, shaped = split_shaped(cues)
        fires_in: set[str] = set()
        explained: set[tuple[str, str, str]] = set()
        right = total = 0
        for doc in self.docs:
            gold = {(canonical_key(r["head"]), canonical_key(r["tail"])) for r in doc.relations
                    if getattr(self.domain.relation_type(r["relation"]), "name", None) == rt.name}
            mentions = self._mentions[doc.doc_id]
            for sent in split_sentences(doc.text):
                in_sent = [m for m in mentions if sent.start <= m.start and m.end <= sent.end]
                if len(in_sent) < 2:
                    continue
                spans: list[tuple[int, int, str | None]] = [(*sp, None) for sp in trigger_spans(plain, doc.text, sent)]
                spans += [(*sp, rx) for rx in shaped.regex for sp in trigger_spans(Patterns((rx,)), doc.text, sent)]
                for s, e, near in spans:
                    # a nearest-shaped cue reads only the nearest mentions around it, as extraction binds it
                    ends = nearest_pair(doc.text, in_sent, s, e) or () if near else in_sent
                    pairs = [(h, t) for h in ends for t in ends if h.name != t.name and h.type and t.type
                             and rt.allows(h.type, t.type) and min(h.end, t.end) <= s and e <= max(h.start, t.start)]
                    if near and cue_ends(near):  # a typed cue: only the ends it was learned with
                        pairs = [(h, t) for h, t in pairs if (h.type, t.type) == cue_ends(near)]
                    if not pairs:
                        continue
                    total += 1
                    fires_in.add(doc.doc_id)
                    hits = [(h, t) for h, t in pairs if (canonical_key(h.name), canonical_key(t.name)) in gold
                            or (rt.symmetric and (canonical_key(t.name), canonical_key(h.name)) in gold)]
                    if hits:
                        right += 1
                        explained.update((doc.doc_id, h.name, t.name) for h, t in hits)
        return len(fires_in), len(explained), right, total

    def _entity_stats(self, target: str, cues: Patterns) -> tuple[int, int, int, int]:
        fires_in, explained, right, total = set(), set(), 0, 0
        for doc in self.docs:
            typed = self._typed[doc.doc_id]
            for name in _entity_matches(cues, doc.text):
                total += 1
                fires_in.add(doc.doc_id)
                if target in typed.get(canonical_key(name), ()):
                    right += 1
                    explained.add(canonical_key(name))
        return len(fires_in), len(explained), right, total


def mention_spans(doc: GoldDoc, entity: dict[str, Any]) -> set[tuple[int, int]]:
    """Where a gold entity is mentioned: its gold spans, plus every occurrence of its name or
    an alias (gold often marks only the first mention)."""
    spans = {(int(a), int(b)) for a, b in entity.get("spans") or ()}
    for form in [entity["name"], *(entity.get("aliases") or ())]:
        if form.strip():
            rx = r"(?<!\w)" + r"\s+".join(map(re.escape, form.split())) + r"(?!\w)"
            spans.update(m.span() for m in re.finditer(rx, doc.text, re.I))
    return spans


def _entity_matches(cues: Patterns, text: str) -> list[str]:
    names = []
    for rx in cues.regex:  # a candidate's regex comes from a model: time-bounded, an invalid one finds nothing
        for m in safe_regex.finditer(rx, text):
            names.append(m.group("name") if "name" in m.re.groupindex else m.group(0))
    for p in cues.phrases:
        names += [m.group(0) for m in re.finditer(r"(?<!\w)" + r"\s+".join(map(re.escape, p.split())) + r"(?!\w)",
                                                  text, re.I)]
    return names


def pattern_text(kind: str, target: str, pattern: dict[str, Any], domain: Domain) -> tuple[str, str]:
    """An instruction and a short example written from the pattern alone (no names, no passage)."""
    phrases, regexes = pattern.get("phrases", []), pattern.get("regex", [])
    if kind == "relation":
        rt = domain.relation_type(target)
        head = rt.head[0] if rt and rt.head and rt.head[0] != "*" else "entity"
        tail = rt.tail[0] if rt and rt.tail and rt.tail[0] != "*" else "entity"
        cue = phrases[0] if phrases else f"text matching /{regexes[0]}/"
        also = f" (also: {', '.join(phrases[1:4])})" if len(phrases) > 1 else ""
        return (f"{head} … \"{cue}\" … {tail} in one sentence{also}: emit {target}({head}, {tail}).",
                f"[{head}] {cue} [{tail}]")
    cue = ", ".join(f'"{p}"' for p in phrases[:3]) or f"/{regexes[0]}/"
    return f"A name matched by {cue} is a {target}; extract it as one.", ""


PROMPT_TEXT_CHARS = 160  # a longer instruction or example is taken for a passage and rewritten from the pattern


def clean_text(cand: dict[str, Any], vetter: Vetter, evidence: str | None, domain: Domain) -> dict[str, Any]:
    """The candidate with an instruction and example fit for a prompt: rewritten from the
    pattern when either quotes a training name or the gold passage."""
    def tainted(text: str) -> bool:
        return bool(text) and (vetter.spells_name(text) or bool(evidence and evidence.strip() in text)
                               or len(text) > PROMPT_TEXT_CHARS)

    instruction, example = cand.get("instruction", ""), cand.get("example", "")
    if tainted(instruction) or tainted(example) or not instruction:
        made_i, made_e = pattern_text(cand["kind"], cand["target"], cand["pattern"], domain)
        instruction = made_i if tainted(instruction) or not instruction else instruction
        example = made_e if tainted(example) else example
    return {**cand, "instruction": instruction, "example": example}
