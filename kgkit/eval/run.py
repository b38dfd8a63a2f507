"""``evaluate``: score an extraction against a gold folder — the project's quality instrument.

Either runs the extraction itself (into a temporary folder, or ``out_dir``) or reads an
existing run folder. Predictions are read back from the run folder format of
docs/design.md, so what is scored is exactly what a user gets. No LLM judges anything.
"""
from __future__ import annotations

import json
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kgkit.errors import ConfigError, InputError
from kgkit.eval.gold import GoldDoc, load_gold, type_issues
from kgkit.eval.metrics import CATEGORIES, DEFAULT_FUZZY_THRESHOLD, Score, score_document
from kgkit.formats.model import Domain


@dataclass
class EvalReport:
    """Scores summed over the gold documents, and per document."""

    gold_dir: str
    domain: str | None
    views: list[str]
    total: Score = field(default_factory=Score)
    per_doc: dict[str, Score] = field(default_factory=dict)
    missing: list[str] = field(default_factory=list)  # gold docs with no run folder (scored as empty)
    unknown_types: list[str] = field(default_factory=list)  # gold labels the domain does not declare
    fuzzy_threshold: float = DEFAULT_FUZZY_THRESHOLD

    def add(self, doc_id: str, score: Score) -> None:
        self.per_doc[doc_id] = score
        self.total.add(score)

    def f1(self, category: str = "relations") -> float:
        return self.total.f1(category)

    def to_dict(self) -> dict[str, Any]:
        return {
            "gold": self.gold_dir,
            "domain": self.domain,
            "views": self.views,
            "documents": len(self.per_doc),
            "missing_runs": self.missing,
            "gold_types_not_in_domain": self.unknown_types,
            "matching": {"names": "exact, then alias, then place, then fuzzy", "fuzzy_threshold": self.fuzzy_threshold,
                         **({"document_nodes": dict(sorted(self.total.document_match.items()))}
                            if self.total.document_match else {})},
            "scores": self.total.to_dict(),
            "per_document": {d: s.to_dict() for d, s in sorted(self.per_doc.items())},
        }

    def format_table(self) -> str:
        """A terminal table: micro and macro per category, then per type."""
        rows = [("category", "type", "P", "R", "F1", "tp", "fp", "fn")]
        for name in CATEGORIES:
            cat = self.total.categories.get(name)
            if cat is None or cat.micro.empty:
                continue
            m = cat.micro
            rows.append((name, "micro", f"{m.precision:.3f}", f"{m.recall:.3f}", f"{m.f1:.3f}", str(m.tp), str(m.fp), str(m.fn)))
            mac = cat.macro
            assert mac is not None  # a category with counts has types
            rows.append(("", "macro", f"{mac['precision']:.3f}", f"{mac['recall']:.3f}", f"{mac['f1']:.3f}", "", "", ""))
            for type_name in sorted(cat.per_type):
                c = cat.per_type[type_name]
                rows.append(("", type_name, f"{c.precision:.3f}", f"{c.recall:.3f}", f"{c.f1:.3f}", str(c.tp), str(c.fp), str(c.fn)))
        widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
        lines = ["  ".join(cell.ljust(w) if i < 2 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))).rstrip()
                 for row in rows]
        lines.insert(1, "-" * len(lines[0]))
        head = f"{len(self.per_doc)} documents from {self.gold_dir}" + (f", domain {self.domain}" if self.domain else "")
        if self.missing:
            head += f"; no run folder for {len(self.missing)} (scored as empty): {', '.join(self.missing)}"
        if self.total.document_match:
            counts = self.total.document_match
            head += (f"\nthe document's own node met gold's by name in {counts.get('name', 0)}, by document in "
                     f"{counts.get('document', 0)}" + (f", not at all in {counts['none']}" if counts.get("none") else ""))
        if self.unknown_types:
            head += f"\ngold types the domain does not declare (their items can only be missed): {', '.join(self.unknown_types)}"
        return head + "\n" + "\n".join(lines)


