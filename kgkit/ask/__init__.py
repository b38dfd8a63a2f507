"""Answers with evidence: route a question, retrieve evidence, reason from it, verify the answer.

    from kgkit.ask import ask            # or: import kgkit; kgkit.ask(...)
    from kgkit.graph import GraphStore
    with GraphStore("corpus.sqlite", tenant="team-a") as graph:      # or the path itself
        record = ask(graph, "Which contracts are governed by the law of Texas?", domain="legal_contracts")
        record.status, record.answer, record.to_json()

A division of labour, one module per role: :mod:`~kgkit.ask.route` reads the question
(rules offline, the route model when ``llm.model`` is set), :mod:`~kgkit.ask.bind` fits it
to one of the domain's named queries, :mod:`~kgkit.ask.retrieve` only gathers evidence
(through :class:`kgkit.query.Query`'s operators), :mod:`~kgkit.ask.reason` only answers from
that evidence and cites it, :mod:`~kgkit.ask.verify` only checks each stated relation
against it: a draft that fails goes back to the reasoner once, then the answer degrades to
``insufficient_evidence`` with what was found. A count, comparison or earliest/latest is
computed by :mod:`~kgkit.ask.aggregate` from the evidence (never asked of a model) and
counted again by the verifier. See docs/ask.md.
"""
from __future__ import annotations

import sys
import time
import types
from os import PathLike
from typing import Any, Callable

from kgkit.ask import aggregate, bind, reason, retrieve, route, verify
from kgkit.ask.record import AskRecord, Check, Claim, EvidenceItem, Route, Step
from kgkit.config.model import Config
from kgkit.errors import InputError, ProviderError

__all__ = ["AskRecord", "Check", "Claim", "EvidenceItem", "ask"]


class _Clock:
    """The question's deadline and its trace of steps, on ``now`` (seconds, monotonic)."""

    def __init__(self, deadline: float, now: Callable[[], float] = time.monotonic):
        self.now = now
        self.start = now()
        self.deadline = deadline
        self.steps: list[Step] = []
        self._mark = self.start

    def left(self) -> float:
        return self.deadline - (self.now() - self.start)

    def step(self, name: str, **detail) -> None:
        now = self.now()
        self.steps.append(Step(name, round(now - self._mark, 4), detail))
        self._mark = now


class _Timeout(Exception):
    pass


