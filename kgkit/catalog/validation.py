"""Check a domain, view or DIY template file and explain every problem to its author.

A file passes two gates. Its JSON Schema (``kgkit/schemas/<kind>.schema.json``, Draft
2020-12, unknown keys forbidden) catches shape errors; the cross-checks here catch what a
schema cannot: relation ends and roles naming undeclared types, examples using unknown
types or relations, duplicate names, default views or parent domains that do not exist,
regexes that do not compile, ``extends`` cycles. Cross-checks run on the domain *after*
``extends``, so a child may use its parent's types.

``extends`` merge rules (documented in docs/authoring-domains.md):

* scalar keys (description, version, chunking, default_views): the child's value wins;
* typed lists (entity_types, relation_types, nary_relation_types, event_types,
  qualifiers): merged by ``name`` — a child entry replaces the parent's entry of the same
  name whole, new names are appended after the parent's;
* examples: the parent's first, then the child's;
* ``extends`` as a mapping (``domain``, ``include``, ``exclude``, ``examples``) takes only
  what the child asks for: ``include`` lists, per typed list, the parent's entries to take
  (an empty list takes none; a key left out takes all), ``exclude`` drops named entries,
  ``examples: false`` leaves the parent's examples behind. A name the parent lacks is an
  error, so a renamed parent type cannot slip back in unnoticed;
* a cycle in ``extends`` is an error.

The parent's file, its selection and the merge are :mod:`kgkit.catalog.extends`; the typed
lists read from raw data, :mod:`kgkit.catalog.raw`.

Every problem becomes an :class:`~kgkit.errors.Issue` with ``file:line:column``, the key
path, what was expected and, for misspelt keys and names, a did-you-mean. All issues of a
file are collected and raised together as one :class:`~kgkit.errors.ValidationError`.
"""
from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from kgkit.formats import search_path, yaml_source
from kgkit.errors import Issue, NotFoundError, ValidationError, did_you_mean
from kgkit.formats.json_schemas import schema_issues
from kgkit.formats.yaml_source import KeyPath, Source
from kgkit.catalog.extends import (ResolvedDomain, dangling_references, extends_parts, find_parent, inside,
                                   merge_domain_data, select_from_parent)
from kgkit.catalog.raw import TYPED_LISTS, binary_relation_names, declared_names, string_items, typed_items

# catalog kinds (plural, as folders) and the schema each is checked against
KINDS = {"domains": "domain", "views": "view", "templates": "template"}


def normalise_kind(kind: str) -> str:
    """Accept 'domain' or 'domains' (and so on); return the catalog's plural form."""
    plural = kind if kind.endswith("s") else kind + "s"
    if plural not in KINDS:
        raise ValueError(f"unknown kind {kind!r}; expected one of {', '.join(KINDS)}")
    return plural


# --------------------------------------------------------------------------- cross-checks


def _unknown(src: Source, path: KeyPath, what: str, name: str, known: list[str], wildcard: bool) -> Issue:
    expected = f"a declared {what}" + (" or '*'" if wildcard else "")
    hint = did_you_mean(name, known) or (f"declared: {', '.join(known)}" if known else f"no {what}s are declared")
    return src.issue(path, f"unknown {what} {name!r}; expected {expected}", hint)


def _check_duplicates(src: Source, keys: Iterable[str]) -> Iterator[Issue]:
    for key in keys:
        first: dict[str, int] = {}
        for i, item in typed_items(src.data, key):
            name = item.get("name")
            if not isinstance(name, str):
                continue
            if name in first:
                line = (src.mark((key, first[name])) or (None,))[0]
                yield src.issue((key, i, "name"), f"duplicate name {name!r} (first at line {line}); expected each name once in {key}")
            else:
                first[name] = i


def _check_type_refs(src: Source, path: KeyPath, value: Any, entity_types: list[str]) -> Iterator[Issue]:
    for j, name in string_items(value):
        if name != "*" and name not in entity_types:
            yield _unknown(src, path + (j,), "entity type", name, entity_types, wildcard=True)


def _check_roles(src: Source, key: str, entity_types: list[str]) -> Iterator[Issue]:
    for i, item in typed_items(src.data, key):
        roles = item.get("roles")
        if isinstance(roles, dict):
            for role, spec in roles.items():
                if isinstance(spec, dict):
                    yield from _check_type_refs(src, (key, i, "roles", role, "types"), spec.get("types"), entity_types)


