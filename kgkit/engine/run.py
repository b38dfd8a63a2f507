"""``kgkit.extract``: per document, load -> chunk -> core -> modes -> write the run folder.

The core runs once per document whatever the views; each upgrade view then costs one
pass per chunk and each projection none. Every completed pass is kept in the run
folder's ``state/``, so a rerun, a ``--resume`` after failures or a run that adds a view
only calls the backend for passes it has not completed with the same inputs.
"""
from __future__ import annotations

import contextlib
import datetime
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, Iterator, Sequence

from kgkit.backends.base import UPGRADE, Backend, PassRequest
from kgkit.schema.catalog import load_domain, load_view
from kgkit.schema.search_path import available
from kgkit.config.model import Config
from kgkit.documents.types import Chunk, Document
from kgkit.engine.accounting import Accounting
from kgkit.engine.collector import paced
from kgkit.engine.combine import combined_answers
from kgkit.engine.core import CoreSettings, run_core
from kgkit.engine.corpus import CorpusInput, CorpusManifest, collect_inputs, run_row, skipped_row
from kgkit.engine.join import items_of, node_refs
from kgkit.engine.manifest import build_manifest
from kgkit.scopes import entity_scopes
from kgkit.engine.outputs import RunFolder, view_file_name
from kgkit.engine.passes import PassRunner
from kgkit.engine.pool import PassPool
from kgkit.engine.window import admitted
from kgkit.errors import InputError, KgkitError
from kgkit.schema.model import Domain, View
from kgkit.modes.base import Scope, Skeleton
from kgkit.modes.registry import get_mode

Progress = Callable[[str, str, int, int], None]  # (document name, stage, done, total)
BackendFactory = Callable[[Config, str], Backend]  # (config, "core" | "upgrades") -> backend


@dataclass
class RunResult:
    """One document's payload: what the run folder holds, in memory."""

    run_dir: Path
    manifest: dict[str, Any]
    nodes: list[dict[str, Any]]
    views: dict[str, dict[str, Any]]  # view name -> view file content
    review: list[dict[str, Any]]
    failures: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.failures

    def as_dict(self) -> dict[str, Any]:
        """The whole payload as one JSON-ready object (the top level of ``kgkit schema payload``)."""
        return {"manifest": self.manifest, "nodes": {"doc_id": self.manifest["input"]["doc_id"], "nodes": self.nodes},
                "views": self.views, "review": self.review}


def resolve_config(config: Config | str | os.PathLike | None) -> Config:
    if isinstance(config, Config):
        return config
    from kgkit.config.loader import load_config

    return load_config(config)


def view_refs(views: Sequence[str] | str | None, domain: Domain, config: Config) -> list[str]:
    """The view names to run: given (each may be a comma-separated list), else the config's,
    else the domain's defaults. ``all`` means every view on the search path that needs no template."""
    if isinstance(views, str):
        views = [views]
    given = [v.strip() for value in views or () for v in value.split(",") if v.strip()]
    refs = given or list(config.views or domain.default_views)
    if "all" in refs:
        everything = [name for name in available("views") if name != "diy"]
        refs = [r for r in refs if r != "all"] + [n for n in everything if n not in refs]
    return list(dict.fromkeys(refs))


def load_domain_and_views(domain: str | os.PathLike | None, views: Sequence[str] | str | None,
                          config: Config) -> tuple[Domain, list[View]]:
    """The domain and views a run uses; an unknown view mode is a config error, found before any call."""
    dom = load_domain(domain or config.domain)
    loaded = [load_view(r) for r in view_refs(views, dom, config)]
    for v in loaded:
        get_mode(v.mode)
    return dom, loaded


def unserved_views(domain: Domain, views: Sequence[View]) -> list[str]:
    """A warning for each view the domain can never fill (``--view nary`` on a domain with no
    n-ary relation type): the view is written, empty, and the run says why."""
    out = []
    for view in views:
        reason = getattr(get_mode(view.mode), "unserved", lambda d: None)(domain)
        if reason:
            out.append(f"view {view.name}: the domain {domain.name} {reason}, so the view stays empty")
    return out


