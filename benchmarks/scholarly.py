"""Scholarly papers read offline, scored on the shared set's own gold format.

Reads ``DIR/papers/*.pdf`` with their ``*.gold.json`` and ``DIR/citation_intent/*.jsonl``
(the manifest's files), takes the split named in ``splits.json`` (in DIR or its parent;
without one, every item), and writes the figures:

    python benchmarks/scholarly.py --data ../shared/data/scholarly [--split tune|report] --json OUT.json

Keys: title_exact, authors_exact, sections_f1, anchors_f1, references_f1,
reference_fields_accuracy, marker_linking_f1, intent_macro_f1_scicite,
intent_macro_f1_aclarc. Exit 2 for a folder that is not in that format.

Intent comes from the cue rules offline; ``--model M [--api-base URL --api-key-env VAR]``
asks a model instead (kgkit/scholarly/intent_model.py, one pass per sentence), and
``--stub`` runs that path against the test suite's stub provider on 127.0.0.1, which
answers with the cue rules' own label: the same figures as offline, with every request
sent over real HTTP and every answer parsed -- the wiring, not a model's quality.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import sys
from pathlib import Path

from kgkit.documents.layout import read_pdf_layout
from kgkit.errors import InputError
from kgkit.scholarly.gold import PaperScores, macro_f1, score_paper
from kgkit.scholarly.intent import ACLARC, SCICITE, citation_function
from kgkit.scholarly.paper import read_paper

INTENT_SETS = {"scicite": ("citation_intent/scicite.jsonl", SCICITE),
               "aclarc": ("citation_intent/aclarc.jsonl", ACLARC)}


def load_splits(data: Path) -> dict:
    for candidate in (data / "splits.json", data.parent / "splits.json"):
        if candidate.is_file():
            return json.loads(candidate.read_text(encoding="utf-8")).get("sets", {})
    return {}


def in_split(splits: dict, name: str, split: str) -> set[str] | None:
    for key, value in splits.items():
        if key.endswith(name) and split in value:
            return set(value[split])
    return None


def score_papers(data: Path, ids: set[str] | None) -> tuple[dict, list[dict]]:
    scores = PaperScores()
    rows = []
    for gold_path in sorted((data / "papers").glob("*.gold.json")):
        gold = json.loads(gold_path.read_text(encoding="utf-8"))
        doc = gold.get("doc_id") or gold_path.name.removesuffix(".gold.json")
        if ids is not None and doc not in ids:
            continue
        pdf = gold_path.parent / gold.get("pdf", f"{doc}.pdf")
        one = PaperScores()
        paper = read_paper(read_pdf_layout(str(pdf), source=str(pdf)))
        score_paper(paper, gold, scores)
        score_paper(paper, gold, one)
        rows.append({"paper": doc, **one.figures()})
    return scores.figures(), rows


def score_intent(data: Path, splits: dict, split: str, backend=None) -> dict:
    out = {}
    for name, (rel, mapping) in INTENT_SETS.items():
        path = data / rel
        if not path.is_file():
            out[f"intent_macro_f1_{name}"] = None
            continue
        ids = in_split(splits, f"citation_intent/{name}", split)
        items = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
        items = [i for i in items if ids is None or i["id"] in ids]
        gold = [i["label"] for i in items]
        if backend is None:
            pred = [mapping[citation_function(i["text"])] for i in items]
        else:
            from kgkit.scholarly.intent_model import classify

            asked = classify([i["text"] for i in items], backend)
            pred = [mapping[f] for f in asked.functions]
            print(f"{name}: {len(items)} sentences, {asked.requests} request(s), {asked.fallbacks} fallback(s) "
                  "to the cue rules", file=sys.stderr)
        out[f"intent_macro_f1_{name}"] = macro_f1(gold, pred, sorted(set(mapping.values())))
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--data", required=True, type=Path)
    parser.add_argument("--split", choices=("tune", "report"), default="report")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--model", help="classify citation intent with this model (litellm name)")
    parser.add_argument("--api-base")
    parser.add_argument("--api-key-env", help="environment variable holding the API key")
    parser.add_argument("--stub", action="store_true", help="the model path against the stub provider")
    args = parser.parse_args(argv)
    if not (args.data / "papers").is_dir():
        print(f"error: {args.data} has no papers/ folder (the shared scholarly format)", file=sys.stderr)
        return 2
    splits = load_splits(args.data)
    try:
        figures, rows = score_papers(args.data, in_split(splits, "papers", args.split))
    except InputError as exc:
        print(f"error: {exc.message}", file=sys.stderr)
        return 2
    stub = _start_stub() if args.stub else None
    try:
        backend = _backend(args, stub)
        figures.update(score_intent(args.data, splits, args.split, backend))
    finally:
        if stub is not None:
            stub.stop()
    for row in rows:
        print(" ".join(f"{k}={v:.2f}" if isinstance(v, float) else f"{k}={v}" for k, v in row.items()))
    print(json.dumps(figures, indent=2))
    if args.json:
        args.json.write_text(json.dumps(figures, indent=2) + "\n", encoding="utf-8")
    return 0


STUB_KEY_ENV = "KGKIT_BENCH_KEY"


def _start_stub():
    """The test suite's stub provider, answering each intent pass with the cue rules' label
    for the sentence inside the prompt's untrusted fence."""
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))
    from support.stub_provider import Reply, StubProvider

    def answer(request):
        text = request.messages[-1]["content"]
        fenced = re.search(r"BEGIN UNTRUSTED DOCUMENT (\S+)\n(.*)\nEND UNTRUSTED DOCUMENT \1", text, re.S)
        return Reply(content={"function": citation_function(fenced.group(2) if fenced else text)})

    stub = StubProvider().start()
    stub.responder = answer
    os.environ.setdefault(STUB_KEY_ENV, "sk-stub")
    return stub


def _backend(args, stub):
    if not (args.model or stub):
        return None
    from kgkit.backends.factory import create_backend
    from kgkit.config.model import CacheConfig, Config, LLMConfig

    if stub is not None:
        llm = LLMConfig(model="openai/stub-model", api_base=stub.openai_base, api_key_env=STUB_KEY_ENV, backoff=0.0)
    else:
        llm = LLMConfig(model=args.model, api_base=args.api_base, api_key_env=args.api_key_env)
    return create_backend(Config(llm=llm, cache=CacheConfig(enabled=False)), "core")


if __name__ == "__main__":
    sys.exit(main())
