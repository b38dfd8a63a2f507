"""``kgkit extract``: options in, one call to :func:`kgkit.engine.run.extract`, a summary out.

Progress goes to stderr (a bar per stage on a terminal, one plain line per finished stage
otherwise), the summary table or ``--json`` to stdout. Exit 0 when every pass succeeded,
1 when some chunks failed (they are kept for ``--resume``), 2 for bad input or config.
"""
from __future__ import annotations

import contextlib
import json
import math
import sys
from pathlib import Path
from typing import Any

import click

from kgkit.errors import EXIT_OK, EXIT_PARTIAL, EXIT_PENDING


def _config(config_path: str | None, model: str | None, no_cache: bool, engine: str | None = None):
    from kgkit.config.loader import load_config

    return load_config(config_path, overrides={"llm.model": model, "cache.enabled": False if no_cache else None,
                                               "engine": engine})


class _Progress:
    """Progress on stderr: per stage for one document (a redrawn bar on a terminal, plain
    lines otherwise); for a corpus, one tqdm bar over the documents with the stage in hand,
    calls, tokens and cost so far and an ETA (plain lines per document when not a terminal)."""

    WIDTH = 24

    def __init__(self, stream=None):
        self.stream = stream or sys.stderr
        self.tty = self.stream.isatty()
        self.bar = None  # the corpus bar, on a terminal
        self.total = 0
        self.done = 0
        self.calls = self.tokens = 0
        self.cost = 0.0

    def start(self, documents: int) -> None:
        """Called once with the number of documents; more than one makes it a corpus display."""
        self.total = documents
        if documents > 1 and self.tty:
            from tqdm import tqdm

            self.bar = tqdm(total=documents, unit="doc", file=self.stream, dynamic_ncols=True)

    def __call__(self, document: str, stage: str, done: int, total: int) -> None:
        if self.bar is not None:
            self.bar.set_description(f"{document}: {stage} {done}/{total}", refresh=True)
        elif self.total > 1:
            return  # a corpus off a terminal: one line per document (finished)
        elif self.tty:
            filled = self.WIDTH * done // max(total, 1)
            bar = "#" * filled + "-" * (self.WIDTH - filled)
            end = "\n" if done >= total else ""
            self.stream.write(f"\r{document}: {stage:<20} [{bar}] {done}/{total}{end}")
            self.stream.flush()
        elif done >= total:
            self.stream.write(f"{document}: {stage} {done}/{total} done\n")
            self.stream.flush()

    def finished(self, name: str, status: str, manifest: dict[str, Any] | None) -> None:
        """One document of a corpus is done (or skipped)."""
        self.done += 1
        if manifest is not None:
            self.calls += manifest["calls"]["total"]
            self.tokens += manifest["tokens"]["in"] + manifest["tokens"]["out"]
            self.cost += manifest["cost"] or 0.0
        if self.bar is not None:
            self.bar.set_postfix(calls=self.calls, tokens=self.tokens, cost=money(self.cost), refresh=False)
            self.bar.update(1)
            if self.done >= self.total:
                self.bar.close()
        elif self.total > 1:
            self.stream.write(f"[{self.done}/{self.total}] {name}: {status}; calls {self.calls}, "
                              f"tokens {self.tokens}, cost {money(self.cost)} so far\n")
            self.stream.flush()


def summary(results) -> dict[str, Any]:
    """The machine-readable summary ``--json`` prints (one entry per document)."""
    runs = []
    for r in results:
        m = r.manifest
        runs.append({
            "document": Path(r.run_dir).name,
            "run_dir": str(r.run_dir),
            "nodes": m["counts"]["nodes"],
            "edges": m["counts"]["edges"],
            "calls": m["calls"],
            "tokens": m["tokens"],
            "cost": m["cost"],
            "seconds": round(sum(m["timings"].values()), 3),
            "warnings": m["warnings"],
            "failures": m["failures"],
            "review": m["counts"]["review"],
        })
    return {"runs": runs, "ok": all(not r["failures"] for r in runs)}


def _table(rows: list[list[str]]) -> str:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip() for row in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    return "\n".join(lines)


