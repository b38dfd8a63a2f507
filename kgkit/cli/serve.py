"""``kgkit serve --mcp GRAPH``: the corpus graph as an MCP server for agents (thin over
:mod:`kgkit.serve`). stdio by default; ``--http`` serves streamable HTTP on 127.0.0.1.
A store that cannot be opened, an unknown domain or a missing ``mcp`` extra exits 2 with
the reason before anything is served; Ctrl-C or SIGTERM stops it (exit 130). See docs/mcp.md.
"""
from __future__ import annotations

import click

from kgkit.cli.graph import CONFIG, TENANT
from kgkit.errors import EXIT_INTERRUPTED
from kgkit.serve.service import ServeOptions


@click.command("serve")
@click.argument("graph", required=False)
@click.option("--mcp", "mcp", is_flag=True, required=True,
              help="Speak the Model Context Protocol (the one protocol kgkit serves).")
@click.option("-d", "--domain", help="Domain whose named queries become tools (default: the config's).")
@click.option("--http", "http", is_flag=True, help="Streamable HTTP on 127.0.0.1 instead of stdio.")
@click.option("--port", type=click.IntRange(1, 65535), default=ServeOptions.port, show_default=True,
              help="--http: the port.")
@click.option("--allow-review", is_flag=True,
              help="Also offer the tool decide: accept or reject review entries (the one write; off by default).")
@TENANT
@CONFIG
def serve_cli(graph, mcp, domain, http, port, allow_review, tenant, config_path):
    """Serve GRAPH (a .sqlite path or postgresql:// URL; default graph.url) to agents: one tenant,
    read-only, the query operators as tools.

    DOCS: docs/mcp.md
    """
    from kgkit.serve import serve
    from kgkit.serve.service import log_to_stderr

    log_to_stderr()
    try:
        serve(ServeOptions(graph=graph, tenant=tenant, config_path=config_path, domain=domain,
                           transport="http" if http else "stdio", port=port, allow_review=allow_review))
    except (KeyboardInterrupt, BaseExceptionGroup) as exc:  # Ctrl-C or SIGTERM: how a server ends
        if isinstance(exc, BaseExceptionGroup) and exc.split(KeyboardInterrupt)[1] is not None:
            raise  # something besides the interrupt went wrong
        click.echo("kgkit serve: stopped", err=True)
        raise click.exceptions.Exit(EXIT_INTERRUPTED) from None