def path_list(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str | os.PathLike]:
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def chunk(doc: Document, domain: Domain, config: Config) -> list[Chunk]:
    from kgkit.documents.chunking import chunk_document

    size = config.chunk_size or domain.chunking.size
    overlap = config.chunk_overlap if config.chunk_overlap is not None else domain.chunking.overlap
    return chunk_document(doc, size=size, overlap=overlap)


def retrieve_skills(domain: Domain, doc: Document, config: Config, enabled: bool) -> list[dict[str, Any]]:
    """Top-k learned skills for this document (``--no-skills`` or ``skills.enabled: false``: none)."""
    if not (enabled and config.skills.enabled):
        return []
    from kgkit.skills.retrieve import retrieve_skills as retrieve

    return retrieve(domain.name, doc.text[:2000], doc.title, config.skills.top_k, config.skills.library)


def make_backends(backend: Backend | BackendFactory | None, config: Config) -> tuple[Backend, Backend]:
    """(core backend, upgrade backend): one instance for both, or one per stage from a factory."""
    if backend is not None and hasattr(backend, "run"):
        return backend, backend
    if backend is None:
        from kgkit.backends.factory import create_backend as backend
    return backend(config, "core"), backend(config, "upgrades")


def dangling_references(nodes: list[dict[str, Any]], views: dict[str, dict[str, Any]]) -> int:
    """Node references in the views that the node table does not hold (0 unless a bug)."""
    known = {n["id"] for n in nodes}
    return sum(ref not in known for payload in views.values() for item in items_of(payload) for ref in node_refs(item))


def upgrade_requests(view: View, doc: Document, chunks: list[Chunk], domain: Domain, skeleton: Skeleton,
                     config: Config) -> list[PassRequest]:
    """One pass per chunk for an upgrade view."""
    mode = get_mode(view.mode)
    prompt = str(config.prompts.get(view.name, config.prompts.get(view.name.split(":")[0], view.prompt)))
    return [PassRequest(kind=UPGRADE, stage=view.name, chunk=c, schema=view.output_schema or {},
                        context={**mode.context(view, domain, c, skeleton), "title": doc.title}, prompt=prompt)
            for c in chunks]


def busy_chunks(view: View, domain: Domain, chunks: list[Chunk], skeleton: Skeleton, config: Config,
                accounting: Accounting) -> list[Chunk]:
    """The chunks an upgrade view's passes go to: all of them, or with
    ``upgrades.skip_idle_chunks`` those that could contribute (the others count as skipped)."""
    if not config.upgrades.skip_idle_chunks:
        return chunks
    mode = get_mode(view.mode)
    busy = [c for c in chunks if mode.can_contribute(view, domain, c, skeleton)]
    accounting.skip(view.name, len(chunks) - len(busy))
    return busy


def run_upgrade(view: View, doc: Document, chunks: list[Chunk], domain: Domain, skeleton: Skeleton,
                answers: Iterator[dict | None], config: Config, review: list,
                on_chunk: Callable[[int], None], held: dict[str, int]
                ) -> tuple[dict[str, Any], dict[str, int], list[dict[str, Any]]]:
    """An upgrade view from its passes' answers (the next ``len(chunks)`` of ``answers``)
    -> (view payload, rejects, view-only nodes); items held back (evidence not in the
    text) are counted in ``held``."""
    mode = get_mode(view.mode)
    items: dict[str, dict[str, Any]] = {}
    rejects: dict[str, int] = {}
    extra_nodes: dict[str, dict[str, Any]] = {}
    for i, c in enumerate(chunks):
        answer = next(answers)
        if answer is not None:
            scope = Scope(doc=doc, chunk=c, domain=domain, view=view, skeleton=skeleton,
                          evidence_threshold=config.review.evidence_threshold,
                          confidence_threshold=config.review.confidence_threshold,
                          review=review, rejects=rejects, held=held,
                          admit_unverified=config.review.admit_unverified, extra_nodes=extra_nodes)
            for item in mode.normalise(answer, scope):
                items.setdefault(item["id"], item)
        on_chunk(i + 1)
    return mode.payload(view, list(items.values())), rejects, list(extra_nodes.values())


