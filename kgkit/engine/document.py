"""One document's run: chunks, the core, every view on its skeleton, the run folder written (both engines and batch runs call :func:`extract_document`)."""
from __future__ import annotations

import datetime
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterator, Sequence

from kgkit.backends.base import UPGRADE, Backend, PassRequest
from kgkit.config.model import Config
from kgkit.documents.types import Chunk, Document
from kgkit.engine.accounting import Accounting
from kgkit.engine.core import CoreSettings, run_core
from kgkit.engine.join import items_of, node_refs
from kgkit.engine.manifest import build_manifest
from kgkit.formats.scopes import entity_scopes
from kgkit.engine.options import RunOptions
from kgkit.engine.outputs import RunFolder, view_file_name
from kgkit.engine.passes import PassRunner
from kgkit.engine.pool import PassPool
from kgkit.formats.model import Domain, View
from kgkit.modes.registry import get_mode, get_upgrade_mode

if TYPE_CHECKING:
    from kgkit.modes.base import Skeleton

BackendFactory = Callable[[Config, str], Backend]  # (config, "core" | "upgrades") -> backend


Progress = Callable[[str, str, int, int], None]  # (document name, stage, done, total)
StageProgress = Callable[[str, int, int], None]  # one document's: (stage, done, total)


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


def unserved_views(domain: Domain, views: Sequence[View]) -> list[str]:
    """A warning for each view the domain can never fill (``--view nary`` on a domain with no
    n-ary relation type): the view is written, empty, and the run says why."""
    out = []
    for view in views:
        reason = getattr(get_mode(view.mode), "unserved", lambda d: None)(domain)
        if reason:
            out.append(f"view {view.name}: the domain {domain.name} {reason}, so the view stays empty")
    return out


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


def dangling_references(nodes: list[dict[str, Any]], views: dict[str, dict[str, Any]]) -> int:
    """Node references in the views that the node table does not hold (0 unless a bug)."""
    known = {n["id"] for n in nodes}
    return sum(ref not in known for payload in views.values() for item in items_of(payload) for ref in node_refs(item))


def upgrade_requests(view: View, doc: Document, chunks: list[Chunk], domain: Domain, skeleton: Skeleton,
                     config: Config) -> list[PassRequest]:
    """One pass per chunk for an upgrade view."""
    mode = get_upgrade_mode(view.mode)
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
    mode = get_upgrade_mode(view.mode)
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
    from kgkit.modes.base import Scope

    mode = get_upgrade_mode(view.mode)
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


def core_settings(config: Config, skills: list[dict[str, Any]]) -> CoreSettings:
    """What the core passes and the merge read of the configuration."""
    return CoreSettings(
        fuzzy_threshold=config.canon.fuzzy_threshold, legal_suffixes=config.canon.legal_suffixes,
        block_cap=config.canon.block_cap,
        evidence_threshold=config.review.evidence_threshold,
        confidence_threshold=config.review.confidence_threshold,
        admit_unverified=config.review.admit_unverified,
        prompts={k: str(v) for k, v in config.prompts.items()}, skills=skills,
        document_entities=config.limits.document_entities,
    )


