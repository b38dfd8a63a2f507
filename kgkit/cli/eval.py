"""``kgkit eval``: score an extraction against gold annotations, as a table and as JSON.

DOCS: docs/gold-format.md (the gold format and the matching rules)
"""
from __future__ import annotations

import json

import click

domain_option = click.option("--domain", "-d", default=None, help="Domain name or YAML path.")


@click.command("eval")
@click.option("--gold", "gold_dir", required=True, type=click.Path(file_okay=False), help="Gold folder.")
@domain_option
@click.option("--view", "views", multiple=True, help="View to extract and score (repeatable).")
@click.option("--run", "run_dir", type=click.Path(file_okay=False), default=None,
              help="Score an existing run folder (one sub-folder per document) instead of extracting.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="kgkit.yaml to use.")
@click.option("--no-skills", is_flag=True, help="Extract without the skill library.")
@click.option("--docs", "docs_file", type=click.Path(dir_okay=False), default=None,
              help="Score only these documents: ids one per line, or a `skills learn --json` report.")
@click.option("--split", default=None, help="With a learn report as --docs: which split (default: heldout).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def eval_cli(gold_dir, domain, views, run_dir, config_path, no_skills, docs_file, split, as_json):
    """Score extraction against the gold annotations in GOLD: set-level precision, recall
    and F1, micro and macro, per type."""
    from kgkit.eval.run import evaluate

    docs = None
    if split is not None and docs_file is None:
        raise click.UsageError("--split needs --docs (a `kgkit skills learn --json` report)")
    if docs_file is not None:
        from kgkit.eval.gold import load_gold
        from kgkit.eval.selection import read_doc_ids, select_docs

        docs = select_docs(load_gold(gold_dir), read_doc_ids(docs_file, split), docs_file)
    config = None if run_dir and not config_path else _config(config_path, no_skills)
    report = evaluate(gold_dir, domain=domain, views=list(views) or None, run_dir=run_dir, config=config, docs=docs)
    click.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.format_table())


def _config(path, no_skills):
    from kgkit.config.loader import load_config

    config = load_config(path)
    if no_skills:
        config.skills.enabled = False
    return config
