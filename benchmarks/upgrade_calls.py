"""Calls and gold F1 with and without the two call-saving options of issue 11 item 6:
``--combine-upgrades`` (one pass per chunk for every upgrade view) and ``--skip-idle-chunks``.

Each set's report half runs four times (neither option, each, both), on two backends:

* ``offline``: the pattern backend;
* ``stub``: a scripted model behind ``tests/support/stub_provider.py`` (real HTTP through litellm)
  that answers every pass from the gold: the gold items the chunk holds (entities by their
  spans, relations, hyperedges, events and temporal items by their evidence or their words),
  each left out with probability ``--omit`` by a seeded hash of the document, the answer
  list and the item, so a combined pass's parts are the answers separate passes get. It
  shows what each option costs in recall when a model *can* answer from a chunk the
  offline rules find idle; it says nothing of how well a real model follows a combined
  prompt.

For each run: the calls summed over the manifests and micro P / R / F1 per category from
``kgkit eval --run``; the view files are compared with the run without either option.

    python benchmarks/upgrade_calls.py [--backend offline stub] [--sets cuad wikievents]

Report halves only (``benchmarks/split_folder.py``; CUAD: every contract not under ``tune``).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

from split_folder import DEFAULT_DATA, build

HERE = Path(__file__).resolve().parent
SETS = {  # set -> (domain, views, categories)
    "cuad": ("legal_contracts", ["nary", "temporal"], ("entities", "hyperedges", "temporal", "temporal_timed")),
    "wikievents": (None, ["nary", "event"], ("entities", "hyperedges", "events")),
}
CATEGORIES = ("entities", "hyperedges", "temporal", "temporal_timed", "events")
OPTIONS = (("neither", False, False), ("combine", True, False), ("skip idle", False, True), ("both", True, True))
KEY_ENV = "KGKIT_BENCH_STUB_KEY"
# For the scripted model on CUAD: the gold's temporal items say a party is bound by the agreement
# from a date (PARTY_TO, start, end), which legal_contracts does not declare, so its temporal
# view could not be scored at all. This benchmark-only domain adds that relation and its two
# dates to legal_contracts (no text of any document in it).
STUB_DOMAINS = {"cuad": """\
name: legal_contracts_party_terms
description: legal_contracts and the term over which a party is bound (benchmarks/upgrade_calls.py only).
version: 1
extends: legal_contracts
relation_types:
  - name: PARTY_TO
    head: [Party]
    tail: [Agreement]
    description: The party is bound by the agreement.
