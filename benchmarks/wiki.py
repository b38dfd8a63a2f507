"""How well the wiki reader's deterministic layer reads real vaults, and what the model layer adds.

For every ``<vault>/`` folder in DIR with ``<vault>.gold.json`` beside it (the layout of
``shared/data/wikis/``; the gold's rules are that folder's ``manifest.json`` conversion
notes), reads the vault with :func:`kgkit.wiki.read_vault` and scores, over all vaults:

* articles -- (id, title, sorted aliases, sorted tags);
* links -- every occurrence as (source, line, raw, kind, syntax, status, target), overall
  and by kind;
* categories -- (index, section, level, articles in order, unresolved); a vault's
  ``category_property`` (the frontmatter property grouping its notes, a per-vault choice)
  is given to the reader as a user would configure it, index notes are not;
* sources -- linked files by name (the reader also lists a linked file the gold calls a
  broken link, since it cannot tell a missing image from one that was not copied);
* broken_links_reported -- every broken link of the gold is reported by the reader (as a
  broken link, or as a link to a missing file).

The copies hold only the ``.md`` files: a link to an image that was not copied is a link
to a missing file for the reader and an ``attachment`` in the gold, so the reader's
``missing_file`` matches the gold's ``attachment`` (and ``broken``, which is what a
missing file is). These vaults have no tune/report split: every figure is in-sample.

Then the model layer runs once per vault against a scripted stub provider on 127.0.0.1
(real HTTP through the real client; tests/support/stub_provider.py) that answers every batch
with entities, claims and edges naming the batch's own articles plus a planted duplicate,
an aliased relation and a dangling edge, and fails one batch: the yield and drop counts
show the defensive merge at work, not a model's quality.

    python benchmarks/wiki.py --data ../shared/data/wikis --json OUT.json
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any, Iterable

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # the stub provider lives with the tests


def prf(gold: Iterable, pred: Iterable) -> dict[str, float]:
    g, p = Counter(gold), Counter(pred)
    tp = sum((g & p).values())
    precision = tp / sum(p.values()) if p else 1.0
    recall = tp / sum(g.values()) if g else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": round(precision, 4), "recall": round(recall, 4), "f1": round(f1, 4),
            "gold": sum(g.values()), "predicted": sum(p.values()), "matched": tp}


def _status(status: str, gold_status: str | None = None) -> str:
    """The reader's missing_file is the gold's attachment (file not copied) or broken."""
    if status == "missing_file" and gold_status in ("attachment", "broken"):
        return gold_status
    return status


def article_keys(articles: Iterable[dict[str, Any]]) -> list[tuple]:
    return [(a["id"], a["title"], tuple(sorted(a["aliases"])), tuple(sorted(a["tags"]))) for a in articles]


def link_key(link: dict[str, Any]) -> tuple:
    return (link["source"], link["line"], link["raw"], link["kind"], link["syntax"], link["status"],
            link["target"] if link["status"] in ("resolved", "self") else None)


def category_keys(categories: Iterable[dict[str, Any]]) -> list[tuple]:
    """Index sections by (index, section, level, articles in order, unresolved); property
    categories by (index, members as a set)."""
    def key(c: dict[str, Any]) -> tuple:
        if c.get("kind", "index_section") == "property":
            return ("property", c["index"], tuple(sorted(c["articles"])))
        return (c["index"], c["section"], c["level"], tuple(c["articles"]), tuple(c["unresolved"]))

    return [key(c) for c in categories]


def source_keys(sources: Iterable[dict[str, Any]]) -> list[str]:
    return [s["name"] for s in sources]


def reader_output(vault) -> dict[str, list[dict[str, Any]]]:
    articles = [{"id": n.id, "title": n.title, "aliases": n.aliases, "tags": n.tags} for n in vault.notes]
    links = [{"source": l.source, "line": l.line, "raw": l.raw, "kind": l.kind, "syntax": l.syntax,
              "status": l.status, "target": l.target} for l in vault.links]
    categories = [{"kind": c.kind, "index": c.index, "section": c.section, "level": c.level,
                   "articles": c.articles, "unresolved": c.unresolved} for c in vault.categories]
    sources = [{"name": s.name} for s in vault.sources]
    return {"articles": articles, "links": links, "categories": categories, "sources": sources}


def category_properties(gold: dict[str, Any]) -> tuple[str, ...]:
    """The reader's default category properties, plus the one the vault's gold names (a
    vault's own choice, which its user would give the reader as configuration)."""
    from kgkit.wiki.vault import CATEGORY_PROPERTIES

    named = gold.get("category_property")
    return CATEGORY_PROPERTIES + ((named,) if isinstance(named, str) and named else ())


def score_vault(folder: Path, gold: dict[str, Any]) -> dict[str, Any]:
    from kgkit.wiki import read_vault

    vault = read_vault(folder, category_properties=category_properties(gold))
    ours = reader_output(vault)
    gold_status = {(l["source"], l["line"], l["raw"]): l["status"] for l in gold["links"]}
    for link in ours["links"]:
        link["status"] = _status(link["status"], gold_status.get((link["source"], link["line"], link["raw"])))
    reported = {(l["source"], l["line"], l["raw"]) for l in ours["links"] if l["status"] == "broken"}
    gold_broken = [(l["source"], l["line"], l["raw"]) for l in gold["links"] if l["status"] == "broken"]
    return {
        "vault": folder.name,
        "articles": prf(article_keys(gold["articles"]), article_keys(ours["articles"])),
        "links": prf(map(link_key, gold["links"]), map(link_key, ours["links"])),
        "links_by_kind": {kind: prf([link_key(l) for l in gold["links"] if l["kind"] == kind],
                                    [link_key(l) for l in ours["links"] if l["kind"] == kind])
                          for kind in sorted({l["kind"] for l in gold["links"]})},
        "categories": prf(category_keys(gold["categories"]), category_keys(ours["categories"])),
        "broken_gold": len(gold_broken),
        "broken_reported": sum(b in reported for b in gold_broken),
        "_pairs": (ours, gold),
    }


def model_layer(folder: Path) -> dict[str, Any]:
    """The model layer through the stub provider: yield and drop counts of the merge."""
    from support.stub_provider import StubProvider
    from support.wiki_stub import scripted_answers  # tests/support/wiki_stub.py: the same script the tests use

    from kgkit.config.model import CacheConfig, Config, LLMConfig
    from kgkit.wiki import enrich_vault, read_vault

    vault = read_vault(folder)
    os.environ.setdefault("KGKIT_BENCH_KEY", "sk-bench-not-a-secret")  # the stub checks no key
    stub = StubProvider().start()
    try:
        stub.responder = scripted_answers(fail_batch=1)
        config = Config(llm=LLMConfig(model="openai/stub", api_base=stub.openai_base, api_key_env="KGKIT_BENCH_KEY",
                                      backoff=0.0, retries=0),
                        cache=CacheConfig(enabled=False))
        start = time.perf_counter()
        result = enrich_vault(vault, config)
        seconds = time.perf_counter() - start
    finally:
        stub.stop()
    report = result.report
    return {"vault": folder.name, "batches": report.batches, "failed_batches": report.failed_batches,
            "calls": report.calls, **report.counts(), "seconds": round(seconds, 2)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, required=True, help="a folder of <vault>/ + <vault>.gold.json")
    parser.add_argument("--json", type=Path, help="write the figures here as JSON")
    parser.add_argument("--no-model", action="store_true", help="score the deterministic layer only")
    parser.add_argument("--diff", action="store_true", help="print every mismatch (for debugging the reader)")
    args = parser.parse_args(argv)
    vaults = sorted(p for p in args.data.iterdir() if p.is_dir() and (args.data / f"{p.name}.gold.json").is_file())
    if not vaults:
        print(f"error: no <vault>/ with <vault>.gold.json beside it in {args.data}", file=sys.stderr)
        return 2
    per_vault, start = [], time.perf_counter()
    for folder in vaults:
        gold = json.loads((args.data / f"{folder.name}.gold.json").read_text(encoding="utf-8"))
        per_vault.append(score_vault(folder, gold))
    seconds = time.perf_counter() - start
    pairs = [v.pop("_pairs") for v in per_vault]
    if args.diff:
        _print_diff(pairs)
    total = {key: prf([k for ours, gold in pairs for k in fn(gold)], [k for ours, gold in pairs for k in fn(ours)])
             for key, fn in (("articles", lambda d: article_keys(d["articles"])),
                             ("links", lambda d: map(link_key, d["links"])),
                             ("categories", lambda d: category_keys(d["categories"])),
                             ("sources", lambda d: source_keys(d["sources"])))}
    out = {
        "vaults": [v["vault"] for v in per_vault],
        "in_sample": True,
        "articles_f1": total["articles"]["f1"],
        "links_f1": total["links"]["f1"],
        "categories_f1": total["categories"]["f1"],
        "sources_f1": total["sources"]["f1"],
        "broken_links_reported": all(v["broken_reported"] == v["broken_gold"] for v in per_vault),
        "total": total,
        "per_vault": per_vault,
        "reader_seconds": round(seconds, 3),
        "model_calls_deterministic_layer": 0,
    }
    if not args.no_model:
        out["model_layer"] = [model_layer(folder) for folder in vaults]
    text = json.dumps(out, indent=2, ensure_ascii=False)
    if args.json:
        args.json.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0


def _print_diff(pairs) -> None:
    for ours, gold in pairs:
        for name, fn in (("articles", lambda d: article_keys(d["articles"])),
                         ("links", lambda d: [link_key(l) for l in d["links"]]),
                         ("categories", lambda d: category_keys(d["categories"]))):
            g, p = Counter(fn(gold)), Counter(fn(ours))
            for k in sorted((g - p).elements(), key=str):
                print(f"{name} missing: {k}", file=sys.stderr)
            for k in sorted((p - g).elements(), key=str):
                print(f"{name} extra:   {k}", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
