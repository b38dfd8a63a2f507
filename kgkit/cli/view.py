"""``kgkit view RUN_OR_GRAPH -o FILE.html``: a thin layer over :func:`kgkit.view.write_page`."""
from __future__ import annotations

import click

from kgkit.cli.graph import CONFIG, TENANT


@click.command("view")
@click.argument("target", metavar="RUN_OR_GRAPH")
@click.option("-o", "--out", required=True, type=click.Path(dir_okay=False), help="The HTML file to write.")
@click.option("--text/--no-text", default=True, show_default=True,
              help="Show each quote in the passage of its document around it (read again from the source file "
                   "when it is unchanged); --no-text keeps only the stored quotes.")
@TENANT
@CONFIG
def view_cli(target, out, text, tenant, config_path):
    """Write one self-contained HTML page showing RUN_OR_GRAPH: a run folder, a corpus --out
    folder, a .sqlite graph store or a postgresql:// URL. The page needs no network.

    DOCS: docs/viewer.md
    """
    from kgkit.config.loader import load_config
    from kgkit.view import write_page

    data = write_page(target, out, tenant=tenant, config=load_config(config_path), text=text)
    held = sum(1 for it in data.items if it["status"] in ("held", "rejected"))
    click.echo(f"{out}: {len(data.nodes)} nodes, {len(data.items) - held} items, {held} held back, "
               f"{len(data.documents)} document(s)")