def evaluate(
    gold_dir: str | Path,
    domain: str | Path | Domain | None = None,
    views: list[str] | None = None,
    run_dir: str | Path | None = None,
    config: Any = None,
    *,
    out_dir: str | Path | None = None,
    skills: bool = True,
    backend: Any = None,
    docs: list[GoldDoc] | None = None,
) -> EvalReport:
    """Score extraction against the gold folder ``gold_dir``.

    With ``run_dir``, score that existing run folder (one sub-folder per document, as
    ``kgkit extract`` writes them; a document's folder is found by its doc id or its input
    file name). Otherwise extract the gold ``.txt`` files with ``domain``, ``views``,
    ``config``, ``skills`` and ``backend`` (see :func:`kgkit.engine.run.extract`) into
    ``out_dir`` (a temporary folder when None) and score that. ``docs`` restricts scoring
    to those gold documents (the skill loop's splits). Gold labels the domain does not
    declare are not an error here — their items count as misses — and are listed in the
    report (``kgkit gold validate --domain`` makes them an error).

    Raises :class:`kgkit.errors.ValidationError` for a faulty gold folder and
    :class:`kgkit.errors.InputError` for a missing run folder.
    """
    dom = _domain(domain, config)
    gold_docs = docs if docs is not None else load_gold(gold_dir)
    view_names = list(views) if views else (list(dom.default_views) if dom else ["binary"])
    report = EvalReport(str(gold_dir), dom.name if dom else None, view_names,
                        unknown_types=_unknown_types(gold_docs, dom) if dom else [])
    if run_dir is not None:
        _score_runs(report, gold_docs, Path(run_dir), dom)
        return report
    from kgkit.engine.run import extract

    with tempfile.TemporaryDirectory(prefix="kgkit-eval-") as tmp:
        target = Path(out_dir) if out_dir is not None else Path(tmp)
        extract([d.text_path for d in gold_docs], domain=_domain_ref(domain, dom), views=view_names,
                config=config, out_dir=target, skills=skills, backend=backend)
        _score_runs(report, gold_docs, target, dom)
    return report


def _domain_ref(domain: str | Path | Domain | None, dom: Domain | None) -> str | Path:
    """What the extraction loads: the domain's own file, else the name or path given."""
    if dom is not None and dom.source:
        return str(dom.source)
    if isinstance(domain, Domain):
        raise ConfigError(f"domain {domain.name!r} has no file to extract with",
                          hint="give the domain by name or path, or load it from a file")
    return domain or "general"


def _unknown_types(docs: list[GoldDoc], domain: Domain) -> list[str]:
    """Gold labels (entity types, relations, event types) that the extraction domain cannot produce."""
    return sorted({label for doc in docs for label in type_issues(doc, domain)})


def _domain(domain, config) -> Domain | None:
    if isinstance(domain, Domain):
        return domain
    if domain is None and config is not None:
        domain = getattr(config, "domain", None)
    if domain is None:
        return None
    from kgkit.catalog.load import load_domain

    return load_domain(domain)


def _score_runs(report: EvalReport, docs: list[GoldDoc], run_dir: Path, domain: Domain | None) -> None:
    if not run_dir.is_dir():
        raise InputError(f"run folder not found: {run_dir}")
    folders = find_run_folders(run_dir)
    for doc in docs:
        folder = folders.get(doc.doc_id) or folders.get(doc.text_path.stem)
        if folder is None:
            report.missing.append(doc.doc_id)
            predicted: dict[str, Any] = {"entities": [], "relations": []}
        else:
            predicted = read_predictions(folder)
        report.add(doc.doc_id, score_document(doc, predicted, domain=domain, fuzzy_threshold=report.fuzzy_threshold))


