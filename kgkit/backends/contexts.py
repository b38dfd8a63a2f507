"""What each pass kind's ``PassRequest.context`` holds: one TypedDict per kind.

The prompts and the offline rules read the context by key; these say which keys each kind
of pass carries, so a builder that forgets one, or a reader that expects one the kind
never has, is a type error rather than a KeyError in a template. At run time they are
plain dicts (the context goes into a request's fingerprint and a Jinja2 template as such).
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypedDict

if TYPE_CHECKING:
    from kgkit.formats.model import Domain, Template, View


class EntitiesContext(TypedDict):
    """The entities pass (pass 1): the domain, the document's retrieved skills, its title."""

    domain: Domain
    skills: list[dict[str, Any]]
    title: str | None


class RelationsContext(EntitiesContext):
    """The relations pass (pass 2): pass 1's, and the nodes of V_doc it may name
    (``{"id", "name", "type", "aliases"}``: the chunk's, then the document-level ones)."""

    entities: list[dict[str, Any]]


class _UpgradeRequired(TypedDict):
    domain: Domain
    view: View
    entities: list[dict[str, Any]]  # the chunk's nodes
    skeleton: list[dict[str, Any]]  # the chunk's skeleton edges, by node name


class UpgradeContext(_UpgradeRequired, total=False):
    """An upgrade view's pass on one chunk; ``template`` for a diy view, ``title`` once the
    engine adds the document's."""

    template: Template
    title: str | None


class CombinedContext(TypedDict):
    """A combined upgrade pass (``upgrades.combine``): the shared part once, then one entry
    per view (``{"key", "view", "context", ...its task}``)."""

    domain: Domain
    entities: list[dict[str, Any]]
    skeleton: list[dict[str, Any]]
    title: str | None
    shape: dict[str, Any]
    parts: list[dict[str, Any]]


class SkillContext(TypedDict):
    """A skill pass (path induction or hindsight) for one gold edge the rollouts missed or
    found only sometimes."""

    domain: Domain
    title: str | None
    skills: list[dict[str, Any]]
    evidence: str
    typed_cues: bool
    gold_edge: dict[str, Any]  # head, relation, tail, head_type, tail_type
    predictions: dict[str, Any]  # samples, found_in, entities, types, unsteady
