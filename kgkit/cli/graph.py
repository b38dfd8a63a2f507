"""``kgkit graph``: load run folders into a corpus graph store and look at it.

Every command takes GRAPH (a .sqlite file or a postgresql:// URL) or, without it, the
config's ``graph.url``; ``--tenant`` (else ``graph.tenant``) scopes it. The work is in
:class:`kgkit.graph.GraphStore`; these commands parse options and print. See docs/graph.md.
"""
from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import click

from kgkit.errors import ConfigError

TENANT = click.option("--tenant", help="Tenant to read and write (default: graph.tenant, else 'default').")
CONFIG = click.option("--config", "config_path", type=click.Path(dir_okay=False), help="kgkit.yaml to use.")
AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print JSON on stdout.")


def open_store(graph: str | None, tenant: str | None, config_path: str | None, *, existing: bool = False):
    """The store GRAPH names (else graph.url), for ``tenant`` (else graph.tenant); with
    ``existing``, a SQLite path that names no file is refused, not created (a read command)."""
    from kgkit.config.loader import load_config
    from kgkit.graph import GraphStore
    from kgkit.graph.database import require_existing

    config = load_config(config_path)
    url = graph or config.graph.url
    if not url:
        raise ConfigError("no graph store given", hint="pass GRAPH (a .sqlite path or postgresql:// URL) or set graph.url")
    if existing:
        require_existing(str(url))
    return GraphStore.from_config(config, url=graph, tenant=tenant)


def graph_and(args: tuple[str, ...], what: str) -> tuple[str | None, str]:
    """``[GRAPH] WHAT``: two arguments are GRAPH and WHAT; one is WHAT (GRAPH from graph.url)."""
    if len(args) not in (1, 2):
        raise click.UsageError(f"expected [GRAPH] {what}")
    return (args[0], args[1]) if len(args) == 2 else (None, args[0])


def echo_json(data) -> None:
    click.echo(json.dumps(data, indent=2, ensure_ascii=False))


def _edge_line(edge: dict, names: dict[str, str]) -> str:
    """``head -relation-> tail``, each end by its node's name where the snapshot has one."""
    return f"{names.get(edge['head'], edge['head'])} -{edge['relation']}-> {names.get(edge['tail'], edge['tail'])}"


def _shown_names(snap) -> dict[str, str]:
    """Node id -> how a line shows it: a value as its text and normalised value
    (``"thirty (30) days" = P30D``), a document's own node with its document's name."""
    own = {d["node"]: d["name"] for d in snap.documents if d.get("node")}
    out = {}
    for n in snap.nodes:
        if n.get("scope") == "value":
            value = n.get("value")
            out[n["id"]] = json.dumps(n["name"], ensure_ascii=False) + (f" = {value}" if value is not None else "")
        elif n["id"] in own:
            out[n["id"]] = f"{n['name']} [{own[n['id']]}]"
        else:
            out[n["id"]] = n["name"]
    return out


def _document_names(node: dict, doc_names: dict[str, str]) -> str:
    """The names of the documents a node is found in, sorted (its ``d_`` ids mean nothing to a reader)."""
    return ", ".join(sorted(doc_names.get(d, d) for d in node["documents"]))


@click.group("graph")
def graph_cli():
    """The corpus graph: many documents in one store, entities resolved across them.

    DOCS: docs/graph.md
    """


@graph_cli.command("add")
@click.argument("args", nargs=-1, required=True, metavar="[GRAPH] RUN_DIR...")
@TENANT
@CONFIG
@AS_JSON
def add_cli(args, tenant, config_path, as_json):
    """Add run folders written by `kgkit extract` (one transaction each).

    RUN_DIR is a run folder or the --out folder of a corpus run (its run folders
    are added, in name order); a glob of that folder works too. A document already
    in the store under the same name is replaced by its new contribution; an
    unchanged one changes nothing. GRAPH may be left out when graph.url is set.
    """
    from kgkit.graph.run_folders import expand_run_folders

    # GRAPH is a .sqlite file or a URL, never a folder: a folder first means GRAPH was left out.
    graph, runs = (None, list(args)) if Path(args[0]).is_dir() else (args[0], list(args[1:]))
    if not runs:
        raise click.UsageError("give at least one RUN_DIR after GRAPH")
    runs = expand_run_folders(runs)
    if not runs:
        raise click.UsageError("no run folder among the paths given (only runs.jsonl)")
    with open_store(graph, tenant, config_path) as store:
        results = store.add(runs)
    if as_json:
        echo_json([dataclasses.asdict(r) for r in results])
    else:
        for r in results:
            click.echo(f"{r.doc}: {r.status} (graph version {r.version})")


@graph_cli.command("remove")
@click.argument("args", nargs=-1, required=True, metavar="[GRAPH] DOC")
@TENANT
@CONFIG
def remove_cli(args, tenant, config_path):
    """Retract document DOC (its name or d_ id) and everything only it supported."""
    graph, doc = graph_and(args, "DOC")
    with open_store(graph, tenant, config_path) as store:
        version = store.remove(doc)
    click.echo(f"{doc}: removed (graph version {version})")


