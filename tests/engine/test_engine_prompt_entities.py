"""Tokens per call that do not grow with the document (issue 11, item 3): a relation pass is
told about the entities its chunk mentions or names and a bounded set that stands for the
whole document (``limits.document_entities``: those the opening chunk names, then the most
mentioned), not about every entity of the document."""
from __future__ import annotations

import kgkit
from support.engine_support import CHUNK_SIZE, ORGS, ScriptedBackend, write_inputs
from kgkit.config.model import Config, LimitsConfig


class Recording(ScriptedBackend):
    def __init__(self):
        super().__init__()
        self.listed: list[set[str]] = []

    def run(self, request):
        if request.stage == "relations":
            self.listed.append({e["name"] for e in request.context["entities"]})
        return super().run(request)


def relation_prompts(tmp_path, paragraphs: int, document_entities: int) -> tuple[list[set[str]], object]:
    inputs = write_inputs(tmp_path / f"in{paragraphs}", paragraphs=paragraphs)
    backend = Recording()
    config = Config(chunk_size=CHUNK_SIZE, chunk_overlap=0, limits=LimitsConfig(document_entities=document_entities))
    [result] = kgkit.extract(inputs["doc"], domain=inputs["domain"], views=["binary"], config=config,
                             out_dir=tmp_path / f"out{paragraphs}-{document_entities}", backend=backend, skills=False)
    return backend.listed, result


def test_a_relation_pass_lists_its_chunks_entities_and_those_of_the_opening_chunk(tmp_path):
    listed, result = relation_prompts(tmp_path, paragraphs=16, document_entities=2)

    assert len(result.nodes) == 10 and len(listed) == 16
    # each chunk names one person and one organisation; the opening chunk's two (a contract's
    # preamble: the agreement and its parties) stand for the document in every prompt
    opening = listed[0]
    assert len(opening) == 2 and ORGS[0] in opening
    assert all(opening <= names and len(names) <= 4 for names in listed)
    assert any(len(names) == 4 for names in listed)  # another chunk's own two beside the opening's
    _, everything = relation_prompts(tmp_path, paragraphs=16, document_entities=100)
    assert result.views["binary"]["edges"] == everything.views["binary"]["edges"]  # nothing lost
    assert len(result.views["binary"]["edges"]) == 8  # one per (person, organisation) pair of the text


def test_entities_per_relation_prompt_do_not_grow_with_the_document(tmp_path):
    short, _ = relation_prompts(tmp_path, paragraphs=2, document_entities=2)
    long, _ = relation_prompts(tmp_path, paragraphs=32, document_entities=2)
    assert max(map(len, long)) <= max(map(len, short)) + 1


def test_a_large_bound_lists_every_entity_as_before(tmp_path):
    listed, result = relation_prompts(tmp_path, paragraphs=16, document_entities=100)
    assert all(len(names) == len(result.nodes) for names in listed)
