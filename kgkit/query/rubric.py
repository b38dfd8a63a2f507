"""O6's rubric: a configured model grades a new text against its nearest graph neighbourhoods.

The offline answer (:mod:`kgkit.query.novelty`) scores lexical overlap. With ``llm.model``
set, the same k neighbourhoods (each: an entity, its neighbours' names, its statements'
quotes, listed as ``n1``, ``n2``, ...) and the text go to the model in one request (the
prompt ``novelty_rubric.j2``; text and neighbourhoods fenced as untrusted data), through the
backend an extraction run uses (the direct client or litellm, over real HTTP). The model
grades four aspects from 1 (a neighbourhood states it) to 5 (none covers it): **problem**,
**mechanism**, **training** and **target domain**, each with the closest neighbourhood and a
reason. An aspect's score is ``(grade - 1) / 4``; the rubric's novelty is their mean.

A closest neighbourhood the model names that it was not given is dropped (and counted); a
provider failure or an answer that does not fit the schema leaves the lexical answer in
place, with the reason in the answer's note.
"""
from __future__ import annotations

import json
from dataclasses import replace
from typing import Any

from kgkit.errors import ProviderError

PROMPT = "novelty_rubric.j2"
ASPECTS = ("problem", "mechanism", "training", "target_domain")
_ASPECT = {"type": "object", "additionalProperties": False, "required": ["grade", "closest", "reason"],
           "properties": {"grade": {"type": "integer", "minimum": 1, "maximum": 5},
                          "closest": {"type": "string", "maxLength": 20},
                          "reason": {"type": "string", "maxLength": 1000}}}
SCHEMA: dict[str, Any] = {"type": "object", "additionalProperties": False, "required": list(ASPECTS),
                          "properties": {a: _ASPECT for a in ASPECTS}}
QUOTES = 5  # quotes per neighbourhood in the request
NAMES = 30  # neighbour names per neighbourhood in the request


class Rubric:
    """The model side of novelty: ``config`` is the whole :class:`kgkit.config.model.Config`
    (``llm.*`` for the model, ``limits.*`` for the answer's size)."""

    def __init__(self, config) -> None:
        if not config.llm.model:
            raise ValueError("Rubric needs llm.model; without one novelty answers offline")
        self.config = config

    @property
    def model(self) -> str:
        return str(self.config.llm.model)

    def grade(self, text: str, hoods: list[dict[str, Any]]) -> tuple[dict[str, Any] | None, str | None]:
        """(the rubric's report, None), or (None, why the model gave none). ``hoods``: per
        neighbourhood ``{"entity", "name", "type", "neighbours": [name], "quotes": [str]}``."""
        from kgkit.backends.base import PassRequest
        from kgkit.backends.llm import LLMBackend
        from kgkit.documents.types import Chunk
        from kgkit.ids import doc_id

        listing = "\n".join(json.dumps({"id": f"n{i}", "entity": h["name"], "type": h["type"],
                                        "neighbours": h["neighbours"][:NAMES], "quotes": h["quotes"][:QUOTES]},
                                       ensure_ascii=False) for i, h in enumerate(hoods, 1))
        owner = doc_id(text)
        listing = listing or "(none)"
        chunk = Chunk(id="c_novelty_rubric", doc_id=owner, index=0, text=listing, start=0, end=len(listing))
        request = PassRequest(kind="novelty_rubric", stage="novelty_rubric", chunk=chunk, schema=SCHEMA,
                              context={"text": text}, prompt=PROMPT)
        llm = replace(self.config.llm, stages={})
        try:
            result = LLMBackend(llm, limits=self.config.limits,
                                max_response_bytes=self.config.limits.max_response_bytes).run(request)
        except ProviderError as exc:
            return None, exc.format()
        if not result.ok or result.data is None:
            return None, result.error or "the model's answer did not fit the rubric"
        return self._report(result.data, hoods), None

    def _report(self, data: dict[str, Any], hoods: list[dict[str, Any]]) -> dict[str, Any]:
        ids = {f"n{i}": h["entity"] for i, h in enumerate(hoods, 1)}
        aspects, unknown = {}, 0
        for aspect in ASPECTS:
            graded = data[aspect]
            closest = ids.get(graded["closest"].strip())
            unknown += bool(graded["closest"].strip()) and closest is None
            aspects[aspect] = {"score": round((graded["grade"] - 1) / 4, 4), "grade": graded["grade"],
                               "closest": closest, "reason": graded["reason"]}
        mean = sum(a["score"] for a in aspects.values()) / len(aspects)
        return {"model": self.model, "aspects": aspects, "novelty": round(mean, 4),
                "neighbourhoods": [h["entity"] for h in hoods], "unknown_closest": unknown}
