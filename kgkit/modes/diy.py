"""diy.v1: a self-contained DIY template (contract review, drug interactions…) per chunk.

The template brings its own entity types, relations (binary via roles head/tail, or n-ary)
and qualifiers. Its entities become nodes of the shared table with origin
``diy:<template>`` — or, when a V_doc node already has that type and canonical name, the
same node — so the view still joins with every other view by node ID.
"""
from __future__ import annotations

from typing import Any

from kgkit import ids
from kgkit.modes.base import Scope, fill_roles
from kgkit.modes.temporal import qualify
from kgkit.modes.upgrade import UpgradeMode, find_by_name


class DiyMode(UpgradeMode):
    name = "diy.v1"
    answer_key = "relations"

    def prepare(self, answer: dict[str, Any], scope: Scope) -> None:
        """The answer's entities first, so its relations' roles can name them."""
        for raw in answer.get("entities", []):
            self.add_entity(raw, scope)

    def add_entity(self, raw: dict[str, Any], scope: Scope) -> None:
        template = scope.view.template
        assert template is not None, "a diy view has a template (catalog validation)"
        entity_type = find_by_name(template.entity_types, raw["type"])
        if entity_type is None:
            scope.reject("unknown_type", raw, f"{raw['type']!r} is not an entity type of template {template.name}")
            return
        node_id = ids.node_id(entity_type.name, raw["name"], legal_suffixes=scope.skeleton.legal_suffixes)
        if scope.skeleton.node(node_id) is not None:
            return  # the core already has it: the view refers to the shared node
        place, verified = scope.locator().mention(raw, raw["name"], raw.get("evidence") or raw["name"])
        if place is None:
            return  # held back: not found in the chunk, so no role can name it
        node = scope.extra_nodes.setdefault(node_id, {
            "id": node_id, "type": entity_type.name, "name": raw["name"], "aliases": [],
            "mentions": [], "merged_from": [], "origin": scope.view.name,
        })
        node["mentions"].append({"chunk": place["chunk"], "span": place["span"], "page": place["page"]})
        if verified:
            node.pop("verified", None)  # one mention found in the text is enough
        elif len(node["mentions"]) == 1:
            node["verified"] = False  # admitted (review.admit_unverified) and found nowhere yet

    def item(self, raw: dict[str, Any], scope: Scope) -> dict[str, Any] | None:
        template = scope.view.template
        assert template is not None, "a diy view has a template (catalog validation)"
        relation = find_by_name(template.relation_types, raw["relation"])
        if relation is None:
            scope.reject("unknown_relation", raw, f"{raw['relation']!r} is not a relation of template {template.name}")
            return None
        roles = fill_roles(raw["roles"], lambda name: next((r for r in relation.roles if r.name == name), None),
                           scope, raw)
        if roles is None:
            return None
        declared = {q: template_q for q in relation.qualifiers
                    for template_q in template.qualifiers if template_q.name == q}
        qualifiers = qualify(raw.get("qualifiers", {}), declared.get, relation.name, scope, raw)
        evidence, verified = scope.locate(raw)
        if evidence is None:
            return None  # held back: its quote is not in the chunk
        return {
            "id": ids.content_id("h", {"template": template.name, "relation": relation.name, "roles": roles}),
            "relation": relation.name,
            "roles": roles,
            "qualifiers": qualifiers,
            "evidence": evidence,
            "verified": verified,
            "confidence": raw.get("confidence"),
        }

    def payload(self, view, items):
        return {"template": view.template.name, "relations": items}


def register_modes(register) -> None:
    register(DiyMode())