def extract_document(doc: Document, domain: Domain, views: list[View], config: Config,
                     backends: tuple[Backend, Backend], folder: RunFolder, skills: bool = True,
                     progress: Progress | None = None, replace_views: bool = False,
                     pool: PassPool | None = None, manifest_extra: dict[str, Any] | None = None) -> RunResult:
    """Run the core and every view for one loaded document and write its run folder.

    The passes of each stage run at once on ``pool`` (one at a time without one).
    ``manifest_extra`` adds keys to the manifest (a batch run names its batches there).

    View files already in ``views/`` stay unless ``replace_views``; the manifest's
    ``view_files`` lists every file there after the run."""
    started = datetime.datetime.now(datetime.timezone.utc)
    report = (lambda stage, done, total: progress(doc.name, stage, done, total)) if progress else None
    upgrade_views = [v.name for v in views if v.is_upgrade]
    chunks = chunk(doc, domain, config)
    n = len(chunks)
    accounting = Accounting(n_chunks=n, views=[v.name for v in views], upgrade_views=upgrade_views)
    core_runner = PassRunner(backends[0], folder, accounting, config.limits, pool)
    upgrade_runner = PassRunner(backends[1], folder, accounting, config.limits, pool)
    skill_list = retrieve_skills(domain, doc, config, skills)
    settings = CoreSettings(
        fuzzy_threshold=config.canon.fuzzy_threshold, legal_suffixes=config.canon.legal_suffixes,
        block_cap=config.canon.block_cap,
        evidence_threshold=config.review.evidence_threshold,
        confidence_threshold=config.review.confidence_threshold,
        admit_unverified=config.review.admit_unverified,
        prompts={k: str(v) for k, v in config.prompts.items()}, skills=skill_list,
        document_entities=config.limits.document_entities,
    )
    with accounting.timed("core"):
        core = run_core(doc, chunks, domain, core_runner.run_all, settings, progress=report, skip=accounting.skip)
    skeleton, review = core.skeleton, core.review
    rejects: dict[str, dict[str, int]] = {"core": core.rejects}
    held: dict[str, dict[str, int]] = dict(core.held)
    payloads: dict[str, dict[str, Any]] = {}
    nodes = list(skeleton.nodes)
    heads = {view.name: {"view": view.name, "mode": view.mode, "doc_id": doc.id} for view in views}
    upgrades: list[View] = []  # the views whose passes run, all of them at once
    for view in views:
        mode = get_mode(view.mode)
        with accounting.timed(view.name):
            if mode.strategy == "projection":
                payloads[view.name] = {**heads[view.name], **mode.project(view, skeleton, domain)}
                if report:
                    report(view.name, 1, 1)
            elif not mode.can_build(view, domain, skeleton):  # e.g. no entity for a temporal edge to join
                accounting.skip(view.name, n)
                payloads[view.name] = {**heads[view.name], **mode.payload(view, [])}
                rejects[view.name], held[view.name] = {}, {}
            else:  # filled below; the keys now keep the views' order
                payloads[view.name], rejects[view.name], held[view.name] = {}, {}, {}
                upgrades.append(view)
    worked = {view.name: busy_chunks(view, domain, chunks, skeleton, config, accounting) for view in upgrades}
    if config.upgrades.combine:  # one pass per chunk for every view (kgkit/engine/combine.py)
        answers = combined_answers(upgrade_runner.run_all, upgrades, worked, chunks, domain,
                                   lambda v, cs: upgrade_requests(v, doc, cs, domain, skeleton, config), accounting)
    else:
        answers = upgrade_runner.run_all([request for view in upgrades
                                          for request in upgrade_requests(view, doc, worked[view.name], domain,
                                                                          skeleton, config)])
    for view in upgrades:
        with accounting.timed(view.name):
            total = len(worked[view.name])
            on_chunk = (lambda done, _v=view.name, _t=total: report(_v, done, _t)) if report else (lambda done: None)
            payload, view_rejects, extra = run_upgrade(view, doc, worked[view.name], domain, skeleton, answers,
                                                       config, review, on_chunk, held[view.name])
            payloads[view.name] = {**heads[view.name], **payload}
            rejects[view.name] = view_rejects
            known = {node["id"] for node in nodes}
            nodes += [node for node in extra if node["id"] not in known]

    for runner in (core_runner, upgrade_runner):  # what the limits left out, beside what the gate held back
        for stage, reasons in runner.held.items():
            for reason, count in reasons.items():
                held.setdefault(stage, {})[reason] = held.get(stage, {}).get(reason, 0) + count
    failures = core_runner.failures + upgrade_runner.failures
    review = core_runner.review + upgrade_runner.review + review
    dangling = dangling_references(nodes, payloads)
    warnings = list(doc.warnings) + unserved_views(domain, views)
    if dangling:
        warnings.append(f"{dangling} view reference(s) name no node of nodes.json")
    if failures:
        warnings.append(f"{len(failures)} pass(es) failed; rerun with --resume to retry them")
    skipped = sorted({r["item"]["regex"] for r in review if str(r.get("reason", "")).startswith("regex_")})
    if skipped:
        warnings.append(f"{len(skipped)} regex(es) skipped on some chunks (input.regex_timeout); see review.jsonl")

    counts = {"nodes": len(nodes), "merges": len(core.merges), "skeleton_edges": len(skeleton.edges),
              "rejects": rejects, "held_back": held, "dangling": dangling, "review": len(review)}
    written = {view_file_name(name) for name in payloads}
    keep = folder.views_dir.is_dir() and not replace_views
    present = {p.name for p in folder.views_dir.glob("*.json")} if keep else set()
    manifest = build_manifest(doc=doc, domain=domain, views=views, backends=backends, skills=skill_list,
                              accounting=accounting, started=started, counts=counts, payloads=payloads,
                              warnings=warnings, failures=failures, view_files=sorted(written | present))
    manifest.update(manifest_extra or {})
    scopes = entity_scopes(domain)
    for node in nodes:  # the store reads each node's reach from here, needing no domain
        node["scope"] = scopes.get(node["type"], "corpus")
    nodes_file = {"doc_id": doc.id, "nodes": nodes}
    with accounting.timed("write"):
        folder.write_json("nodes.json", nodes_file)
        for name, payload in payloads.items():
            folder.write_json(f"views/{view_file_name(name)}", payload)
        if replace_views:
            folder.remove_stale_views(written)
        folder.write_jsonl("review.jsonl", review)
        if doc.layout is not None:
            from kgkit.scholarly.structure import structure_payload

            folder.write_json("structure.json", structure_payload(doc, nodes, scholarly=domain.reading == "scholarly"))
        folder.write_json("manifest.json", manifest)  # last: a folder with a manifest is complete
    return RunResult(run_dir=folder.path, manifest=manifest, nodes=nodes, views=payloads, review=review,
                     failures=failures)