def ask(store, question: str, *, domain: str | None = None, config: Config | None = None,
        tenant: str | None = None, sleep: Callable[[float], None] = time.sleep,
        now: Callable[[], float] = time.monotonic) -> AskRecord:
    """Answer ``question`` from ``store``: a GraphStore (read at its tenant), or the path or
    postgresql:// URL of one (opened at ``tenant``, else ``graph.tenant``, and closed again;
    a path that names no file is refused, nothing is created). ``import kgkit;
    kgkit.ask(...)`` is this function.

    ``domain`` (a name or path) supplies the named queries the offline answerer knows;
    ``config.llm.model`` switches the route and reason roles to that model. ``sleep`` and
    ``now`` stand for :func:`time.sleep` (the back-offs between retries) and
    :func:`time.monotonic` (the clock ``ask.deadline`` is measured on); a caller that decides
    time itself, such as a test, passes its own.

    Raises:
        InputError: the question is empty, or the store path names no file (exit 2); every
            honest "don't know" is a status instead.
    """
    from kgkit.query import Query

    if isinstance(store, (str, PathLike)):
        from kgkit.graph import GraphStore
        from kgkit.graph.database import require_existing

        require_existing(str(store))
        config = config or Config()
        with GraphStore.from_config(config, url=str(store), tenant=tenant) as opened:
            return ask(opened, question, domain=domain, config=config, sleep=sleep, now=now)

    question = (question or "").strip()
    if not question:
        raise InputError("the question is empty", hint='ask a question: kgkit ask GRAPH "Which ...?"')
    config = config or Config()
    clock = _Clock(config.ask.deadline, now)
    query = Query.from_config(store, config)  # search's embedding list too, when configured
    record = AskRecord(question, "answered", store.tenant, store.version(), Route("text", "rules"))
    record.reasoner = config.llm.model or "offline"
    found = retrieve.Found()
    try:
        reading = _route(question, config, record, clock, sleep)
        if not reading.mentions and domain and _corpus(query, question, reading, domain, found, config, record,
                                                       clock, store):
            return _done(record, clock)
        seeds = _seeds(query, reading, config, record, clock)
        one_sided = reading.operation in ("more", "fewer") and len(seeds) < 2
        if one_sided and _no_comparison(question, reading, seeds, record):
            return _done(record, clock)
        record.route.operation = reading.operation
        fit = (None if reading.operation in ("more", "fewer")  # one named query answers one of them, not both
               else _fit(query, domain, question, reading, seeds, record, clock))
        rows = _retrieve(query, question, reading, seeds, fit, found, config, record, clock)
        record.evidence = found.evidence
        if _nothing_to_answer_from(reading, seeds, found, record):
            return _done(record, clock)
        if reading.operation and (fit or seeds):
            _aggregate(query, question, reading, seeds, fit, rows, found, config, record, clock, store)
        else:
            _reason_and_verify(question, reading, seeds, fit, rows, found, config, record, clock, sleep, store)
    except _Timeout:
        record.status = "timeout"
        record.evidence = found.evidence
        record.answer, record.claims, record.verified = [], [], False
        record.note = f"the deadline (ask.deadline {config.ask.deadline:g} s) ran out; the evidence found by then is kept"
    return _done(record, clock)


def _no_comparison(question: str, reading: route.Reading, seeds: list[retrieve.Seed], record: AskRecord) -> bool:
    """A which-has-more question with fewer than two of its things in the graph. True when
    that settles it ("A or B" with B not in the graph: insufficient evidence); otherwise it
    is read as a plain question ("tell me more about X" compares nothing)."""
    missing = [m for m in reading.mentions if not any(s.mention in m for s in seeds)]
    if len(reading.mentions) >= 2 and missing:
        record.status, record.route.operation = "insufficient_evidence", reading.operation
        record.note = ("a comparison needs each thing it compares in the graph; not found: "
                       + ", ".join(repr(m) for m in missing))
        return True
    reading.operation = None
    reading.kind = record.route.kind = route.classify(question, reading.mentions)
    return False


def _nothing_to_answer_from(reading: route.Reading, seeds: list[retrieve.Seed], found: retrieve.Found,
                            record: AskRecord) -> bool:
    """True (with the status and a note saying why) when the question names nothing in the
    graph or no evidence was found: an honest "don't know" instead of an answer."""
    if reading.mentions and not seeds:
        record.status = "no_seed"
        record.note = ("nothing the question names is in the graph: " + ", ".join(repr(m) for m in reading.mentions)
                       + ("; the passages that match its words are listed as evidence" if found.evidence else ""))
        return True
    if not found.evidence:
        record.status = "no_seed" if not seeds else "insufficient_evidence"
        record.note = ("nothing in the question names a node of the graph, and no passage matches it"
                       if not seeds else "the graph holds no statement about " + ", ".join(s.mention for s in seeds))
        return True
    return False


def _done(record: AskRecord, clock: _Clock) -> AskRecord:
    record.trace = clock.steps
    return record


def _check(clock: _Clock) -> None:
    if clock.left() <= 0:
        raise _Timeout()


def _route(question, config, record, clock, sleep) -> route.Reading:
    reading = route.read(question)
    source = "rules"
    if config.llm.model:
        data, why = _ask_model("route", config, config.ask.route, "ask_route.j2", question, question, {},
                               route.ROUTE_SCHEMA, clock, sleep, record)
        if data is not None:
            reading, source = route.merge_model(reading, data), "model"
        else:
            source = f"rules (the route model failed: {why})"
    record.route = Route(reading.kind, source, list(reading.mentions))
    clock.step("route", kind=reading.kind, source=source, mentions=reading.mentions, years=reading.years,
               dates=reading.dates)
    _check(clock)
    return reading


