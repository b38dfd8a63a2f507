"""``kgkit ask GRAPH "question"``: an answer with its evidence (thin over :func:`kgkit.ask.ask`).

Exit 0 for every answer, an honest "don't know" included (status ``no_seed``,
``insufficient_evidence`` or ``timeout``); exit 2 for a usage error (an empty question, an
unknown domain, a store path that names no file: nothing is created). See docs/ask.md.
"""
from __future__ import annotations

import click

from kgkit.cli.graph import CONFIG, TENANT, echo_json


@click.command("ask")
@click.argument("graph")
@click.argument("question")
@click.option("-d", "--domain", help="Domain whose named queries answer offline (default: the config's domain).")
@TENANT
@CONFIG
@click.option("--json", "as_json", is_flag=True, help="Print the whole record as JSON.")
def ask_cli(graph: str, question: str, domain: str | None, tenant: str | None, config_path: str | None,
            as_json: bool) -> None:
    """Answer QUESTION from GRAPH, citing the evidence of every stated relation."""
    from kgkit.ask import ask
    from kgkit.cli.graph import open_store
    from kgkit.config.loader import load_config

    config = load_config(config_path)
    with open_store(graph, tenant, config_path, existing=True) as store:
        record = ask(store, question, domain=domain or config.domain, config=config)
    if as_json:
        echo_json(record.to_json())
    else:
        click.echo(table(record))


def table(record) -> str:
    lines = [f"{record.status}: tenant {record.tenant!r}, graph version {record.version}; route {record.route.kind}"
             + (f" (named query {record.route.named})" if record.route.named else "")
             + (f", {record.route.operation}" if record.route.operation else "")]
    if record.answer:
        lines.append("answer: " + "; ".join(record.answer))
    if record.aggregate is not None and record.text:
        lines.append(f"{record.aggregate.op}: {record.text}")
    cited = {e.id: e for e in record.cited()}
    for claim, check in zip(record.claims, record.checks):
        mark = "ok" if check.supported else "UNSUPPORTED"
        lines.append(f"  [{mark}] {claim.head} -{claim.relation}-> {claim.tail}  ({', '.join(claim.evidence)})")
        for eid in claim.evidence[:1]:
            for source in (cited[eid].sources if eid in cited else [])[:1]:
                page = f" p. {source.page}" if source.page else ""
                lines.append(f"        {source.document}{page}: {(source.quote or '')[:160]}")
    if record.note:
        lines.append(f"note: {record.note}")
    if any(record.answers.values()):
        from kgkit.engine.accounting import answers_text

        lines.append(answers_text(record.answers))
    return "\n".join(lines)
