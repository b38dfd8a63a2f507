"""``kgkit join RUN --views binary,nary``: a thin layer over :func:`kgkit.engine.join.join_views`.

Prints, for each item of the first view, the items of the other views that share its
node — a readable list by default, ``--json`` for machines.
"""
from __future__ import annotations

import json
from typing import Any

import click


def _describe(item: dict[str, Any], names: dict[str, str]) -> str:
    """One line for an item: edge ends and roles by node name, literals by their text."""
    def show(filler: Any) -> str:
        if isinstance(filler, list):
            return "[" + ", ".join(show(f) for f in filler) + "]"
        if isinstance(filler, dict) and "node" in filler:
            node = filler["node"]
            return names[node] if node in names else node
        if isinstance(filler, dict) and "literal" in filler:
            return repr(filler["literal"])
        return str(filler)

    if "head" in item:
        qualifiers = "".join(f" {k}={v['value'] or v['text']}" for k, v in item.get("qualifiers", {}).items())
        return f"{names.get(item['head'], item['head'])} -{item['relation']}-> {names.get(item['tail'], item['tail'])}{qualifiers}"
    label = item.get("relation") or item.get("type")
    slots = item.get("roles") or item.get("arguments") or {}
    return f"{label}(" + ", ".join(f"{role}={show(v)}" for role, v in slots.items()) + ")"


@click.command("join")
@click.argument("run", type=click.Path(file_okay=False))
@click.option("--views", required=True, help="Comma-separated views; the first is the anchor, e.g. binary,nary,temporal.")
@click.option("--json", "as_json", is_flag=True, help="Print the joined rows as JSON.")
def join_cli(run, views, as_json):
    """Join the views of RUN (a run folder) by node ID."""
    from pathlib import Path

    from kgkit.engine.join import join_views

    names = [v.strip() for v in views.split(",") if v.strip()]
    rows = join_views(run, names)
    if as_json:
        click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    nodes = json.loads((Path(run) / "nodes.json").read_text(encoding="utf-8"))["nodes"]
    node_names = {n["id"]: n["name"] for n in nodes}
    for row in rows:
        click.echo(f"{names[0]}: {_describe(row['anchor'], node_names)}   [via {row['node']['name']}]")
        for view in names[1:]:
            for item in row[view]:
                click.echo(f"  {view}: {_describe(item, node_names)}")
    click.echo(f"{len(rows)} {names[0]} item(s) joined with {', '.join(names[1:])}")
