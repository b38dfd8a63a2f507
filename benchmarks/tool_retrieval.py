"""A tool catalogue is a graph too: MCP servers own tools; questions are answered by typed
retrieval over servers and tools, reduced to servers.

    python benchmarks/tool_retrieval.py --data ../shared/data/livemcpbench [--split tune|report] --out PRED.jsonl
        [--query question|question+steps] [--config kgkit.yaml] [--tune]

Reads ``DIR/catalogue.json`` and ``DIR/questions.jsonl`` (the folder's own format). The
catalogue goes into a corpus graph (SQLite, in a temporary folder) deterministically, no
LLM: one document per server; a ``Server`` node (its name, its key as alias, its
description and category as the node's own quote) and a ``Tool`` node per tool (its
name, its description and parameters as the node's quote), joined by ``PROVIDES``. Each
question is asked with :meth:`kgkit.query.Query.search`: ranked lists per type (server
names, tool names, server quotes, tool quotes), weighted reciprocal-rank fusion with the
settings of ``--config`` (``query.search``; benchmarks/tool_retrieval.yaml by default:
servers weigh 1.5 to a tool's 1, quotes half a name, as tuned on the tune half), reduced to documents (= servers) for
``ranked_servers`` and to Tool entities for ``ranked_tools``.

Writes one line per question ``{"id", "ranked_servers", "ranked_tools"}`` and prints
Recall@k and nDCG@k (k = 1, 3, 5, 10) for servers and tools, beside a plain BM25 over tool
name + description reduced to servers in first-appearance order. The units are the
manifest's: every ``gold_servers`` entry is a unit, every ``gold_server_alternatives``
group is one unit that any of its servers satisfies; tools are ``gold_tools``. Recall@k
is the share of units satisfied in the top k; nDCG@k gains 1 at rank i when the i-th
result satisfies a unit not yet satisfied, discounted by log2(i + 1), over the ideal
min(k, units) gains. Figures are means over questions.

``--tune`` searches the fusion settings (k, per-list weights, owner score) on the chosen
split and prints the best by mean server nDCG@5 and Recall@5: run it on ``tune`` only.
"""
from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import math
import re
import sys
import tempfile
from collections import Counter
from pathlib import Path

from kgkit import ids
from kgkit.config.loader import load_config
from kgkit.graph import GraphStore
from kgkit.graph.runs import Contribution
from kgkit.text.name_keys import canonical_key
from kgkit.query import Query

KS = (1, 3, 5, 10)
VIEW = "catalogue"


# ------------------------------------------------------------------ the catalogue as a graph
def _tool_text(tool: dict) -> str:
    params = " ".join(f"{p.get('name', '')} {p.get('description') or ''}" for p in tool.get("params") or [])
    return f"{tool.get('description') or ''} {params}".strip()


def contributions(catalogue: dict) -> list[Contribution]:
    """One document per server: deterministic, from the catalogue alone."""
    out = []
    for server in catalogue["servers"]:
        doc = server["key"]
        sid = ids.node_id("Server", server["name"])
        c = Contribution(doc=doc, doc_id=ids.doc_id(json.dumps(server, sort_keys=True)), source=None,
                         sha256=hashlib.sha256(json.dumps(server, sort_keys=True).encode()).hexdigest(),
                         fingerprint="")
        c.nodes.append({"node": sid, "type": "Server", "key": canonical_key(server["name"]), "name": server["name"],
                        "aliases": sorted({server["key"]} - {server["name"]})})
        about = f"{server.get('description') or ''} {server.get('category') or ''}".strip()
        c.evidence.append((sid, VIEW, None, None, None, None, about or None))
        for tool in server.get("tools") or []:
            tid = ids.node_id("Tool", tool["name"])
            if any(n["node"] == tid for n in c.nodes):
                continue
            c.nodes.append({"node": tid, "type": "Tool", "key": canonical_key(tool["name"]), "name": tool["name"],
                            "aliases": []})
            c.evidence.append((tid, VIEW, None, None, None, None, _tool_text(tool) or None))
            edge = ids.edge_id(sid, "PROVIDES", tid)
            c.items.append({"view": VIEW, "item": edge, "kind": "edge",
                            "body": {"head": sid, "relation": "PROVIDES", "tail": tid}, "confidence": None,
                            "held": None, "review_key": None})
            c.evidence.append((edge, VIEW, None, None, None, None, None))
        c.fingerprint = hashlib.sha256(json.dumps([c.nodes, c.items, c.evidence], sort_keys=True).encode()).hexdigest()
        out.append(c)
    return out


