"""Scoring a read paper against the shared scholarly gold format (one ``*.gold.json`` per
PDF): metadata, section headings, anchors, reference entries and their fields, and in-text
marker -> entry links. Strings compare after :func:`kgkit.scholarly.text.fold`."""
from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field

from rapidfuzz import fuzz

from kgkit.scholarly.paper import Paper
from kgkit.scholarly.text import fold

RAW_MATCH = 90  # rapidfuzz ratio of folded entries at which a printed entry is found
FIELDS = ("key", "title", "year", "first_author_surname")


@dataclass
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def add(self, gold: list, pred: list) -> None:
        g, p = Counter(gold), Counter(pred)
        hit = sum((g & p).values())
        self.tp += hit
        self.fp += sum(p.values()) - hit
        self.fn += sum(g.values()) - hit

    def f1(self) -> float | None:
        if not (self.tp + self.fp + self.fn):
            return None
        return 2 * self.tp / (2 * self.tp + self.fp + self.fn)


@dataclass
class PaperScores:
    title: list[bool] = field(default_factory=list)
    authors: list[bool] = field(default_factory=list)
    sections: Counts = field(default_factory=Counts)
    anchors: Counts = field(default_factory=Counts)
    references: Counts = field(default_factory=Counts)
    fields_right: int = 0
    fields_total: int = 0
    links: Counts = field(default_factory=Counts)

    def figures(self) -> dict:
        return {
            "title_exact": sum(self.title) / len(self.title) if self.title else None,
            "authors_exact": sum(self.authors) / len(self.authors) if self.authors else None,
            "sections_f1": self.sections.f1(), "anchors_f1": self.anchors.f1(),
            "references_f1": self.references.f1(),
            "reference_fields_accuracy": self.fields_right / self.fields_total if self.fields_total else None,
            "marker_linking_f1": self.links.f1(),
        }


def score_paper(paper: Paper, gold: dict, into: PaperScores) -> None:
    meta = paper.metadata
    into.title.append(meta.title is not None and fold(str(meta.title.value)) == fold(gold["title"]))
    into.authors.append([fold(str(a.value)) for a in meta.authors] == [fold(a) for a in gold["authors"]])
    into.sections.add([_heading(s.get("number"), s["text"]) for s in gold["sections"]],
                      [_heading(s.number, s.text) for s in paper.sections])
    into.anchors.add([(a["kind"], fold(a["label"]), a["page"]) for a in gold["anchors"]],
                     [(a.kind, fold(a.label), a.page) for a in paper.anchors if a.label])
    matched = match_references(paper, gold["references"])
    into.references.add(list(range(len(gold["references"]))),
                        [matched.get(i, f"p{i}") for i in range(len(paper.references))])
    key_map = {}
    for pi, gi in matched.items():
        pred, want = paper.references[pi].as_dict(), gold["references"][gi]
        key_map[fold(paper.references[pi].key)] = fold(want["key"])
        for name in FIELDS:
            into.fields_total += 1
            into.fields_right += _same(pred.get(name), want.get(name))
    scope = {section_key(s) for s in gold.get("citations_scope", [])}
    if scope:
        into.links.add([(fold(c["marker"]), fold(r)) for c in gold["citations"] for r in c["refs"]],
                       [(fold(c.marker), key_map.get(fold(r), fold(r))) for c in paper.citations
                        if scope & {section_key(s) for s in c.section_path} for r in c.refs])


def _heading(number: str | None, text: str) -> tuple[str, str]:
    return fold((number or "").rstrip(".")), fold(text)


def section_key(name: str) -> str:
    """A heading name with a printed number's closing dot dropped: "1. Introduction" and
    "1 Introduction" name one section."""
    return fold(re.sub(r"^(\d+(?:\.\d+)*)\.(?=\s)", r"\1", name.strip()))


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is None and b is None
    if isinstance(b, int) or isinstance(a, int):
        return str(a)[:4] == str(b)[:4]
    return fold(str(a)) == fold(str(b))


def match_references(paper: Paper, gold_refs: list[dict]) -> dict[int, int]:
    """Predicted entry index -> gold entry index, one to one, best raw similarity first."""
    pairs = []
    gold_raw = [fold(g["raw"]) for g in gold_refs]
    for pi, ref in enumerate(paper.references):
        raw = fold(ref.raw)
        for gi, g in enumerate(gold_raw):
            score = fuzz.ratio(raw, g)
            if score >= RAW_MATCH:
                pairs.append((score, pi, gi))
    out: dict[int, int] = {}
    used: set[int] = set()
    for _, pi, gi in sorted(pairs, reverse=True):
        if pi not in out and gi not in used:
            out[pi] = gi
            used.add(gi)
    return out


def macro_f1(gold: list[str], pred: list[str], labels: list[str]) -> float:
    scores = []
    for label in labels:
        c = Counts()
        c.tp = sum(g == label and p == label for g, p in zip(gold, pred))
        c.fp = sum(g != label and p == label for g, p in zip(gold, pred))
        c.fn = sum(g == label and p != label for g, p in zip(gold, pred))
        scores.append(c.f1() or 0.0)
    return sum(scores) / len(scores) if scores else 0.0
