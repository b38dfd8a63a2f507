"""``kgkit gold``: check gold annotation folders before they are trusted as a yardstick.

DOCS: docs/gold-format.md
"""
from __future__ import annotations

import click

from kgkit.cli.eval import domain_option


@click.group("gold")
def gold_cli():
    """Check gold annotation folders (docs/gold-format.md)."""


@gold_cli.command("validate")
@click.argument("gold_dir", type=click.Path(file_okay=False))
@domain_option
def validate_cli(gold_dir, domain):
    """Check every <doc_id>.gold.json in GOLD_DIR: structure, spans, entity references,
    and — with --domain — that every type and relation exists in the domain."""
    from kgkit.eval.gold import load_gold

    dom = _load_domain(domain)
    docs = load_gold(gold_dir, dom)
    counts = {k: sum(len(getattr(d, k)) for d in docs) for k in ("entities", "relations", "hyperedges", "events", "temporal")}
    summary = ", ".join(f"{v} {k}" for k, v in counts.items())
    click.echo(f"{gold_dir}: {len(docs)} documents OK ({summary})" + (f"; types checked against domain {dom.name}" if dom else ""))


def _load_domain(ref):
    if ref is None:
        return None
    from kgkit.catalog.load import load_domain

    return load_domain(ref)
