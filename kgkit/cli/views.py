"""``kgkit views`` and ``kgkit templates``: what is available and which file each name uses.

A user adds a view or template by dropping a file in ``./views`` (or ``./templates``) or
in the user config directory; these listings show which file wins, so an override is
never a mystery.
"""
from __future__ import annotations

import click


def _listing(kind: str, usage: str) -> None:
    from kgkit.formats.search_path import candidates, search_path
    from kgkit.formats.yaml_source import load

    found = candidates(kind)
    if not found:
        where = ", ".join(str(p) for p in search_path(kind))
        click.echo(f"No {kind} found (searched {where}).")
        return
    width = max(len(name) for name in found)
    for name, paths in sorted(found.items()):
        data = load(paths[0]).data
        description = data.get("description") if isinstance(data, dict) else None
        line = f"{usage.format(name=name):<{width + len(usage) - 6}}  {paths[0]}"
        if len(paths) > 1:
            line += "  (overrides " + ", ".join(str(p) for p in paths[1:]) + ")"
        click.echo(line)
        if isinstance(description, str) and description.strip():
            click.echo(f"{'':<{width + len(usage) - 6}}  " + " ".join(description.split()))


@click.command("views")
def views_cli():
    """List available views and the file each name resolves to."""
    _listing("views", "{name}")


@click.command("templates")
def templates_cli():
    """List available DIY templates (use one with --view diy:NAME)."""
    _listing("templates", "diy:{name}")