def _walk_patterns(value: Any, path: KeyPath) -> Iterator[tuple[KeyPath, str]]:
    """Every regex under a ``patterns`` or ``triggers`` mapping, with its path."""
    if isinstance(value, dict):
        for key, sub in value.items():
            if key in ("patterns", "triggers") and isinstance(sub, dict):
                for j, rx in string_items(sub.get("regex")):
                    yield path + (key, "regex", j), rx
                labels = sub.get("labels")
                if not isinstance(labels, dict):
                    labels = {}
                for label, rxs in labels.items():
                    yield from ((path + (key, "labels", label, j), rx) for j, rx in string_items(rxs))
            else:
                yield from _walk_patterns(sub, path + (key,))
    elif isinstance(value, list):
        for i, sub in enumerate(value):
            yield from _walk_patterns(sub, path + (i,))


def _check_regexes(src: Source) -> Iterator[Issue]:
    """Each regex must compile as it will run (kgkit.guards.safe_regex) and must not backtrack exponentially."""
    patterns = list(_walk_patterns(src.data, ()))
    if not patterns:
        return
    from kgkit.guards import safe_regex  # the regex engine, imported only for a domain that has patterns

    for path, rx in patterns:
        try:
            re.compile(rx)  # its messages point where a bracket opened; then the engine that runs it
            safe_regex.compile(rx)
        except (re.error, safe_regex.error) as exc:
            where = f" at position {exc.pos}" if exc.pos is not None else ""
            yield src.issue(path, f"invalid regular expression '{rx}': {exc.msg}{where}; expected a Python regex")
            continue
        slow = safe_regex.nested_quantifier(rx)
        if slow:
            pos, why = slow
            yield src.issue(path, f"regular expression '{rx}' can take exponential time: at position {pos}, {why}; "
                                  "expected one quantifier per part, an atomic group (?>...) or a possessive quantifier (++)")


def _check_qualifier_relations(src: Source, relations: list[str]) -> Iterator[Issue]:
    for i, q in typed_items(src.data, "qualifiers"):
        for j, name in string_items(q.get("relations")):
            if name != "*" and name not in relations:
                yield _unknown(src, ("qualifiers", i, "relations", j), "relation type", name, relations, True)


def _check_enum_qualifiers(src: Source) -> Iterator[Issue]:
    for i, q in typed_items(src.data, "qualifiers"):
        if q.get("type") == "enum" and not q.get("values"):
            yield src.issue(("qualifiers", i, "type"), "a qualifier of type enum needs 'values'; expected a list of allowed values")


def _relation_by_label(data: dict[str, Any], label: str) -> dict[str, Any] | None:
    key = label.lower()
    for _, r in typed_items(data, "relation_types"):
        if str(r.get("name", "")).lower() == key or key in (a.lower() for _, a in string_items(r.get("aliases"))):
            return r
    return None


def _check_domain_examples(src: Source, merged: dict[str, Any], entity_types: list[str]) -> Iterator[Issue]:
    relations = binary_relation_names(merged)
    for i, example in typed_items(src.data, "examples"):
        types: dict[str, str] = {}  # this example's entity name -> type
        for j, ent in typed_items(example, "entities"):
            if isinstance(ent.get("type"), str):
                types.setdefault(str(ent.get("name")), ent["type"])
                if ent["type"] not in entity_types:
                    yield _unknown(src, ("examples", i, "entities", j, "type"), "entity type", ent["type"], entity_types, False)
        for j, rel in typed_items(example, "relations"):
            path = ("examples", i, "relations", j)
            label = rel.get("relation")
            spec = _relation_by_label(merged, label) if isinstance(label, str) else None
            if isinstance(label, str) and spec is None:
                yield _unknown(src, path + ("relation",), "relation type", label, relations, False)
            if not types:  # no entities listed: nothing to check the ends against
                continue
            ends: list[Any] = [rel.get("head"), rel.get("tail")]
            for end, who in zip(("head", "tail"), ends):
                if isinstance(who, str) and who not in types:
                    yield src.issue(
                        path + (end,),
                        f"{who!r} is not one of this example's entities; expected one of: {', '.join(types)}",
                        did_you_mean(who, types),
                    )
            if spec is not None and all(isinstance(w, str) and w in types for w in ends):
                yield from _check_example_ends(src, path, spec, types[ends[0]], types[ends[1]])


def _check_example_ends(src: Source, path: KeyPath, spec: dict[str, Any], head_type: str, tail_type: str) -> Iterator[Issue]:
    heads = [h for _, h in string_items(spec.get("head"))]
    tails = [t for _, t in string_items(spec.get("tail"))]

    def fits(h: str, t: str) -> bool:
        return ("*" in heads or h in heads) and ("*" in tails or t in tails)

    if fits(head_type, tail_type) or (spec.get("symmetric") and fits(tail_type, head_type)):
        return
    yield src.issue(
        path,
        f"{spec.get('name')} does not connect {head_type} to {tail_type}; "
        f"expected head {' or '.join(heads)} and tail {' or '.join(tails)}",
    )


