"""upgrades.skip_idle_chunks: an upgrade pass is not sent for a chunk that cannot contribute
(temporal: no date or duration; nary: fewer than two role fillers), the manifest counts the
skipped passes, and the views come out the same as without the option for the offline
backend — else the skip would not be safe."""
from __future__ import annotations

import collections
import json
from pathlib import Path

import pytest

import kgkit
from kgkit.backends.offline import OfflineBackend
from kgkit.config.model import Config, UpgradesConfig
from kgkit.documents.types import Chunk
from kgkit.modes.base import Skeleton
from kgkit.modes.registry import get_mode
from kgkit.catalog.load import load_domain, load_view

from support.cli_support import kgkit as run_cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "cooltech_strategic_alliance.pdf"

# Our own contract-like text: the clauses with dates and parties alternate with clauses
# that name no time and no party, which a chunk of its own holds.
IDLE = "Headings are for convenience only and do not affect the meaning of any provision herein. "
BUSY = ('This Supply Agreement (the "Agreement") is entered into as of March 3, 2021 by and between '
        "Northwind Traders Inc. and Bluefin Labs LLC. This Agreement shall commence on the Effective Date and "
        "continue for a term of two (2) years. ")
TEXT = (BUSY + "\n\n" + IDLE * 3 + "\n\n") * 2 + "Either party may terminate on thirty (30) days notice.\n"


class Counting:
    """The offline backend, counting the passes sent per stage."""

    name = "counting"

    def __init__(self):
        self.inner = OfflineBackend()
        self.sent = collections.Counter()

    def describe(self):
        return self.inner.describe()

    def run(self, request):
        self.sent[request.stage] += 1
        return self.inner.run(request)


@pytest.fixture(autouse=True)
def _isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CONFIG_DIR", str(tmp_path / "user-config"))
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.chdir(tmp_path)


def run(doc, out, skip: bool, **config):
    backend = Counting()
    [result] = kgkit.extract(doc, domain="legal_contracts", views=["nary", "temporal"], backend=backend,
                             config=Config(upgrades=UpgradesConfig(skip_idle_chunks=skip), **config), out_dir=out)
    return result, backend.sent


def views_of(result) -> dict:
    return {name: json.loads((result.run_dir / "views" / f"{name}.json").read_text()) for name in ("nary", "temporal")}


def test_idle_chunks_are_skipped_counted_and_the_views_stay_the_same(tmp_path):
    doc = tmp_path / "deal.txt"
    doc.write_text(TEXT)
    small = {"chunk_size": 300, "chunk_overlap": 0}
    plain, plain_sent = run(doc, tmp_path / "plain", False, **small)
    skipping, skip_sent = run(doc, tmp_path / "skip", True, **small)
    assert plain_sent["nary"] == plain_sent["temporal"] == plain_sent["entities"]  # one pass per chunk
    saved = {stage: plain_sent[stage] - skip_sent[stage] for stage in ("nary", "temporal")}
    assert saved["temporal"] >= 2 and saved["nary"] >= 2  # the idle chunks' passes
    calls = skipping.manifest["calls"]
    assert calls["skipped"] == saved and calls["saved"] == sum(saved.values())
    assert calls["total"] == plain.manifest["calls"]["total"] - calls["saved"]
    assert plain.manifest["calls"]["skipped"] == {} and plain.manifest["calls"]["saved"] == 0
    assert views_of(skipping) == views_of(plain)
    assert views_of(plain)["temporal"]["edges"] and views_of(plain)["nary"]["hyperedges"]  # not a vacuous match


def test_the_bundled_example_gives_the_same_views_with_the_option(tmp_path):
    plain, _ = run(EXAMPLE, tmp_path / "plain", False)
    skipping, _ = run(EXAMPLE, tmp_path / "skip", True)
    assert views_of(skipping) == views_of(plain)
    assert skipping.manifest["calls"]["total"] + skipping.manifest["calls"]["saved"] == plain.manifest["calls"]["total"]


def _skeleton(nodes) -> Skeleton:
    return Skeleton(doc_id="d", nodes=nodes, edges=[], resolve=lambda *a: None, candidates=lambda name: [])


def _chunk(text: str) -> Chunk:
    return Chunk(id="c0", doc_id="d", index=0, text=text, start=0, end=len(text))


def test_temporal_skips_only_where_no_time_expression_can_be_found():
    domain, view = load_domain("legal_contracts"), load_view("temporal")
    mode = get_mode(view.mode)
    assert not mode.can_contribute(view, domain, _chunk("Notices go to the addresses above."), _skeleton([]))
    assert mode.can_contribute(view, domain, _chunk("Notice takes thirty (30) days."), _skeleton([]))
    # a domain with an enum qualifier: a chunk may qualify an edge without any date
    enum_domain = load_domain("biomedical")
    assert any(q.type == "enum" for q in enum_domain.qualifiers)
    assert mode.can_contribute(view, enum_domain, _chunk("Nothing timed here."), _skeleton([]))


def test_nary_needs_two_fillers_among_the_chunks_entities_and_literals():
    domain, view = load_domain("legal_contracts"), load_view("nary")
    mode = get_mode(view.mode)
    role_type = next(t for rel in domain.nary_relation_types for r in rel.roles for t in r.types if t != "*")
    node = lambda name: {"id": name, "name": name, "type": role_type, "mentions": [{"chunk": "c0"}]}
    text = "Alpha and Beta agree to cooperate."
    assert not mode.can_contribute(view, domain, _chunk(text), _skeleton([node("Alpha")]))
    assert mode.can_contribute(view, domain, _chunk(text), _skeleton([node("Alpha"), node("Beta")]))


def test_extract_takes_the_flag(tmp_path):
    doc = tmp_path / "deal.txt"
    doc.write_text(TEXT)
    (tmp_path / "kgkit.yaml").write_text("chunking: {size: 300, overlap: 0}\n")
    out = run_cli("extract", "--domain", "legal_contracts", "--view", "nary,temporal", "--skip-idle-chunks",
                  "--config", str(tmp_path / "kgkit.yaml"), "--out", str(tmp_path / "out"), "--json", str(doc))
    assert out.exit_code == 0, out.output
    manifest = json.loads(next((tmp_path / "out").glob("*/manifest.json")).read_text())
    assert manifest["calls"]["saved"] > 0