def _seeds(query, reading, config, record, clock) -> list[retrieve.Seed]:
    seeds = []
    for mention in reading.mentions:
        seeds += retrieve.resolve(query, mention, config.ask.min_score)
    record.route.seeds = [{"mention": s.mention, "id": n.id, "name": n.name, "type": n.type, "score": n.score}
                          for s in seeds for n in s.nodes]
    clock.step("seeds", found=len(seeds), of=len(reading.mentions))
    _check(clock)
    return seeds


def _fit(query, domain, question, reading, seeds, record, clock) -> bind.Fit | None:
    if not domain:
        return None
    from kgkit.query import named

    queries = named.domain_queries(domain)

    def documents_of_date(date: str) -> set[str]:
        answer = query.match(f'* -*-> *{{in: "{date}"}}')
        return {d for row in answer.rows for d in row.documents}

    fit = bind.fit(queries, question, reading, seeds, documents_of_date)
    if fit:
        record.route.named, record.route.params, record.route.path = fit.query.name, dict(fit.params), "named"
    clock.step("fit", named=fit.query.name if fit else None, params=fit.params if fit else {})
    _check(clock)
    return fit


def _retrieve(query, question, reading, seeds, fit, found, config, record, clock) -> list[list[str]]:
    """Evidence into ``found``; the rows of a named query's answer (item ids per row)."""
    rows: list[list[str]] = []
    if fit:
        setting = "ask.aggregate_evidence" if reading.operation else "ask.evidence"
        rows, cuts = _named_rows(query, question, fit, seeds, found,
                                 config.ask.aggregate_evidence if reading.operation else config.ask.evidence, setting)
        if fit.also:
            record.route.also, record.route.combine = fit.also, fit.combine
        clock.step("retrieve", operator="named", query=fit.query.name, rows=len(rows), items=len(found.evidence),
                   cut=cuts, also=fit.also, combine=record.route.combine)
    elif seeds and reading.operation:
        done = retrieve.per_seed(query, seeds, found)
        found.capped(config.ask.evidence)
        clock.step("retrieve", operator="per seed", done=done, items=len(found.evidence), cut=found.cut)
    else:
        done = retrieve.graph_evidence(query, seeds, reading.kind, found) if seeds else []
        if not seeds or reading.kind == "text":
            done.append(retrieve.text_evidence(query, question, found, config.ask.evidence))
        found.capped(config.ask.evidence)
        clock.step("retrieve", operator="full", done=done, items=len(found.evidence), cut=found.cut)
    _check(clock)
    return rows


def _named_rows(query, question, fit, seeds, found, limit, setting) -> tuple[list[list[str]], list[dict]]:
    """Run the fitted query once for each name its parameter takes ("X and Y both", "Texas or
    California"), join the answers (the intersection for "all", the union for "any") and keep
    the rows that give a joined element: the rows (item ids), and what a limit cut."""
    bindings = [fit.params] + bind.alternatives(fit, seeds)
    fit.also = bindings[1:]
    roles = bind.param_roles(fit.query)
    fit.values = [[v for n, v in params.items() if roles[n][0] == "name"] for params in bindings]
    named = {v.casefold() for vs in fit.values for v in vs}
    mentions = [s.mention for s in seeds if any(n.name.casefold() in named for n in s.nodes)]
    fit.combine = bind.combination(question, mentions) if fit.also else "any"
    per, answers = [], []
    for params in bindings:
        answer = query.named(fit.query, params, limit=limit)
        found.add_answer(answer, limit=setting)
        answers.append(answer)
        per.append(set(answer.report.get("answer") or []))
    fit.answer = sorted(set.intersection(*per) if fit.combine == "all" else set.union(*per))
    by_id = {e.id: e for e in found.evidence}
    keep = set(fit.answer)
    rows = [row.items for answer in answers for row in answer.rows
            if any(keep & (set(by_id[i].documents) | {n for ns in by_id[i].ends.values() for n in ns})
                   for i in row.items if i in by_id)]
    return rows, [vars(c) for answer in answers for c in answer.cuts]


