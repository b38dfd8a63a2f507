"""The in-memory form of domains, views and DIY templates, after YAML validation.

The YAML files are the source of truth; these frozen dataclasses are what the engine,
the backends and the skill loop read. ``kgkit.catalog.build`` builds them from the data
:mod:`kgkit.catalog.validation` returns (checked, ``extends`` applied); nothing else constructs them
from files.
"""
from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

LITERAL_TYPES = ("date", "duration", "money", "quantity", "percent", "text", "enum")
#: A relation type's ``kind``: materialised from a document's layout (never asked of a
#: pass) or read from the text.
STRUCTURAL, SEMANTIC = "structural", "semantic"
#: Field metadata of a setting most domains leave unset: at its default it is left out of
#: :func:`content`, so adding such a setting changes no existing domain's fingerprint.
WHEN_SET = {"content": "when_set"}


def content(value: Any) -> Any:
    """``dataclasses.asdict`` of a model object, without the :data:`WHEN_SET` fields left
    at their default: what a pass's fingerprint takes of a domain, view or template."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: content(getattr(value, f.name)) for f in dataclasses.fields(value)
                if not (f.metadata.get("content") == "when_set" and getattr(value, f.name) == f.default)}
    if isinstance(value, (list, tuple)):
        return [content(v) for v in value]
    if isinstance(value, dict):
        return {k: content(v) for k, v in value.items()}
    return value


@dataclass(frozen=True)
class Patterns:
    """Offline-backend cues: regular expressions and literal phrases (case-insensitive).

    ``labels`` (entity types only) pairs a name with regexes: a match is an entity of that
    name whatever its words, for types that are categories rather than names (a clause
    type "Anti-Assignment" is written "may not assign this Agreement").
    """

    regex: tuple[str, ...] = ()
    phrases: tuple[str, ...] = ()
    labels: tuple[tuple[str, tuple[str, ...]], ...] = ()

    def __bool__(self) -> bool:
        return bool(self.regex or self.phrases or self.labels)


@dataclass(frozen=True)
class EntityType:
    name: str
    description: str = ""
    aliases: tuple[str, ...] = ()  # other labels for the type itself ("person", "PER")
    examples: tuple[str, ...] = ()  # example surface names
    patterns: Patterns = Patterns()
    # Named by its category, not by words of the text (a clause type "Anti-Assignment" is
    # written "may not assign"): the evidence quote must be in the text, the name need not be.
    category: bool = False
    # How far the type's identity reaches: "corpus", "document" or "value"; None = the
    # default for its kind (kgkit.formats.scopes.entity_scope says which).
    scope: str | None = None


@dataclass(frozen=True)
class RelationType:
    """A strictly binary relation between two entity types."""

    name: str
    description: str = ""
    head: tuple[str, ...] = ()  # allowed head entity types ("*" = any)
    tail: tuple[str, ...] = ()  # allowed tail entity types ("*" = any)
    symmetric: bool = False
    triggers: Patterns = Patterns()  # offline: cue words between/around head and tail
    aliases: tuple[str, ...] = ()  # labels that normalise to this name ("references" -> "cites")
    # STRUCTURAL (materialised from the layout, never asked of a pass) or SEMANTIC (read from
    # the text); None: the domain does not tag its relations, and its edges carry no tag.
    kind: str | None = field(default=None, metadata=WHEN_SET)
    # Section kinds (Domain.section_kinds) a chunk must be in for a pass to read this
    # relation from it (a paper's causal claims from its introduction); empty: any chunk.
    sections: tuple[str, ...] = field(default=(), metadata=WHEN_SET)

    def allows(self, head_type: str, tail_type: str) -> bool:
        ok = ("*" in self.head or head_type in self.head) and ("*" in self.tail or tail_type in self.tail)
        if not ok and self.symmetric:
            ok = ("*" in self.head or tail_type in self.head) and ("*" in self.tail or head_type in self.tail)
        return ok

    def read_in(self, kinds: frozenset[str]) -> bool:
        """Whether a pass on a chunk whose section is of ``kinds`` may state this relation."""
        if self.kind == STRUCTURAL:
            return False
        return not self.sections or bool(kinds.intersection(self.sections))


@dataclass(frozen=True)
class Role:
    """One argument slot of an n-ary relation or event.

    ``types`` are entity types whose nodes may fill the slot; ``literal`` (a LITERAL_TYPES
    name) allows a literal value such as a date or an amount instead.
    """

    name: str
    types: tuple[str, ...] = ()
    literal: str | None = None
    required: bool = False
    description: str = ""


@dataclass(frozen=True)
class NaryRelationType:
    name: str
    description: str = ""
    roles: tuple[Role, ...] = ()
    triggers: Patterns = Patterns()

    def role(self, name: str) -> Role | None:
        return next((r for r in self.roles if r.name == name), None)


@dataclass(frozen=True)
class EventType:
    name: str
    description: str = ""
    triggers: Patterns = Patterns()
    roles: tuple[Role, ...] = ()

    def role(self, name: str) -> Role | None:
        return next((r for r in self.roles if r.name == name), None)


@dataclass(frozen=True)
class Qualifier:
    """A typed attribute of a relation (temporal view): start date, notice period, amount…"""

    name: str
    type: str  # one of LITERAL_TYPES
    description: str = ""
    relations: tuple[str, ...] = ("*",)  # relation types it may qualify
    values: tuple[str, ...] = ()  # for type == "enum"
    triggers: Patterns = Patterns()  # offline: cue words that bind a value to this qualifier


@dataclass(frozen=True)
class Example:
    """A few-shot example: text with the entities and relations an extractor should return."""

    text: str
    entities: tuple[dict[str, Any], ...] = ()  # {"name", "type"}
    relations: tuple[dict[str, Any], ...] = ()  # {"head", "relation", "tail"}


@dataclass(frozen=True)
class Chunking:
    size: int = 2000  # characters
    overlap: int = 200  # characters


@dataclass(frozen=True)
class Domain:
    """A resolved domain: ``extends`` already applied, every reference checked."""

    name: str
    description: str = ""
    version: str = "1"
    entity_types: tuple[EntityType, ...] = ()
    relation_types: tuple[RelationType, ...] = ()
    nary_relation_types: tuple[NaryRelationType, ...] = ()
    event_types: tuple[EventType, ...] = ()
    qualifiers: tuple[Qualifier, ...] = ()
    examples: tuple[Example, ...] = ()
    default_views: tuple[str, ...] = ("binary",)
    chunking: Chunking = Chunking()
    document_type: str | None = None  # the entity type that IS the document (legal_contracts: Agreement)
    reading: str = "text"  # how PDFs are read: text | layout | scholarly (kgkit/documents/layout, kgkit/scholarly)
    source: Path | None = None  # the file it came from
    lineage: tuple[str, ...] = ()  # names from this domain up through its ``extends`` parents
    # Kinds of section by the words of their headings (("methods", ("method", "approach")), …):
    # what a relation type's ``sections`` name.
    section_kinds: tuple[tuple[str, tuple[str, ...]], ...] = field(default=(), metadata=WHEN_SET)

    def entity_type(self, name: str) -> EntityType | None:
        return next((t for t in self.entity_types if t.name == name), None)

    @functools.cached_property
    def scoped(self) -> bool:
        """Whether some relation is not read from every chunk (structural, or bound to sections)."""
        return any(r.kind == STRUCTURAL or r.sections for r in self.relation_types)

    def kinds_of(self, headings: Iterable[str]) -> frozenset[str]:
        """The section kinds a chunk under ``headings`` (its section and those above it) is
        of: each kind one of whose words is a whole word of one of the headings."""
        texts = [h.lower() for h in headings]
        return frozenset(kind for kind, words in self.section_kinds
                         if any(_has_words(text, w.lower()) for text in texts for w in words))

    def for_section(self, kinds: frozenset[str]) -> "Domain":
        """This domain as a relation pass on a chunk of section ``kinds`` sees it: only the
        relations :meth:`RelationType.read_in` such a chunk, the examples' relations of the
        others left out, and a description that says so (the domain itself when nothing
        is left out). One object per set of kinds, kept with the domain."""
        if not self.scoped:
            return self
        if kinds not in self._by_section:
            kept = tuple(r for r in self.relation_types if r.read_in(kinds))
            labels = {label.lower() for r in kept for label in (r.name, *r.aliases)}
            examples = tuple(dataclasses.replace(e, relations=tuple(
                rel for rel in e.relations if str(rel.get("relation", "")).lower() in labels)) for e in self.examples)
            where = ", ".join(sorted(kinds)) or "none of the kinds relations are bound to"
            note = (f"This passage is from a section of kind: {where}. Relations bound to other sections, "
                    "and those read from the layout, are not asked for here.")
            self._by_section[kinds] = dataclasses.replace(
                self, relation_types=kept, examples=examples,
                description=f"{self.description} {note}".strip())
        return self._by_section[kinds]

    @functools.cached_property
    def _by_section(self) -> dict[frozenset[str], "Domain"]:
        return {}

    def relation_type(self, name: str) -> RelationType | None:
        """Look a relation up by name or by one of its aliases (case-insensitive)."""
        return self._relation_table.get(name.strip().lower())

    @functools.cached_property
    def _relation_table(self) -> dict[str, RelationType]:
        """Lower-cased relation name or alias -> the first relation type declaring it (every
        relation item of every answer is looked up; not a field: equality, hashing and
        ``dataclasses.asdict`` do not see it)."""
        table: dict[str, RelationType] = {}
        for r in self.relation_types:
            for label in (r.name, *r.aliases):
                table.setdefault(label.lower(), r)
        return table

    def nary_relation_type(self, name: str) -> NaryRelationType | None:
        return next((t for t in self.nary_relation_types if t.name == name), None)

    def event_type(self, name: str) -> EventType | None:
        return next((t for t in self.event_types if t.name == name), None)

    def qualifier(self, name: str) -> Qualifier | None:
        return next((q for q in self.qualifiers if q.name == name), None)


@dataclass(frozen=True)
class Projection:
    """Deterministic filter-and-relabel rules of a projection view (zero LLM calls).

    An edge is kept when its relation is in ``relations`` (or it is ``("*",)``) and, if
    ``end_types`` is set, at least one end's type — or one of that type's declared
    aliases — matches one of them (case-insensitive). With ``orient_to_end_type`` the
    matching end is put at the head; a flipped edge's relation gets ``inverse_suffix``.
    ``relabel`` maps relation names to the view's labels.
    """

    relations: tuple[str, ...] = ("*",)
    end_types: tuple[str, ...] = ()
    orient_to_end_type: bool = False
    inverse_suffix: str = "_inverse"
    relabel: dict[str, str] = field(default_factory=dict)
    min_confidence: float = 0.0
    include_unverified: bool = True


@dataclass(frozen=True)
class View:
    """A way of showing the graph; built-in views are files loaded exactly like a user's."""

    name: str
    description: str = ""
    version: str = "1"
    strategy: str = "projection"  # "projection" | "upgrade"
    mode: str = "projection.v1"  # registered mode implementation, e.g. "nary.v1"
    projection: Projection | None = None
    prompt: Path | None = None  # Jinja2 template for an upgrade pass
    output_schema: dict[str, Any] | None = None  # JSON Schema of one chunk's answer
    template: "Template | None" = None  # for diy views, the selected template
    source: Path | None = None

    @property
    def is_upgrade(self) -> bool:
        return self.strategy == "upgrade"


