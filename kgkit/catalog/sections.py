"""Module E's two tags on a domain's relation types, checked against the domain they live in.

``section_kinds`` names kinds of section by the words of their headings; a relation type's
``sections`` binds it to some of them (a paper's causal relations are read from its
introduction and discussion only), and its ``kind`` says whether it is read from the text
(``semantic``) or materialised from the layout (``structural``). The engine reads them
through :meth:`kgkit.formats.model.Domain.for_section`; here they are checked where they
are written: a section kind a relation names must be declared (after ``extends``), and a
structural relation, never asked of a pass, has no triggers and no sections.
"""
from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kgkit.catalog.raw import string_items, typed_items
from kgkit.errors import Issue, did_you_mean
from kgkit.formats.yaml_source import Source


def issues(src: Source, merged: dict[str, Any]) -> Iterator[Issue]:
    declared = merged.get("section_kinds")
    kinds = sorted(declared) if isinstance(declared, dict) else []
    for i, r in typed_items(src.data, "relation_types"):
        for j, name in string_items(r.get("sections")):
            if name not in kinds:
                hint = did_you_mean(name, kinds) or (f"declared: {', '.join(kinds)}" if kinds
                                                     else "declare it under section_kinds")
                yield src.issue(("relation_types", i, "sections", j),
                                f"unknown section kind {name!r}; expected one of the domain's section_kinds", hint)
        if r.get("kind") == "structural":
            for key in ("triggers", "sections"):
                if r.get(key):
                    yield src.issue(("relation_types", i, key),
                                    f"the structural relation {r.get('name')!r} is materialised from the layout, "
                                    f"never read from text; expected no {key}",
                                    f"leave {key} out, or make it kind: semantic")