def format_summary(data: dict[str, Any]) -> str:
    rows = [["document", "nodes", "edges per view", "calls (naive)", "tokens in/out", "cost", "time", "warnings"]]
    for run in data["runs"]:
        calls = run["calls"]
        edges = ", ".join(f"{view} {n}" for view, n in run["edges"].items()) or "-"
        cost = "n/a" if run["cost"] is None else money(run["cost"])
        rows.append([run["document"], str(run["nodes"]), edges, f"{calls['total']} ({calls['naive']})",
                     f"{run['tokens']['in']}/{run['tokens']['out']}", cost, f"{run['seconds']:.2f}s",
                     str(len(run["warnings"]))])
    lines = [_table(rows)]
    for run in data["runs"]:
        calls = run["calls"]
        lines.append(f"\n{run['run_dir']}: core {calls['core']}, upgrades "
                     f"{sum(calls['upgrade'].values())}, projections 0; {calls['reused']} reused from state, "
                     f"{calls['cache_hits']} cache hits, {calls['requests']} requests; "
                     f"{run['review']} item(s) for review in review.jsonl")
        for w in run["warnings"]:
            lines.append(f"  warning: {w}")
    for item in data.get("skipped", []):
        lines.append(f"\nskipped {item['input']}: {item['error']}")
    return "\n".join(lines)


def money(cost: float) -> str:
    """``$`` and enough decimals for two significant digits of a small cost (``$0.000036``,
    never ``$0.0000`` for a run that cost something); four for a cost of a cent or more."""
    if cost <= 0 or cost >= 0.01:
        return f"${cost:.4f}"
    return f"${cost:.{max(4, 1 - math.floor(math.log10(cost)))}f}"


def graph_report(url: str, added, stats: dict[str, Any], left_out: int) -> dict[str, Any]:
    """What ``--graph`` loaded: documents by outcome, runs left out (failed chunks), and the
    store's totals after the load."""
    outcome = {status: sum(1 for r in added if r.status == status) for status in ("added", "replaced", "unchanged")}
    return {"url": url, "tenant": stats["tenant"], **outcome, "left_out": left_out,
            "documents": stats["documents"], "nodes": stats["nodes"], "edges": stats["edges"]}


def format_graph_report(g: dict[str, Any]) -> str:
    left = f", {g['left_out']} left out (failed chunks: --resume, then add)" if g["left_out"] else ""
    return (f"\ngraph {g['url']} (tenant {g['tenant']}): {g['added']} document(s) added, {g['replaced']} replaced, "
            f"{g['unchanged']} unchanged{left}; it now holds {g['documents']} document(s), {g['nodes']} nodes, "
            f"{g['edges']} edges")


def format_plan(plans, provider: str = "") -> str:
    rows = [["document", "chunks", "entities", "relations", "upgrades", "projections", "total (naive)", "saved",
             "est. tokens in/out", "est. cost"]]
    for p in plans:
        c = p.calls
        upgrades = ", ".join(f"{v} {n}" for v, n in c["upgrade"].items()) or "-"
        cost = "unknown" if p.cost is None else money(p.cost)
        rows.append([p.document, str(p.chunks), str(c["entities"]), str(c["relations"]), upgrades, "0",
                     f"{c['total']} ({c['naive']})", str(c.get("saved", 0)), f"{p.tokens['in']}/{p.tokens['out']}",
                     cost])
    return _table(rows) + (f"\n{provider}" if provider else "") + "\n(dry run: nothing was called)"


