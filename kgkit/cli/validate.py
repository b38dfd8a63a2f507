"""``kgkit validate FILE...``: check any kgkit file before it is used.

DOCS: docs/security.md ("Checking files before use").
"""
from __future__ import annotations

import sys
from pathlib import Path

import click

from kgkit.errors import EXIT_INPUT


@click.command("validate")
@click.argument("files", nargs=-1, required=True, type=click.Path(path_type=Path))
@click.option("--kind", type=click.Choice(["auto", "domain", "view", "template", "config", "gold"]), default="auto",
              show_default=True, help="What the files are; auto: from a $schema line, the file name or its keys.")
def validate_cli(files: tuple[Path, ...], kind: str):
    """Check FILES (domains, views, DIY templates, kgkit.yaml configs, gold files or folders).

    Every problem of every file is printed as file:line:column: key path: message; exit
    code 0 when all are valid, 2 otherwise.

    \b
    Examples:
      kgkit validate domains/*.yaml views/my_view.yaml kgkit.yaml
      kgkit validate data/gold/            # a gold folder: every *.gold.json in it
    """
    from kgkit.project.check import check_file

    failed = 0
    for path in files:
        report = check_file(path, None if kind == "auto" else kind)
        if report.ok:
            click.echo(f"OK {path} ({report.kind})")
            continue
        failed += 1
        issues = sorted(report.issues, key=lambda i: i.sort_key())
        n = len(issues)
        what = f"{report.kind} " if report.kind else ""
        click.echo("\n".join(i.format() for i in issues), err=True)
        click.echo(f"{path}: {n} problem{'s' if n != 1 else ''} in this {what}file", err=True)
    if failed:
        click.echo(f"{failed} of {len(files)} file{'s' if len(files) != 1 else ''} invalid", err=True)
        sys.exit(EXIT_INPUT)
