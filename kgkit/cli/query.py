"""``kgkit query``: ask a corpus graph (thin over :class:`kgkit.query.Query`).

Every subcommand takes GRAPH (a .sqlite file or postgresql:// URL), ``--tenant``,
``--limit`` and ``--json`` (the published ``query`` schema; a table otherwise). Bad input
(an unknown type or relation, too many hops, a malformed pattern, an unknown named query
or parameter) exits 2 with the reason; an empty graph answers with nothing and exits 0.
See docs/query.md.
"""
from __future__ import annotations

import sys

import click

from kgkit.cli.graph import CONFIG, TENANT, echo_json
from kgkit.errors import InputError

LIMIT = click.option("--limit", type=click.IntRange(min=1), help="Results at most (default: query.limit).")
AS_JSON = click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON (schema: kgkit schema query).")
HOPS = click.option("--hops", type=int, help="Hops at most (default: query.hops; at most query.max_hops).")
FANOUT = click.option("--fanout", type=click.IntRange(min=1), help="Neighbours kept per node and hop (query.fanout).")
MINCONF = click.option("--min-confidence", type=click.FloatRange(0, 1), help="Leave out items under this confidence.")
RELATION = click.option("--relation", "relations", multiple=True, help="Walk only this relation (repeatable).")
TYPE = click.option("--type", "types", multiple=True, help="Only nodes of this type (repeatable).")


def _run(graph: str, tenant: str | None, config_path: str | None, ask, as_json: bool) -> None:
    from kgkit.cli.graph import open_store
    from kgkit.config.loader import load_config
    from kgkit.query import Query

    config = load_config(config_path)
    with open_store(graph, tenant, config_path, existing=True) as store:
        answer = ask(Query.from_config(store, config))
    if as_json:
        echo_json(answer.to_json())
    else:
        click.echo(table(answer))


def _names(answer) -> dict[str, str]:
    return {n.id: n.name for n in answer.nodes}


def table(answer) -> str:
    """A readable answer: where it was asked, what it found, what the limits cut."""
    lines = [f"{answer.operator}: tenant {answer.tenant!r}, graph version {answer.version}"
             + (" (partial: the time budget ran out)" if answer.partial else "")]
    names = _names(answer)
    if answer.hits:
        for n, h in enumerate(answer.hits, 1):
            top = h.via[0] if h.via else {}
            lines.append(f"{n:>3}. {h.name}  [{h.kind}]  score {h.score:.4f}  via {top.get('list', '')}: "
                         f"{top.get('name', '')[:60]}")
    elif answer.rows:
        for row in answer.rows:
            lines.append("  " + "  |  ".join(names.get(x, x) for x in row.nodes)
                         + (f"   ({len(row.documents)} document{'s' if len(row.documents) != 1 else ''})"))
    elif answer.paths and answer.operator == "path":
        for p in answer.paths:
            lines.append("  " + " -- ".join(names.get(x, x) for x in p))
    elif answer.operator == "anchors":
        lines += anchor_lines(answer.report.get("anchors", []))
    elif answer.nodes:
        for node in answer.nodes:
            extra = f"hops {node.hops}" if node.hops is not None else f"score {node.score}"
            lines.append(f"  {node.name}  [{node.type}]  {extra}  degree {node.degree}  {node.id}")
        for item in answer.items[:20]:
            ends = " ; ".join(f"{role}: {', '.join(names.get(x, x) for x in xs)}" for role, xs in item.ends.items())
            props = "".join(f"  {k} {v}" for k, v in sorted(item.properties.items()) if not isinstance(v, list))
            lines.append(f"    {item.relation}  ({ends}){props}")
        if len(answer.items) > 20:
            lines.append(f"    ... {len(answer.items) - 20} more items (--json lists them)")
    if answer.report and answer.operator != "anchors":
        for key, value in answer.report.items():
            if key == "rubric" and isinstance(value, dict):
                lines += rubric_lines(value, names)
                continue
            if isinstance(value, dict):
                value = ", ".join(f"{k} {v}" for k, v in value.items())
            elif isinstance(value, list):
                value = f"{len(value)} listed"
            lines.append(f"  {key}: {value}")
    if len(lines) == 1 and not answer.report:
        lines.append("  (nothing)")
    if answer.note:
        lines.append(f"  note: {answer.note}")
    for cut in answer.cuts:
        lines.append(f"  cut by {cut.limit}: {cut.dropped} left out" + (f" at {names.get(cut.at, cut.at)}" if cut.at else ""))
    return "\n".join(lines)