def _reason_and_verify(question, reading, seeds, fit, rows, found, config, record, clock, sleep, store) -> None:
    keys = verify.Keys(found.names, getattr(store, "legal_suffixes", True))
    seed_names = {n.name for s in seeds for n in s.nodes}
    offline = (reason.from_named(fit.answer, fit.query.returns, rows, found.evidence) if fit
               else reason.from_statements(found.evidence, seed_names, reading.kind,
                                              {n for n, _ in found.names.values()}))
    draft, feedback = offline, []
    if config.llm.model:
        draft = _model_draft(question, found, config, clock, sleep, [], record) or offline
        _check(clock)
    checks = _checks(draft, fit, found, keys)
    clock.step("verify", claims=len(draft.claims), answers=len(draft.answer),
               failed=sum(not c.supported for c in checks))
    if config.llm.model and draft is not offline and not all(c.supported for c in checks):
        feedback = [c.reason for c in checks if not c.supported]
        record.sent_back = True
        _check(clock)
        again = _model_draft(question, found, config, clock, sleep, feedback, record)
        _check(clock)
        if again is not None:
            draft = again
            checks = _checks(draft, fit, found, keys)
            clock.step("verify", claims=len(draft.claims), answers=len(draft.answer),
                       failed=sum(not c.supported for c in checks), second=True)
    record.claims, record.checks, record.text = draft.claims, checks, draft.text
    record.answer_type = offline.answer_type
    record.verified = all(c.supported for c in checks)
    if not record.verified:
        record.status, record.answer = "insufficient_evidence", []
        record.text = "insufficient evidence"
        record.note = "the answer stated what the evidence does not support: " + "; ".join(
            c.reason for c in checks if not c.supported)
    elif not draft.answer:
        record.status, record.answer = "insufficient_evidence", []
        record.note = draft.text or ("the graph states no answer for " + " and ".join("/".join(v) for v in fit.values)
                                     + " together" if fit and fit.also and fit.combine == "all"
                                     else "the evidence holds no answer to the question")
    else:
        record.answer = [value for value, _ in draft.answer]
        record.cites = {value: list(ids) for value, ids in draft.answer}


def _checks(draft: reason.Draft, fit: bind.Fit | None, found: retrieve.Found, keys: verify.Keys) -> list:
    """The verifier's checks of a draft: its claims and answer elements, and, for an answer
    joined over several names, each element against each name it rests on."""
    checks = verify.verify(draft.claims, draft.answer, found.evidence, keys)
    if fit and fit.also:
        checks += verify.verify_combined(draft.answer, fit.values, fit.combine, found.evidence, keys)
    return checks


def _aggregate(query, question, reading, seeds, fit, rows, found, config, record, clock, store) -> None:
    """A count, comparison or earliest/latest over the named things, computed from the evidence
    (a model is not asked to count), then counted again by the verifier from the cited evidence."""
    op = reading.operation
    owners = {s.nodes[0].name: {n.name for n in s.nodes} for s in seeds}
    if fit:
        listed = reason.from_named(fit.answer, fit.query.returns, rows, found.evidence)
        agg = aggregate.Aggregate(op, "documents" if fit.query.returns == "documents" else "nodes",
                                  bind.relations(fit.query.pattern), {aggregate.ANSWER: dict(listed.answer)})
        owners = {}
    else:
        kind = aggregate.measure(question, reading.spans)
        touching = {e.relation for e in found.evidence if e.source == "graph"}
        relations = aggregate.cue_relations(question, reading.spans, touching)
        agg = aggregate.Aggregate(op, kind, relations, aggregate.seed_groups(found.evidence, owners, kind, relations))
    _compute(query, question, reading.spans, agg, owners, fit, found, config, record, clock, store)


