"""Stable identifiers (docs/design.md "Identifiers"), through kgkit.ids."""
from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys

import pytest

from kgkit.ids import canonical_json, chunk_id, content_id, doc_id, edge_id, node_id


def sha16(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def test_node_id_follows_the_design_formula():
    assert node_id("Organization", "ACME Corp.") == "n_" + sha16("Organization\x1facme")


def test_node_id_is_shared_by_spelling_variants_not_by_types():
    variants = {node_id("Organization", n) for n in ["ACME Corp.", "Acme Corporation", "ACME, Inc.", " acme  inc "]}
    assert len(variants) == 1
    assert node_id("Person", "Washington") != node_id("Location", "Washington")
    assert node_id("Organization", "Apple") != node_id("Organization", "Apple Bank")


def test_node_id_without_legal_suffix_folding():
    assert node_id("Org", "ACME Corp.", legal_suffixes=False) != node_id("Org", "ACME Inc.", legal_suffixes=False)
    assert node_id("Org", "ACME Corp.", legal_suffixes=False) == "n_" + sha16("Org\x1facme corp")


def test_edge_id_follows_the_formula_and_keeps_direction():
    assert edge_id("n_a", "Work_For", "n_b") == "e_" + sha16("n_a\x1fWork_For\x1fn_b")
    assert edge_id("n_a", "Work_For", "n_b") != edge_id("n_b", "Work_For", "n_a")


def test_content_id_ignores_key_order_but_not_list_order():
    a = {"relation": "Treats", "roles": {"drug": {"node": "n_1"}, "dose": {"literal": "5 mg"}}}
    b = {"roles": {"dose": {"literal": "5 mg"}, "drug": {"node": "n_1"}}, "relation": "Treats"}
    assert content_id("h", a) == content_id("h_", b) == "h_" + sha16(canonical_json(a))
    assert content_id("t", [1, 2]) != content_id("t", [2, 1])
    assert content_id("h", a)[2:] == content_id("v", a)[2:]


def test_canonical_json_is_compact_sorted_and_unicode():
    assert canonical_json({"b": 1, "a": ["é", None]}) == '{"a":["é",null],"b":1}'


@pytest.mark.parametrize("bad, error", [(float("nan"), ValueError), ({1, 2}, TypeError), (object(), TypeError)])
def test_content_id_refuses_values_without_one_json_text(bad, error):
    with pytest.raises(error):
        content_id("h", {"x": bad})


def test_content_id_needs_a_prefix():
    with pytest.raises(ValueError, match="needs a prefix"):
        content_id("_", {})


def test_chunk_and_doc_ids_follow_the_formula():
    assert chunk_id("d_1", 3, 100, 2100) == "c_" + sha16("d_1\x1f3\x1f100\x1f2100")
    assert chunk_id("d_1", 3, 100, 2100) != chunk_id("d_1", 3, 100, 2101)
    text = "Vertrag zwischen der Stra\u00dfen AG und ACME\n"
    assert doc_id(text) == "d_" + sha16(text)
    assert doc_id(text) != doc_id(text.strip())


SCRIPT = """
import json
from kgkit.ids import node_id, edge_id, content_id, chunk_id, doc_id
print(json.dumps([node_id("Organization", "Soci\\u00e9t\\u00e9 G\\u00e9n\\u00e9rale S.A."), edge_id("n_a", "r", "n_b"),
                  content_id("h", {"z": [1, {"b": 2, "a": 1}], "a": "x"}), chunk_id("d_x", 0, 0, 10), doc_id("t\\u00e9xt")]))
"""


def test_ids_are_the_same_in_other_processes_whatever_the_hash_seed(tmp_path):
    here = [node_id("Organization", "Soci\u00e9t\u00e9 G\u00e9n\u00e9rale S.A."), edge_id("n_a", "r", "n_b"),
            content_id("h", {"a": "x", "z": [1, {"a": 1, "b": 2}]}), chunk_id("d_x", 0, 0, 10), doc_id("t\u00e9xt")]
    for seed in ("0", "1", "12345"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, env=env,
                             cwd=tmp_path, check=True)
        assert json.loads(out.stdout) == here
