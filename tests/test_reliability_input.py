"""Input hardening (issue 10): files stay in their folder, errors never print a file, no
regex or special file can stall a run, and one ``kgkit validate`` checks every kind of file.

Each test is one case of docs/security.md or docs/reliability.md, run through the real
entry point (``kgkit ...`` under CliRunner) where a user would meet it.
"""
from __future__ import annotations

import json
from pathlib import Path

from cli_support import kgkit


def _nodes(out: Path) -> list[dict]:
    (doc,) = [p for p in out.iterdir() if (p / "nodes.json").is_file()]
    return json.loads((doc / "nodes.json").read_text())["nodes"]


# --------------------------------------------------------------------------- item 12


def test_blank_defined_term_does_not_crash_offline_backend(tmp_path):
    """A placeholder left in a filing -- a defined term of only narrow no-break spaces --
    used to raise IndexError in the offline backend (exit 1, traceback)."""
    doc = tmp_path / "filing.txt"
    doc.write_text('This Agreement is made by Northwind Traders Inc. (the "Supplier") and '
                   'Harbor Lane LLC ("\u202f\u202f\u202f").\nThe Supplier shall deliver the goods.\n',
                   encoding="utf-8")
    result = kgkit("extract", str(doc), "--domain", "legal_contracts", "--out", str(tmp_path / "out"))
    assert result.exit_code == 0, result.output
    names = {n["name"]: n["aliases"] for n in _nodes(tmp_path / "out")}
    assert names["Northwind Traders Inc."] == ["Supplier"]
    assert "Harbor Lane LLC" in names and all(a.strip() for a in names["Harbor Lane LLC"])


# --------------------------------------------------------------------------- item 9


def test_ten_thousand_types_without_aliases_are_not_an_alias_bomb(tmp_path):
    """Only values added by alias expansion count towards the alias-bomb limit."""
    lines = ["name: many_types", "entity_types:"]
    lines += [f"  - name: Kind{i}\n    description: kind number {i}\n    examples: [Sample {i}]" for i in range(10_000)]
    path = tmp_path / "many_types.yaml"
    path.write_text("\n".join(lines) + "\n")
    result = kgkit("domain", "validate", str(path))
    assert result.exit_code == 0, result.output
    assert result.stdout == f"OK {path}\n"


def test_alias_bomb_is_still_refused(tmp_path):
    path = tmp_path / "bomb.yaml"
    path.write_text("name: bomb\na: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                    "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                    "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n")
    result = kgkit("domain", "validate", str(path))
    assert result.exit_code == 2
    assert "aliases expand to more than 50000 values" in result.stderr