def _view_ref(entry: dict[str, Any]) -> str:
    """How to load a view a manifest lists: a diy view by its template file, which may
    lie off the search path (``diy:path/to/template.yaml``)."""
    template = entry.get("template")
    return f"{entry['name'].split(':')[0]}:{template['file']}" if template and template.get("file") else entry["name"]


def extract(paths: str | os.PathLike | Sequence[str | os.PathLike], domain: str | os.PathLike | None = None,
            views: Sequence[str] | str | None = None, config: Config | str | os.PathLike | None = None,
            out_dir: str | os.PathLike | None = None, resume: bool = False, skills: bool = True,
            backend: Backend | BackendFactory | None = None, progress: Progress | None = None,
            replace_views: bool = False, include: Sequence[str] = (), exclude: Sequence[str] = ()
            ) -> list[RunResult]:
    """Extract a knowledge graph from each document and write one run folder per document.

    Parameters:
        paths: one path or several (``"-"`` reads stdin); a folder stands for the files
            below it that match ``include`` and not ``exclude`` (see :mod:`kgkit.engine.corpus`).
        domain: a domain name on the search path or a YAML path; None uses the config's
            (``general`` unless configured).
        views: view names (``["binary", "nary", "diy:contract_review"]``), a comma-separated
            string, or ``"all"``; None uses the config's views, else the domain's defaults.
        config: a Config, a kgkit.yaml path, or None for the default lookup.
        out_dir: parent of the run folders (``<out_dir>/<document name>/``); default
            ``config.out_dir``.
        resume: say that the run continues the one in the folder. Every run does: views
            already there are kept (and brought up to date from ``state/``), completed
            passes reused, failed ones retried.
        replace_views: drop the folder's earlier views; it then holds only this run's.
        skills: put the top-k learned skills in the core passes' context.
        backend: a Backend for every pass, or a factory ``(config, stage) -> Backend``;
            default :func:`kgkit.backends.factory.create_backend` (offline without a model).
        progress: called as ``progress(document, stage, done, total)``.

    Returns one :class:`RunResult` per document that ran; inputs that could not be read
    are skipped (see :func:`extract_each`, which also says which). Raises
    :class:`kgkit.errors.KgkitError` subclasses for bad config, domain or views — before
    any pass runs — and for bad input when no input could be read.
    """
    with contextlib.closing(extract_each(paths, domain=domain, views=views, config=config, out_dir=out_dir,
                                         resume=resume, skills=skills, backend=backend, progress=progress,
                                         replace_views=replace_views, include=include, exclude=exclude)) as each:
        return [r for r in each if isinstance(r, RunResult)]


