"""``kgkit review``: the review gate of a corpus graph -- list, show, accept, reject.

Held items (unverified evidence, low confidence) and rejected answers wait here outside
the graph; a decision is recorded with who and when and survives re-adding the document.
The work is in :mod:`kgkit.graph.review` through :class:`kgkit.graph.GraphStore`.
"""
from __future__ import annotations

import click

from kgkit.cli.graph import AS_JSON, CONFIG, TENANT, echo_json, graph_and, open_store


@click.group("review")
def review_cli():
    """Review what extraction held back before it enters the corpus graph.

    DOCS: docs/graph.md
    """


@review_cli.command("list")
@click.argument("graph", required=False)
@click.option("--all", "show_all", is_flag=True, help="Also list entries already decided.")
@TENANT
@CONFIG
@AS_JSON
def list_cli(graph, show_all, tenant, config_path, as_json):
    """List review entries (pending ones unless --all); an entry that can only be rejected
    (an answer with no graph form, such as one that was not JSON) says so."""
    with open_store(graph, tenant, config_path) as store:
        entries = store.review_queue(pending_only=not show_all)
    if as_json:
        echo_json(entries)
        return
    for e in entries:
        decided = f"  [{e['decision']} by {e['who']} {e['at']}]" if e["decision"] else ""
        only_reject = "" if e["acceptable"] else "  (reject only: it has no graph form to accept)"
        click.echo(f"{e['id']}  {e['document']}  {e['kind']} {e['view']}: {e['reason']}{only_reject}{decided}")
    if not entries:
        click.echo("nothing to review")


@review_cli.command("show")
@click.argument("args", nargs=-1, required=True, metavar="[GRAPH] ID")
@TENANT
@CONFIG
def show_cli(args, tenant, config_path):
    """Show one entry: the item, why it was held, its evidence and any decision (JSON)."""
    graph, entry_id = graph_and(args, "ID")
    with open_store(graph, tenant, config_path) as store:
        echo_json(store.review_entry(entry_id))


def _decide(decision: str):
    @review_cli.command(decision)
    @click.argument("args", nargs=-1, required=True, metavar="[GRAPH] ID")
    @click.option("--who", help="Name recorded with the decision (default: the login name).")
    @TENANT
    @CONFIG
    def command(args, who, tenant, config_path):
        graph, entry_id = graph_and(args, "ID")
        with open_store(graph, tenant, config_path) as store:
            version = store.decide(entry_id, decision, who=who)
        click.echo(f"{entry_id}: {decision}ed (graph version {version})")

    command.__doc__ = {"accept": "Accept entry ID: it enters the graph with its evidence.",
                       "reject": "Reject entry ID: it stays out of the graph, also after re-adding."}[decision]
    command.help = command.__doc__
    return command


accept_cli = _decide("accept")
reject_cli = _decide("reject")