def _check_relation_aliases(src: Source, merged: dict[str, Any]) -> Iterator[Issue]:
    """A label must normalise to one relation: an alias may not be another relation's name or alias."""
    owner: dict[str, Any] = {}  # a relation's name as written, which the schema may have refused
    for _, r in typed_items(merged, "relation_types"):
        if isinstance(r.get("name"), str):
            owner.setdefault(r["name"].lower(), r["name"])
    for i, r in typed_items(src.data, "relation_types"):
        name = r.get("name")
        for j, alias in string_items(r.get("aliases")):
            other = owner.get(alias.lower())
            if other is not None and other != name:
                yield src.issue(("relation_types", i, "aliases", j),
                                f"alias {alias!r} is already the relation {other!r}; expected a label no other relation uses")
            owner.setdefault(alias.lower(), name)


def _check_default_views(src: Source, project_dir: Path | None) -> Iterator[Issue]:
    views = search_path.available("views", project_dir)
    for j, ref in string_items(src.data.get("default_views")):
        name, sep, template = ref.partition(":")
        if name not in views:
            hint = did_you_mean(name, views) or (f"available: {', '.join(sorted(views))}" if views else None)
            yield src.issue(("default_views", j), f"unknown view {name!r}; expected one of the available views", hint)
        elif sep:
            try:
                search_path.find("templates", template, project_dir)
            except NotFoundError as exc:
                yield src.issue(("default_views", j), exc.message, exc.hint)


def _check_common(src: Source) -> list[Issue]:
    issues = list(_check_regexes(src))
    issues += _check_enum_qualifiers(src)
    return issues


def _check_domain(src: Source, merged: dict[str, Any], project_dir: Path | None, types_known: bool) -> list[Issue]:
    issues = _check_common(src)
    issues += _check_duplicates(src, TYPED_LISTS)
    issues += _check_default_views(src, project_dir)
    if not types_known:  # the parent could not be read: its types are unknown, so say nothing
        return issues
    entity_types = declared_names(merged, "entity_types")
    for i, r in typed_items(src.data, "relation_types"):
        for end in ("head", "tail"):
            issues += _check_type_refs(src, ("relation_types", i, end), r.get(end), entity_types)
    issues += _check_roles(src, "nary_relation_types", entity_types)
    issues += _check_roles(src, "event_types", entity_types)
    issues += _check_relation_aliases(src, merged)
    issues += _check_qualifier_relations(src, binary_relation_names(merged) + declared_names(merged, "nary_relation_types"))
    issues += _check_domain_examples(src, merged, entity_types)
    issues += _check_document_type(src, merged, entity_types)
    issues += _check_not_in_relations(src, entity_types)
    from kgkit.catalog import queries, sections  # loads the pattern language only when a domain is checked

    issues += queries.issues(src, merged)
    issues += sections.issues(src, merged)
    return issues


def _check_document_type(src: Source, merged: dict[str, Any], entity_types: list[str]) -> Iterator[Issue]:
    """``document_type`` names a declared entity type whose scope is document (one per document)."""
    name = merged.get("document_type")
    if not isinstance(name, str) or "document_type" not in src.data:
        return
    if name not in entity_types:
        yield _unknown(src, ("document_type",), "entity type", name, entity_types, False)
        return
    for i, t in typed_items(merged, "entity_types"):
        if t.get("name") == name and t.get("scope") not in (None, "document"):
            yield src.issue(("document_type",), f"document_type {name!r} has scope {t['scope']!r}; the type that is "
                            "the document is one node per document", "give it scope: document, or leave scope out")


def _check_not_in_relations(src: Source, entity_types: list[str]) -> Iterator[Issue]:
    """``not_in_relations.types`` names declared entity types (checked where it is written)."""
    spec = src.data.get("not_in_relations")
    if isinstance(spec, dict):
        for i, name in string_items(spec.get("types")):
            if name not in entity_types:
                yield _unknown(src, ("not_in_relations", "types", i), "entity type", name, entity_types, False)


