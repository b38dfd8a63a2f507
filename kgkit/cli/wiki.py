"""``kgkit extract --reader wiki VAULT/``: a Markdown vault in, one run folder out.

The same summary table (or ``--json``) as any extract, then what the scan found: links by
status, broken and ambiguous links, topics, sources, and the model layer's figures when a
model is configured. Exit 0 (warnings are not failures: a broken link is the vault's, and
a failed model batch leaves the baseline graph complete), 2 for bad input.
"""
from __future__ import annotations

import json
from typing import Any

import click

from kgkit.config.model import Config


def format_report(report: dict[str, Any]) -> str:
    statuses = ", ".join(f"{k} {v}" for k, v in report["links_by_status"].items()) or "none"
    edges = ", ".join(f"{k} {v}" for k, v in report["edges"].items()) or "none"
    lines = [f"vault: {report['articles']} articles, {report['links']} links ({statuses}); "
             f"{report['topics']} topics from {len(report['index_notes'])} index note(s), "
             f"{report['sources']} sources; edges: {edges}; {report['notes_on_link_cycles']} notes on link cycles; "
             f"model calls {report['model_calls']}"]
    layer = report.get("model_layer")
    if layer:
        lines.append(f"model layer: {layer['batches']} batches ({layer['failed_batches']} failed); new: "
                     f"{layer['new_entities']} entities, {layer['new_claims']} claims, {layer['new_edges']} edges; "
                     f"deduplicated: {layer['deduplicated_entities']} entities, {layer['deduplicated_edges']} edges "
                     f"({layer['remapped_edges']} remapped); dropped: {layer['dropped_dangling']} dangling, "
                     f"{layer['dropped_no_evidence']} without evidence, {layer['dropped_already_linked']} already "
                     f"linked, {layer['dropped_self']} self, {layer['dropped_claims']} claims; relation aliases "
                     f"normalised {layer['aliases_normalised']}, unknown -> related {layer['unknown_relations']}")
    return "\n".join(lines)


def scan_summary(report: dict[str, Any]) -> dict[str, Any]:
    """What ``--json`` shows of the report (warnings are in the run's entry already)."""
    return {k: v for k, v in report.items() if k not in ("warnings", "reading_tour")}


def extract_vault_cli(files, *, config: Config, out_dir, dry_run: bool, as_json: bool, refused: dict[str, Any]):
    """Check the options, then plan (``--dry-run``: printed here, None returned) or read the
    vault into its run folder and return the run for the extract command's summary."""
    from kgkit.wiki.pipeline import extract_vault, plan_vault

    if len(files) != 1:
        raise click.UsageError("--reader wiki reads one vault: give its folder alone")
    domain = refused.pop("--domain")
    from kgkit.wiki.baseline import DOMAIN

    if domain and domain != DOMAIN:
        raise click.UsageError(f"--reader wiki uses the {DOMAIN} domain, not {domain!r}")
    given = [name for name, value in refused.items() if value]
    if given:
        raise click.UsageError(f"{', '.join(given)} do(es) not apply to --reader wiki (a vault is read whole, "
                               "in one run folder)")
    if dry_run:
        plan = plan_vault(files[0], config)
        if as_json:
            click.echo(json.dumps({"plan": [plan.as_dict()]}, indent=2))
        else:
            click.echo(f"{plan.vault}: {plan.notes} notes; the baseline makes no call; the model layer "
                       f"{plan.batches} batch(es), {plan.calls} call(s)\n(dry run: nothing was called)")
        return None
    return extract_vault(files[0], config=config, out_dir=out_dir)
