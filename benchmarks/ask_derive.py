"""Questions derived from the CUAD gold for benchmarks/ask.py (``--derive``), with their
expected answers (``gold``) computed from the gold files, never from the graph:

* ``aggregates``: "How many contracts ...?" for each list question (the gold list's length),
  "Which is a party to more contracts, A or B?" for pairs of party questions (the longer gold
  list; a tie names both), "Which contract governed by the law of X is the earliest / latest?"
  where X has two or more gold contracts, each gold-dated;
* ``pairs``: list questions that name two parties — "Which contracts do A and B both sign?"
  and "Which contracts are A and B both parties to?" (the gold lists' intersection; for two
  parties of one contract, and for the pairs of ``aggregates``) and "Which contracts is A or B
  a party to?" (their union);
* ``corpus``: questions over the whole graph that name nothing — how many contracts, which
  have no governing law or agreement date (and how many), which has the most / fewest
  parties, which jurisdiction governs the most, which party signs the most, which is dated
  earliest / latest — over the contracts of the half, so the graph must hold exactly those.
"""
from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

from kgkit.text import timex


def _loose(name: str) -> str:
    return re.sub(r"[\W_]+", " ", name).strip().casefold()


def iso(text: str) -> str | None:
    value = timex.parse_or_none(timex.normalise("date", text) or "")
    return value.text if isinstance(value, timex.Point) else None


def _gold(doc: str, gold_dir: Path) -> dict:
    return json.loads((gold_dir / f"{doc}.gold.json").read_text(encoding="utf-8"))


def gold_date(doc: str, gold_dir: Path) -> str | None:
    dates = sorted(filter(None, (iso(r["tail"]) for r in _gold(doc, gold_dir)["relations"]
                                 if r["relation"] == "AGREEMENT_DATE")))
    return dates[0] if dates else None


def aggregates(questions: list[dict], gold_dir: Path) -> list[dict]:
    """Aggregate questions from list questions and their gold answers: ``gold`` is the
    expected answer, ``answer`` (and ``params``) stay the list's, for the triples behind it."""
    out = []
    for q in questions:
        if q["question"].startswith("Which contracts "):
            text = "How many contracts " + q["question"][len("Which contracts "):]
        elif q["question"].startswith("Who are the parties to "):
            text = "How many parties are there to " + q["question"][len("Who are the parties to "):]
        else:
            continue
        out.append({**q, "id": q["id"] + "_count", "op": "count", "question": text, "gold": [str(len(q["answer"]))]})
    parties = [q for q in questions if q["kind"] == "party_to"]
    for a, b in zip(parties[::2], parties[1::2]):
        count = {a["params"]["party"]: len(a["answer"]), b["params"]["party"]: len(b["answer"])}
        best = max(count.values())
        out.append({"id": f"{a['id']}_{b['id']}_more", "kind": "party_to", "op": "more",
                    "question": f"Which is a party to more contracts, {a['params']['party']} or {b['params']['party']}?",
                    "params": {}, "answer": sorted(set(a["answer"]) | set(b["answer"])),
                    "gold": sorted(p for p, n in count.items() if n == best), "parties": [a, b]})
    for q in questions:
        dates = {d: gold_date(d, gold_dir) for d in q["answer"]} if q["kind"] == "governed_by" else {}
        if len(dates) < 2 or None in dates.values():
            continue
        for op, pick in (("earliest", min), ("latest", max)):
            when = pick(dates.values())
            out.append({**q, "id": f"{q['id']}_{op}", "op": op, "gold": sorted(d for d, w in dates.items() if w == when),
                        "question": f"Which contract governed by the law of {q['params']['jurisdiction']} is the {op}?"})
    return out


BOTH = ("Which contracts do {a} and {b} both sign?", "Which contracts are {a} and {b} both parties to?")
EITHER = "Which contracts is {a} or {b} a party to?"