def _check_template(src: Source) -> list[Issue]:
    data = src.data
    issues = _check_common(src)
    issues += _check_duplicates(src, ("entity_types", "relation_types", "qualifiers"))
    entity_types = declared_names(data, "entity_types")
    qualifiers = declared_names(data, "qualifiers")
    relations = declared_names(data, "relation_types")
    issues += _check_roles(src, "relation_types", entity_types)
    for i, r in typed_items(data, "relation_types"):
        for j, name in string_items(r.get("qualifiers")):
            if name not in qualifiers:
                issues.append(_unknown(src, ("relation_types", i, "qualifiers", j), "qualifier", name, qualifiers, False))
    issues += _check_qualifier_relations(src, relations)
    issues += _check_template_examples(src, entity_types, relations, qualifiers)
    return issues


def _check_template_examples(src: Source, entity_types: list[str], relations: list[str], qualifiers: list[str]) -> Iterator[Issue]:
    by_name = {r["name"]: r for _, r in typed_items(src.data, "relation_types") if isinstance(r.get("name"), str)}
    for i, example in typed_items(src.data, "examples"):
        names = sorted({str(e.get("name")) for _, e in typed_items(example, "entities")})
        for j, ent in typed_items(example, "entities"):
            if isinstance(ent.get("type"), str) and ent["type"] not in entity_types:
                yield _unknown(src, ("examples", i, "entities", j, "type"), "entity type", ent["type"], entity_types, False)
        for j, rel in typed_items(example, "relations"):
            path = ("examples", i, "relations", j)
            label = rel.get("relation")
            if not isinstance(label, str):
                continue
            if label not in by_name:
                yield _unknown(src, path + ("relation",), "relation type", label, relations, False)
                continue
            roles = by_name[label].get("roles")
            if not isinstance(roles, dict):
                roles = {}
            fillers = rel.get("roles")
            if not isinstance(fillers, dict):
                fillers = {}
            for role, filler in fillers.items():
                if role not in roles:
                    yield src.issue(path + ("roles", role),
                                    f"unknown role {role!r} of {label}; expected one of: {', '.join(roles)}",
                                    did_you_mean(role, roles), key=True)
                    continue
                if not names or (isinstance(roles[role], dict) and roles[role].get("literal")):
                    continue  # a literal role takes free text, not an entity
                for k, who in enumerate(filler if isinstance(filler, list) else [filler]):
                    if isinstance(who, str) and who not in names:
                        where = path + ("roles", role) + ((k,) if isinstance(filler, list) else ())
                        yield src.issue(where, f"{who!r} is not one of this example's entities; expected one of: {', '.join(names)}",
                                        did_you_mean(who, names))
            named = rel.get("qualifiers")
            for name in named if isinstance(named, dict) else ():
                if name not in qualifiers:
                    yield _unknown(src, path + ("qualifiers", name), "qualifier", name, qualifiers, False)


def _check_view(src: Source) -> list[Issue]:
    issues = _check_common(src)
    mode = src.data.get("mode")
    if isinstance(mode, str):
        from kgkit.modes.registry import available_modes, is_mode

        if not is_mode(mode):
            modes = available_modes()
            hint = did_you_mean(mode, modes) or f"registered: {', '.join(modes)}"
            issues.append(src.issue(("mode",), f"unknown mode {mode!r}; expected a registered mode", hint))
    upgrade = src.data.get("upgrade")
    if not isinstance(upgrade, dict):
        return issues
    prompt = upgrade.get("prompt")
    if isinstance(prompt, str) and prompt and resolve_prompt(Path(src.file).parent, prompt) is None:
        issues.append(src.issue(
            ("upgrade", "prompt"),
            f"prompt file {prompt!r} not found; expected a path relative to the view file "
            "or the name of a built-in prompt (kgkit/prompts)",
        ))
    schema = upgrade.get("output_schema")
    if isinstance(schema, dict) and not _certainly_a_schema(schema):
        from jsonschema import Draft202012Validator
        from jsonschema.exceptions import SchemaError

        try:
            Draft202012Validator.check_schema(schema)
        except SchemaError as exc:
            issues.append(src.issue(("upgrade", "output_schema") + tuple(exc.absolute_path),
                                    f"not a valid JSON Schema: {exc.message}"))
    return issues


def _certainly_a_schema(schema: dict) -> bool:
    """Whether jsonschema's ``check_schema`` would pass ``schema``, from jsonschema_rs's yes
    against the same meta-schema (Draft 2020-12), so a run need not import jsonschema for
    its views. Only for a schema without what the two may judge apart: keywords whose
    values the meta-schema checks by format (a pattern, a ``$ref`` or ``$id``), ``format``
    itself, or another draft named by ``$schema``."""
    try:
        text = json.dumps(schema)
    except (TypeError, ValueError, RecursionError):  # not JSON (a YAML date, a cycle): jsonschema says why
        return False
    if '"pattern' in text or '"format"' in text or '"$' in text:
        return False
    import jsonschema_rs

    try:
        return jsonschema_rs.meta.is_valid(schema)
    except (TypeError, ValueError, OverflowError, jsonschema_rs.ReferencingError):
        return False