# ------------------------------------------------------------------ metrics
def units(q: dict) -> list[set[str]]:
    return [{s} for s in q["gold_servers"]] + [set(group) for group in q.get("gold_server_alternatives") or []]


def scores(ranked: list[str], wanted: list[set[str]], k: int) -> tuple[float, float]:
    """(Recall@k, nDCG@k) of one ranking against units (each a set any member satisfies)."""
    if not wanted:
        return 0.0, 0.0
    open_units = list(wanted)
    dcg = 0.0
    for i, name in enumerate(ranked[:k], 1):
        hit = next((u for u in open_units if name in u), None)
        if hit is not None:
            open_units.remove(hit)
            dcg += 1.0 / math.log2(i + 1)
    ideal = sum(1.0 / math.log2(i + 1) for i in range(1, min(k, len(wanted)) + 1))
    return (len(wanted) - len(open_units)) / len(wanted), dcg / ideal


def table(preds: dict[str, dict], questions: list[dict]) -> dict[str, dict[str, float]]:
    out: dict[str, dict[str, float]] = {}
    for what in ("servers", "tools"):
        row = {}
        for k in KS:
            pairs = []
            for q in questions:
                wanted = units(q) if what == "servers" else [{t} for t in q["gold_tools"]]
                pairs.append(scores(preds[q["id"]][f"ranked_{what}"], wanted, k))
            row[f"Recall@{k}"] = sum(p[0] for p in pairs) / len(pairs)
            row[f"nDCG@{k}"] = sum(p[1] for p in pairs) / len(pairs)
        out[what] = row
    return out


# ------------------------------------------------------------------ the baseline
_WORD = re.compile(r"[a-z0-9]+")


def _tokens(text: str) -> list[str]:
    return _WORD.findall(text.lower().replace("_", " "))


def bm25_baseline(catalogue: dict, text: str, k1: float = 1.5, b: float = 0.75) -> tuple[list[str], list[str]]:
    """BM25 over tool name + description; servers in the order their tools first appear."""
    docs = [(s["name"], t["name"], _tokens(f"{t['name']} {t.get('description') or ''}"))
            for s in catalogue["servers"] for t in s.get("tools") or []]
    df = Counter(w for _, _, toks in docs for w in set(toks))
    avg = sum(len(t) for _, _, t in docs) / len(docs)
    query = _tokens(text)
    scored = []
    for n, (server, tool, toks) in enumerate(docs):
        tf = Counter(toks)
        s = sum(math.log(1 + (len(docs) - df[w] + 0.5) / (df[w] + 0.5)) * tf[w] * (k1 + 1)
                / (tf[w] + k1 * (1 - b + b * len(toks) / avg)) for w in query if w in tf)
        scored.append((-s, n, server, tool))
    scored.sort()
    servers = list(dict.fromkeys(s for _, _, s, _ in scored))
    tools = list(dict.fromkeys(t for _, _, _, t in scored))
    return servers, tools


# ------------------------------------------------------------------ typed retrieval
def ask(query: Query, text: str, server_of: dict[str, str], **fusion) -> tuple[list[str], list[str]]:
    docs = query.search(text, limit=70, reduce="document", **fusion)
    tools = query.search(text, limit=50, reduce="entity", types=["Tool"], **fusion)
    return [server_of[h.name] for h in docs.hits], [h.name for h in tools.hits]


def question_text(q: dict, mode: str) -> str:
    return q["question"] + (" " + " ".join(q.get("steps") or []) if mode == "question+steps" else "")