@click.command("extract")
@click.argument("files", nargs=-1, required=True)
@click.option("--domain", "-d", help="Domain name or YAML path (default: the config's, else 'general').")
@click.option("--view", "views", multiple=True, help="Views: v1,v2 (repeatable), diy:TEMPLATE, or 'all' (every view that needs no template).")
@click.option("--model", "-m", help="LLM model (litellm name, or local/PATH.gguf run in this process); default: the config's, else the offline backend.")
@click.option("--config", "config_path", type=click.Path(dir_okay=False), help="kgkit.yaml to use.")
@click.option("--out", "out_dir", type=click.Path(file_okay=False), help="Parent folder of the run folders (default: the config's output.dir, else ./kgkit-out).")
@click.option("--include", multiple=True, help="Glob of files to take from a FOLDER (repeatable; default: the formats kgkit reads).")
@click.option("--exclude", multiple=True, help="Glob of files to leave out of a FOLDER (repeatable).")
@click.option("--dry-run", is_flag=True, help="Print the plan (chunks, calls, tokens, cost) and call nothing.")
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON on stdout.")
@click.option("--resume", is_flag=True, help="Continue the run in the folder (every run does: views kept, failed passes retried).")
@click.option("--replace-views", is_flag=True, help="Drop the folder's earlier views: it then holds only this run's.")
@click.option("--no-cache", is_flag=True, help="Neither read nor write the response cache.")
@click.option("--no-skills", is_flag=True, help="Do not give learned skills to the core passes.")
@click.option("--skip-idle-chunks", is_flag=True, help="Skip upgrade passes on chunks that cannot contribute (upgrades.skip_idle_chunks).")
@click.option("--combine-upgrades", is_flag=True, help="One pass per chunk answers every upgrade view at once (upgrades.combine).")
@click.option("--graph", help="Also add the finished runs to this corpus graph (.sqlite path or postgresql:// URL).")
@click.option("--tenant", help="Graph tenant for --graph (default: graph.tenant).")
@click.option("--engine", type=click.Choice(["local", "ray"]),
              help="Run documents here (local) or as Ray tasks on ray.address, else a local cluster (ray; "
                   "pip install 'kgkit[ray]'). Default: the config's engine, else local.")
@click.option("--batch", is_flag=True, help="Send each stage as a provider batch (half price, answers within 24 h); exit 75 until done: run the same command again later. See docs/batch.md.")
@click.option("--direct-retries", is_flag=True, help="With --batch: run the passes a batch failed directly (full price) instead of in the next batch.")
@click.option("--reader", type=click.Choice(["auto", "document", "wiki"]), default="auto", show_default=True,
              help="wiki: read a FOLDER as a Markdown vault (articles, links, index sections; see docs/wiki.md). "
                   "auto: wiki for one folder holding index.md or .obsidian/, else document by document.")
def extract_cli(files, domain, views, model, config_path, out_dir, include, exclude, dry_run, as_json, resume,
                replace_views, no_cache, no_skills, skip_idle_chunks, combine_upgrades, graph, tenant, engine, batch,
                direct_retries, reader):
    """Extract a knowledge graph from FILES (PDF, text, Markdown, HTML; - for stdin; a FOLDER
    for the files below it).

    Writes one run folder per document: manifest.json, nodes.json, views/<view>.json and
    review.jsonl; for several documents also runs.jsonl in --out, a line per document. Views
    an earlier run left in the folder are kept (--replace-views drops them); a second run
    into a folder in use stops at once. Exit codes: 0 ok; 1 some chunks failed (rerun with
    --resume) or some inputs could not be read (the others are done); 2 bad input; 75 with
    --batch (or --resume of a batch run): a stage waits in a provider batch, run it again later.

    \b
    Example:
      kgkit extract --domain legal_contracts --view nary,temporal contract.pdf
      kgkit extract --include '*.pdf' --exclude 'drafts/*' contracts/
    """
    _refuse_usage(batch, engine, direct_retries, resume)
    if _reads_vault(reader, files):
        _extract_vault(files, reader, _config(config_path, model, no_cache, engine), out_dir, dry_run, as_json, graph,
                       tenant, refused={"--view": views, "--domain": domain, "--batch": batch, "--resume": resume,
                                        "--include": include, "--exclude": exclude, "--engine ray": engine == "ray"})
        return
    cfg = _config(config_path, model, no_cache, engine)
    cfg.upgrades.skip_idle_chunks = cfg.upgrades.skip_idle_chunks or skip_idle_chunks
    cfg.upgrades.combine = cfg.upgrades.combine or combine_upgrades
    from kgkit.engine.options import RunOptions

    options = RunOptions(domain=domain, views=views, out_dir=out_dir, include=include, exclude=exclude,
                         resume=resume, replace_views=replace_views, skills=not no_skills,
                         direct_retries=direct_retries)
    _extract_documents(list(files), options, cfg, dry_run, as_json, graph, tenant, batch)