def rubric_lines(rubric: dict, names: dict[str, str]) -> list[str]:
    """Novelty's rubric: each aspect's score, its closest neighbourhood and the model's reason."""
    lines = [f"  rubric ({rubric['model']}): novelty {rubric['novelty']}"]
    for aspect, graded in rubric["aspects"].items():
        closest = names.get(graded["closest"], graded["closest"]) if graded["closest"] else "none"
        lines.append(f"    {aspect.replace('_', ' ')}: {graded['score']} (grade {graded['grade']}), "
                     f"closest {closest}: {graded['reason'][:120]}")
    return lines


def anchor_lines(anchors: list[dict]) -> list[str]:
    """Each anchor: what and where (document, page, box), why it matched, its caption,
    then its first table rows or the start of its text."""
    lines = []
    for a in anchors:
        box = ", ".join(f"{v:g}" for v in a.get("bbox") or [])
        why = f"  ({', '.join(a['why'])})" if a.get("why") else ""
        lines.append(f"  {a['name']}  [{a.get('kind')}]  {a['document']} page {a.get('page')}  bbox [{box}]{why}")
        if a.get("caption"):
            lines.append(f"    caption: {a['caption'][:200]}")
        for row in (a.get("rows") or [])[:5]:
            lines.append("    | " + " | ".join(str(c) for c in row))
        if len(a.get("rows") or []) > 5:
            lines.append(f"    ... {len(a['rows']) - 5} more rows (--json lists them)")
        if a.get("text") and a.get("kind") in ("equation", "paragraph"):
            lines.append(f"    text: {a['text'][:200]}")
    return lines


@click.group("query")
def query_cli():
    """Ask a corpus graph: find, neighbours, lineage, path, match, anchors, gaps, novelty, search.

    DOCS: docs/query.md
    """


@query_cli.command("find")
@click.argument("graph")
@click.argument("mention")
@TYPE
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def find_cli(graph, mention, types, limit, tenant, config_path, as_json):
    """The nodes MENTION may name: exact key, alias, fuzzy, full text."""
    _run(graph, tenant, config_path, lambda q: q.find(mention, types=list(types), limit=limit), as_json)


@query_cli.command("neighbours")
@click.argument("graph")
@click.argument("seeds", nargs=-1, required=True)
@HOPS
@FANOUT
@MINCONF
@RELATION
@TYPE
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def neighbours_cli(graph, seeds, hops, fanout, min_confidence, relations, types, limit, tenant, config_path, as_json):
    """The neighbourhood of SEEDS (node ids or names); two or more: their connecting paths first."""
    _run(graph, tenant, config_path, lambda q: q.neighbours(
        list(seeds), hops=hops, fanout=fanout, limit=limit, min_confidence=min_confidence,
        relations=list(relations), types=list(types)), as_json)


@query_cli.command("lineage")
@click.argument("graph")
@click.argument("seed")
@click.option("--direction", type=click.Choice(["forward", "backward"]), default="forward", show_default=True,
              help="forward: head to tail; backward: tail to head.")
@HOPS
@FANOUT
@MINCONF
@RELATION
@TYPE
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def lineage_cli(graph, seed, direction, hops, fanout, min_confidence, relations, types, limit, tenant, config_path,
                as_json):
    """What SEED leads to (or comes from) along --relation edges, by weighted shortest paths."""
    _run(graph, tenant, config_path, lambda q: q.lineage(
        seed, direction=direction, hops=hops, fanout=fanout, limit=limit, min_confidence=min_confidence,
        relations=list(relations), types=list(types)), as_json)


@query_cli.command("path")
@click.argument("graph")
@click.argument("source")
@click.argument("target")
@HOPS
@FANOUT
@MINCONF
@RELATION
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def path_cli(graph, source, target, hops, fanout, min_confidence, relations, limit, tenant, config_path, as_json):
    """Shortest paths from SOURCE to TARGET (node ids or names)."""
    _run(graph, tenant, config_path, lambda q: q.path(
        source, target, hops=hops, fanout=fanout, limit=limit, min_confidence=min_confidence,
        relations=list(relations)), as_json)


