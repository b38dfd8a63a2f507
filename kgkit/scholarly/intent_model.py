"""Citation intent from a model: each citing sentence sent as a one-sentence pass through
the same backend a run uses (litellm or the direct client, cache, retries), answered with
one of the seven functions of :mod:`kgkit.scholarly.intent`. A pass that fails or answers
outside the set falls back to the cue rules, and is counted."""
from __future__ import annotations

from dataclasses import dataclass

from kgkit.backends.base import PassRequest
from kgkit.documents.types import Chunk
from kgkit.ids import doc_id
from kgkit.scholarly.intent import FUNCTIONS, citation_function

STAGE = "citation_intent"
PROMPT = "citation_intent.j2"
MEANINGS = (
    ("background", "the cited work is general background or prior knowledge"),
    ("motivation", "the cited work shows a need, gap or problem this paper addresses"),
    ("future", "the cited work points to what could be done next"),
    ("uses", "this paper uses the cited method, tool, data or definition"),
    ("extends", "this paper builds on, extends or modifies the cited work"),
    ("compares", "this paper contrasts or compares its results or approach with the cited work"),
    ("supports", "the cited work agrees with or confirms this paper's results"),
)
SCHEMA = {"type": "object", "additionalProperties": False, "required": ["function"],
          "properties": {"function": {"type": "string", "enum": list(FUNCTIONS)}}}


@dataclass
class ModelIntents:
    functions: list[str]
    fallbacks: int  # passes that failed or answered outside the set: the cue rules answered
    requests: int


def classify(sentences: list[str], backend) -> ModelIntents:
    """The function of each sentence's citation(s), asked of ``backend`` (a kgkit Backend)."""
    out, fallbacks, requests = [], 0, 0
    for i, sentence in enumerate(sentences):
        owner = doc_id(sentence)
        chunk = Chunk(id=f"c_{owner[2:]}_{i}", doc_id=owner, index=0, text=sentence, start=0, end=len(sentence))
        result = backend.run(PassRequest(kind=STAGE, stage=STAGE, chunk=chunk, schema=SCHEMA,
                                         context={"functions": MEANINGS}, prompt=PROMPT))
        requests += result.requests
        answer = (result.data or {}).get("function") if result.ok else None
        if answer not in FUNCTIONS:
            fallbacks += 1
            answer = citation_function(sentence)
        out.append(answer)
    return ModelIntents(out, fallbacks, requests)