def find_run_folders(run_dir: Path) -> dict[str, Path]:
    """Document key -> run folder, for ``run_dir`` itself or its sub-folders holding a nodes.json.

    Keys are the folder name and the stem of the input path recorded in the manifest.
    """
    found: dict[str, Path] = {}
    candidates = [run_dir] + sorted(p for p in run_dir.iterdir() if p.is_dir())
    for folder in candidates:
        if not (folder / "nodes.json").is_file():
            continue
        found.setdefault(folder.name, folder)
        manifest = _read_json(folder / "manifest.json") if (folder / "manifest.json").is_file() else {}
        source = (manifest.get("input") or {}).get("path") if isinstance(manifest, dict) else None
        if source:
            found.setdefault(Path(source).stem, folder)
    return found


def _read_json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise InputError(f"cannot read {path}: {exc}") from exc


def read_predictions(folder: Path) -> dict[str, Any]:
    """Turn one run folder into the gold-shaped predictions that :func:`score_document` reads.

    Relations come from the ``binary`` view (else the first projection view), hyperedges
    from nary views, events from event views, temporal edges from temporal views; a
    category is present only when such a view was run. Temporal ``start``/``end`` are the
    values of the first qualifiers (by name) starting with one of ``_START`` and ``_END``
    (``start``, ``valid_from``, ``effective``, ``from``, ``begin``; ``end``, ``valid_to``,
    ``expir``, ``until``).
    """
    nodes = _read_json(folder / "nodes.json").get("nodes", [])
    names = {n["id"]: n["name"] for n in nodes}
    predicted: dict[str, Any] = {
        "entities": [{"name": n["name"], "type": n["type"], "aliases": n.get("aliases", []),
                      **({"value": n["value"]} if "value" in n else {}),
                      **({"document": True} if n.get("document") else {})} for n in nodes]
    }
    views = sorted((folder / "views").glob("*.json")) if (folder / "views").is_dir() else []
    loaded = [(p.stem, _read_json(p)) for p in views]
    projections = [(stem, v) for stem, v in loaded if "edges" in v and v.get("mode", "").startswith("projection")]
    projections.sort(key=lambda sv: (sv[0] != "binary", sv[0]))
    if projections:
        predicted["relations"] = [
            {"head": names.get(e["head"], e["head"]), "relation": e["relation"], "tail": names.get(e["tail"], e["tail"])}
            for e in projections[0][1]["edges"]
        ]
    for stem, view in loaded:
        mode = str(view.get("mode", "")).split(".")[0]
        if mode == "nary":
            predicted.setdefault("hyperedges", []).extend(
                {"relation": h["relation"], "roles": _fillers(h.get("roles", {}), names)} for h in view.get("hyperedges", []))
        elif mode == "event":
            predicted.setdefault("events", []).extend(
                {"type": e["type"], "trigger": e.get("trigger"), "arguments": _fillers(e.get("arguments", {}), names)}
                for e in view.get("events", []))
        elif mode == "temporal":
            predicted.setdefault("temporal", []).extend(
                {"head": names.get(e["head"], e["head"]), "relation": e["relation"], "tail": names.get(e["tail"], e["tail"]),
                 **_period(e.get("qualifiers", {}))} for e in view.get("edges", []))
    return predicted


def _filler(value: Any, names: dict[str, str]) -> Any:
    if isinstance(value, list):
        return [_filler(v, names) for v in value]
    if isinstance(value, dict):
        if "node" in value:
            return names.get(value["node"], value["node"])
        return value.get("literal") or value.get("value")
    return names.get(value, value)


def _fillers(roles: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    return {role: _filler(value, names) for role, value in roles.items()}


_START = ("start", "valid_from", "effective", "from", "begin")
_END = ("end", "valid_to", "expir", "until")


def _period(qualifiers: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {"start": None, "end": None}
    for name, q in sorted(qualifiers.items()):
        value = q.get("value") if isinstance(q, dict) else q
        key = name.lower()
        if out["start"] is None and key.startswith(_START):
            out["start"] = value
        elif out["end"] is None and key.startswith(_END):
            out["end"] = value
    return out
