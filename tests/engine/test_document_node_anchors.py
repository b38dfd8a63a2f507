"""The relations a contract anchors on itself attach to its document node, in every view,
whether a title was found or the node stands in (named by the file). Texts written for the test."""
from __future__ import annotations

import json

import pytest

from kgkit.cli import main

BODY = """{opening} is made and entered into as of March 3, 2015 by and between Alder Freight Corp. ("Buyer") and \
Birchmoor Mills LLC ("Seller").

1. Term. This Agreement shall commence on April 1, 2015 and shall expire on March 31, 2018.

2. Governing Law. This Agreement shall be governed by the laws of the State of Vermont.
"""
ANCHORED = {"HAS_PARTY", "AGREEMENT_DATE", "EFFECTIVE_DATE", "EXPIRATION_DATE", "GOVERNING_LAW"}


def _views(tmp_path, monkeypatch, name: str, text: str) -> tuple[dict, dict[str, list[tuple[str, str, str]]]]:
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "config"))
    src = tmp_path / f"{name}.txt"
    src.write_text(text, encoding="utf-8")
    with pytest.raises(SystemExit) as done:
        main(["extract", "--domain", "legal_contracts", "--view", "binary,temporal", str(src),
              "--out", str(tmp_path / "runs"), "--json"])
    assert done.value.code == 0
    folder = tmp_path / "runs" / name
    nodes = json.loads((folder / "nodes.json").read_text())["nodes"]
    names = {n["id"]: n["name"] for n in nodes}
    own = next(n for n in nodes if n.get("document"))
    views = {v: [(names[e["head"]], e["relation"], names[e["tail"]])
                 for e in json.loads((folder / "views" / f"{v}.json").read_text())["edges"]]
             for v in ("binary", "temporal")}
    return own, views


@pytest.mark.parametrize("name, text, title", [
    ("titled", "SUPPLY AGREEMENT\n\n" + BODY.format(opening="This Agreement"), "SUPPLY AGREEMENT"),
    ("capitals", "Memorandum of Services\n\n" + BODY.format(opening="THIS SUPPLY AGREEMENT"), "SUPPLY AGREEMENT"),
    ("standin", "Memorandum of Services\n\n" + BODY.format(opening="This Agreement"), "standin"),  # no title
])
def test_the_contracts_own_relations_attach_to_its_document_node(tmp_path, monkeypatch, name, text, title):
    own, views = _views(tmp_path, monkeypatch, name, text)
    assert own["name"] == title
    binary = views["binary"]
    assert {r for h, r, _ in binary if h == own["name"]} == ANCHORED
    assert all(h == own["name"] for h, r, _ in binary if r in ANCHORED)
    # the temporal view qualifies the same edges, a stand-in's as a title's
    assert {(h, t) for h, r, t in views["temporal"] if r == "HAS_PARTY"} == {
        (own["name"], "Alder Freight Corp."), (own["name"], "Birchmoor Mills LLC")}