@graph_cli.command("stats")
@click.argument("graph", required=False)
@TENANT
@CONFIG
@AS_JSON
def stats_cli(graph, tenant, config_path, as_json):
    """Counts: documents, nodes (by scope), items by kind, evidence, merged and isolated nodes, pending review."""
    with open_store(graph, tenant, config_path) as store:
        stats = store.stats()
    if as_json:
        echo_json(stats)
    else:
        width = max(map(len, stats))
        for key, value in stats.items():
            click.echo(f"{key:<{width}}  {value}")


@graph_cli.command("show")
@click.argument("graph", required=False)
@click.option("--node", "node_id", help="Show one node: its names, documents and items.")
@TENANT
@CONFIG
@AS_JSON
def show_cli(graph, node_id, tenant, config_path, as_json):
    """Print the graph: nodes by type and name with their documents, then edges by name; or
    one node with --node; --json: the snapshot."""
    with open_store(graph, tenant, config_path) as store:
        snap = store.snapshot()
    names = _shown_names(snap)
    doc_names = {d["id"]: d["name"] for d in snap.documents}
    if node_id:
        node = next((n for n in snap.nodes if n["id"] == node_id), None)
        if node is None:
            from kgkit.errors import NotFoundError

            raise NotFoundError(f"no node {node_id!r} in graph tenant {snap.tenant!r}")
        touching = [e for e in snap.edges + snap.temporal if node_id in (e["head"], e["tail"])]
        if as_json:
            echo_json({"node": node, "edges": touching,
                        "evidence": [e for e in snap.evidence if e["item"] == node_id]})
            return
        click.echo(f"{node['id']}  {node['type']}  {node['name']}")
        click.echo(f"  scope: {node.get('scope', 'corpus')}" + (f", value {node['value']}" if "value" in node else ""))
        click.echo(f"  aliases: {', '.join(node['aliases']) or '-'}")
        click.echo(f"  documents: {_document_names(node, doc_names)}")
        for e in touching:
            click.echo(f"  {_edge_line(e, names)}")
        return
    if as_json:
        echo_json(dataclasses.asdict(snap))
        return
    values = [n for n in snap.nodes if n.get("scope") == "value"]
    click.echo(f"tenant {snap.tenant}, version {snap.version}: {len(snap.documents)} documents, "
               f"{len(snap.nodes) - len(values)} nodes and {len(values)} values, {len(snap.edges)} edges")
    for d in sorted(snap.documents, key=lambda d: (d["name"], d["id"])):
        click.echo(f"Document  {d['name']}" + (f"  {d['title']!r}" if d.get("title") else "") +
                   (f"  ({d['pages']} pages)" if d.get("pages") else ""))
    for n in sorted(snap.nodes, key=lambda n: (n["type"], n["name"].casefold(), n["id"])):
        if n.get("scope") != "value":  # values are shown on their edges, not as nodes of their own
            scope = f"  [{n['scope']}]" if n.get("scope", "corpus") != "corpus" else ""
            click.echo(f"{n['id']}  {n['type']}  {names[n['id']]}  ({_document_names(n, doc_names)}){scope}")
    for line in sorted(_edge_line(e, names) for e in snap.edges):
        click.echo(line)


@graph_cli.command("merges")
@click.argument("graph", required=False)
@TENANT
@CONFIG
@AS_JSON
def merges_cli(graph, tenant, config_path, as_json):
    """The merge log: every cross-document merge, split and unmerge, oldest first."""
    with open_store(graph, tenant, config_path) as store:
        log = store.merges()
    if as_json:
        echo_json(log)
        return
    for m in log:
        why = f" ({m['reason']} {m['score']})" if m["reason"] else ""
        click.echo(f"{m['seq']:>4} {m['at']} {m['who']}: {m['action']} {m['node']} '{m['node_name']}' "
                   f"{'into' if m['action'] == 'merge' else 'from'} {m['entity']} '{m['entity_name']}'{why}")


@graph_cli.command("unmerge")
@click.argument("args", nargs=-1, required=True, metavar="[GRAPH] NODE")
@click.option("--who", help="Name recorded in the merge log (default: the login name).")
@TENANT
@CONFIG
def unmerge_cli(args, who, tenant, config_path):
    """Split NODE (a node id from `kgkit graph merges`) from the entity it was merged into, for good."""
    graph, node = graph_and(args, "NODE")
    with open_store(graph, tenant, config_path) as store:
        version = store.unmerge(node, who=who)
    click.echo(f"{node}: unmerged (graph version {version})")


@graph_cli.command("grant")
@click.argument("args", nargs=-1, required=True, metavar="[GRAPH] ROLE")
@TENANT
@CONFIG
def grant_cli(args, tenant, config_path):
    """PostgreSQL: make login ROLE the tenant's own role (run as the store's owner). A session of
    ROLE then reads and writes that tenant only, whatever SQL it sends (docs/graph.md, Tenants)."""
    graph, role = graph_and(args, "ROLE")
    with open_store(graph, tenant, config_path) as store:
        store.grant_tenant_role(role)
        click.echo(f"{role}: role of tenant {store.tenant}")


def _snapshot(graph: str | None, tenant: str | None, config_path: str | None):
    with open_store(graph, tenant, config_path) as store:
        return store.snapshot()


def _register_export() -> None:
    """``kgkit graph export`` (kgkit/cli/graph_export.py) reading this store's snapshot."""
    from kgkit.cli.graph_export import make_export_cli

    graph_cli.add_command(make_export_cli(_snapshot, options=[TENANT, CONFIG]))


_register_export()
