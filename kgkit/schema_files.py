"""Turn validated domain, view and template YAML into :mod:`kgkit.model` objects.

``extends`` merge rules (documented in docs/authoring-domains.md):
* scalar keys (description, version, chunking, default_views): the child's value wins;
* typed lists (entity_types, relation_types, nary_relation_types, event_types,
  qualifiers): merged by ``name`` — a child entry replaces the parent's entry of the same
  name whole, new names are appended after the parent's;
* examples: the parent's first, then the child's;
* a cycle in ``extends`` is an error.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from kgkit import model as m

TYPED_LISTS = ("entity_types", "relation_types", "nary_relation_types", "event_types", "qualifiers")


def read_yaml(kind: str, path: Path, project_dir: Path | None = None) -> dict[str, Any]:
    """Read and validate one file; raise ValidationError with every issue found.

    This is the single door through which kgkit reads its YAML; the checks themselves
    (schema, marks, duplicate keys, cross-checks) live in :mod:`kgkit.validation`.
    """
    from kgkit.validation import validate_file

    return validate_file(kind, path, project_dir)


def _patterns(value: Any) -> m.Patterns:
    if not value:
        return m.Patterns()
    if isinstance(value, list):
        return m.Patterns(phrases=tuple(value))
    return m.Patterns(regex=tuple(value.get("regex", ())), phrases=tuple(value.get("phrases", ())))


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


def _named(items: Any) -> list[dict[str, Any]]:
    """The entries of a typed list that have a name; validation reports the others."""
    if not isinstance(items, list):
        return []
    return [i for i in items if isinstance(i, dict) and isinstance(i.get("name"), str)]


def merge_domain_data(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Apply the ``extends`` merge rules to two raw domain mappings.

    It also runs on files that failed their schema (so cross-checks can still use the
    parent's types); malformed entries are left out here and reported by validation.
    """
    merged = dict(parent)
    for key, value in child.items():
        if key in TYPED_LISTS:
            by_name = {item["name"]: item for item in _named(parent.get(key))}
            for item in _named(value):
                by_name[item["name"]] = item  # same name: the child's entry replaces the parent's whole
            merged[key] = list(by_name.values())
        elif key == "examples":
            parent_examples = parent.get("examples") if isinstance(parent.get("examples"), list) else []
            merged[key] = parent_examples + (value if isinstance(value, list) else [])
        elif key != "extends":
            merged[key] = value
    return merged


def resolve_domain_data(path: Path, project_dir: Path | None = None) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Read a domain and its ``extends`` ancestors (all validated); return merged data and lineage."""
    from kgkit.validation import resolve_domain

    resolved = resolve_domain(path, project_dir)
    return resolved.merged, resolved.lineage


def build_domain(path: Path, project_dir: Path | None = None) -> m.Domain:
    data, lineage = resolve_domain_data(Path(path), project_dir)
    chunking = data.get("chunking") or {}
    return m.Domain(
        name=data["name"],
        description=data.get("description", ""),
        version=str(data.get("version", "1")),
        entity_types=tuple(_entity_type(d) for d in data.get("entity_types", ())),
        relation_types=tuple(
            m.RelationType(
                name=d["name"],
                description=d.get("description", ""),
                head=tuple(d["head"]),
                tail=tuple(d["tail"]),
                symmetric=bool(d.get("symmetric", False)),
                triggers=_patterns(d.get("triggers")),
                aliases=tuple(d.get("aliases", ())),
            )
            for d in data.get("relation_types", ())
        ),
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
        chunking=m.Chunking(
            size=chunking.get("size", m.Chunking.size), overlap=chunking.get("overlap", m.Chunking.overlap)
        ),
        source=Path(path),
        lineage=lineage,
    )


DEFAULT_MODES = {"binary": "projection.v1", "person": "projection.v1", "nary": "nary.v1",
                 "temporal": "temporal.v1", "event": "event.v1", "diy": "diy.v1"}


def build_view(path: Path) -> m.View:
    data = read_yaml("views", Path(path))
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
        prompt = _resolve_prompt(Path(path).parent, up["prompt"])
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


def _resolve_prompt(base: Path, ref: str) -> Path:
    """A prompt path relative to the view file, else a built-in prompt (validation checked it exists)."""
    from kgkit.validation import resolve_prompt

    return resolve_prompt(base, ref) or (base / ref)


def build_template(path: Path) -> m.Template:
    data = read_yaml("templates", Path(path))
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
