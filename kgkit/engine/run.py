"""``kgkit.extract``: per document, load -> chunk -> core -> modes -> write the run folder.

The core runs once per document whatever the views; each upgrade view then costs one
pass per chunk and each projection none. Every completed pass is kept in the run
folder's ``state/``, so a rerun, a ``--resume`` after failures or a run that adds a view
only calls the backend for passes it has not completed with the same inputs.
"""
from __future__ import annotations

import contextlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Generator, Sequence, cast

from kgkit.backends.base import Backend
from kgkit.catalog.load import load_domain, load_view
from kgkit.formats.search_path import available
from kgkit.config.model import Config
from kgkit.engine.collector import paced
from kgkit.engine.document import Progress, RunResult, extract_document
from kgkit.engine.corpus import CorpusInput, CorpusManifest, collect_inputs, run_row, skipped_row
from kgkit.engine.options import RunOptions
from kgkit.engine.outputs import RunFolder
from kgkit.engine.pool import PassPool
from kgkit.engine.window import admitted
from kgkit.errors import InputError, KgkitError
from kgkit.formats.model import Domain, View
from kgkit.modes.registry import get_mode

BackendFactory = Callable[[Config, str], Backend]  # (config, "core" | "upgrades") -> backend


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


def path_list(paths: str | os.PathLike | Sequence[str | os.PathLike]) -> list[str | os.PathLike]:
    return [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)


def make_backends(backend: Backend | BackendFactory | None, config: Config) -> tuple[Backend, Backend]:
    """(core backend, upgrade backend): one instance for both, or one per stage from a factory."""
    if backend is not None and hasattr(backend, "run"):
        one = cast(Backend, backend)
        return one, one
    if backend is None:
        from kgkit.backends.factory import create_backend

        return create_backend(config, "core"), create_backend(config, "upgrades")
    return backend(config, "core"), backend(config, "upgrades")  # what has no ``run`` is a factory


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
    options = RunOptions(domain=domain, views=views, out_dir=out_dir, include=include, exclude=exclude,
                         resume=resume, replace_views=replace_views, skills=skills)
    with contextlib.closing(extract_each(paths, options, config=config, backend=backend, progress=progress)) as each:
        return [r for r in each if isinstance(r, RunResult)]


@dataclass
class SkippedInput:
    """An input of a corpus run that could not be read or written: reported, counted, no call made."""

    path: str
    run_folder: str
    error: str


def prepare_run(paths: str | os.PathLike | Sequence[str | os.PathLike], options: RunOptions,
                config: Config | str | os.PathLike | None
                ) -> tuple[Config, list[CorpusInput], Domain, list[View], Path, bool]:
    """What every run checks before its first call: (config, inputs, domain, views, the
    folder of the run folders, whether it is a corpus run). InputError when there is no input."""
    cfg = resolve_config(config)
    given_paths = path_list(paths)
    if not given_paths:
        raise InputError("no input files given")
    inputs = collect_inputs(given_paths, options.include, options.exclude)
    if not inputs:
        raise InputError("no input files found", hint="check the folder and the --include/--exclude globs")
    dom, base_views = load_domain_and_views(options.domain, options.views, cfg)
    root = options.root(cfg)
    corpus = len(inputs) > 1 or any(Path(p).is_dir() for p in given_paths if str(p) != "-")
    return cfg, inputs, dom, base_views, root, corpus


def extract_each(paths: str | os.PathLike | Sequence[str | os.PathLike], options: RunOptions = RunOptions(), *,
                 config: Config | str | os.PathLike | None = None, backend: Backend | BackendFactory | None = None,
                 progress: Progress | None = None, on_start: Callable[[int], None] | None = None
                 ) -> Generator[RunResult | SkippedInput, None, None]:
    """:func:`extract`, one document at a time: a :class:`RunResult` per document as it is
    written, a :class:`SkippedInput` per input that could not be read (or its run folder
    not written), in input order. Documents run at once as long as the pass pool has room
    for their passes, within a memory budget (one at a time when the passes do:
    kgkit/engine/window.py). With more than one input (or
    a folder), ``runs.jsonl`` in ``out_dir`` gets a line per document. ``on_start`` is told
    how many documents the run has, before the first is loaded.

    When no input at all could be used, the first input's error is raised (exit 2)."""
    cfg, inputs, dom, base_views, root, corpus = prepare_run(paths, options, config)
    runs = CorpusManifest(root) if corpus else None
    job = DocumentJob(dom, base_views, cfg, root, options)
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
                if runs is None:  # not a corpus run: an unreadable input is the run's error
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
    it: :func:`local_outcomes`, in this process or in a Ray task (kgkit/engine/ray_engine.py),
    which is why it is plain picklable data."""

    domain: Domain
    views: list[View]
    config: Config
    root: Path  # parent of the run folders
    options: RunOptions

    def run(self, item: CorpusInput, backends: tuple[Backend, Backend], progress: Progress | None,
            pool: PassPool) -> RunResult:
        from kgkit.documents.load import load_document

        doc = load_document(item.path, max_bytes=self.config.input.max_bytes,
                            layout=self.domain.reading != "text")
        folder = RunFolder(self.root / item.folder)
        with folder.locked(), paced():  # writable, free of links and ours before any call
            folder.remove_temp_files()  # a run killed mid-write (SIGKILL, power loss) may have left some
            given = {v.name for v in self.views}
            plan = self.views if self.options.replace_views else earlier_views(folder, given) + self.views
            return extract_document(doc, self.domain, plan, self.config, backends, folder, self.options,
                                    progress=progress, pool=pool)

    def outcomes(self, items: list[CorpusInput], backend: Backend | BackendFactory | None, progress: Progress | None
                 ) -> Generator[tuple[CorpusInput, RunResult | InputError], None, None]:
        """:func:`local_outcomes` in a process of its own (a Ray task's share of the corpus),
        with backends of its own."""
        yield from local_outcomes(items, self, make_backends(backend, self.config), progress)


def local_outcomes(inputs: list[CorpusInput], job: DocumentJob, backends: tuple[Backend, Backend],
                   progress: Progress | None) -> Generator[tuple[CorpusInput, RunResult | InputError], None, None]:
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