def _corpus(query, question, reading, domain, found, config, record, clock, store) -> bool:
    """A question that names no node and asks for a count, ranking, absence or earliest/latest
    over the whole graph (kgkit.ask.corpus): True when the domain's words give it a plan, which
    is then answered; False leaves the question to the other paths."""
    from kgkit.ask import corpus, vocabulary

    vocab = vocabulary.of_domain(domain)
    plan = corpus.plan(question, reading.operation, vocab)
    if plan is None or not vocab.document_type and plan.measure(vocab) == "documents":
        return False
    record.route.kind, record.route.path, record.route.operation = "aggregate", "corpus", plan.op
    universe, done = retrieve.whole_graph(query, plan, vocab, found, config.ask.aggregate_evidence)
    clock.step("retrieve", operator="corpus", plan=vars(plan), done=done, items=len(found.evidence),
               cut=found.cuts)
    _check(clock)
    having = corpus.groups(found.evidence, plan, vocab) if plan.relations else {aggregate.ANSWER: universe}
    agg = aggregate.Aggregate(plan.op, plan.measure(vocab), plan.relations, having)
    if plan.absent:
        agg.without = having.get(aggregate.ANSWER, {})
        agg.groups = {aggregate.ANSWER: {d: ids for d, ids in universe.items() if d not in agg.without}}
    if plan.group:
        agg.grouped = "documents" if plan.group == vocab.document_type else "nodes"
    owners = {g: {g} for g in agg.groups} if plan.group else {}
    _compute(query, question, [], agg, owners, None, found, config, record, clock, store)
    return True


def _compute(query, question, spans, agg, owners, fit, found, config, record, clock, store) -> None:
    """The aggregate's dates (earliest/latest), value and result, its citations and claims,
    the verifier's recount, and the record's status."""
    op = agg.op
    elements = list(dict.fromkeys(e for g in agg.groups.values() for e in g))
    if op in aggregate.DATED:
        done = retrieve.date_evidence(query, elements, agg.measure, found, config.query.limit)
        cues = aggregate.cue_relations(question, spans, {e.relation for e in found.evidence})
        agg.dates = aggregate.dated(found.evidence, elements, agg.measure, cues, op)
        clock.step("retrieve", operator="dates", done=done, items=len(found.evidence))
        _check(clock)
    aggregate.compute(agg)
    record.evidence, record.aggregate, record.route.operation = found.evidence, agg, op
    record.reasoner = "offline"  # counted here, never asked of a model
    by_id = {e.id: e for e in found.evidence}
    record.cites = aggregate.cites(agg)
    names = {n for n, _ in found.names.values()}
    seed_names = {n for ns in owners.values() for n in ns}
    cited = list(dict.fromkeys(i for ids in record.cites.values() for i in ids))
    record.claims = [c for c in (reason._claim_of(by_id[i], seed_names, names) for i in cited if i in by_id) if c]
    keys = verify.Keys(found.names, getattr(store, "legal_suffixes", True))
    record.checks = verify.verify(record.claims, [], found.evidence, keys) + verify.verify_aggregate(
        agg, owners, found.evidence, keys)
    if fit and fit.also:  # "how many contracts do X and Y both sign": each counted one with each name
        record.checks += verify.verify_combined(list(agg.groups.get(aggregate.ANSWER, {}).items()), fit.values,
                                                fit.combine, found.evidence, keys)
    clock.step("aggregate", op=op, value=agg.value, result=agg.result,
               failed=sum(not c.supported for c in record.checks))
    record.answer_type = ("count" if op == "count" else agg.measure if op in ("list", *aggregate.DATED)
                          else "documents" if agg.grouped == "documents" else "nodes")
    record.verified = all(c.supported for c in record.checks)
    record.text = aggregate.text(agg)
    _aggregate_status(record, agg, elements, found.cuts)


