"""Load domains, views and DIY templates by name or path: find the file on the search path
(:mod:`kgkit.formats.search_path`), validate it, and build the model object.

Kept apart from the search path itself so validation, which must look names up, does not
import the loaders that call it.
"""
from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

from kgkit.errors import NotFoundError
from kgkit.catalog.build import build_domain, build_template, build_view
from kgkit.formats.search_path import available, find


def load_domain(ref: str | os.PathLike, project_dir: Path | None = None):
    """Load, validate and resolve (``extends``) a domain: name on the search path or a path."""
    return build_domain(find("domains", ref, project_dir), project_dir=project_dir)


def load_template(ref: str | os.PathLike, project_dir: Path | None = None):
    return build_template(find("templates", ref, project_dir))


def load_view(ref: str, project_dir: Path | None = None):
    """Load a view. ``diy:NAME`` or ``diy:path.yaml`` selects the diy view with that template."""
    name, _, template_ref = ref.partition(":")
    view = build_view(find("views", name, project_dir))
    if template_ref:
        if view.mode.split(".")[0] != "diy":
            raise NotFoundError(f"view {name!r} takes no template (only diy:TEMPLATE does)")
        template = load_template(template_ref, project_dir)
        return replace(view, name=f"{name}:{template.name}", template=template)
    if view.mode.split(".")[0] == "diy":
        raise NotFoundError(
            "the diy view needs a template: use --view diy:NAME or diy:path/to/template.yaml",
            hint="available templates: " + ", ".join(sorted(available("templates", project_dir))),
        )
    return view