def _extract_documents(files: list, options, cfg, dry_run: bool, as_json: bool, graph: str | None,
                       tenant: str | None, batch: bool) -> None:
    """Documents given to ``kgkit extract``: the plan (``--dry-run``), or the run, its summary and ``--graph``."""
    if dry_run:
        _dry_run(files, options, cfg, as_json)
        return
    if graph:  # an unusable store is named now, before any call is paid for
        _open_store(cfg, graph, tenant)
    outcomes = _run(files, options, cfg, _Progress(), batch)
    _report(outcomes, options, cfg, as_json, graph, tenant)


def _refuse_usage(batch: bool, engine: str | None, direct_retries: bool, resume: bool) -> None:
    """Flags that cannot go together: a usage error (exit 2) before anything is read."""
    if batch and engine == "ray":
        raise click.UsageError("--batch cannot run on --engine ray: a batch's passes are run by the provider, "
                               "and the merge between stages runs here")
    if direct_retries and not (batch or resume):
        raise click.UsageError("--direct-retries applies to a batch run: give it with --batch or --resume")


def _open_store(cfg, graph: str, tenant: str | None) -> None:
    """Open and close the ``--graph`` store: opening it is the check that it is usable."""
    from kgkit.graph import GraphStore

    GraphStore.from_config(cfg, url=graph, tenant=tenant).close()


def _extract_vault(files, reader: str, cfg, out_dir, dry_run: bool, as_json: bool, graph: str | None,
                   tenant: str | None, refused: dict[str, Any]) -> None:
    """A Markdown vault given to ``kgkit extract``: the wiki reader's run, its summary and ``--graph``."""
    from kgkit.cli import wiki

    if reader == "auto":
        click.echo(f"{files[0]}: read as a Markdown vault (it holds index.md or .obsidian/); "
                   "--reader document reads its files one by one", err=True)
    run = wiki.extract_vault_cli(files, config=cfg, out_dir=out_dir, dry_run=dry_run, as_json=as_json,
                                 refused=refused)
    if run is not None:
        data = summary([run])
        data["runs"][0]["wiki"] = wiki.scan_summary(run.report)
        if graph:
            from kgkit.graph import GraphStore

            with GraphStore.from_config(cfg, url=graph, tenant=tenant) as store:
                added = store.add([run.run_dir])
                stats = store.stats()
            data["graph"] = graph_report(graph, added, stats, left_out=0)
        if as_json:
            click.echo(json.dumps(data, indent=2, ensure_ascii=False))
        else:
            click.echo(format_summary(data) + "\n" + wiki.format_report(run.report)
                       + (format_graph_report(data["graph"]) if graph else ""))


def _dry_run(files: list[str], options, cfg, as_json: bool) -> None:
    """``--dry-run``: the plan, and the provider it would go to, on stdout."""
    from kgkit.engine.plan import plan, provider_plan

    plans = plan(files, options, config=cfg)
    provider = provider_plan(cfg)
    if as_json:
        click.echo(json.dumps({"plan": [p.as_dict() for p in plans], "provider": provider.as_dict()}, indent=2))
    else:
        click.echo(format_plan(plans, provider.line()))


def _run(files: list[str], options, cfg, progress: "_Progress", batch: bool) -> "_Outcomes":
    """Run the documents (through provider batches with ``--batch``, or when ``--resume``
    finds a batch run) and sort what each gave: a result, a batch it waits on, a skip."""
    from kgkit.engine.document import RunResult
    from kgkit.engine.run import extract_each

    if batch or (options.resume and _batch_run(files, options.root(cfg), options.include, options.exclude)):
        from kgkit.engine.batch import extract_batch

        each = extract_batch(files, options, config=cfg, progress=progress, on_start=progress.start)
    else:
        each = extract_each(files, options, config=cfg, progress=progress, on_start=progress.start)
    out = _Outcomes()
    with contextlib.closing(each):  # Ctrl-C between two documents still stops the ones running
        for r in each:
            if isinstance(r, RunResult):
                out.results.append(_Summarised(r))
                progress.finished(r.run_dir.name, "partial" if r.failures else "ok", r.manifest)
            elif hasattr(r, "batch_id"):
                out.waiting.append(r)
                verb = "submitted" if r.submitted else f"still {r.status}"
                click.echo(f"{r.document}: {r.stage} {verb} as batch {r.batch_id}", err=True)
                progress.finished(r.run_dir.name, "batch", None)
            else:
                out.skipped.append(r)
                click.echo(f"Error: {r.path}: skipped: {r.error}", err=True)
                progress.finished(r.run_folder, "skipped", None)
    return out


