"""``kgkit batch``: the provider batches of ``kgkit extract --batch`` runs.

``status`` polls the batches recorded under --out and prints one line each (``--wait``
until none is running); ``forget`` drops a batch the provider has lost, so the next run
submits its passes again. Collecting answers and going on is ``kgkit extract --resume``.
"""
from __future__ import annotations

import json

import click

from kgkit.errors import EXIT_OK, EXIT_PENDING


@click.group("batch")
def batch_cli():
    """Provider batches of `kgkit extract --batch` runs (see docs/batch.md)."""


@batch_cli.command("status")
@click.argument("ids", nargs=-1)
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Folder of the run folders (default: the config's output.dir).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="kgkit.yaml to use (for llm.api_base and the key).")
@click.option("--wait", is_flag=True, help="Poll until no batch is running.")
@click.option("--every", type=float, default=60.0, show_default=True, help="Seconds between polls with --wait.")
@click.option("--json", "as_json", is_flag=True, help="Print the rows as JSON.")
def status_cli(ids, out_dir, config_path, wait, every, as_json):
    """Poll the batches recorded under --out (or only IDS). Exit 0 when none is running, 75
    while some are (then `kgkit extract --resume ...` later collects them)."""
    from kgkit.config.loader import load_config
    from kgkit.engine.batch_state import batch_status

    cfg = load_config(config_path)
    rows = batch_status(out_dir or cfg.out_dir, cfg, ids=ids, wait=wait, every=every)
    if as_json:
        click.echo(json.dumps({"batches": rows}, indent=2))
    elif not rows:
        click.echo(f"no batches recorded under {out_dir or cfg.out_dir}")
    for row in [] if as_json else rows:
        state = "collected" if row["collected"] else row["status"]
        click.echo(f"{row['batch']}  {row['stage']:<12} {row['lines']:>5} line(s)  {state:<12} {row['run_dir']}")
    running = [row for row in rows if not row["ended"]]
    if not as_json:
        if running:
            click.echo(f"{len(running)} batch(es) still running; come back later (or --wait).", err=True)
        elif any(not row["collected"] for row in rows):
            click.echo("every batch has ended: run `kgkit extract --resume` with the same arguments to collect "
                       "them and go on.", err=True)
    click.get_current_context().exit(EXIT_PENDING if running else EXIT_OK)


@batch_cli.command("forget")
@click.argument("batch_id")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Folder of the run folders (default: the config's output.dir).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="kgkit.yaml to use.")
def forget_cli(batch_id, out_dir, config_path):
    """Drop BATCH_ID from its run folder's record: the next run submits its unanswered
    passes again (they may be paid twice if the provider still runs it)."""
    from kgkit.config.loader import load_config
    from kgkit.engine.batch_state import forget_batch

    root = out_dir or load_config(config_path).out_dir
    click.echo(f"forgot batch {batch_id} in {forget_batch(root, batch_id)}")