@dataclass(frozen=True)
class TemplateRelation:
    """A DIY relation: binary (roles head/tail) or n-ary with named roles."""

    name: str
    description: str = ""
    roles: tuple[Role, ...] = ()
    qualifiers: tuple[str, ...] = ()
    triggers: Patterns = Patterns()


@dataclass(frozen=True)
class Template:
    """A self-contained DIY schema (contract review, drug interaction, …)."""

    name: str
    description: str = ""
    version: str = "1"
    entity_types: tuple[EntityType, ...] = ()
    relation_types: tuple[TemplateRelation, ...] = ()
    qualifiers: tuple[Qualifier, ...] = ()
    examples: tuple[dict[str, Any], ...] = ()  # {"text", "entities", "relations"}
    source: Path | None = None

    def entity_type(self, name: str) -> EntityType | None:
        return next((t for t in self.entity_types if t.name == name), None)

    def relation_type(self, name: str) -> TemplateRelation | None:
        return next((t for t in self.relation_types if t.name == name), None)


def _has_words(text: str, words: str) -> bool:
    """Whether ``words`` occur in ``text`` as whole words."""
    at = text.find(words)
    while at >= 0:
        end = at + len(words)
        if (at == 0 or not text[at - 1].isalnum()) and (end == len(text) or not text[end].isalnum()):
            return True
        at = text.find(words, at + 1)
    return False