class _Outcomes:
    """What the documents of one run gave."""

    def __init__(self) -> None:
        self.results: list[_Summarised] = []
        self.waiting: list[Any] = []  # BatchWaiting
        self.skipped: list[Any] = []  # SkippedInput


def _report(out: _Outcomes, options, cfg, as_json: bool, graph: str | None, tenant: str | None) -> None:
    """The summary on stdout, the finished runs into ``--graph``, and the exit code."""
    data = summary(out.results)
    if out.skipped:
        data["skipped"] = [{"input": s.path, "error": s.error} for s in out.skipped]
        data["ok"] = False
    if graph:  # runs with failed chunks stay out until a --resume completes them
        from kgkit.graph import GraphStore

        with GraphStore.from_config(cfg, url=graph, tenant=tenant) as store:
            added = store.add([r.run_dir for r in out.results if not r.manifest["failures"]])
            stats = store.stats()
        data["graph"] = graph_report(graph, added, stats,
                                     left_out=sum(1 for r in out.results if r.manifest["failures"]))
    if out.waiting:
        data["batches"] = [{"document": w.document, "run_dir": str(w.run_dir), "batch": w.batch_id,
                            "stage": w.stage, "status": w.status} for w in out.waiting]
    if out.results or not out.waiting:
        click.echo(json.dumps(data, indent=2) if as_json else format_summary(data))
        if graph and not as_json:
            click.echo(format_graph_report(data["graph"]))
    elif as_json:
        click.echo(json.dumps(data, indent=2))
    if out.waiting:
        click.echo(f"{len(out.waiting)} document(s) wait on a provider batch. Run the same command again later "
                   f"(with --resume) to collect and go on; `kgkit batch status --out {options.out_dir or cfg.out_dir} "
                   f"--wait` waits for them.", err=True)
        click.get_current_context().exit(EXIT_PENDING)
    click.get_current_context().exit(EXIT_OK if data["ok"] else EXIT_PARTIAL)


def _reads_vault(reader: str, files) -> bool:
    """Whether FILES are one Markdown vault: asked for (--reader wiki), or recognised (auto)."""
    if reader == "document":
        return False
    if reader == "wiki":
        return True
    if len(files) != 1 or files[0] == "-" or not Path(files[0]).is_dir():
        return False  # a file or several: no vault, and the wiki reader is not even imported
    from kgkit.wiki.vault import is_vault

    return is_vault(Path(files[0]))


def _batch_run(files, out_dir, include, exclude) -> bool:
    """Whether an input's run folder records a batch not yet collected: then --resume goes on
    in batch mode (running its passes directly would pay for them twice)."""
    from kgkit.engine.batch_state import resumes_batch

    return resumes_batch(list(files), out_dir, include, exclude)


class _Summarised:
    """What the summary needs of a RunResult (its folder and the parts of its manifest
    :func:`summary` reads), so a corpus run keeps no document's graph, nor the rest of its
    manifest (views, files, digests, rejects per view), in memory once it is written."""

    def __init__(self, result):
        m = result.manifest
        self.run_dir = result.run_dir
        self.manifest = {"counts": {k: m["counts"][k] for k in ("nodes", "edges", "review")},
                         "calls": m["calls"], "tokens": m["tokens"], "cost": m["cost"],
                         "timings": {"total": sum(m["timings"].values())}, "warnings": m["warnings"],
                         "failures": m["failures"]}
