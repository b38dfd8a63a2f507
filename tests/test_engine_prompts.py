"""The built-in upgrade prompts render for real requests, with the chunk fenced as untrusted."""
from __future__ import annotations

import pytest

import kgkit
from kgkit.config.model import Config
from kgkit.prompts.render import render_request

from engine_support import CHUNK_SIZE, ScriptedBackend, write_inputs


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
    ("temporal", ["start_date (date; for Work_For)", "Ann Lee Work_For Acme Corp"]),
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
    start, end = body.index("BEGIN UNTRUSTED DOCUMENT"), body.index("END UNTRUSTED DOCUMENT")
    assert request.chunk.text in body[start:end]
    assert "Reply with one JSON object" in body[end:]
