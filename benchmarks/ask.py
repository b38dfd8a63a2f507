"""``kgkit ask`` on questions with known answers: answer set F1, triple coverage, evidence
citation rate and error-introduction rate.

    python benchmarks/ask.py --questions ../shared/data/cuad_questions.jsonl --graph cuad.sqlite \\
        --out answers.jsonl [--split report] [--model offline|stub|stub-lie] [--domain legal_contracts]

Writes ``{"id", "answer", "evidence", "verified", "status"}`` per question and prints:

* **answer F1**: set F1 of the answer against the gold answer, averaged over questions
  (party names compared without case or punctuation, as the question file says);
* **triple coverage**: of the triples behind each gold answer (derived from the gold files:
  the contract's GOVERNING_LAW / HAS_PARTY / AGREEMENT_DATE statement), the share that a
  cited evidence item states (same document, relation and tail);
* **evidence citation rate**: of the answered questions, the share whose every claim and
  every answer element cites evidence ids that exist in the store (checked against
  ``GraphStore.snapshot()``, not against ask's own evidence list);
* **error-introduction rate**: of the relations the answers state, the share no stored
  statement supports (checked against the snapshot likewise).

``--model stub`` answers through a scripted model behind the stub provider (real HTTP;
tests/support/ask_stub.py); ``stub-lie`` makes it invent a relation in every draft, which the
verifier must catch (the answers then degrade to insufficient evidence: the rate of the
drafts' invented relations is printed beside the final one). ``--model local`` asks
the small in-process model of benchmarks/local_model.py (the local extra; minutes a request:
use ``--limit``), ``--model local/PATH.gguf`` that file, through the same route and reason
roles. ``--derive aggregates|pairs|corpus`` asks, instead, questions derived from the same gold
answers (benchmarks/ask_derive.py: counts, comparisons and earliest/latest; lists naming two
parties, joined by "both" or "or"; questions over the whole graph, whose graph must then hold
exactly the half's contracts); answer F1 is then exact-answer accuracy for a count, set F1
for a list, the other three figures as before. ``--split`` keeps the questions whose contracts
are all in that half (``benchmarks/splits/cuad.<half>.txt``: the tune contracts of splits.json, and every other shared contract for report).
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import ask_derive  # noqa: E402
from ask_derive import iso  # noqa: E402
from contract_questions import _same, in_split  # noqa: E402

from kgkit.ask import ask  # noqa: E402
from kgkit.config.model import CacheConfig, Config, LLMConfig  # noqa: E402
from kgkit.engine.accounting import answer_counts, answers_text  # noqa: E402
from kgkit.graph import GraphStore  # noqa: E402
from kgkit.graph.database import require_existing  # noqa: E402
from kgkit.text.name_keys import canonical_key  # noqa: E402

RELATION_OF = {"governed_by": ["GOVERNING_LAW"], "governing_law_of": ["GOVERNING_LAW"], "party_to": ["HAS_PARTY"],
               "parties_of": ["HAS_PARTY"], "dated_in": ["AGREEMENT_DATE"],
               "governed_by_and_dated": ["GOVERNING_LAW", "AGREEMENT_DATE"]}
KEY_ENV = "KGKIT_ASK_BENCH_KEY"


def _loose(name: str) -> str:
    return re.sub(r"[\W_]+", " ", name).strip().casefold()


def required_triples(q: dict, gold_dir: Path) -> list[tuple[str, str, str]]:
    """(document, relation, gold tail name) behind each element of the gold answer."""
    out = []
    docs = [q["params"]["doc_id"]] if "doc_id" in q["params"] else list(q["answer"])
    for doc in docs:
        gold = json.loads((gold_dir / f"{doc}.gold.json").read_text(encoding="utf-8"))
        for relation in RELATION_OF[q["kind"]]:
            for r in gold["relations"]:
                if r["relation"] != relation:
                    continue
                tail = r["tail"]
                if relation == "GOVERNING_LAW" and q["params"].get("jurisdiction", tail) != tail:
                    continue
                if relation == "GOVERNING_LAW" and q["kind"] == "governing_law_of" and tail not in q["answer"]:
                    continue
                if relation == "HAS_PARTY":
                    want = [q["params"]["party"]] if "party" in q["params"] else q["answer"]
                    if _loose(tail) not in {_loose(w) for w in want}:
                        continue
                if relation == "AGREEMENT_DATE" and not tail.startswith(q["params"].get("year", "")):
                    continue
                out.append((doc, relation, tail))
    return sorted(set(out))


def covered(triple: tuple[str, str, str], cited: list[dict]) -> bool:
    doc, relation, tail = triple
    for e in cited:
        if e["relation"] != relation or doc not in e["documents"]:
            continue
        for got in e["ends"].get("tail", []):
            if relation == "AGREEMENT_DATE":
                if iso(got) and iso(got) == (iso(tail) or tail):
                    return True
            elif canonical_key(got) == canonical_key(tail) or _loose(got) == _loose(tail):
                return True
    return False


def store_truth(store):
    """Item ids and (head keys, relation, tail keys) of every stored statement."""
    snap = store.snapshot()
    nodes = {n["id"]: n for n in snap.nodes}
    keys = lambda n: {canonical_key(x) for x in [nodes[n]["name"], *nodes[n]["aliases"]]} if n in nodes else set()  # noqa: E731
    ids = {e["id"] for kind in (snap.edges, snap.temporal, snap.hyperedges, snap.events) for e in kind}
    facts = defaultdict(list)
    for e in snap.edges + snap.temporal:
        facts[e["relation"]].append((keys(e["head"]), keys(e["tail"])))
    for item, roles, relation in ([(h, h["roles"], h["relation"]) for h in snap.hyperedges]
                                  + [(v, v["arguments"], v["type"]) for v in snap.events]):
        fillers = set().union(set(), *(keys(n) for ns in roles.values() for n in ns))
        facts[relation].append((fillers, fillers))
    return ids, facts


def supported(claim: dict, facts) -> bool:
    h, t = canonical_key(claim["head"]), canonical_key(claim["tail"])
    return any(h in hk and t in tk for hk, tk in facts.get(claim["relation"], []))


def _squash(text: str) -> str:
    return " ".join(text.split()).casefold()


def _exists(item: dict, ids: set[str], gold_dir: Path) -> bool:
    """A graph statement exists when the snapshot holds its id; a text passage when its quote
    is in the text of a document it names (the store indexes passages by stored statement)."""
    if item["source"] == "graph":
        return item["id"] in ids
    for source in item["sources"]:
        path = gold_dir / f"{source['document']}.txt"
        if source["quote"] and path.exists() and _squash(source["quote"]) in _squash(path.read_text(encoding="utf-8")):
            return True
    return False


def _half(split: str, splits: Path) -> set[str]:
    """The contracts of one half: splits.json's ``cuad`` tune list; report is every shared
    contract not under tune (splits.json names only some of the shared ones), as
    benchmarks/splits/cuad.*.txt record."""
    listed = ROOT / "benchmarks" / "splits" / f"cuad.{split}.txt"
    if listed.exists():
        return {line.strip() for line in listed.read_text().splitlines() if line.strip()}
    return set(json.loads(splits.read_text())["sets"]["cuad"][split])


MODES = ("offline", "stub", "stub-lie", "stub-lie-once", "local")


def model_mode(text: str) -> str:
    """``--model``: one of MODES, or ``local/PATH.gguf`` (a GGUF file that must exist)."""
    if text in MODES:
        return text
    if text.startswith("local/"):
        from kgkit.backends.local import model_path

        if not model_path(text).is_file():
            raise argparse.ArgumentTypeError(f"{model_path(text)}: no model file at this path")
        return text
    raise argparse.ArgumentTypeError(f"{text!r}: expected one of {', '.join(MODES)}, or local/PATH.gguf")


def model_config(mode: str):
    """The config for ``mode``, and the stub server to stop (None offline). A local model
    (``local``: benchmarks/local_model.py's file; ``local/PATH.gguf``: that file) answers in
    process, through the same route and reason roles as any model: minutes a request."""
    if mode == "offline":
        return Config(), None
    if mode == "local" or mode.startswith("local/"):
        sha256 = None
        if mode == "local":
            from local_model import MODELS, models_dir

            model = MODELS["qwen2.5-coder-0.5b"]
            mode, sha256 = f"local/{models_dir() / model.file}", model.sha256
        config = Config(llm=LLMConfig(model=mode, model_sha256=sha256), cache=CacheConfig(enabled=False))
        config.ask.deadline = 3600.0
        config.ask.route.timeout = config.ask.reason.timeout = 1800.0
        return config, None
    from support.ask_stub import responder
    from support.stub_provider import StubProvider

    server = StubProvider().start()
    server.responder = responder({"stub-lie": "lie", "stub-lie-once": "lie_once"}.get(mode, "honest"))
    os.environ[KEY_ENV] = "sk-bench"
    llm = LLMConfig(model="openai/stub-model", api_base=server.openai_base, api_key_env=KEY_ENV, backoff=0.0)
    return Config(llm=llm, cache=CacheConfig(enabled=False)), server


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--questions", required=True)
    ap.add_argument("--graph", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--tenant", default="default")
    ap.add_argument("--domain", default="legal_contracts")
    ap.add_argument("--split", choices=["tune", "report"])
    ap.add_argument("--model", type=model_mode, default="offline",
                    help=f"{', '.join(MODES)}, or local/PATH.gguf (default offline)")
    ap.add_argument("--limit", type=int, help="the first N questions of the half only (a slow model)")
    ap.add_argument("--derive", choices=["aggregates", "pairs", "corpus"],
                    help="ask the questions derived from the gold instead (benchmarks/ask_derive.py)")
    ap.add_argument("--gold", help="folder of the contracts' .gold.json (default: cuad/ beside the questions)")
    ap.add_argument("--splits", default=str(ROOT / ".." / "shared" / "data" / "splits.json"))
    args = ap.parse_args(argv)
    qpath = Path(args.questions)
    gold_dir = Path(args.gold) if args.gold else qpath.parent / "cuad"
    questions = [json.loads(line) for line in qpath.read_text(encoding="utf-8").splitlines() if line.strip()]
    split = _half(args.split, Path(args.splits)) if args.split else None
    questions = [q for q in questions if in_split(q, split)]
    require_existing(args.graph)  # a missing --graph is named, not created empty
    if args.derive == "corpus":
        with GraphStore(args.graph, args.tenant) as store:
            docs = sorted(d["name"] for d in store.snapshot().documents)
        want = sorted(split) if split else sorted(p.name[:-len(".gold.json")] for p in gold_dir.glob("*.gold.json"))
        if docs != want:
            print(f"error: {args.graph}: --derive corpus asks about the whole graph, which must hold exactly the "
                  f"{len(want)} contracts of the half (it holds {len(docs)}); build one from their run folders",
                  file=sys.stderr)
            return 2
        questions = ask_derive.corpus(docs, gold_dir)
    elif args.derive:
        questions = (ask_derive.aggregates(questions, gold_dir) if args.derive == "aggregates"
                     else ask_derive.pairs(questions))
    questions = questions[:args.limit]
    config, server = model_config(args.model)
    rows, started = [], time.monotonic()
    try:
        with GraphStore(args.graph, args.tenant) as store, open(args.out, "w", encoding="utf-8") as out:
            ids, facts = store_truth(store)
            for q in questions:
                record = ask(store, q["question"], domain=args.domain, config=config).to_json()
                used = {c for cl in record["claims"] for c in cl["evidence"]} | {c for cs in record["cites"].values()
                                                                                 for c in cs}
                cited = [e for e in record["evidence"] if e["id"] in used] if record["status"] == "answered" else []
                out.write(json.dumps({"id": q["id"], "answer": record["answer"], "evidence": [e["id"] for e in cited],
                                      "verified": record["verified"], "status": record["status"]},
                                     ensure_ascii=False) + "\n")
                rows.append(score(q, record, cited, ids, facts, gold_dir))
    finally:
        if server is not None:
            server.stop()
    report(rows, args, time.monotonic() - started)
    return 0


def _said(q, record) -> list[str]:
    """A comparison's answer as the party names the question gave (the graph's node names
    may be spelt otherwise): the mentions whose seeds the answer names."""
    if q.get("op") != "more":
        return record["answer"]
    return sorted({s["mention"] for s in record["route"]["seeds"] if s["name"] in record["answer"]})


def _norm(q):
    if q.get("corpus"):
        return _loose if q["compare"] == "parties" else (lambda x: x)
    listed = "gold" not in q or q.get("op") in ("more", "both", "both (apart)", "either")
    return _same(q["kind"]) if listed else (lambda x: x)


def _required(q, gold_dir) -> list[tuple[str, str, str]]:
    if q.get("corpus"):
        return []  # a whole-graph answer rests on every contract's statements: scored by its answer alone
    if "parties" not in q:
        return required_triples(q, gold_dir)
    out = [t for p in q["parties"] for t in required_triples(p, gold_dir)]
    return [t for t in out if t[0] in q["gold"]] if q["op"] != "more" else out


def score(q, record, cited, ids, facts, gold_dir) -> dict:
    norm = _norm(q)
    got, want = {norm(x) for x in _said(q, record)}, {norm(x) for x in q.get("gold", q["answer"])}
    hit = len(got & want)
    f1 = 1.0 if not got and not want else (2 * hit / (len(got) + len(want)))
    required = _required(q, gold_dir)
    answered = record["status"] == "answered"
    exists = {e["id"]: _exists(e, ids, gold_dir) for e in record["evidence"]}
    cites_ok = all(c["evidence"] and all(exists.get(e, False) for e in c["evidence"]) for c in record["claims"])
    cites_ok = cites_ok and all(record["cites"].get(v) and all(exists.get(e, False) for e in record["cites"][v])
                                for v in record["answer"])
    stated = record["claims"] if answered else []
    label = q["kind"] if "op" not in q or q.get("corpus") else f"{q['op']} ({q['kind']})"
    return {"kind": label, "f1": f1, "required": len(required),
            "covered": sum(covered(t, cited) for t in required), "answered": answered, "cites_ok": cites_ok,
            "stated": len(stated), "errors": sum(not supported(c, facts) for c in stated),
            "rejected": sum(1 for c in record["checks"] if not c["supported"]), "status": record["status"],
            "sent_back": record["sent_back"], "seconds": sum(s["seconds"] for s in record["trace"]),
            "answers": record["answers"]}


def report(rows: list[dict], args, seconds: float) -> None:
    print(f"{len(rows)} questions{' (' + args.split + ' half)' if args.split else ''}; graph {args.graph}; "
          f"model {args.model}; {seconds:.1f} s")
    print(f"{'kind':<24}{'n':>4}{'F1':>8}{'triples':>9}{'cited':>8}{'errors':>8}")
    by_kind = defaultdict(list)
    for r in rows:
        by_kind[r["kind"]].append(r)
    for kind in [*sorted(by_kind), "all"]:
        rs = rows if kind == "all" else by_kind[kind]
        if not rs:
            continue
        answered = [r for r in rs if r["answered"]]
        stated = sum(r["stated"] for r in rs)
        req = sum(r["required"] for r in rs)
        print(f"{kind:<24}{len(rs):>4}{sum(r['f1'] for r in rs) / len(rs):>8.3f}"
              + (f"{sum(r['covered'] for r in rs) / req:>9.3f}" if req else f"{'-':>9}")
              + (f"{sum(r['cites_ok'] for r in answered) / len(answered):>8.3f}" if answered else f"{'-':>8}")
              + f"{(sum(r['errors'] for r in rs) / stated if stated else 0.0):>8.3f}")
    statuses = Counter(r["status"] for r in rows)
    print("statuses: " + ", ".join(f"{k} {v}" for k, v in sorted(statuses.items()))
          + f"; sent back {sum(r['sent_back'] for r in rows)}; claims the verifier rejected "
          f"{sum(r['rejected'] for r in rows)}; relations stated {sum(r['stated'] for r in rows)}")
    answers = answer_counts()
    for r in rows:
        for key, n in r["answers"].items():
            answers[key] += n
    if any(answers.values()):
        print(answers_text(answers))


if __name__ == "__main__":
    sys.exit(main())