def _aggregate_status(record: AskRecord, agg: aggregate.Aggregate, elements: list[str], cuts: list[str]) -> None:
    """Answered only when nothing was left out, every element is dated (earliest/latest) and the
    verifier counted the same; else insufficient evidence, saying why."""
    op = agg.op
    undated = [e for e in elements if e not in agg.dates] if op in aggregate.DATED else []
    if undated and agg.dates:
        agg.complete = False
        record.status, record.answer = "insufficient_evidence", []
        record.note = (f"the {op} cannot be told: no dated statement about " + ", ".join(undated)
                       + f" (of the others, {record.text})")
    elif cuts:
        agg.complete = False
        record.status, record.answer = "insufficient_evidence", []
        record.note = (f"the {op} cannot be told from part of the evidence: limits left some out ("
                       + "; ".join(dict.fromkeys(cuts)) + ")")
    elif not record.verified:
        record.status, record.answer, record.text = "insufficient_evidence", [], "insufficient evidence"
        record.note = "the computed answer does not follow from the cited evidence: " + "; ".join(
            c.reason for c in record.checks if not c.supported)
    elif op == "list" and not agg.result and agg.without:
        record.answer = []  # an absence that holds for nothing: every element has the relation, and says so
    elif not agg.result or (op != "count" and not any(agg.groups.values())):
        record.status, record.answer = "insufficient_evidence", []
        record.note = (f"no dated statement about {', '.join(elements) or 'them'}" if op in aggregate.DATED
                       else "the graph holds nothing to compare")
    else:
        record.answer = list(agg.result)


def _model_draft(question, found, config, clock, sleep, feedback, record) -> reason.Draft | None:
    listing = reason.evidence_listing(found.evidence)
    data, why = _ask_model("reason", config, config.ask.reason, reason.PROMPT, question, listing,
                           {"question": question, "feedback": feedback}, reason.ANSWER_SCHEMA, clock, sleep, record,
                           max_temperature=reason.MAX_TEMPERATURE)
    if data is None:
        record.note = f"the reason model failed ({why}); the offline answerer answered"
        record.reasoner = "offline"
        return None
    return reason.from_model(data)


def _ask_model(role, config, settings, prompt, question, text, context, schema, clock, sleep, record,
               max_temperature=None) -> tuple[dict | None, str | None]:
    """The role's JSON answer, or (None, why it failed); past the deadline (before it is
    sent), _Timeout. The caller checks the deadline again once it has recorded the answer.
    What became of the answer is counted in ``record.answers``."""
    from kgkit.ask.model import Role
    from kgkit.backends.base import PassRequest
    from kgkit.documents.types import Chunk
    from kgkit.engine.accounting import count_answer, refused
    from kgkit.ids import doc_id

    _check(clock)
    owner = doc_id(question)
    chunk = Chunk(id=f"c_ask_{role}", doc_id=owner, index=0, text=text, start=0, end=len(text))
    request = PassRequest(kind=f"ask_{role}", stage=f"ask_{role}", chunk=chunk, schema=schema,
                          context=context, prompt=prompt)
    started = clock.now()
    try:
        result = Role(role, config, settings, max_temperature=max_temperature, sleep=sleep).ask(request, clock.left())
    except ProviderError as exc:
        if exc.request_specific:  # refused for good: an unusable answer, as an extraction run counts it
            count_answer(record.answers, refused(exc))
        clock.step(role, ok=False, error=exc.format())
        return None, exc.format()
    count_answer(record.answers, result)
    clock.step(role, ok=result.ok, requests=result.requests, retries=result.retries,
               model_seconds=round(clock.now() - started, 4))
    return (result.data, None) if result.ok else (None, result.error)


class _CallableModule(types.ModuleType):
    """``kgkit.ask`` is this package and, called, :func:`ask`: ``kgkit.ask(graph, "Which ...?")``."""

    def __call__(self, *args: Any, **kwargs: Any) -> AskRecord:
        return ask(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