@dataclass
class SkippedInput:
    """An input of a corpus run that could not be read or written: reported, counted, no call made."""

    path: str
    run_folder: str
    error: str


def prepare_run(paths: str | os.PathLike | Sequence[str | os.PathLike], domain: str | os.PathLike | None,
                views: Sequence[str] | str | None, config: Config | str | os.PathLike | None,
                out_dir: str | os.PathLike | None, include: Sequence[str], exclude: Sequence[str]
                ) -> tuple[Config, list[CorpusInput], Domain, list[View], Path, bool]:
    """What every run checks before its first call: (config, inputs, domain, views, the
    folder of the run folders, whether it is a corpus run). InputError when there is no input."""
    cfg = resolve_config(config)
    given_paths = path_list(paths)
    if not given_paths:
        raise InputError("no input files given")
    inputs = collect_inputs(given_paths, include, exclude)
    if not inputs:
        raise InputError("no input files found", hint="check the folder and the --include/--exclude globs")
    dom, base_views = load_domain_and_views(domain, views, cfg)
    root = Path(out_dir) if out_dir is not None else Path(cfg.out_dir)
    corpus = len(inputs) > 1 or any(Path(p).is_dir() for p in given_paths if str(p) != "-")
    return cfg, inputs, dom, base_views, root, corpus


def extract_each(paths: str | os.PathLike | Sequence[str | os.PathLike], domain: str | os.PathLike | None = None,
                 views: Sequence[str] | str | None = None, config: Config | str | os.PathLike | None = None,
                 out_dir: str | os.PathLike | None = None, resume: bool = False, skills: bool = True,
                 backend: Backend | BackendFactory | None = None, progress: Progress | None = None,
                 replace_views: bool = False, include: Sequence[str] = (), exclude: Sequence[str] = (),
                 on_start: Callable[[int], None] | None = None) -> Iterator[RunResult | SkippedInput]:
    """:func:`extract`, one document at a time: a :class:`RunResult` per document as it is
    written, a :class:`SkippedInput` per input that could not be read (or its run folder
    not written), in input order. Documents run at once as long as the pass pool has room
    for their passes, within a memory budget (one at a time when the passes do:
    kgkit/engine/window.py). With more than one input (or
    a folder), ``runs.jsonl`` in ``out_dir`` gets a line per document. ``on_start`` is told
    how many documents the run has, before the first is loaded.

    When no input at all could be used, the first input's error is raised (exit 2)."""
    cfg, inputs, dom, base_views, root, corpus = prepare_run(paths, domain, views, config, out_dir, include, exclude)
    runs = CorpusManifest(root) if corpus else None
    job = DocumentJob(dom, base_views, cfg, root, skills, replace_views)
    if cfg.engine == "ray":  # Ray is imported only here (the ray extra)
        from kgkit.engine.ray_engine import ray_outcomes

        outcomes = ray_outcomes(inputs, job, backend, progress)
    else:
        outcomes = local_outcomes(inputs, job, make_backends(backend, cfg), progress)
    first_error: InputError | None = None
    ran = 0
    if on_start:
        on_start(len(inputs))
    with contextlib.closing(outcomes):
        for item, outcome in outcomes:
            if isinstance(outcome, InputError):
                if not corpus:
                    raise outcome
                first_error = first_error or outcome
                runs.add(skipped_row(item, outcome.message))
                yield SkippedInput(str(item.path), item.folder, outcome.message)
                continue
            ran += 1
            if runs is not None:
                runs.add(run_row(item, outcome.manifest))
            yield outcome
    if not ran and first_error is not None:
        raise first_error


