"""Questions an analyst asks of a corpus of contracts, answered by the legal_contracts
domain's named queries over a corpus graph.

    python benchmarks/contract_questions.py --questions ../shared/data/cuad_questions.jsonl \\
        --graph cuad.sqlite --out answers.jsonl [--split report] [--tenant default]

Each question (``{id, kind, question, params, answer, answer_type}``) is answered by the
named query of its kind (domains/legal_contracts.yaml; the contract of a per-contract
question is given by its document name, which is the gold ``doc_id``). Writes
``{"id", "answer": [...]}`` per line and prints, per kind, set precision and recall twice:

* against what the store's own edges imply, computed independently from
  ``GraphStore.snapshot()`` (the query layer must give exactly that: 1.0 / 1.0);
* against the gold answers (end to end: extraction, resolution and query together).

``--split`` keeps the questions whose contracts are all in that half of splits.json's
``cuad`` lists (a per-contract question by its contract, a corpus question by every
contract of its gold answer). Party names are compared as the question file says, without
regard to case or punctuation; jurisdictions and document ids exactly.
"""
from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from kgkit.text import timex
from kgkit.graph import GraphStore
from kgkit.text.name_keys import canonical_key
from kgkit.query import Query
from kgkit.query import named as named_queries

PARAMS = {"governed_by": ["jurisdiction"], "party_to": ["party"], "dated_in": ["year"],
          "governed_by_and_dated": ["jurisdiction", "year"], "governing_law_of": [], "parties_of": []}


def _loose(name: str) -> str:
    return re.sub(r"[\W_]+", " ", name).strip().casefold()


def ask(query: Query, queries: dict, q: dict) -> list[str]:
    kind = q["kind"]
    params = {p: q["params"][p] for p in PARAMS[kind]}
    if kind in ("governing_law_of", "parties_of"):
        params = {"contract": q["params"]["doc_id"]}
    return query.named(queries[kind], params, limit=10_000).report["answer"]


def implied(snapshot, legal_suffixes: bool = True) -> dict:
    """What the snapshot's edges imply, per question kind: computed without the query layer."""
    nodes = {n["id"]: n for n in snapshot.nodes}
    docs = {d["id"]: d["name"] for d in snapshot.documents}
    stated = defaultdict(set)  # item id -> document names whose evidence states it
    for ev in snapshot.evidence:
        stated[ev["item"]].add(docs[ev["document"]])
    facts = defaultdict(list)  # relation -> (head, tail, document)
    for e in snapshot.edges + snapshot.temporal:
        for doc in stated[e["id"]]:
            facts[e["relation"]].append((e["head"], e["tail"], doc))

    def keys(node_id: str) -> set[str]:
        n = nodes[node_id]
        return {canonical_key(x, legal_suffixes=legal_suffixes) for x in [n["name"], *n["aliases"]]}

    def year_of(node_id: str) -> str | None:
        value = timex.parse_or_none(timex.normalise("date", nodes[node_id]["name"]) or "")
        return value.text[:4] if isinstance(value, timex.Point) and value.precision in ("day", "month", "year") else None

    return {"facts": facts, "keys": keys, "year": year_of, "name": lambda n: nodes[n]["name"]}


def expected(model: dict, q: dict, legal_suffixes: bool = True) -> list[str]:
    facts, keys, year, name = model["facts"], model["keys"], model["year"], model["name"]
    kind, p = q["kind"], q["params"]
    key = lambda s: canonical_key(s, legal_suffixes=legal_suffixes)  # noqa: E731
    if kind == "governed_by":
        return sorted({d for h, t, d in facts["GOVERNING_LAW"] if key(p["jurisdiction"]) in keys(t)})
    if kind == "party_to":
        return sorted({d for h, t, d in facts["HAS_PARTY"] if key(p["party"]) in keys(t)})
    if kind == "dated_in":
        return sorted({d for h, t, d in facts["AGREEMENT_DATE"] if year(t) == p["year"]})
    if kind == "governed_by_and_dated":
        law = {(h, d) for h, t, d in facts["GOVERNING_LAW"] if key(p["jurisdiction"]) in keys(t)}
        return sorted({d for h, t, d in facts["AGREEMENT_DATE"] if year(t) == p["year"] and (h, d) in law})
    relation = "GOVERNING_LAW" if kind == "governing_law_of" else "HAS_PARTY"
    return sorted({name(t) for h, t, d in facts[relation] if d == p["doc_id"]})


def _same(kind: str):
    return _loose if kind in ("party_to", "parties_of") else (lambda s: s)


def pr(got: list[str], want: list[str], norm) -> tuple[float, float]:
    g, w = {norm(x) for x in got}, {norm(x) for x in want}
    if not g and not w:
        return 1.0, 1.0
    hit = len(g & w)
    return (hit / len(g) if g else 1.0 if not w else 0.0), (hit / len(w) if w else 1.0)


def in_split(q: dict, split: set[str] | None) -> bool:
    if split is None:
        return True
    contracts = [q["params"]["doc_id"]] if "doc_id" in q["params"] else list(q["answer"])
    return bool(contracts) and all(c in split for c in contracts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tenant", default="default")
    ap.add_argument("--split", choices=["tune", "report"])
    ap.add_argument("--splits", default=str(Path(__file__).resolve().parents[1] / ".." / "shared" / "data" / "splits.json"))
    args = ap.parse_args(argv)
    questions = [json.loads(line) for line in Path(args.questions).read_text(encoding="utf-8").splitlines() if line.strip()]
    split = set(json.loads(Path(args.splits).read_text())["sets"]["cuad"][args.split]) if args.split else None
    questions = [q for q in questions if in_split(q, split)]
    queries = named_queries.domain_queries("legal_contracts")
    by_kind: dict[str, list[tuple]] = defaultdict(list)
    with GraphStore(args.graph, args.tenant) as store:
        query = Query(store)
        model = implied(store.snapshot(), store.legal_suffixes)
        with open(args.out, "w", encoding="utf-8") as out:
            for q in questions:
                got = ask(query, queries, q)
                out.write(json.dumps({"id": q["id"], "answer": got}, ensure_ascii=False) + "\n")
                norm = _same(q["kind"])
                by_kind[q["kind"]].append((pr(got, expected(model, q, store.legal_suffixes), norm),
                                           pr(got, q["answer"], norm)))
    print(f"{len(questions)} questions{' (' + args.split + ' half)' if args.split else ''}; graph {args.graph}")
    print(f"{'kind':<24}{'n':>4}  {'P store':>8}{'R store':>8}  {'P gold':>8}{'R gold':>8}")
    totals = []
    for kind in sorted(by_kind):
        rows = by_kind[kind]
        totals += rows
        mean = lambda i, j: sum(r[i][j] for r in rows) / len(rows)  # noqa: E731
        print(f"{kind:<24}{len(rows):>4}  {mean(0, 0):>8.3f}{mean(0, 1):>8.3f}  {mean(1, 0):>8.3f}{mean(1, 1):>8.3f}")
    if totals:
        mean = lambda i, j: sum(r[i][j] for r in totals) / len(totals)  # noqa: E731
        print(f"{'all':<24}{len(totals):>4}  {mean(0, 0):>8.3f}{mean(0, 1):>8.3f}  {mean(1, 0):>8.3f}{mean(1, 1):>8.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
