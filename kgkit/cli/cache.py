"""``kgkit cache stats`` and ``kgkit cache clear``: the response cache of LLM answers."""
from __future__ import annotations

import click

from kgkit.cli.config_cmd import CONFIG_OPTION


@click.group("cache")
def cache_cli():
    """Inspect or clear the response cache."""


@cache_cli.command("stats")
@CONFIG_OPTION
def stats_cli(config_path: str | None):
    """Entries, size on disk and directory of the cache."""
    from kgkit.backends.cache import cache_stats
    from kgkit.config.loader import load_config

    stats = cache_stats(load_config(config_path))
    click.echo(f"dir: {stats['dir']}\nentries: {stats['entries']}\nsize: {_size(stats['size'])}")


@cache_cli.command("clear")
@CONFIG_OPTION
def clear_cli(config_path: str | None):
    """Remove every cached answer (the next run asks the provider again)."""
    from kgkit.backends.cache import cache_dir, clear_cache
    from kgkit.config.loader import load_config

    config = load_config(config_path)
    removed = clear_cache(config)
    click.echo(f"Removed {removed} entr{'y' if removed == 1 else 'ies'} from {cache_dir(config)}")


def _size(n: float) -> str:
    if n < 1024:
        return f"{n} bytes"
    for unit in ("KiB", "MiB", "GiB"):
        n /= 1024
        if n < 1024 or unit == "GiB":
            break
    return f"{n:.1f} {unit}"