def _params(pairs: tuple[str, ...]) -> dict[str, str]:
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise InputError(f"--param {pair!r}: expected NAME=VALUE")
        out[name.strip()] = value
    return out


@query_cli.command("match")
@click.argument("graph")
@click.argument("pattern", required=False)
@click.option("--named", help="Run the domain's named query NAME instead of a PATTERN.")
@click.option("-d", "--domain", help="Domain declaring --named queries (default: the config's).")
@click.option("--param", "params", multiple=True, help="A parameter NAME=VALUE (repeatable).")
@MINCONF
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def match_cli(graph, pattern, named, domain, params, min_confidence, limit, tenant, config_path, as_json):
    """Every match of PATTERN, e.g. 'Agreement -GOVERNING_LAW-> Jurisdiction{name: "New York"}'."""
    from kgkit.config.loader import load_config
    from kgkit.query import named as named_queries

    if bool(pattern) == bool(named):
        raise click.UsageError("give a PATTERN or --named NAME (one of them)")
    values = _params(params)
    if named:
        domain = domain or load_config(config_path).domain
        query = named_queries.lookup(named_queries.domain_queries(domain), named, domain)
        _run(graph, tenant, config_path, lambda q: q.named(query, values, limit=limit), as_json)
    else:
        _run(graph, tenant, config_path, lambda q: q.match(pattern, params=values, limit=limit,
                                                           min_confidence=min_confidence), as_json)


@query_cli.command("gaps")
@click.argument("graph")
@click.option("--sparse", type=click.IntRange(min=0), default=0, show_default=True,
              help="A type x type cell with at most this many statements is sparse.")
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def gaps_cli(graph, sparse, limit, tenant, config_path, as_json):
    """Orphans, singletons, nodes outside the largest component, idle documents, sparse cells."""
    _run(graph, tenant, config_path, lambda q: q.gaps(limit=limit, sparse=sparse), as_json)


@query_cli.command("novelty")
@click.argument("graph")
@click.argument("text")
@click.option("-k", "k", type=click.IntRange(min=1), default=5, show_default=True, help="Neighbourhoods compared.")
@click.option("--limit", type=click.IntRange(min=1), help="The same as -k: neighbourhoods compared and returned.")
@TENANT
@CONFIG
@AS_JSON
def novelty_cli(graph, text, k, limit, tenant, config_path, as_json):
    """How new TEXT (- for stdin) is against its k nearest graph neighbourhoods (graded by the
    configured model on problem, mechanism, training and target domain, when llm.model is set)."""
    body = sys.stdin.read() if text == "-" else text
    _run(graph, tenant, config_path, lambda q: q.novelty(body, k=limit or k), as_json)


@query_cli.command("search")
@click.argument("graph")
@click.argument("text")
@click.option("--reduce", type=click.Choice(["document", "entity", "none"]), default="document", show_default=True,
              help="Reduce hits to their documents, their entities, or keep them.")
@click.option("--intent", type=click.Choice(["general", "lookup", "comparison", "lineage"]), default="general",
              show_default=True, help="Re-weight the ranked lists for this kind of question.")
@TYPE
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def search_cli(graph, text, reduce, intent, types, limit, tenant, config_path, as_json):
    """Typed retrieval: rank names and quotes of every type, fuse, reduce to owners."""
    _run(graph, tenant, config_path, lambda q: q.search(text, limit=limit, reduce=reduce, intent=intent,
                                                        types=list(types) or None), as_json)


@query_cli.command("anchors")
@click.argument("graph")
@click.argument("about", required=False)
@click.option("--kind", type=click.Choice(["figure", "table", "equation", "paragraph"]), help="Only anchors of this kind.")
@click.option("--document", help="Only anchors of this document (its name in the graph or its d_ id).")
@LIMIT
@TENANT
@CONFIG
@AS_JSON
def anchors_cli(graph, about, kind, document, limit, tenant, config_path, as_json):
    """Figures, tables, equations and paragraphs ABOUT a term (all of them without one),
    with caption, table rows, text, page and bounding box."""
    _run(graph, tenant, config_path, lambda q: q.anchors(about, kind=kind, document=document, limit=limit), as_json)