class _DocumentViews:
    """One document's views as they are built on its skeleton: payloads (in the views'
    order), rejects and held-back counts per stage, the node table (the skeleton's, then the
    view-only nodes upgrades add) and the review entries."""

    def __init__(self, doc: Document, domain: Domain, chunks: list[Chunk], core: Any, accounting: Accounting,
                 report: StageProgress | None):
        self.doc, self.domain, self.chunks, self.accounting, self.report = doc, domain, chunks, accounting, report
        self.skeleton: Skeleton = core.skeleton
        self.review: list[dict[str, Any]] = core.review
        self.rejects: dict[str, dict[str, int]] = {"core": core.rejects}
        self.held: dict[str, dict[str, int]] = dict(core.held)
        self.payloads: dict[str, dict[str, Any]] = {}
        self.nodes: list[dict[str, Any]] = list(self.skeleton.nodes)

    def head(self, view: View) -> dict[str, Any]:
        return {"view": view.name, "mode": view.mode, "doc_id": self.doc.id}

    def place(self, views: list[View]) -> list[View]:
        """Projections built now, views that can build nothing written empty; the upgrade
        views whose passes run (all of them at once), their places kept in the views' order."""
        upgrades: list[View] = []
        for view in views:
            mode = get_mode(view.mode)
            with self.accounting.timed(view.name):
                if mode.strategy == "projection":
                    self.payloads[view.name] = {**self.head(view), **mode.project(view, self.skeleton, self.domain)}
                    if self.report:
                        self.report(view.name, 1, 1)
                elif not mode.can_build(view, self.domain, self.skeleton):  # e.g. no entity for a temporal edge
                    self.accounting.skip(view.name, len(self.chunks))
                    self.payloads[view.name] = {**self.head(view), **mode.payload(view, [])}
                    self.rejects[view.name], self.held[view.name] = {}, {}
                else:  # filled by upgrade(); the keys now keep the views' order
                    self.payloads[view.name], self.rejects[view.name], self.held[view.name] = {}, {}, {}
                    upgrades.append(view)
        return upgrades

    def upgrade(self, upgrades: list[View], runner: PassRunner, config: Config) -> None:
        """Every upgrade view's passes, at once (one per chunk and view, or per chunk with
        ``upgrades.combine``), then each view from its answers."""
        doc, domain, chunks, skeleton = self.doc, self.domain, self.chunks, self.skeleton
        worked = {view.name: busy_chunks(view, domain, chunks, skeleton, config, self.accounting)
                  for view in upgrades}
        if config.upgrades.combine:  # one pass per chunk for every view (kgkit/engine/combine.py)
            from kgkit.engine.combine import combined_answers  # only here: a core-only run sends sooner

            answers = combined_answers(runner.run_all, upgrades, worked, chunks, domain,
                                       lambda v, cs: upgrade_requests(v, doc, cs, domain, skeleton, config),
                                       self.accounting)
        else:
            answers = runner.run_all([request for view in upgrades
                                      for request in upgrade_requests(view, doc, worked[view.name], domain,
                                                                      skeleton, config)])
        report = self.report
        for view in upgrades:
            with self.accounting.timed(view.name):
                total = len(worked[view.name])

                def on_chunk(done: int, _v: str = view.name, _t: int = total) -> None:
                    if report:
                        report(_v, done, _t)

                payload, view_rejects, extra = run_upgrade(view, doc, worked[view.name], domain, skeleton, answers,
                                                           config, self.review, on_chunk, self.held[view.name])
                self.payloads[view.name] = {**self.head(view), **payload}
                self.rejects[view.name] = view_rejects
                known = {node["id"] for node in self.nodes}
                self.nodes += [node for node in extra if node["id"] not in known]

    def add_held(self, runners: Sequence[PassRunner]) -> None:
        """What the limits left out, beside what the gate held back."""
        for runner in runners:
            for stage, reasons in runner.held.items():
                for reason, count in reasons.items():
                    self.held.setdefault(stage, {})[reason] = self.held.get(stage, {}).get(reason, 0) + count


def _warnings(doc: Document, domain: Domain, views: list[View], dangling: int, failures: list[dict[str, Any]],
              review: list[dict[str, Any]]) -> list[str]:
    warnings = list(doc.warnings) + unserved_views(domain, views)
    if dangling:
        warnings.append(f"{dangling} view reference(s) name no node of nodes.json")
    if failures:
        warnings.append(f"{len(failures)} pass(es) failed; rerun with --resume to retry them")
    skipped = sorted({r["item"]["regex"] for r in review if str(r.get("reason", "")).startswith("regex_")})
    if skipped:
        warnings.append(f"{len(skipped)} regex(es) skipped on some chunks (input.regex_timeout); see review.jsonl")
    return warnings