def _fmt(rows: dict[str, dict[str, float]]) -> str:
    head = "".join(f"{m + '@' + str(k):>11}" for k in KS for m in ("Recall", "nDCG"))
    lines = [f"{'':<10}{head}"]
    for what, row in rows.items():
        lines.append(f"{what:<10}" + "".join(f"{row[f'{m}@{k}']:>11.4f}" for k in KS for m in ("Recall", "nDCG")))
    return "\n".join(lines)


def tune(query: Query, questions: list[dict], server_of: dict[str, str], mode: str) -> None:
    grid = []
    for k, ws, wt, wq, owner in itertools.product((10, 30, 60), (1.0, 1.5, 2.0), (0.5, 1.0), (0.5, 1.0, 1.5),
                                                  ("max", "sum")):
        weights = {"Server": ws, "Tool": wt, "quote": wq}
        preds = {}
        for q in questions:
            servers, tools = ask(query, question_text(q, mode), server_of, weights=weights, k=k, owner_score=owner)
            preds[q["id"]] = {"ranked_servers": servers, "ranked_tools": tools}
        s = table(preds, questions)["servers"]
        grid.append((s["nDCG@5"] + s["Recall@5"], k, weights, owner, s["Recall@5"], s["nDCG@5"]))
    grid.sort(key=lambda g: -g[0])
    for g in grid[:10]:
        print(f"k={g[1]} owner={g[3]} weights={g[2]}  Recall@5 {g[4]:.4f}  nDCG@5 {g[5]:.4f}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", required=True, help="the livemcpbench folder")
    ap.add_argument("--split", choices=["tune", "report"])
    ap.add_argument("--out", required=True)
    ap.add_argument("--query", choices=["question", "question+steps"], default="question")
    ap.add_argument("--splits", help="splits.json (default: DATA/../splits.json)")
    ap.add_argument("--tune", action="store_true", help="search the fusion settings on --split (tune only)")
    ap.add_argument("--config", default=str(Path(__file__).with_name("tool_retrieval.yaml")),
                    help="kgkit.yaml whose query.search settings the retrieval uses")
    args = ap.parse_args(argv)
    data = Path(args.data)
    catalogue = json.loads((data / "catalogue.json").read_text(encoding="utf-8"))
    questions = [json.loads(line) for line in (data / "questions.jsonl").read_text(encoding="utf-8").splitlines()
                 if line.strip()]
    if args.split:
        splits = json.loads(Path(args.splits or data.parent / "splits.json").read_text())["sets"]["livemcpbench"]
        keep = set(splits[args.split])
        questions = [q for q in questions if q["id"] in keep]
    server_of = {s["key"]: s["name"] for s in catalogue["servers"]}
    with tempfile.TemporaryDirectory() as tmp, GraphStore(Path(tmp) / "catalogue.sqlite") as store:
        for c in contributions(catalogue):
            store.add_contribution(c)
        query = Query(store, load_config(args.config).query)
        if args.tune:
            tune(query, questions, server_of, args.query)
            return 0
        preds, base = {}, {}
        with open(args.out, "w", encoding="utf-8") as out:
            for q in questions:
                text = question_text(q, args.query)
                servers, tools = ask(query, text, server_of)
                preds[q["id"]] = {"ranked_servers": servers, "ranked_tools": tools}
                out.write(json.dumps({"id": q["id"], **preds[q["id"]]}, ensure_ascii=False) + "\n")
                bs, bt = bm25_baseline(catalogue, text)
                base[q["id"]] = {"ranked_servers": bs, "ranked_tools": bt}
    print(f"{len(questions)} questions ({args.split or 'all'}), query: {args.query}; "
          f"weights {dict(sorted(query.config.search.weights.items()))}, k {query.config.search.k}")
    print("typed retrieval (kgkit query search)")
    print(_fmt(table(preds, questions)))
    print("BM25 over tool name + description, reduced to servers")
    print(_fmt(table(base, questions)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
