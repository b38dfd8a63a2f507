"""``kgkit skills``: learn a domain's skill library from gold, and inspect it.

DOCS: docs/skills.md
"""
from __future__ import annotations

import json

import click


library_option = click.option("--library", "library_dir", type=click.Path(file_okay=False), default=None,
                              help="Library root (default: ./skill_library, else the built-in one).")


@click.group("skills")
def skills_cli():
    """Learn, list and inspect the skill library (docs/skills.md)."""


@skills_cli.command("learn")
@click.option("--gold", "gold_dir", required=True, type=click.Path(file_okay=False), help="Gold folder.")
@click.option("--domain", "-d", required=True, help="Domain name or YAML path.")
@click.option("--rollouts", type=click.IntRange(min=1), default=None, help="Samples per document (default: config, 3).")
@click.option("--temperature", type=float, default=None, help="Rollout temperature (default: config, 0.7).")
@click.option("--holdout", type=click.FloatRange(0, 1, max_open=True), default=0.3, show_default=True,
              help="Share of documents held out and scored before and after.")
@click.option("--dev", type=click.FloatRange(0, 1, max_open=True), default=0.25, show_default=True,
              help="Share of the rest used by the acceptance gate.")
@click.option("--top-k", type=click.IntRange(min=0), default=None, help="Skills retrieved per document (default: config, 3).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the document split.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="kgkit.yaml to use.")
@library_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def learn_cli(gold_dir, domain, rollouts, temperature, holdout, dev, top_k, seed, config_path, library_dir, as_json):
    """Improve DOMAIN's skill library from the gold documents in GOLD, without touching
    model weights; prints edge labels, controller actions and held-out P/R/F1 before and after."""
    from kgkit.engine.run import resolve_config
    from kgkit.skills.learn import LearnSettings, learn_skills

    config = resolve_config(config_path)
    s = config.skills
    settings = LearnSettings(
        rollouts=rollouts or s.rollouts, temperature=s.temperature if temperature is None else temperature,
        holdout=holdout, dev=dev, top_k=s.top_k if top_k is None else top_k, seed=seed,
        merge=s.jaccard_merge, modify=s.jaccard_modify)
    report = learn_skills(gold_dir, domain, config=config, settings=settings,
                          library_dir=library_dir or s.library)
    click.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.format_text())


@skills_cli.command("list")
@click.argument("domain")
@library_option
def list_cli(domain, library_dir):
    """List the skills of DOMAIN's library: id, version, kind, target, support, patterns."""
    lib = _load(domain, library_dir)
    click.echo(f"{domain}: library version {lib.version}, {len(lib.skills)} skill{'s' if len(lib.skills) != 1 else ''}")
    for s in lib.sorted_skills():
        sup = s["support"]
        pattern = ", ".join(s["pattern"]["phrases"] + [f"/{r}/" for r in s["pattern"]["regex"]])
        click.echo(f"{s['id']}  v{s['version']}  {s['kind']:<8} {s['target']:<14} "
                   f"stable {sup['stable']} unstable {sup['unstable']} miss {sup['miss']}  {pattern}")


@skills_cli.command("show")
@click.argument("domain")
@click.argument("skill")
@library_option
def show_cli(domain, skill, library_dir):
    """Print one skill of DOMAIN (an id or a unique id prefix) as YAML."""
    from kgkit.skills.library import dump_skill

    click.echo(dump_skill(_load(domain, library_dir).get(skill)), nl=False)


@skills_cli.command("remove")
@click.argument("domain")
@click.argument("skills", nargs=-1, required=True)
@library_option
def remove_cli(domain, skills, library_dir):
    """Remove skills (ids or unique prefixes) from DOMAIN's library; records a changelog entry."""
    from kgkit.skills.library import save_library, today

    lib = _load(domain, library_dir)
    ids = sorted({lib.get(ref)["id"] for ref in skills})
    for sid in ids:
        del lib.skills[sid]
    lib.version += 1
    lib.changelog.append({"version": lib.version, "date": today(), "removed": ids})
    folder = save_library(lib, library_dir)
    click.echo(f"removed {', '.join(ids)} from {folder} (library version {lib.version})")


@skills_cli.command("diff")
@click.argument("domain")
@click.argument("other", type=click.Path(file_okay=False))
@library_option
def diff_cli(domain, other, library_dir):
    """Compare DOMAIN's library with the one under the library root OTHER (e.g. a copy
    saved before relearning): + added, - removed, ~ changed skills."""
    from kgkit.skills.library import diff_libraries, load_library

    mine = _load(domain, library_dir)
    theirs = load_library(domain, other)
    lines = diff_libraries(theirs, mine)
    click.echo("\n".join(lines) if lines else "no differences")


def _load(domain, library_dir):
    from kgkit.skills.library import load_library

    return load_library(domain, library_dir)
