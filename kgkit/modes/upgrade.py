"""The shape every upgrade mode shares: one pass per chunk, answer normalised item by item.

A mode subclass says which answer key it reads (``hyperedges``, ``edges``, ``events``…)
and how one raw item becomes a view item (:meth:`UpgradeMode.item`). This base builds the
pass context — the chunk's part of the skeleton, the domain, the view — validates the
answer against the view's output schema and collects the items; an item that names no
node of the document comes back as None, already counted and written for review.
"""
from __future__ import annotations

from typing import Any, Literal

from kgkit.backends.contexts import UpgradeContext
from kgkit.documents.types import Chunk
from kgkit.formats.model import Domain, View
from kgkit.modes.base import Scope, Skeleton, validate_answer


class UpgradeMode:
    name = ""
    strategy: Literal["upgrade"] = "upgrade"
    answer_key = ""  # the list in the pass answer (and in the view file)

    def context(self, view: View, domain: Domain, chunk: Chunk, skeleton: Skeleton) -> UpgradeContext:
        """The pass context: the chunk's nodes and edges from the skeleton, domain and view."""
        nodes, edges = skeleton.part_for(chunk)
        context: UpgradeContext = {"domain": domain, "view": view, "entities": nodes, "skeleton": edges}
        if view.template is not None:
            context["template"] = view.template
        return context

    def unserved(self, domain: Domain) -> str | None:
        """Why ``domain`` can never give this view an item (it declares none of the types the
        view needs), in words for the run's warnings; None when it can. Here: it can."""
        return None

    def can_build(self, view: View, domain: Domain, skeleton: Skeleton) -> bool:
        """Whether any item could come out of this view's passes for this document; when not,
        the engine sends none of them and counts them as skipped. Here: always."""
        return True

    def can_contribute(self, view: View, domain: Domain, chunk: Chunk, skeleton: Skeleton) -> bool:
        """Whether this chunk's pass could give an item; when not, and
        ``upgrades.skip_idle_chunks`` is on, the engine skips it and counts it as skipped.
        Here: always (no cheap test tells)."""
        return True

    def normalise(self, answer: dict[str, Any], scope: Scope) -> list[dict[str, Any]]:
        """View items from one chunk's answer; an off-schema answer is one review entry
        and contributes nothing."""
        problem = validate_answer(answer, scope.view.output_schema)
        if problem:
            scope.reject("invalid_answer", answer, problem)
            return []
        self.prepare(answer, scope)
        items = []
        for raw in answer.get(self.answer_key, []):
            item = self.item(raw, scope)
            if item is not None:
                items.append(item)
        return items

    def prepare(self, answer: dict[str, Any], scope: Scope) -> None:
        """What a valid answer gives before its items are read (diy: its entities); none here."""

    def item(self, raw: dict[str, Any], scope: Scope) -> dict[str, Any] | None:
        raise NotImplementedError

    def payload(self, view: View, items: list[dict[str, Any]]) -> dict[str, Any]:
        return {self.answer_key: items}


def find_by_name(candidates, name: str):
    """A declared type by exact name, else case- and separator-insensitively."""
    exact = next((c for c in candidates if c.name == name), None)
    if exact is not None:
        return exact
    key = name.strip().lower().replace(" ", "_").replace("-", "_")
    return next((c for c in candidates if c.name.lower().replace("-", "_") == key), None)
