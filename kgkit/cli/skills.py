"""``kgkit skills``: learn a domain's skill library from gold, and inspect it.

DOCS: docs/skills.md
"""
from __future__ import annotations

import json

import click


library_option = click.option("--library", "library_dir", type=click.Path(file_okay=False), default=None,
                              help="Library root (default: skills.library in kgkit.yaml, else ./skill_library "
                                   "when present, then the user data directory's).")


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
              help="Share of the rest held as the dev split (gates dev and train+dev; cv folds them all).")
@click.option("--gate", type=click.Choice(["cv", "dev", "train+dev"]), default=None,
              help="What the acceptance gate scores a change on (default: config skills.gate, cv).")
@click.option("--top-k", type=click.IntRange(min=0), default=None, help="Skills retrieved per document (default: config, 3).")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the document split.")
@click.option("--heldout-from", "heldout_file", type=click.Path(dir_okay=False), default=None,
              help="Draw the held-out share only from these document ids (one per line); train and dev "
                   "come from the other documents.")
@click.option("--min-gain", type=click.FloatRange(0, 1, min_open=True), default=None,
              help="Dev relation F1 a change must add to be kept (default: config, 0.001).")
@click.option("--max-edges", type=click.IntRange(min=1), default=None,
              help="Ask the skill passes about at most N unstable or missed edges, spread over the documents "
                   "(default: all; with a model on a CPU each is a request of minutes).")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), default=None, help="kgkit.yaml to use.")
@library_option
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def learn_cli(gold_dir, domain, rollouts, temperature, holdout, dev, gate, top_k, seed, heldout_file, min_gain,
              max_edges, config_path, library_dir, as_json):
    """Improve DOMAIN's skill library from the gold documents in GOLD, without touching
    model weights; prints edge labels, controller actions and held-out P/R/F1 before and after."""
    from kgkit.engine.run import resolve_config
    from kgkit.learning.settings import LearnSettings
    from kgkit.learning.loop import learn_skills

    config = resolve_config(config_path)
    heldout_from = None
    if heldout_file is not None:
        from kgkit.eval.selection import read_doc_ids

        heldout_from = tuple(read_doc_ids(heldout_file))
    settings = LearnSettings.from_config(config.skills, rollouts=rollouts, temperature=temperature, holdout=holdout,
                                         dev=dev, gate=gate, top_k=top_k, seed=seed, min_gain=min_gain,
                                         heldout_from=heldout_from, max_edges=max_edges)
    report = learn_skills(gold_dir, domain, config=config, settings=settings,
                          library_dir=library_dir or config.skills.library)
    click.echo(json.dumps(report.to_dict(), indent=2) if as_json else report.format_text())


@skills_cli.command("list")
@click.argument("domain")
@library_option
def list_cli(domain, library_dir):
    """List the skills of DOMAIN's library: id, version, kind, target, support, patterns (in a
    skill several cues joined, each with the development gain it was accepted with)."""
    lib = _load(domain, library_dir)
    click.echo(f"{domain}: library version {lib.version}, {len(lib.skills)} skill{'s' if len(lib.skills) != 1 else ''}, "
               f"{len(lib.gazetteer)} gazetteer name{'s' if len(lib.gazetteer) != 1 else ''}")
    for s in lib.sorted_skills():
        sup = s["support"]
        gains = s.get("cue_gains") or {}
        gains = gains if len(gains) > 1 else {}  # a skill several cues joined: each cue's own gain
        cues = [(p, p) for p in s["pattern"]["phrases"]] + [(r, f"/{r}/") for r in s["pattern"]["regex"]]
        pattern = ", ".join(shown + (f" ({gains[c]:+.4f})" if c in gains else "") for c, shown in cues)
        gain = f"  dev +{s['dev_gain']:.4f}" if "dev_gain" in s else ""
        click.echo(f"{s['id']}  v{s['version']}  {s['kind']:<8} {s['target']:<14} "
                   f"stable {sup['stable']} unstable {sup['unstable']} miss {sup['miss']}{gain}  {pattern}")
    if lib.gazetteer:
        click.echo("gazetteer (literal names, not skills):")
    for g in sorted(lib.gazetteer, key=lambda g: g["id"]):
        click.echo(f"{g['id']}  {g['type']:<14} {g['name']}")


@skills_cli.command("show")
@click.argument("domain")
@click.argument("skill")
@library_option
def show_cli(domain, skill, library_dir):
    """Print one skill of DOMAIN (an id or a unique id prefix) or gazetteer entry as YAML,
    with its provenance: the gold edges it came from and, for misses, why they were missed."""
    import yaml

    from kgkit.skills.library import dump_skill

    lib = _load(domain, library_dir)
    entry = next((g for g in lib.gazetteer if g["id"] == skill), None)
    click.echo(yaml.safe_dump(entry, sort_keys=False, allow_unicode=True) if entry else dump_skill(lib.get(skill)),
               nl=False)


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


@skills_cli.command("export")
@click.argument("domain")
@click.argument("dest", type=click.Path(file_okay=False))
@library_option
def export_cli(domain, dest, library_dir):
    """Copy DOMAIN's library into the library root DEST (e.g. a project's ./skill_library,
    or a folder to share); an existing DOMAIN library there is not overwritten."""
    from pathlib import Path

    from kgkit.errors import InputError
    from kgkit.skills.library import save_library

    lib = _load(domain, library_dir)
    if (Path(dest) / domain).exists():
        raise InputError(f"{Path(dest) / domain} already exists; remove it or export elsewhere")
    folder = save_library(lib, dest)
    click.echo(f"exported {len(lib.skills)} skills and {len(lib.gazetteer)} gazetteer names of {domain} to {folder}")


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
    """DOMAIN's library, from --library, else skills.library in kgkit.yaml, else the default roots."""
    from kgkit.engine.run import resolve_config
    from kgkit.skills.library import load_library, require_domain

    library_dir = library_dir or resolve_config(None).skills.library
    require_domain(domain, library_dir)
    return load_library(domain, library_dir)