def resolve_prompt(base: Path, ref: str) -> Path | None:
    """A prompt path relative to the view file, else a built-in prompt of that name, else None.

    The path must stay in the view's folder once symlinks are resolved: a view is a file
    people share, and its prompt is sent to the provider.
    """
    candidate = (base / ref).resolve()
    if candidate.is_file() and inside(candidate, [base]):
        return candidate
    builtin = Path(__file__).resolve().parent.parent / "prompts" / Path(ref).name
    return builtin if builtin.is_file() else None


def _domain(path: Path, project_dir: Path | None, chain: tuple[Path, ...], cycles: list) -> tuple[list[Issue], ResolvedDomain | None]:
    """Check one domain file and its ancestors; a cycle is recorded for the outermost call."""
    src = yaml_source.load(path)
    if src.fatal:
        return src.issues, None
    issues = src.issues + schema_issues(src, "domain")
    me = path.resolve()
    parent: ResolvedDomain | None = None
    types_known = True
    ref, selection = extends_parts(src.data.get("extends"))
    if isinstance(ref, str) and ref:
        try:
            parent_path = find_parent(ref, path, project_dir)
        except NotFoundError as exc:
            issues.append(src.issue(("extends",), exc.message, exc.hint))
            types_known = False
        else:
            if parent_path.resolve() in chain + (me,):
                cycles.append(chain + (me, parent_path.resolve()))
                types_known = False
            else:
                parent_issues, parent = _domain(parent_path, project_dir, chain + (me,), cycles)
                if parent_issues:
                    n = len(parent_issues)
                    issues.append(src.issue(("extends",), f"parent domain {ref!r} ({parent_path}) has {n} problem{'s' if n != 1 else ''}; expected a valid parent"))
                    issues += parent_issues
                types_known = parent is not None
    if parent:
        inherited, problems = select_from_parent(parent.merged, selection)
        issues += [src.issue(("extends",) + where, message, hint) for where, message, hint in problems]
        merged = merge_domain_data(inherited, src.data)
        if selection:
            issues += [src.issue(("extends",), message) for message in dangling_references(inherited, merged)]
    else:
        merged = dict(src.data)
    issues += _check_domain(src, merged, project_dir, types_known)
    name = src.data.get("name") if isinstance(src.data.get("name"), str) else path.stem
    resolved = ResolvedDomain(
        data=src.data,
        merged=merged,
        lineage=(name,) + (parent.lineage if parent else ()),
        files=(path,) + (parent.files if parent else ()),
    )
    if not chain and cycles:
        loop = " -> ".join(p.name for p in cycles[0])
        issues.append(src.issue(("extends",), f"extends cycle: {loop}; expected a chain of parents that ends"))
    return issues, resolved


def resolve_domain(path: str | os.PathLike, project_dir: Path | None = None) -> ResolvedDomain:
    """Validate a domain file and its ``extends`` ancestors and merge them.

    Raises :class:`ValidationError` with every issue of the file and of its parents.
    """
    issues, resolved = _domain(Path(path), project_dir, (), [])
    if issues or resolved is None:
        raise ValidationError(_unique(issues))
    return resolved


def _unique(issues: list[Issue]) -> list[Issue]:
    seen, out = set(), []
    for issue in issues:
        key = (issue.file, issue.line, issue.column, issue.path, issue.message)
        if key not in seen:
            seen.add(key)
            out.append(issue)
    return out


def validate_file(kind: str, path: str | os.PathLike, project_dir: Path | None = None) -> dict[str, Any]:
    """Validate one file of ``kind`` (domain(s), view(s), template(s)); return its own data.

    For a domain the ``extends`` chain is checked too and cross-checks use the merged types.
    Raises :class:`ValidationError` carrying every issue, sorted by file and line.
    """
    kind = normalise_kind(kind)
    if kind == "domains":
        return resolve_domain(path, project_dir).data
    src = yaml_source.load(path)
    if src.fatal:
        raise ValidationError(src.issues)
    issues = src.issues + schema_issues(src, KINDS[kind])
    issues += _check_view(src) if kind == "views" else _check_template(src)
    if issues:
        raise ValidationError(_unique(issues))
    return src.data