@dataclass(frozen=True)
class DocumentJob:
    """What every document of a run shares, and how one document runs: load it, hold its
    run folder, extract and write. The one per-document code path, whichever engine calls
    it: this process (:func:`local_outcomes`) or a Ray task (kgkit/engine/ray_engine.py),
    which is why it is plain picklable data."""

    domain: Domain
    views: list[View]
    config: Config
    root: Path  # parent of the run folders
    skills: bool
    replace_views: bool

    def run(self, item: CorpusInput, backends: tuple[Backend, Backend], progress: Progress | None,
            pool: PassPool) -> RunResult:
        from kgkit.documents.load import load_document

        doc = load_document(item.path, max_bytes=self.config.input.max_bytes,
                            layout=self.domain.reading != "text")
        folder = RunFolder(self.root / item.folder)
        with folder.locked(), paced():  # writable, free of links and ours before any call
            folder.remove_temp_files()  # a run killed mid-write (SIGKILL, power loss) may have left some
            given = {v.name for v in self.views}
            plan = self.views if self.replace_views else earlier_views(folder, given) + self.views
            return extract_document(doc, self.domain, plan, self.config, backends, folder, skills=self.skills,
                                    progress=progress, replace_views=self.replace_views, pool=pool)

    def run_alone(self, item: CorpusInput, backend: Backend | BackendFactory | None,
                  progress: Progress | None) -> RunResult | InputError:
        """:meth:`run` in a process of its own (a Ray worker): backends and a pass pool of its
        own; an unreadable input is returned, to be skipped and counted where the corpus is."""
        with PassPool(pass_concurrency(self.config)) as pool:
            try:
                return self.run(item, make_backends(backend, self.config), progress, pool)
            except InputError as exc:
                return exc


def local_outcomes(inputs: list[CorpusInput], job: DocumentJob, backends: tuple[Backend, Backend],
                   progress: Progress | None) -> Iterator[tuple[CorpusInput, RunResult | InputError]]:
    """The local engine: the documents in this process on one pass pool, as many at once as
    keep it full (kgkit/engine/window.py)."""
    with PassPool(pass_concurrency(job.config)) as pool, contextlib.closing(
            admitted(inputs, lambda item: job.run(item, backends, progress, pool), pool)) as outcomes:
        yield from outcomes


def pass_concurrency(config: Config) -> int:
    """Passes in flight at once: ``llm.concurrency`` when a model answers them. The offline
    backend computes in Python (the GIL lets one thread run at a time) and a backend passed
    in need not be thread-safe, so without a model passes run one at a time."""
    models = [config.llm.model, *(s.model for s in config.llm.stages.values())]
    return config.llm.concurrency if any(models) else 1


def earlier_views(folder: RunFolder, given: set[str]) -> list[View]:
    """The views of the run already in ``folder`` that this run was not given, in their order:
    kept, so adding a view never loses one (rebuilt from ``state/``, so unchanged ones cost nothing)."""
    previous = folder.read_manifest()
    kept = []
    for entry in (previous or {}).get("views", []):
        if entry["name"] in given:
            continue
        try:
            kept.append(load_view(_view_ref(entry)))
        except KgkitError as exc:
            raise InputError(f"{folder.path}: the earlier run's view {entry['name']!r} cannot be loaded: "
                             f"{exc.message}", hint="pass --replace-views to keep only this run's views") from None
    return kept
