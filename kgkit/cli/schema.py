"""``kgkit schema NAME``: print a published JSON Schema (domain, view, template, config, …).

Editors and other tools can validate kgkit files with these; every ``*.schema.json`` in
``kgkit/schemas`` is published, so a new schema needs no change here.
"""
from __future__ import annotations

import click

from kgkit.errors import EXIT_INPUT, did_you_mean
from kgkit.formats.json_schemas import SCHEMA_DIR


def schema_names() -> list[str]:
    return sorted(p.name[: -len(".schema.json")] for p in SCHEMA_DIR.glob("*.schema.json"))


class UnknownSchema(click.ClickException):
    exit_code = EXIT_INPUT


@click.command("schema")
@click.argument("name")
def schema_cli(name: str):
    """Print the JSON Schema NAME (e.g. domain, view, template)."""
    names = schema_names()
    if name not in names:
        hint = did_you_mean(name, names)
        raise UnknownSchema(f"unknown schema {name!r}; {hint + ' ' if hint else ''}available: {', '.join(names)}")
    click.echo((SCHEMA_DIR / f"{name}.schema.json").read_text(encoding="utf-8"), nl=False)
