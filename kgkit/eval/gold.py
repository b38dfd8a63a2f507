"""Gold annotation folders: load them, and check them the way domain files are checked.

A gold folder holds, per document, ``<doc_id>.txt`` and ``<doc_id>.gold.json`` (format in
docs/gold-format.md, JSON Schema in kgkit/schemas/gold.schema.json). Other files (a
``manifest.json``, PDFs) are ignored. Every problem in every file is collected and
reported at once, each as ``file:line:col: key -> path: message`` — the line found by
re-reading only a faulty file with :mod:`kgkit.formats.yaml_source`, which keeps marks (JSON is YAML).
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Iterable

from kgkit.text import timex
from kgkit.canon.names import entity_type_name
from kgkit.errors import InputError, Issue, ValidationError, did_you_mean
from kgkit.formats.json_schemas import validator
from kgkit.formats.model import Domain

GOLD_SUFFIX = ".gold.json"


@dataclass(frozen=True)
class GoldDoc:
    """One annotated document: the gold JSON as loaded, plus its text."""

    doc_id: str
    text: str
    title: str | None
    entities: tuple[dict[str, Any], ...]
    relations: tuple[dict[str, Any], ...]
    hyperedges: tuple[dict[str, Any], ...]
    events: tuple[dict[str, Any], ...]
    temporal: tuple[dict[str, Any], ...]
    text_path: Path
    gold_path: Path

    def entity(self, name: str) -> dict[str, Any] | None:
        return next((e for e in self.entities if e["name"] == name), None)


def gold_files(gold_dir: str | Path) -> list[Path]:
    """The ``*.gold.json`` files of a folder, sorted; an error if there are none."""
    directory = Path(gold_dir)
    if not directory.is_dir():
        raise InputError(f"gold folder not found: {directory}")
    files = sorted(directory.glob("*" + GOLD_SUFFIX))
    if not files:
        raise InputError(
            f"no *{GOLD_SUFFIX} files in {directory}",
            hint="a gold folder holds <doc_id>.txt and <doc_id>.gold.json per document (see docs/gold-format.md)",
        )
    return files


def load_gold(gold_dir: str | Path, domain: Domain | None = None) -> list[GoldDoc]:
    """Load every document of a gold folder, sorted by doc id.

    Raises :class:`ValidationError` listing every problem in every file, and
    :class:`InputError` when the folder is missing or holds no gold files.
    """
    docs, issues = check_gold(gold_dir, domain)
    if issues:
        raise ValidationError(issues, f"{len(issues)} problem{'s' if len(issues) != 1 else ''} in gold folder {gold_dir}")
    return docs


def check_gold(gold_dir: str | Path, domain: Domain | None = None) -> tuple[list[GoldDoc], list[Issue]]:
    """Check a gold folder; return the documents that passed and every issue found."""
    docs: list[GoldDoc] = []
    issues: list[Issue] = []
    for path in gold_files(gold_dir):
        doc, file_issues = _check_file(path, domain)
        issues.extend(file_issues)
        if doc is not None and not file_issues:
            docs.append(doc)
    return sorted(docs, key=lambda d: d.doc_id), issues


def _check_file(path: Path, domain: Domain | None) -> tuple[GoldDoc | None, list[Issue]]:
    try:
        raw = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as exc:
        return None, [Issue(str(path), None, None, (), f"not UTF-8 text (bad byte at offset {exc.start})")]
    try:
        data = json.loads(raw)
    except json.JSONDecodeError as exc:
        return None, [Issue(str(path), exc.lineno, exc.colno, (), f"not valid JSON: {exc.msg}")]
    problems: list[tuple[tuple[str | int, ...], str]] = []
    if not isinstance(data, dict):
        problems.append(((), "expected a JSON object at the top level"))
        return None, _locate(path, raw, problems)
    for err in validator("gold").iter_errors(data):
        problems.append((tuple(err.absolute_path), err.message))
    if problems:  # structure is wrong: the content checks below would only repeat it
        return None, _locate(path, raw, problems)

    stem = path.name[: -len(GOLD_SUFFIX)]
    if data["doc_id"] != stem:
        problems.append((("doc_id",), f"doc_id {data['doc_id']!r} does not match the file name {stem!r}"))
    text_path = path.with_name(stem + ".txt")
    text = None
    if text_path.is_file():
        try:
            with open(text_path, encoding="utf-8", newline="") as fh:
                text = fh.read()
        except UnicodeDecodeError as exc:
            problems.append(((), f"the document text {text_path.name} is not UTF-8 (bad byte at offset {exc.start})"))
    else:
        problems.append(((), f"the document text {text_path.name} is missing next to it"))
    problems.extend(_content_problems(data, text, domain))
    doc = GoldDoc(
        doc_id=data["doc_id"],
        text=text or "",
        title=data["title"],
        entities=tuple(data["entities"]),
        relations=tuple(data["relations"]),
        hyperedges=tuple(data["hyperedges"]),
        events=tuple(data["events"]),
        temporal=tuple(data["temporal"]),
        text_path=text_path,
        gold_path=path,
    )
    return doc, _locate(path, raw, problems)


def _fillers(value: Any) -> list[str]:
    return list(value) if isinstance(value, list) else [value]


def _content_problems(data: dict[str, Any], text: str | None, domain: Domain | None) -> Iterable[tuple[tuple, str]]:
    """What a schema cannot say: unique names, ends that name entities, spans that slice, known types."""
    names: set[str] = set()
    for i, ent in enumerate(data["entities"]):
        if ent["name"] in names:
            yield ("entities", i, "name"), f"duplicate entity name {ent['name']!r} (names are unique within a document)"
        names.add(ent["name"])
        if domain is not None and entity_type_name(domain, ent["type"]) is None:
            yield ("entities", i, "type"), f"entity type {ent['type']!r} is not in domain {domain.name!r}" + _choices(
                ent["type"], [t.name for t in domain.entity_types])
        if text is None:
            continue
        allowed = {ent["name"], *ent["aliases"]}
        for j, (start, end) in enumerate(ent["spans"]):
            if not start < end <= len(text):
                yield ("entities", i, "spans", j), f"span [{start}, {end}) is outside the text (length {len(text)})"
            elif text[start:end] not in allowed:
                yield ("entities", i, "spans", j), (
                    f"span [{start}, {end}) slices {text[start:end]!r}, which is neither the name nor an alias")

    def unknown(value: str) -> str:
        return f"{value!r} is not an entity of this document"

    for key in ("relations", "temporal"):
        for i, rel in enumerate(data[key]):
            for end in ("head", "tail"):
                if rel[end] not in names:
                    yield (key, i, end), unknown(rel[end])
            if domain is not None and domain.relation_type(rel["relation"]) is None:
                yield (key, i, "relation"), f"relation {rel['relation']!r} is not in domain {domain.name!r}" + _choices(
                    rel["relation"], [r.name for r in domain.relation_types])
    for key, field, slot in (("hyperedges", "relation", "roles"), ("events", "type", "arguments")):
        for i, item in enumerate(data[key]):
            for role, value in item[slot].items():
                for name in _fillers(value):
                    if name not in names:
                        yield (key, i, slot, role), unknown(name)
            if domain is not None:
                label = item[field]
                known = [t.name for t in domain.event_types]
                if key == "hyperedges":
                    known = [t.name for t in domain.nary_relation_types] + known
                if label not in known:
                    yield (key, i, field), f"{field} {label!r} is not in domain {domain.name!r}" + _choices(label, known)
    times = [(("entities", i, "value"), e.get("value")) for i, e in enumerate(data["entities"])]
    times += [(("temporal", i, end), tmp[end]) for i, tmp in enumerate(data["temporal"]) for end in ("start", "end")]
    times += [(("events", i, "time"), event["time"]) for i, event in enumerate(data["events"])]
    for key_path, value in times:
        if value is not None:
            try:
                timex.parse(value)
            except timex.TimexError as exc:
                yield key_path, str(exc)


def type_issues(doc: GoldDoc, domain: Domain) -> list[str]:
    """The labels of ``doc`` that ``domain`` does not declare ("Peop", "relation USED-FOR", …)."""
    events = {t.name for t in domain.event_types}
    nary = {t.name for t in domain.nary_relation_types} | events
    out = [e["type"] for e in doc.entities if entity_type_name(domain, e["type"]) is None]
    out += [f"relation {r['relation']}" for r in doc.relations + doc.temporal if domain.relation_type(r["relation"]) is None]
    out += [f"hyperedge {h['relation']}" for h in doc.hyperedges if h["relation"] not in nary]
    out += [f"event {e['type']}" for e in doc.events if e["type"] not in events]
    return out


def _choices(value: str, names: list[str]) -> str:
    """The domain's names while the list is short enough to read, then the nearest ones."""
    if not names:
        return "; the domain declares none"
    text = f"; the domain has: {', '.join(names)}" if len(names) <= 8 else f"; the domain has {len(names)} of them"
    hint = did_you_mean(value, names, n=3)
    return text + (f"; {hint}" if hint else "")


def _locate(path: Path, raw: str, problems: list[tuple[tuple, str]]) -> list[Issue]:
    """Turn (key path, message) pairs into Issues with the line and column of that key."""
    if not problems:
        return []
    from kgkit.formats.yaml_source import parse

    source = parse(raw, str(path))  # JSON is YAML: the same marks as kgkit's own files
    issues = []
    for key_path, message in problems:
        mark = source.mark(key_path)
        issues.append(Issue(str(path), mark[0] if mark else None, mark[1] if mark else None, key_path, message))
    return issues


def check_gold_file(path: str | Path, domain: Domain | None = None) -> list[Issue]:
    """Every issue of one ``*.gold.json`` file (``kgkit validate`` checks files one by one)."""
    return _check_file(Path(path), domain)[1]
