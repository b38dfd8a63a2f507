"""``kgkit domain new|validate|show`` and ``kgkit domains``: authoring and listing domains.

Docs: docs/authoring-domains.md.
"""
from __future__ import annotations

import os
import sys
from pathlib import Path

import click

from kgkit.errors import EXIT_INPUT, InputError


@click.group("domain")
def domain_cli():
    """Author domains: new, validate, show (docs/authoring-domains.md)."""


@domain_cli.command("new")
@click.argument("name")
@click.option("--from", "parent", metavar="DOMAIN", help="Extend this domain (name or path) instead of starting empty.")
@click.option("--from-gold", "gold", type=click.Path(path_type=Path), metavar="DIR",
              help="Scaffold entity and relation types from a gold folder (*.gold.json).")
@click.option("--out", "out", type=click.Path(path_type=Path, allow_dash=True), metavar="FILE",
              help="Where to write (default: domains/NAME.yaml, where --domain NAME finds it; '-' for stdout).")
@click.option("--force", is_flag=True, help="Overwrite FILE if it exists.")
def new_cli(name: str, parent: str | None, gold: Path | None, out: Path | None, force: bool):
    """Write a commented starter domain NAME that validates as written.

    By default it goes to ./domains/NAME.yaml, the project folder of the search path, so
    ``--domain NAME`` finds it from this folder (docs/authoring-domains.md).

    \b
    Examples:
      kgkit domain new my_contracts
      kgkit domain new my_contracts --from legal_contracts
      kgkit domain new conll04 --from-gold data/conll04
    """
    from kgkit.catalog import starter as domain_starter

    if not domain_starter.NAME_RE.match(name):
        raise click.BadParameter(
            "expected letters, digits, '_', '.' or '-', starting with a letter or '_'", param_hint="NAME"
        )
    if parent and gold:
        raise click.UsageError("use either --from or --from-gold, not both")
    to_stdout = str(out) == "-"
    target = Path(".") / "-" if to_stdout else (out or Path("domains") / f"{name}.yaml")
    if gold:
        text = domain_starter.starter_from_gold(name, gold)
    elif parent:
        from kgkit.catalog.load import load_domain
        from kgkit.formats.search_path import looks_like_path

        ref = parent
        if looks_like_path(parent):  # `extends:` paths are relative to the new file
            ref = os.path.relpath(Path(parent).resolve(), target.parent.resolve())
            ref = ref if ref.startswith((".", "/")) else f"./{ref}"
        text = domain_starter.starter_extending(name, ref, load_domain(parent))
    else:
        text = domain_starter.starter(name)
    if to_stdout:
        click.echo(text, nl=False)
        return
    if target.exists() and not force:
        raise InputError(f"{target} already exists; use --force to overwrite it")
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot write {target}: {exc.strerror or exc}") from None
    click.echo(f"Wrote {target}. Check it with: kgkit domain validate {target}")
    click.echo(f"Use it with: kgkit extract DOCUMENT --domain {_domain_ref(name, target)}")


def _domain_ref(name: str, target: Path) -> str:
    """How ``--domain`` reaches the new file from here: its name when the search path finds
    this very file, else its path."""
    from kgkit.formats.search_path import find
    from kgkit.errors import NotFoundError

    try:
        if find("domains", name).resolve() == target.resolve():
            return name
    except NotFoundError:
        pass
    text = str(target)
    return text if text.startswith(("/", ".")) or "/" in text else f"./{text}"


@domain_cli.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--kind", type=click.Choice(["auto", "domain", "view", "template"]), default="auto", show_default=True,
              help="What the files are; auto: a file in a views/ or templates/ folder is a view or template, "
                   "anything else a domain.")
def validate_cli(files: tuple[Path, ...], kind: str):
    """Check FILES: every problem with file:line:column; exit code 2 if any.

    Domains are checked with their extends chain; views and DIY templates can be checked
    too, so one command covers every shipped file.
    """
    from kgkit.errors import ValidationError
    from kgkit.catalog.validation import validate_file

    failed = 0
    for path in files:
        file_kind = kind
        if kind == "auto":
            file_kind = {"views": "view", "templates": "template"}.get(path.resolve().parent.name, "domain")
        try:
            validate_file(file_kind, path)
        except ValidationError as exc:
            failed += 1
            click.echo(exc.format(), err=True)
        else:
            click.echo(f"OK {path}")
    if failed:
        sys.exit(EXIT_INPUT)


@domain_cli.command("show")
@click.argument("name")
def show_cli(name: str):
    """Print domain NAME (or a path) as YAML, resolved: extends applied."""
    import yaml

    from kgkit.formats.search_path import find
    from kgkit.catalog.validation import resolve_domain

    resolved = resolve_domain(find("domains", name))
    data = {k: v for k, v in resolved.merged.items() if k != "extends"}
    click.echo("# resolved from: " + " <- ".join(str(p) for p in resolved.files))
    click.echo(yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=100), nl=False)


@click.command("domains")
def domains_cli():
    """List available domains: name, file, description."""
    from kgkit.formats.search_path import available
    from kgkit.formats.yaml_source import load

    rows = []
    for name, path in sorted(available("domains").items()):
        data = load(path).data
        description = data.get("description") if isinstance(data, dict) else None
        if not isinstance(description, str):
            description = f"(unreadable: run kgkit domain validate {path})" if not isinstance(data, dict) else ""
        rows.append((name, str(path), " ".join(description.split())))
    if not rows:
        click.echo("No domains found (looked in ./domains, the user config dir and the built-ins).")
        return
    width = max(len(r[0]) for r in rows)
    for name, path, description in rows:
        click.echo(f"{name:<{width}}  {path}" + (f"\n{'':<{width}}  {description}" if description else ""))
