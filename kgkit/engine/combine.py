"""The upgrade stage with ``upgrades.combine``: a chunk's upgrade views answered in one pass.

:func:`combined_answers` sends, for each chunk, one combined pass (:mod:`kgkit.modes.combined`)
for the views busy there that can take part, the ordinary pass for any other, and hands the
answers back split per view, in the order the stage reads separate passes' answers (view by
view, chunk by chunk), so :func:`kgkit.engine.document.run_upgrade` turns them into views exactly
as before. The accounting counts each combined pass once (``calls.upgrade["combined"]``),
the views it answered (``calls.combined``) and the calls it saved (``calls.saved``).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

from kgkit.backends.base import PassRequest
from kgkit.documents.types import Chunk
from kgkit.engine.accounting import Accounting
from kgkit.modes import combined
from kgkit.formats.model import Domain, View

SingleRequests = Callable[[View, "list[Chunk]"], "list[PassRequest]"]  # run.upgrade_requests, bound to a document


def combined_answers(run_all: Callable[[list[PassRequest]], Iterator[dict[str, Any] | None]], views: Sequence[View],
                     worked: dict[str, list[Chunk]], chunks: Sequence[Chunk], domain: Domain,
                     single_requests: SingleRequests, accounting: Accounting) -> Iterator[dict[str, Any] | None]:
    """Each view's answers for its chunks in ``worked`` (None: the pass failed), view by view."""
    requests = combined_requests(views, worked, chunks, domain, single_requests, accounting)
    answers: dict[tuple[str, str], dict[str, Any] | None] = {}
    for request, answer in zip(requests, run_all(requests)):
        if request.stage == combined.STAGE:
            for part in request.context["parts"]:
                # a part missing from an answer no schema checked (a backend passed in) is an invalid answer
                answers[(part["key"], request.chunk.id)] = None if answer is None else answer.get(part["key"], {})
        else:
            answers[(request.stage, request.chunk.id)] = answer
    for view in views:
        for chunk in worked[view.name]:
            yield answers[(view.name, chunk.id)]


def combined_requests(views: Sequence[View], worked: dict[str, list[Chunk]], chunks: Sequence[Chunk], domain: Domain,
                      single_requests: SingleRequests, accounting: Accounting) -> list[PassRequest]:
    """The upgrade stage's passes, chunk by chunk: one combined pass for the views busy on a
    chunk that can take part (two or more), each other view's own pass; counted in ``accounting``."""
    singles = {view.name: dict(zip((c.id for c in worked[view.name]), single_requests(view, worked[view.name])))
               for view in views}
    tasks = {view.name: combined.task(view, domain, singles[view.name][worked[view.name][0].id].prompt)
             for view in views if worked[view.name]
             and combined.combinable(singles[view.name][worked[view.name][0].id].prompt)}
    schemas: dict[tuple[str, ...], dict[str, Any]] = {}  # one schema object per set of parts
    requests: list[PassRequest] = []
    for chunk in chunks:
        single = [singles[view.name][chunk.id] for view in views if chunk.id in singles[view.name]]
        together = [r for r in single if r.stage in tasks and _same_part(r, single, tasks)]
        if len(together) < 2:
            requests += single
            continue
        parts = [(r.context["view"], dict(r.context), tasks[r.stage]) for r in together]
        names = tuple(r.stage for r in together)
        answer_schema = schemas.setdefault(names, combined.schema([view for view, _, _ in parts]))
        requests.append(combined.request(parts, chunk, domain, answer_schema))
        requests += [r for r in single if all(r is not t for t in together)]
        accounting.combine(names)
    return requests


def _same_part(request: PassRequest, single: list[PassRequest], tasks: dict[str, Any]) -> bool:
    """Whether ``request`` shows the entities and relations the chunk's first combinable pass
    shows (every built-in mode does): a combined prompt lists them once for all its parts."""
    first = next(r for r in single if r.stage in tasks)
    return all(request.context.get(k) == first.context.get(k) for k in ("entities", "skeleton", "title"))
