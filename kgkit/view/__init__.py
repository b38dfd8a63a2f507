"""``kgkit view``: a corpus graph or run folders as one self-contained HTML page.

    from kgkit.view import write_page
    write_page("corpus.sqlite", "corpus.html")          # or a run folder, or kgkit-out/

The page (kgkit/view/assets/) draws the graph on a 2D canvas with its own renderer (draw.js;
graphology's ForceAtlas2, vendored in kgkit/view/vendor/, refines the layout) and needs no
network. See docs/viewer.md.
"""
from __future__ import annotations

from pathlib import Path

from kgkit.view.model import ViewerData, from_store
from kgkit.view.page import render
from kgkit.view.passages import Passages
from kgkit.view.source import open_target

__all__ = ["ViewerData", "build_data", "render", "write_page"]


def build_data(target: str, *, tenant: str | None = None, config=None, text: bool = True) -> ViewerData:
    """The page data of ``target`` (a store or run folders); ``text=False`` leaves document text out."""
    from kgkit.view.source import is_store_url

    with open_target(str(target), tenant=tenant, config=config) as store:
        # a URL may hold a password: the page is titled by its tenant instead
        title = store.tenant if is_store_url(str(target)) else Path(str(target).rstrip("/")).name or str(target)
        return from_store(store, passages=Passages(text), title=title)


def write_page(target: str, out: str | Path, *, tenant: str | None = None, config=None, text: bool = True) -> ViewerData:
    """Write the page of ``target`` to ``out`` whole (a temp file renamed into place), or not at all."""
    from kgkit.guards.atomic import atomic_write
    from kgkit.errors import InputError

    data = build_data(target, tenant=tenant, config=config, text=text)
    page = render(data.to_json())
    try:
        atomic_write(Path(out), page)
    except OSError as exc:
        raise InputError(f"{out}: cannot write the page: {exc.strerror or exc}") from None
    return data
