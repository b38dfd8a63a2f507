"""``kgkit init`` and ``kgkit config show``: write the starter config, print the effective one."""
from __future__ import annotations

from pathlib import Path

import click

from kgkit.errors import ConfigError

CONFIG_OPTION = click.option(
    "-c", "--config", "config_path", type=click.Path(dir_okay=False),
    help="kgkit.yaml to use (default: ./kgkit.yaml when present).",
)


@click.command("init")
@click.option("--force", is_flag=True, help="Overwrite an existing kgkit.yaml.")
def init_cli(force: bool):
    """Write a commented starter kgkit.yaml in the working directory.

    It holds every setting at its default; edit llm.model to use an LLM.
    """
    from kgkit.config.starter import starter_text

    path = Path("kgkit.yaml")
    if path.exists() and not force:
        raise ConfigError(f"{path.resolve()} already exists; not overwriting it", hint="use --force to replace it")
    path.write_text(starter_text(), encoding="utf-8")
    click.echo(f"Wrote {path.resolve()}. Edit llm.model to use an LLM; `kgkit config show` prints what is in effect.")


@click.group("config")
def config_cli():
    """Show the effective configuration."""


@config_cli.command("show")
@CONFIG_OPTION
def show_cli(config_path: str | None):
    """Print the effective configuration as YAML, secrets masked.

    Defaults, then kgkit.yaml, then KGKIT_* environment variables.
    """
    from kgkit.config.loader import load_effective, show_config

    click.echo(show_config(load_effective(config_path)), nl=False)
