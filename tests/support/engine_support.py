"""Real files and a scripted backend for the engine, CLI and join tests.

``ScriptedBackend`` stands in for an LLM: it reads each chunk's text and answers every
pass shape of docs/design.md from the sentences "<Person> joined <Org> on <date> as an
<role>." it finds, so what the engine makes of an answer can be checked against the
text. ``extra`` lets a test add answers of its own (bad ends, unknown types…) per stage.
``CountingBackend`` wraps any backend and records every call it forwards.
"""
from __future__ import annotations

import re
from pathlib import Path

from kgkit.backends.base import PassResult, Usage

DOMAIN_YAML = """\
name: staff
description: Who joined which organisation, and when.
entity_types:
  - {name: Person, aliases: [PER]}
  - {name: Org, aliases: [organisation]}
relation_types:
  - {name: Work_For, head: [Person], tail: [Org], aliases: [employed_by]}
  - {name: Partner_Of, head: [Org], tail: [Org]}
nary_relation_types:
  - name: Employment
    roles:
      employee: {types: [Person], required: true}
      employer: {types: [Org]}
      start: {literal: date}
event_types:
  - name: Hire
    roles:
      employee: {types: [Person]}
      employer: {types: [Org]}
qualifiers:
  - {name: start_date, type: date, relations: [Work_For]}
"""

TEMPLATE_YAML = """\
name: staffing
description: Roles people hold.
entity_types:
  - {name: Person}
  - {name: Role}
relation_types:
  - name: HOLDS
    roles:
      holder: {types: [Person]}
      role: {types: [Role]}
      since: {literal: date}
"""

PEOPLE = ["Ann Lee", "Bob Stone", "Cy Park", "Di Moss", "Ed Fay", "Flo Grant", "Gus Hale", "Hu Ito"]
ORGS = ["Acme Corp", "Beta Ltd"]
SENTENCE = re.compile(r"(?P<person>[A-Z]\w+ [A-Z]\w+) joined (?P<org>[A-Z]\w+ [A-Z]\w+) on "
                      r"(?P<date>[A-Z]\w+ \d+, \d{4}) as an? (?P<role>\w+)")
CHUNK_SIZE = 220


def write_inputs(folder: Path, paragraphs: int = 8) -> dict[str, Path]:
    """A domain, a template and a text whose paragraphs chunk one per chunk at CHUNK_SIZE."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "staff.yaml").write_text(DOMAIN_YAML, encoding="utf-8")
    (folder / "staffing.yaml").write_text(TEMPLATE_YAML, encoding="utf-8")
    paras = [f"{PEOPLE[i % 8]} joined {ORGS[i % 2]} on March {i + 1}, 2020 as an engineer. "
             + "The team met weekly. " * 7 for i in range(paragraphs)]
    doc = folder / "staff_notes.txt"
    doc.write_text("\n\n".join(paras) + "\n", encoding="utf-8")
    return {"domain": folder / "staff.yaml", "template": folder / "staffing.yaml", "doc": doc}


class ScriptedBackend:
    name = "scripted"

    def __init__(self, extra: dict[str, list[dict]] | None = None, fail: set[tuple[str, int]] | None = None):
        self.extra = extra or {}
        self.fail = fail or set()  # (stage, chunk index) pairs that fail

    def describe(self) -> dict:
        return {"model": "scripted"}

    def run(self, request) -> PassResult:
        if (request.stage, request.chunk.index) in self.fail:
            return PassResult(data=None, ok=False, error="scripted failure", raw="not json {")
        found = [m.groupdict() | {"quote": m[0]} for m in SENTENCE.finditer(request.chunk.text)]
        stage = request.stage
        if stage == "entities":
            data = {"entities": [e for f in found for e in (
                {"name": f["person"], "type": "PER", "evidence": f["person"], "confidence": 0.95},
                {"name": f["org"], "type": "Org", "evidence": f["org"]})]}
        elif stage == "relations":
            data = {"relations": [{"head": f["person"], "relation": "employed_by", "tail": f["org"],
                                   "evidence": f["quote"], "confidence": 0.9} for f in found]}
        elif stage == "nary":
            data = {"hyperedges": [{"relation": "Employment", "evidence": f["quote"],
                                    "roles": {"employee": f["person"], "employer": f["org"], "start": f["date"]}}
                                   for f in found]}
        elif stage == "temporal":
            data = {"edges": [{"head": f["person"], "relation": "Work_For", "tail": f["org"],
                               "qualifiers": {"start_date": f["date"]}, "evidence": f["quote"]} for f in found]}
        elif stage == "event":
            data = {"events": [{"type": "Hire", "trigger": "joined", "time": f["date"], "evidence": f["quote"],
                                "arguments": {"employee": f["person"], "employer": f["org"]}} for f in found]}
        else:  # diy
            data = {"entities": [{"name": f["role"], "type": "Role", "evidence": f["role"]} for f in found],
                    "relations": [{"relation": "HOLDS", "evidence": f["quote"],
                                   "roles": {"holder": f["person"], "role": f["role"], "since": f["date"]}}
                                  for f in found]}
        key = {"nary": "hyperedges", "temporal": "edges", "event": "events"}.get(stage, next(reversed(data)))
        data[key] = data[key] + self.extra.get(stage, [])
        if stage.startswith("diy:"):
            data["entities"] += self.extra.get("diy-entities", [])
        return PassResult(data=data, usage=Usage(tokens_in=100, tokens_out=20))


class CountingBackend:
    """Forwards every pass to ``inner`` and records (stage, chunk index) per call."""

    def __init__(self, inner):
        self.inner = inner
        self.name = inner.name
        self.calls: list[tuple[str, int]] = []

    def describe(self) -> dict:
        return self.inner.describe()

    def run(self, request) -> PassResult:
        self.calls.append((request.stage, request.chunk.index))
        return self.inner.run(request)
