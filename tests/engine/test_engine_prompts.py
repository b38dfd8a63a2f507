"""The built-in upgrade prompts render for real requests, with the chunk fenced as untrusted."""
from __future__ import annotations

import pytest

import kgkit
from kgkit.config.model import Config
from kgkit.prompts.render import render_request

from support.engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs


@pytest.fixture(scope="module")
def requests(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("prompts")
    inputs = write_inputs(tmp / "in")
    seen = {}

    class Recording(ScriptedBackend):
        def run(self, request):
            seen.setdefault(request.stage, request)
            return super().run(request)

    kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["nary", "temporal", "event",
                                                                  f"diy:{inputs['template']}"],
                  config=Config(chunk_size=CHUNK_SIZE, chunk_overlap=0), out_dir=tmp / "out", backend=Recording())
    return seen


@pytest.mark.parametrize("stage, must_name", [
    ("nary", ['- Employment', 'role "employee": an entity of type Person (required)', 'role "start": a date value']),
    ("temporal", ["start_date (date; for Work_For)", '"Ann Lee" Work_For "Acme Corp"']),
    ("event", ["- Hire", 'role "employer": an entity of type Org']),
    ("diy:staffing", ['"staffing" template', "- HOLDS", 'role "since": a date value']),
])
def test_upgrade_prompt_renders_the_schema_and_fences_the_chunk(requests, stage, must_name):
    request = requests[stage]
    system, user = render_request(request)
    assert "untrusted data" in system["content"]
    text = system["content"] + user["content"]
    for phrase in must_name:
        assert phrase in text
    body = user["content"]
    start, end = body.rindex("BEGIN UNTRUSTED DOCUMENT"), body.rindex("END UNTRUSTED DOCUMENT")
    assert request.chunk.text in body[start:end]
    assert body[end:].count("\n") == 0  # the chunk comes last: the prefix before it is cacheable
    assert "Reply with one JSON object" in body[:start] and "Worked example" in body[:start]


def test_diy_prompt_carries_the_templates_worked_examples(tmp_path):
    """A DIY template's few-shot block reaches the model, as a domain's does in the core prompts."""
    from kgkit.catalog.load import load_view
    from kgkit.backends.base import UPGRADE, PassRequest
    from kgkit.documents.types import Chunk

    view = load_view("diy:contract_review")
    assert view.template.examples, "the shipped template declares examples"
    chunk = Chunk(id="c_1", doc_id="d_1", index=0, text="Acme shall pay Beta $5 within 10 days.", start=0, end=38)
    request = PassRequest(kind=UPGRADE, stage=view.name, chunk=chunk, schema=view.output_schema,
                          context={"domain": kgkit.load_domain("legal_contracts"), "template": view.template,
                                   "view": view, "entities": [], "skeleton": []},
                          prompt=str(view.prompt))
    _, user = render_request(request)
    body = user["content"]
    worked = body[body.index("Worked examples:"):body.index("Rules:")]
    first = view.template.examples[0]
    assert f"Text: {first['text']}" in worked
    assert '"relations": [{"relation": "payment"' in worked.replace("\n", "")