def _write(folder: RunFolder, doc: Document, built: _DocumentViews, review: list[dict[str, Any]],
           manifest: dict[str, Any], written: set[str], replace_views: bool) -> None:
    """The run folder's files; the manifest last: a folder with a manifest is complete."""
    with built.accounting.timed("write"):
        folder.write_json("nodes.json", {"doc_id": doc.id, "nodes": built.nodes})
        for name, payload in built.payloads.items():
            folder.write_json(f"views/{view_file_name(name)}", payload)
        if replace_views:
            folder.remove_stale_views(written)
        folder.write_jsonl("review.jsonl", review)
        if doc.layout is not None:
            from kgkit.scholarly.structure import structure_payload

            folder.write_json("structure.json", structure_payload(doc, built.nodes,
                                                                  scholarly=built.domain.reading == "scholarly"))
        folder.write_json("manifest.json", manifest)


def extract_document(doc: Document, domain: Domain, views: list[View], config: Config,
                     backends: tuple[Backend, Backend], folder: RunFolder, options: RunOptions = RunOptions(),
                     progress: Progress | None = None, pool: PassPool | None = None,
                     manifest_extra: dict[str, Any] | None = None) -> RunResult:
    """Run the core and every view for one loaded document and write its run folder
    (of ``options``, it reads ``skills`` and ``replace_views``).

    The passes of each stage run at once on ``pool`` (one at a time without one).
    ``manifest_extra`` adds keys to the manifest (a batch run names its batches there).

    View files already in ``views/`` stay unless ``replace_views``; the manifest's
    ``view_files`` lists every file there after the run."""
    started = datetime.datetime.now(datetime.timezone.utc)
    report = (lambda stage, done, total: progress(doc.name, stage, done, total)) if progress else None
    chunks = chunk(doc, domain, config)
    accounting = Accounting(n_chunks=len(chunks), views=[v.name for v in views],
                            upgrade_views=[v.name for v in views if v.is_upgrade])
    core_runner = PassRunner(backends[0], folder, accounting, config.limits, pool)
    upgrade_runner = PassRunner(backends[1], folder, accounting, config.limits, pool)
    skill_list = retrieve_skills(domain, doc, config, options.skills)
    with accounting.timed("core"):
        core = run_core(doc, chunks, domain, core_runner.run_all, core_settings(config, skill_list), progress=report,
                        skip=accounting.skip)
    built = _DocumentViews(doc, domain, chunks, core, accounting, report)
    built.upgrade(built.place(views), upgrade_runner, config)
    built.add_held((core_runner, upgrade_runner))
    failures = core_runner.failures + upgrade_runner.failures
    review = core_runner.review + upgrade_runner.review + built.review
    dangling = dangling_references(built.nodes, built.payloads)
    warnings = _warnings(doc, domain, views, dangling, failures, review)
    counts = {"nodes": len(built.nodes), "merges": len(core.merges), "skeleton_edges": len(built.skeleton.edges),
              "rejects": built.rejects, "held_back": built.held, "dangling": dangling, "review": len(review)}
    written = {view_file_name(name) for name in built.payloads}
    keep = folder.views_dir.is_dir() and not options.replace_views
    present = {p.name for p in folder.views_dir.glob("*.json")} if keep else set()
    manifest = build_manifest(doc=doc, domain=domain, views=views, backends=backends, skills=skill_list,
                              accounting=accounting, started=started, counts=counts, payloads=built.payloads,
                              warnings=warnings, failures=failures, view_files=sorted(written | present))
    manifest.update(manifest_extra or {})
    scopes = entity_scopes(domain)
    for node in built.nodes:  # the store reads each node's reach from here, needing no domain
        node["scope"] = scopes.get(node["type"], "corpus")
    _write(folder, doc, built, review, manifest, written, options.replace_views)
    return RunResult(run_dir=folder.path, manifest=manifest, nodes=built.nodes, views=built.payloads, review=review,
                     failures=failures)
