"""Run the real console entry point (``kgkit.cli.main``) under click's CliRunner, so a test
sees the exit code and stderr a user would, Ctrl-C and returned codes included."""
from __future__ import annotations

import click
from click.testing import CliRunner

from kgkit.cli import main


@click.command(context_settings={"ignore_unknown_options": True, "help_option_names": []})
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def entry(args):
    main(list(args))


def kgkit(*args: str):
    return CliRunner().invoke(entry, list(args))
