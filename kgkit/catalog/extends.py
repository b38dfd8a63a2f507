"""A domain's ``extends``: the parent file it names, what it takes of the parent, and the merge.

The merge rules are those of :mod:`kgkit.catalog.validation`'s docstring (and
docs/authoring-domains.md); :func:`kgkit.catalog.validation.resolve_domain` walks the chain,
checking each file, and calls these.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kgkit.catalog.raw import TYPED_LISTS, binary_relation_names, declared_names, string_items, typed_items
from kgkit.errors import NotFoundError, did_you_mean
from kgkit.formats import search_path


@dataclass(frozen=True)
class ResolvedDomain:
    """A domain file's own data, the data after ``extends``, and the chain it came from."""

    data: dict[str, Any]
    merged: dict[str, Any]
    lineage: tuple[str, ...]  # names, this domain first
    files: tuple[Path, ...]  # files, this domain first


def extends_parts(ref: Any) -> tuple[Any, dict[str, Any]]:
    """``extends`` as (parent reference, selection): a plain name or path selects everything."""
    if isinstance(ref, dict):
        return ref.get("domain"), ref
    return ref, {}


def select_from_parent(parent: dict[str, Any], selection: dict[str, Any]) -> tuple[dict[str, Any], list[tuple[tuple, str, str | None]]]:
    """The parent's data cut down to what ``selection`` (``include``/``exclude``/``examples``) asks for.

    Returns the selected data and, for every name the parent does not declare, its key path
    under ``extends``, a message and a did-you-mean hint (or None).
    """
    selected = dict(parent)
    problems: list[tuple[tuple, str, str | None]] = []
    for mode in ("include", "exclude"):
        lists = selection.get(mode)
        if not isinstance(lists, dict):
            continue
        for key, names in lists.items():
            if key not in TYPED_LISTS or not isinstance(names, list):
                continue  # the schema reports it
            declared = [item["name"] for _, item in typed_items(parent, key) if isinstance(item.get("name"), str)]
            for i, name in enumerate(names):
                if name not in declared:
                    problems.append(((mode, key, i), f"the parent declares no {key[:-1].replace('_', ' ')} {name!r}; "
                                     f"expected one of: {', '.join(declared) or 'none'}", did_you_mean(str(name), declared)))
            wanted = set(names)
            selected[key] = [item for _, item in typed_items(parent, key)
                             if (item.get("name") in wanted) == (mode == "include")]
    if selection.get("examples") is False:
        selected["examples"] = []
    return selected, problems


def dangling_references(inherited: dict[str, Any], merged: dict[str, Any]) -> list[str]:
    """What an inherited entry still names after ``include``/``exclude`` left it behind.

    A relation whose head type was not taken, or a qualifier of a relation that was not,
    would be a domain that means something other than it says: each is an error naming
    the entry, so the author takes the type too or leaves the entry behind as well.
    """
    types = set(declared_names(merged, "entity_types")) | {"*"}
    relations = set(binary_relation_names(merged)) | set(declared_names(merged, "nary_relation_types"))
    out = []
    for _, r in typed_items(inherited, "relation_types"):
        missing = [t for end in ("head", "tail") for _, t in string_items(r.get(end)) if t not in types]
        if missing:
            out.append(f"the inherited relation type {r.get('name')!r} needs entity type(s) {', '.join(sorted(set(missing)))}; "
                       "expected them included, or the relation excluded too")
    for key in ("nary_relation_types", "event_types"):
        for _, item in typed_items(inherited, key):
            roles = item.get("roles")
            if not isinstance(roles, dict):
                roles = {}
            missing = sorted({t for role in roles.values() if isinstance(role, dict) for _, t in string_items(role.get("types"))
                              if t not in types})
            if missing:
                out.append(f"the inherited {key[:-1].replace('_', ' ')} {item.get('name')!r} needs entity type(s) "
                           f"{', '.join(missing)}; expected them included, or it excluded too")
    for _, q in typed_items(inherited, "qualifiers"):
        missing = sorted(name for _, name in string_items(q.get("relations")) if name not in relations)
        if missing:
            out.append(f"the inherited qualifier {q.get('name')!r} names relation(s) {', '.join(missing)}; "
                       "expected them included, or the qualifier excluded too")
    return out


def merge_domain_data(parent: dict[str, Any], child: dict[str, Any]) -> dict[str, Any]:
    """Apply the ``extends`` merge rules to two raw domain mappings.

    ``parent`` is the parent's data as already cut down by :func:`select_from_parent`. It
    also runs on files that failed their schema (so cross-checks can still use the
    parent's types); malformed entries are left out here and reported by the checks.
    """
    merged = dict(parent)
    for key, value in child.items():
        if key in TYPED_LISTS:
            by_name = {item["name"]: item for _, item in typed_items(parent, key) if isinstance(item.get("name"), str)}
            for _, item in typed_items(child, key):
                if isinstance(item.get("name"), str):
                    by_name[item["name"]] = item  # same name: the child's entry replaces the parent's whole
            merged[key] = list(by_name.values())
        elif key == "examples":
            parent_examples = parent.get("examples")
            if not isinstance(parent_examples, list):
                parent_examples = []
            merged[key] = parent_examples + (value if isinstance(value, list) else [])
        elif key != "extends":
            merged[key] = value
    return merged


def inside(path: Path, folders: Iterable[Path]) -> bool:
    """Whether ``path``, symlinks resolved, lies in one of ``folders`` (symlinks resolved too)."""
    real = Path(path).resolve()
    return any(real.is_relative_to(Path(f).resolve()) for f in folders)


def find_parent(ref: str, child: Path, project_dir: Path | None) -> Path:
    """The file an ``extends`` names: a domain on the search path, or a path relative to the
    child that stays in the child's folder or a search-path folder (symlinks resolved), so a
    shared domain cannot make kgkit read, and print, a file elsewhere (``../.env``)."""
    if search_path.looks_like_path(ref):
        candidate = Path(ref).expanduser()
        if not candidate.is_absolute():
            candidate = child.parent / candidate
        roots = [child.parent, *search_path.search_path("domains", project_dir)]
        if not inside(candidate, roots):
            raise NotFoundError(
                f"extends path {ref!r} leads outside the domain's folder ({child.parent}); "
                "expected a file beside it or a domain name on the search path")
        if candidate.is_file():
            return candidate
        raise NotFoundError(f"no domain file at {ref} (relative to {child.parent})")
    return search_path.find("domains", ref, project_dir, skip=child)