def pairs(questions: list[dict]) -> list[dict]:
    """Two-name list questions from the party questions: co-parties of one contract (both),
    and the pairs ``aggregates`` compares (both, and either)."""
    parties = [q for q in questions if q["kind"] == "party_to"]
    chosen, seen = [], set()
    for i, a in enumerate(parties):  # two parties of one contract: a non-empty intersection
        b = next((b for b in parties[i + 1:] if set(a["answer"]) & set(b["answer"]) and b["id"] not in seen), None)
        if b is not None and a["id"] not in seen:
            seen |= {a["id"], b["id"]}
            chosen.append((a, b, True))
    chosen += [(a, b, False) for a, b in zip(parties[::2], parties[1::2])]
    out = []
    for a, b, shared in chosen:
        both = sorted(set(a["answer"]) & set(b["answer"]))
        either = sorted(set(a["answer"]) | set(b["answer"]))
        names = {"a": a["params"]["party"], "b": b["params"]["party"]}
        base = {"kind": "party_to", "params": {}, "parties": [a, b], "answer": either}
        for n, template in enumerate(BOTH):
            out.append({**base, "id": f"{a['id']}_{b['id']}_both{n}", "op": "both" if shared else "both (apart)",
                        "question": template.format(**names), "gold": both})
        if not shared:
            out.append({**base, "id": f"{a['id']}_{b['id']}_either", "op": "either",
                        "question": EITHER.format(**names), "gold": either})
    return out


def _facts(docs: list[str], gold_dir: Path) -> dict[str, dict[str, set[str]]]:
    """relation -> document -> gold tails."""
    out: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    for doc in docs:
        for r in _gold(doc, gold_dir)["relations"]:
            out[r["relation"]][doc].add(_loose(r["tail"]) if r["relation"] == "HAS_PARTY" else r["tail"])
    return out


def _best(counts: dict[str, int], most: bool) -> list[str]:
    pick = (max if most else min)(counts.values())
    return sorted(k for k, v in counts.items() if v == pick)


def corpus(docs: list[str], gold_dir: Path) -> list[dict]:
    """Whole-graph questions over ``docs`` (the graph's contracts), answered from their gold."""
    f = _facts(docs, gold_dir)
    law, parties, dated = f["GOVERNING_LAW"], f["HAS_PARTY"], f["AGREEMENT_DATE"]
    no_law = sorted(d for d in docs if not law.get(d))
    no_date = sorted(d for d in docs if not dated.get(d))
    by_law: dict[str, int] = defaultdict(int)
    by_party: dict[str, int] = defaultdict(int)
    for d in docs:
        for j in law.get(d, ()):
            by_law[j] += 1
        for p in parties.get(d, ()):
            by_party[p] += 1
    per_doc = {d: len(parties.get(d, ())) for d in docs}
    dates = {d: min(filter(None, map(iso, dated[d])), default=None) for d in docs if dated.get(d)}
    dates = {d: w for d, w in dates.items() if w}
    qs = [
        ("count_docs", "How many contracts are in the graph?", [str(len(docs))], "documents"),
        ("count_docs", "How many agreements are there?", [str(len(docs))], "documents"),
        ("absent_law", "Which contracts have no governing law?", no_law, "documents"),
        ("absent_law", "How many contracts have no governing law?", [str(len(no_law))], "count"),
        ("absent_date", "Which contracts have no agreement date?", no_date, "documents"),
        ("absent_date", "How many agreements lack an agreement date?", [str(len(no_date))], "count"),
        ("count_law", "How many contracts have a governing law?", [str(len(docs) - len(no_law))], "count"),
        ("most_parties", "Which contract has the most parties?", _best(per_doc, True), "documents"),
        ("most_parties", "Which contract has the fewest parties?", _best(per_doc, False), "documents"),
        ("most_law", "Which jurisdiction governs the most contracts?", _best(by_law, True), "nodes"),
        ("most_party", "Which party is a party to the most contracts?", _best(by_party, True), "parties"),
        ("count_law", "How many jurisdictions govern the contracts?", [str(len(by_law))], "count"),
        ("dated", "Which contract is dated earliest?", _best({d: -int(w.replace("-", "")) for d, w in dates.items()},
                                                                True), "documents"),
        ("dated", "Which contract is dated latest?", _best({d: int(w.replace("-", "")) for d, w in dates.items()},
                                                             True), "documents"),
    ]
    return [{"id": f"corpus_{n:02d}", "kind": kind, "op": kind, "question": text, "params": {}, "answer": [],
             "gold": gold, "compare": compare, "corpus": True} for n, (kind, text, gold, compare) in enumerate(qs)]
