"""The ``kgkit`` command: a thin layer over the library.

Subcommands live one per module and are imported only when invoked, so ``kgkit --help``
and ``kgkit domain validate`` never pay for litellm or the engine. Library errors
(:class:`kgkit.errors.KgkitError`) become a message on stderr and their exit code here
(:class:`LazyGroup`), and nowhere else.
"""
from __future__ import annotations

import importlib
import sys

import click

from kgkit import __version__
from kgkit.errors import EXIT_INTERRUPTED, KgkitError

# name -> (module, attribute, one-line help shown by `kgkit --help` without importing it)
COMMANDS: dict[str, tuple[str, str, str]] = {
    "init": ("kgkit.cli.config_cmd", "init_cli", "Write a commented starter kgkit.yaml."),
    "config": ("kgkit.cli.config_cmd", "config_cli", "Show the effective configuration."),
    "domain": ("kgkit.cli.domain", "domain_cli", "Author domains: new, validate, show."),
    "domains": ("kgkit.cli.domain", "domains_cli", "List available domains and their files."),
    "views": ("kgkit.cli.views", "views_cli", "List available views and the file each resolves to."),
    "templates": ("kgkit.cli.views", "templates_cli", "List available DIY templates."),
    "schema": ("kgkit.cli.schema", "schema_cli", "Print a published JSON Schema."),
    "extract": ("kgkit.cli.extract", "extract_cli", "Extract a knowledge graph from documents."),
    "join": ("kgkit.cli.join", "join_cli", "Join views of a run by node ID."),
    "batch": ("kgkit.cli.batch", "batch_cli", "Provider batches of --batch runs: status, forget."),
    "cache": ("kgkit.cli.cache", "cache_cli", "Inspect or clear the response cache."),
    "eval": ("kgkit.cli.eval", "eval_cli", "Score extraction against gold annotations."),
    "gold": ("kgkit.cli.gold", "gold_cli", "Check gold annotation folders."),
    "skills": ("kgkit.cli.skills", "skills_cli", "Learn, list and inspect the skill library."),
    "graph": ("kgkit.cli.graph", "graph_cli", "The corpus graph store: add runs, stats, show, merges."),
    "review": ("kgkit.cli.review", "review_cli", "Review items held out of the corpus graph."),
    "ask": ("kgkit.cli.ask", "ask_cli", "Answer a question from a corpus graph, citing and checking its evidence."),
    "query": ("kgkit.cli.query", "query_cli", "Ask a corpus graph: find, neighbours, path, match, gaps, search."),
    "view": ("kgkit.cli.view", "view_cli", "Write a self-contained HTML page showing a graph or run folders."),
    "serve": ("kgkit.cli.serve", "serve_cli", "Serve a corpus graph to agents over MCP (stdio or HTTP)."),
    "validate": ("kgkit.cli.validate", "validate_cli", "Check any kgkit file: domain, view, template, config, gold."),
}


class LibraryError(click.ClickException):
    """A :class:`KgkitError` shown as ``Error: …`` with its own exit code, never a traceback."""

    def __init__(self, exc: KgkitError):
        super().__init__(exc.format())
        self.exit_code = exc.exit_code  # type: ignore[misc]  # click declares it a ClassVar; it is read per instance


class LazyGroup(click.Group):
    """A click group whose subcommands are imported on first use.

    It is also the one place where library errors become CLI errors, for every command
    alike, so a command behaves the same under ``kgkit`` and under click's CliRunner.
    """

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except KgkitError as exc:
            raise LibraryError(exc) from None

    def list_commands(self, ctx):
        return sorted(COMMANDS)

    def get_command(self, ctx, name):
        if name not in COMMANDS:
            return None
        module, attr, _ = COMMANDS[name]
        return getattr(importlib.import_module(module), attr)

    def format_commands(self, ctx, formatter):
        rows = [(name, COMMANDS[name][2]) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="kgkit")
def cli():
    """kgkit: documents to knowledge graphs, declared in YAML.

    Exit codes: 0 ok; 1 finished with failed chunks (resume with --resume);
    2 bad input or configuration; 3 provider failure; 75 waiting on a provider batch
    (--batch: run it again later); 130 interrupted (Ctrl-C or SIGTERM).
    """


def main(argv: list[str] | None = None) -> None:
    """Console entry point: run the CLI and turn its outcome into the documented exit code."""
    try:
        # In non-standalone mode click *returns* the code of ctx.exit(n) instead of raising.
        code = cli.main(args=argv, prog_name="kgkit", standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("Interrupted. Completed passes are kept in the run folder: run the same command "
                   "with --resume to continue where it stopped.", err=True)
        sys.exit(EXIT_INTERRUPTED)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    sys.exit(code if isinstance(code, int) else 0)


def run() -> None:
    """The installed ``kgkit`` program: :func:`main`, then a quick exit.

    Once the command is done every output file is written and synced, so the
    interpreter's own teardown (freeing hundreds of modules, ~0.1 s of CPU and more
    on a loaded machine) buys nothing: the exit handlers run (the background state sync,
    closing provider connections), the streams are flushed, and the process ends there.
    :func:`main` itself keeps the ordinary ``SystemExit``, for callers in Python.

    SIGTERM (``kill``, a scheduler's stop, a container's) is taken as Ctrl-C is: the run
    stops through the same cleanup (temp files removed, a local Ray cluster shut down, a
    batch id being recorded kept) and exits 130, where Python's default would end the
    process with none of that. Only here, not in :func:`main`: a program that calls kgkit
    keeps its own handler."""
    import signal

    signal.signal(signal.SIGTERM, signal.default_int_handler)
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        if not isinstance(exc.code, (int, type(None))):
            print(exc.code, file=sys.stderr)
    import atexit
    import logging
    import os

    atexit._run_exitfuncs()
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):  # a closed pipe (kgkit ... | head): nothing left to say
            pass
    os._exit(code)