qualifiers:
  - {name: start_of_term, type: date, relations: [PARTY_TO], description: When the party's term begins.}
  - {name: end_of_term, type: date, relations: [PARTY_TO], description: When the party's term ends.}
"""}


def run_set(data: Path, name: str, backend: str, omit: float, tmp: Path, concurrency: int) -> list[dict[str, Any]]:
    from kgkit.config.model import Config, LLMConfig, UpgradesConfig
    from kgkit.eval.run import evaluate
    from kgkit.engine.run import extract

    domain, views, categories = SETS[name]
    gold = tmp / f"{name}-report"
    build(data, name, "report", gold)
    if domain is None:
        from offline_figures import scaffolded_domain

        domain = str(scaffolded_domain(data, name, tmp))
    stub = None
    if backend == "stub":
        stub = start_stub(gold, omit)
        if name in STUB_DOMAINS:
            domain = str(tmp / f"{name}-stub-domain.yaml")
            Path(domain).write_text(STUB_DOMAINS[name], encoding="utf-8")
    rows, baseline = [], None
    try:
        for label, combine, skip in OPTIONS:
            out = tmp / f"{name}-{backend}-{label.replace(' ', '_')}"
            llm = LLMConfig()
            if stub is not None:
                llm = LLMConfig(model="openai/stub-gold", api_base=stub.openai_base, api_key_env=KEY_ENV,
                                concurrency=concurrency, retries=2, backoff=0.05)
            cfg = Config(llm=llm, upgrades=UpgradesConfig(combine=combine, skip_idle_chunks=skip))
            cfg.cache.enabled = False
            sent_before = len(stub.requests) if stub else 0
            extract(sorted(str(p) for p in gold.glob("*.txt")), domain=domain, views=views, config=cfg, out_dir=out,
                    skills=False)
            report = evaluate(str(gold), domain=domain, views=views, run_dir=out, config=cfg)
            calls = summed_calls(out)
            if stub is not None:
                calls["requests at the stub"] = len(stub.requests) - sent_before
            views_files = {p.relative_to(out).as_posix(): p.read_bytes() for p in out.glob("*/views/*.json")}
            baseline = baseline or views_files
            rows.append({"set": name, "backend": backend, "option": label, "domain": Path(domain).stem, "calls": calls,
                         "identical views": views_files == baseline,
                         "scores": {c: report.total.categories[c].micro.to_dict()
                                    for c in categories if c in report.total.categories}})
    finally:
        if stub is not None:
            stub.stop()
    return rows


def summed_calls(out: Path) -> dict[str, Any]:
    total: dict[str, Any] = {"documents": 0, "core": 0, "upgrade": {}, "skipped": 0, "saved": 0, "total": 0,
                             "failed passes": 0}
    for path in sorted(out.glob("*/manifest.json")):
        manifest = json.loads(path.read_text(encoding="utf-8"))
        calls = manifest["calls"]
        total["documents"] += 1
        total["core"] += calls["core"]
        for stage, n in calls["upgrade"].items():
            total["upgrade"][stage] = total["upgrade"].get(stage, 0) + n
        total["skipped"] += sum(calls.get("skipped", {}).values()) - calls.get("skipped", {}).get("relations", 0)
        total["saved"] += calls.get("saved", 0)
        total["total"] += calls["total"]
        total["failed passes"] += len(manifest["failures"])
    return total


# -- the scripted model -----------------------------------------------------------------------

_TASK = re.compile(r'^=== Task "([^"]+)" ===$', re.M)
_SENTENCE = re.compile(r"[^.!?\n]+(?:[.!?]+|$)")


class GoldModel:
    """Answers a kgkit pass from the gold of the document its chunk comes from."""

    def __init__(self, gold: Path, omit: float, seed: str = "kgkit-bench"):
        self.docs = []
        for path in sorted(gold.glob("*.gold.json")):
            text = path.with_name(path.name[: -len(".gold.json")] + ".txt").read_text(encoding="utf-8")
            self.docs.append((json.loads(path.read_text(encoding="utf-8")), text))
        self.omit, self.seed = omit, seed

    def answer(self, stage: str, chunk: str, user: str) -> dict[str, Any]:
        """The answer to a pass of ``stage`` (as ``tests/fault_script.stage_of`` reads it) on ``chunk``."""
        gold, text = next(((g, t) for g, t in self.docs if chunk in t), (None, ""))
        if gold is None:
            return {}
        kept = lambda key, items: [i for i in items if self._kept(gold["doc_id"], key, i)]  # noqa: E731
        if stage == "entities":
            return {"entities": kept("entities", self.entities(gold, text, chunk))}
        if stage == "relations":
            return {"relations": kept("relations", self.relations(gold, chunk))}
        parts = {}
        for task in _TASK.findall(user) if stage == "combined" else [None]:
            kind = task.split(":")[0] if task else stage
            key, items = {"nary": ("hyperedges", self.hyperedges), "temporal": ("edges", self.temporal),
                          "event": ("events", self.events)}.get(kind, ("relations", lambda g, c: []))
            answer = {key: kept(key, items(gold, chunk))}
            if kind == "diy":
                answer["entities"] = []
            parts[task] = answer
        return parts[None] if None in parts else parts

    def _kept(self, doc: str, key: str, item: Any) -> bool:
        digest = hashlib.sha256(f"{self.seed}|{doc}|{key}|{json.dumps(item, sort_keys=True)}".encode()).digest()
        return int.from_bytes(digest[:4], "big") / 2**32 >= self.omit

    @staticmethod
    def entities(gold: dict, text: str, chunk: str) -> list[dict[str, Any]]:
        start = text.find(chunk)
        out = []
        for e in gold["entities"]:
            for s, t in e["spans"]:
                if start <= s and t <= start + len(chunk):
                    out.append({"name": text[s:t], "type": e["type"], "evidence": text[s:t], "confidence": 0.9})
        return out

    @staticmethod
    def _written(gold: dict, name: str, chunk: str) -> str | None:
        """How the chunk writes entity ``name`` (its name or an alias), if it does."""
        entity = next((e for e in gold["entities"] if e["name"] == name), {"name": name, "aliases": []})
        return next((n for n in [entity["name"], *entity["aliases"]] if n and n in chunk), None)

    def _evidence(self, given: str | None, words: list[str], chunk: str) -> str | None:
        if given and given in chunk:
            return given
        for sentence in _SENTENCE.findall(chunk):
            if all(w in sentence for w in words):
                return sentence.strip()
        return None

    def relations(self, gold: dict, chunk: str, key: str = "relations") -> list[dict[str, Any]]:
        """Binary items (``relations``, or ``temporal`` with their dates as qualifiers) whose ends the chunk names."""
        out = []
        for r in gold[key]:
            head, tail = self._written(gold, r["head"], chunk), self._written(gold, r["tail"], chunk)
            quote = head and tail and self._evidence(r.get("evidence"), [head, tail], chunk)
            if quote:
                item = {"head": head, "relation": r["relation"], "tail": tail, "evidence": quote, "confidence": 0.9}
                if key == "temporal":
                    item["qualifiers"] = {k: v for k, v in (("start_of_term", r.get("start")),
                                                            ("end_of_term", r.get("end"))) if v}
                out.append(item)
        return out

    def _roles(self, gold: dict, roles: dict[str, Any], chunk: str) -> dict[str, Any] | None:
        out = {}
        for role, value in roles.items():
            names = value if isinstance(value, list) else [value]
            written = [self._written(gold, str(n), chunk) for n in names if n]
            if not written or None in written:
                return None
            out[role] = written if isinstance(value, list) else written[0]
        return out

    def hyperedges(self, gold: dict, chunk: str) -> list[dict[str, Any]]:
        out = []
        for h in gold["hyperedges"]:
            roles = self._roles(gold, h["roles"], chunk)
            quote = roles and self._evidence(h.get("evidence"), [v for r in roles.values()
                                                                 for v in (r if isinstance(r, list) else [r])], chunk)
            if quote:
                out.append({"relation": h["relation"], "roles": roles, "evidence": quote, "confidence": 0.9})
        return out

    def events(self, gold: dict, chunk: str) -> list[dict[str, Any]]:
        out = []
        for e in gold["events"]:
            arguments = self._roles(gold, e["arguments"], chunk)
            quote = arguments is not None and self._evidence(None, [e["trigger"]], chunk)
            if quote:
                out.append({"type": e["type"], "trigger": e["trigger"], "arguments": arguments, "time": e.get("time"),
                            "evidence": quote, "confidence": 0.9})
        return out

    def temporal(self, gold: dict, chunk: str) -> list[dict[str, Any]]:
        return self.relations(gold, chunk, "temporal")


def start_stub(gold: Path, omit: float):
    import os

    sys.path.insert(0, str(HERE.parent / "tests"))
    from support.fault_script import chunk_text, stage_of
    from support.stub_provider import Reply, StubProvider

    os.environ.setdefault(KEY_ENV, "sk-bench-not-a-key")
    model = GoldModel(gold, omit)

    def responder(request):
        user = request.messages[-1]["content"]
        chars = sum(len(m["content"]) for m in request.messages)
        return Reply.answer(model.answer(stage_of(request), chunk_text(request), user), tokens_in=chars // 4,
                            tokens_out=50)

    stub = StubProvider().start()
    stub.responder = responder
    return stub


def print_rows(rows: list[dict[str, Any]]) -> None:
    print("| set | backend | option | calls: core | upgrade passes | skipped | saved | total | identical views | "
          + " | ".join("F1 " + c for c in CATEGORIES) + " |")
    print("|" + "---|" * (9 + len(CATEGORIES)))
    for row in rows:
        c, s = row["calls"], row["scores"]
        f1 = [f"{s[k]['f1']:.3f} ({s[k]['tp']}/{s[k]['fp']}/{s[k]['fn']})" if k in s else "-"
              for k in CATEGORIES]
        upgrade = ", ".join(f"{k} {v}" for k, v in c["upgrade"].items() if v)
        print(f"| {row['set']} ({c['documents']}) | {row['backend']} | {row['option']} | {c['core']} | {upgrade} | "
              f"{c['skipped']} | {c['saved']} | {c['total']} | {'yes' if row['identical views'] else 'no'} | "
              + " | ".join(f1) + " |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--backend", nargs="+", choices=("offline", "stub"), default=["offline", "stub"])
    parser.add_argument("--sets", nargs="+", choices=sorted(SETS), default=sorted(SETS))
    parser.add_argument("--omit", type=float, default=0.2, help="share of gold items the scripted model leaves out")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--json", type=Path, help="also write the rows here")
    args = parser.parse_args(argv)
    rows = []
    with tempfile.TemporaryDirectory(prefix="kgkit-upgrade-calls-") as tmp:
        for backend in args.backend:
            for name in args.sets:
                rows += run_set(args.data, name, backend, args.omit, Path(tmp), args.concurrency)
                print_rows(rows[-len(OPTIONS):])
                sys.stdout.flush()
    print()
    print_rows(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
