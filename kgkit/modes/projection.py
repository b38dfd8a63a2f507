"""projection.v1: a view filtered and relabelled from the skeleton, with zero LLM calls.

The rules are the view's ``projection`` block (see :class:`kgkit.formats.model.Projection`):
relations to keep, end types one end must have (a type's declared aliases count, so
``person`` matches a domain that calls the type ``Peop``), optional orientation with the
matching end at the head, relabelling, and confidence/verification filters. Edges keep
their core IDs, so a projected edge and its skeleton edge join trivially.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from kgkit.formats.model import Domain, View

if TYPE_CHECKING:
    from kgkit.modes.base import Skeleton


class ProjectionMode:
    name = "projection.v1"
    strategy: Literal["projection"] = "projection"

    def project(self, view: View, skeleton: Skeleton, domain: Domain) -> dict[str, Any]:
        rules = view.projection
        assert rules is not None, f"view {view.name} has no projection block"
        wanted = {t.lower() for t in rules.end_types}

        def matches(node_id: str) -> bool:
            node = skeleton.node(node_id)
            assert node is not None, f"an edge end {node_id} is a node of the skeleton"
            node_type = node["type"]
            entity_type = domain.entity_type(node_type)
            labels = {node_type, *(entity_type.aliases if entity_type else ())}
            return bool(wanted & {label.lower() for label in labels})

        edges = []
        for edge in skeleton.edges:
            if "*" not in rules.relations and edge["relation"] not in rules.relations:
                continue
            if (edge["confidence"] if edge["confidence"] is not None else 1.0) < rules.min_confidence:
                continue
            if not edge["verified"] and not rules.include_unverified:
                continue
            head, tail, relation = edge["head"], edge["tail"], edge["relation"]
            if wanted:
                head_ok, tail_ok = matches(head), matches(tail)
                if not (head_ok or tail_ok):
                    continue
                if rules.orient_to_end_type and not head_ok:
                    head, tail, relation = tail, head, relation + rules.inverse_suffix
            relation = rules.relabel.get(relation, relation)
            edges.append({**edge, "head": head, "relation": relation, "tail": tail})
        return {"edges": edges}


def register_modes(register) -> None:
    register(ProjectionMode())
