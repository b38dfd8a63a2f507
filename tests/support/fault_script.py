"""Per-request fault scripting for the stub provider, through its ``responder`` hook.

:class:`tests.stub_provider.StubProvider` answers each request from a queue or from a
``responder`` callable. :class:`FaultScript` is such a callable: it wraps the test's
"model" (a function from the recorded request to an answer) and decides, request by
request, whether to send that answer or a fault instead — from a plan by request number,
a rule on the request, or a seeded random draw. Every fault it sends is recorded in
:attr:`FaultScript.injected`, so a test can compare what it did with what the manifest
says. Living beside the stub rather than inside it keeps the stub's API untouched.

Fault kinds (names a test passes around):

* transport faults — the HTTP exchange fails and the backend's retry loop takes over:
  ``429``, ``429-retry-after`` (with ``Retry-After: 0``), ``500``, ``503``, ``reset``
  (connection closed with RST), ``hang`` (no answer before the client's timeout),
  ``malformed-body`` (HTTP 200 whose body is not JSON);
* a refusal — ``400``: the provider rejects the request itself (a content filter, a
  prompt over the context window); asking again cannot help;
* answer faults — a well-formed completion whose content cannot be used, which the
  backend re-asks once: ``not-json``, ``schema`` (JSON failing the pass schema),
  ``truncated`` (cut mid-JSON with ``finish_reason: length``), ``empty``.

It also offers :func:`chunk_text` and :func:`stage_of`, which read a request the way a
model would, so an obedient fake model can answer from the text it was sent.
"""
from __future__ import annotations

import hashlib
import json
import random
import re
import threading
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

from support.stub_provider import Recorded, Reply

TRANSPORT = ("429", "429-retry-after", "500", "503", "reset", "hang", "malformed-body")
ANSWER = ("not-json", "schema", "truncated", "empty")
REFUSAL = ("400",)  # the provider refuses this request for good (content filter, too long)
ALL = TRANSPORT + ANSWER + REFUSAL

_FENCE = re.compile(r"BEGIN UNTRUSTED DOCUMENT (\w+)\n(.*?)\nEND UNTRUSTED DOCUMENT \1", re.S)
_STAGES = {
    "extraction tasks at once": "combined",  # upgrades.combine: its system message names each task's pass too
    "typed entities": "entities",
    "binary relations between known entities": "relations",
    "n-ary relations": "nary",
    "add time and term qualifiers": "temporal",
    "extract events": "event",
    "following the \"": "diy",
    "improve a knowledge-graph extractor": "skills",
}


def chunk_text(request: Recorded) -> str:
    """The document text the request carries: the last untrusted-document fence (a title,
    when the document has one, comes in its own fence before it)."""
    for m in request.messages:
        found = list(_FENCE.finditer(m.get("content") or ""))
        if found:
            return found[-1].group(2)
    return ""


def stage_of(request: Recorded) -> str:
    """Which pass a request is for, read from its system message (first ask or re-ask)."""
    system = request.messages[0]["content"] if request.messages else ""
    return next((stage for phrase, stage in _STAGES.items() if phrase in system), "unknown")


def is_reask(request: Recorded) -> bool:
    """A re-ask repeats the conversation with the bad answer and a correction appended."""
    return any(m.get("role") == "assistant" for m in request.messages)


def fault_reply(kind: str, answer: Reply, hang: float) -> Reply:
    """The reply that stands for ``kind``; ``answer`` is what the model would have said."""
    if kind == "429":
        return Reply.error(429, "rate limited")
    if kind == "429-retry-after":
        return Reply.error(429, "rate limited", retry_after="0")
    if kind == "400":
        return Reply.error(400, "The response was filtered due to the prompt triggering a content policy")
    if kind in ("500", "503"):
        return Reply.error(int(kind), f"stub fault {kind}")
    if kind == "reset":
        return Reply(drop=True)
    if kind == "hang":
        return Reply(content=answer.content, delay=hang)
    if kind == "malformed-body":
        return Reply(body='{"id": "chatcmpl-x", "choices": [{"message": {"content": "{\\"ent')
    if kind == "not-json":
        return Reply.answer("Sure! Here are the entities you asked for, in prose rather than JSON.")
    if kind == "schema":
        return Reply.answer({"items": ["this object lacks the required key"], "note": 42})
    if kind == "truncated":
        text = answer.content if isinstance(answer.content, str) else json.dumps(answer.content)
        return Reply.answer((text or '{"x": 1}')[: max(1, len(text or "") // 2)] + '{"na', finish_reason="length")
    if kind == "empty":
        return Reply.answer("")
    raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(ALL)}")


@dataclass
class FaultScript:
    """A stub ``responder`` that sends faults instead of ``model``'s answers when told to.

    Args:
        model: the fault-free model, from the recorded request to a Reply (or a dict/str
            answer).
        plan: request number (0-based, counting every request this script saw) -> fault.
        rule: per request, a fault name or None; consulted after ``plan``.
        rate: probability that a request not covered above gets a random fault from
            ``kinds``. Drawn per request from ``seed``, the request's messages and how many
            times the same messages came before, not in arrival order: passes run
            concurrently, so the order varies with the machine's load, and a seed chosen for
            the case it makes (a pass faulted on its first ask and its re-ask) must make it
            on every run.
        hang: seconds a ``hang`` fault waits (set it above the client's ``llm.timeout``).
    """

    model: Callable[[Recorded], Reply | dict | str]
    plan: dict[int, str] = field(default_factory=dict)
    rule: Callable[[Recorded], str | None] | None = None
    rate: float = 0.0
    kinds: tuple[str, ...] = TRANSPORT
    seed: int = 0
    hang: float = 1.0
    injected: list[tuple[int, str]] = field(default_factory=list)  # (request number, fault kind)
    seen: int = 0

    def __post_init__(self) -> None:
        self._occurrences: Counter = Counter()  # sha256 of a request's messages -> times seen
        self._lock = threading.Lock()
        for kind in (*self.plan.values(), *self.kinds):
            if kind not in ALL:
                raise ValueError(f"unknown fault kind {kind!r}; known: {', '.join(ALL)}")

    def __call__(self, request: Recorded) -> Reply:
        with self._lock:
            number = self.seen
            self.seen += 1
            kind = self.plan.get(number)
            if kind is None and self.rule is not None:
                kind = self.rule(request)
            if kind is None and self.rate:
                content = hashlib.sha256(json.dumps(request.messages, sort_keys=True).encode()).hexdigest()
                draws = random.Random(f"{self.seed}:{content}:{self._occurrences[content]}")
                self._occurrences[content] += 1
                draw, pick = draws.random(), draws.choice(self.kinds)
                kind = pick if draw < self.rate else None
            if kind is not None:
                self.injected.append((number, kind))
        answer = self.model(request)
        answer = answer if isinstance(answer, Reply) else Reply.answer(answer)
        return answer if kind is None else fault_reply(kind, answer, self.hang)

    def count(self, *kinds: str) -> int:
        """How many faults of these kinds (all when none given) were sent."""
        return sum(1 for _, k in self.injected if not kinds or k in kinds)
