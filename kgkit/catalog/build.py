"""Turn validated domain, view and template YAML into :mod:`kgkit.formats.model` objects.

Reading, checking and resolving ``extends`` happen in :mod:`kgkit.catalog.validation`; this
module only builds the frozen model objects from the data it returns.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from kgkit.catalog import exclusions
from kgkit.formats import model as m
from kgkit.catalog.validation import resolve_domain, resolve_prompt, validate_file


def _patterns(value: Any) -> m.Patterns:
    if not value:
        return m.Patterns()
    if isinstance(value, list):
        return m.Patterns(phrases=tuple(value))
    return m.Patterns(regex=tuple(value.get("regex", ())), phrases=tuple(value.get("phrases", ())),
                      labels=tuple((label, tuple(rxs)) for label, rxs in (value.get("labels") or {}).items()))


def _roles(value: dict[str, Any] | None) -> tuple[m.Role, ...]:
    return tuple(
        m.Role(
            name=name,
            types=tuple(spec.get("types", ())),
            literal=spec.get("literal"),
            required=bool(spec.get("required", False)),
            description=spec.get("description", ""),
        )
        for name, spec in (value or {}).items()
    )


def _entity_type(d: dict[str, Any]) -> m.EntityType:
    return m.EntityType(
        name=d["name"],
        description=d.get("description", ""),
        aliases=tuple(d.get("aliases", ())),
        examples=tuple(d.get("examples", ())),
        patterns=_patterns(d.get("patterns")),
        category=bool(d.get("category", False)),
        scope=d.get("scope"),
    )


def _relation_type(d: dict[str, Any]) -> m.RelationType:
    return m.RelationType(
        name=d["name"],
        description=d.get("description", ""),
        head=tuple(d["head"]),
        tail=tuple(d["tail"]),
        symmetric=bool(d.get("symmetric", False)),
        triggers=_patterns(d.get("triggers")),
        aliases=tuple(d.get("aliases", ())),
        kind=d.get("kind"),
        sections=tuple(d.get("sections", ())),
    )


def _qualifier(d: dict[str, Any]) -> m.Qualifier:
    return m.Qualifier(
        name=d["name"],
        type=d["type"],
        description=d.get("description", ""),
        relations=tuple(d.get("relations", ("*",))),
        values=tuple(d.get("values", ())),
        triggers=_patterns(d.get("triggers")),
    )


def build_domain(path: Path, project_dir: Path | None = None) -> m.Domain:
    """A domain with its ``extends`` chain applied; ValidationError with every issue otherwise."""
    resolved = resolve_domain(path, project_dir)
    data = exclusions.apply(resolved.merged)
    chunking = data.get("chunking") or {}
    return m.Domain(
        name=data["name"],
        description=data.get("description", ""),
        version=str(data.get("version", "1")),
        entity_types=tuple(_entity_type(d) for d in data.get("entity_types", ())),
        relation_types=tuple(_relation_type(d) for d in data.get("relation_types", ())),
        nary_relation_types=tuple(
            m.NaryRelationType(
                name=d["name"],
                description=d.get("description", ""),
                roles=_roles(d.get("roles")),
                triggers=_patterns(d.get("triggers")),
            )
            for d in data.get("nary_relation_types", ())
        ),
        event_types=tuple(
            m.EventType(
                name=d["name"],
                description=d.get("description", ""),
                triggers=_patterns(d.get("triggers")),
                roles=_roles(d.get("roles")),
            )
            for d in data.get("event_types", ())
        ),
        qualifiers=tuple(_qualifier(d) for d in data.get("qualifiers", ())),
        examples=tuple(
            m.Example(
                text=d["text"],
                entities=tuple(d.get("entities", ())),
                relations=tuple(d.get("relations", ())),
            )
            for d in data.get("examples", ())
        ),
        default_views=tuple(data.get("default_views", ("binary",))),
        document_type=data.get("document_type"),
        chunking=m.Chunking(
            size=chunking.get("size", m.Chunking.size), overlap=chunking.get("overlap", m.Chunking.overlap)
        ),
        reading=data.get("reading", m.Domain.reading),
        section_kinds=tuple((k, tuple(words)) for k, words in (data.get("section_kinds") or {}).items()),
        source=Path(path),
        lineage=resolved.lineage,
    )


DEFAULT_MODES = {"binary": "projection.v1", "person": "projection.v1", "nary": "nary.v1",
                 "temporal": "temporal.v1", "event": "event.v1", "diy": "diy.v1"}


def build_view(path: Path) -> m.View:
    data = validate_file("views", path)
    strategy = data["strategy"]
    mode = data.get("mode") or DEFAULT_MODES.get(data["name"], "projection.v1" if strategy == "projection" else "")
    projection = None
    prompt = None
    output_schema = None
    if strategy == "projection":
        p = data.get("projection") or {}
        projection = m.Projection(
            relations=tuple(p.get("relations", ("*",))),
            end_types=tuple(p.get("end_types", ())),
            orient_to_end_type=bool(p.get("orient_to_end_type", False)),
            inverse_suffix=p.get("inverse_suffix", "_inverse"),
            relabel=dict(p.get("relabel", {})),
            min_confidence=float(p.get("min_confidence", 0.0)),
            include_unverified=bool(p.get("include_unverified", True)),
        )
    else:
        up = data["upgrade"]
        base = Path(path).parent
        prompt = resolve_prompt(base, up["prompt"]) or base / up["prompt"]  # validation checked it exists
        output_schema = up["output_schema"]
    return m.View(
        name=data["name"],
        description=data.get("description", ""),
        version=str(data.get("version", "1")),
        strategy=strategy,
        mode=mode,
        projection=projection,
        prompt=prompt,
        output_schema=output_schema,
        source=Path(path),
    )


def build_template(path: Path) -> m.Template:
    data = validate_file("templates", path)
    return m.Template(
        name=data["name"],
        description=data.get("description", ""),
        version=str(data.get("version", "1")),
        entity_types=tuple(_entity_type(d) for d in data["entity_types"]),
        relation_types=tuple(
            m.TemplateRelation(
                name=d["name"],
                description=d.get("description", ""),
                roles=_roles(d.get("roles")),
                qualifiers=tuple(d.get("qualifiers", ())),
                triggers=_patterns(d.get("triggers")),
            )
            for d in data["relation_types"]
        ),
        qualifiers=tuple(_qualifier(d) for d in data.get("qualifiers", ())),
        examples=tuple(data.get("examples", ())),
        source=Path(path),
    )
