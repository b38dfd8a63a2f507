"""The LLM backend: one extraction pass as a chat completion, through litellm or the direct client.

litellm lets a user switch provider by editing ``llm.model`` (``openai/…``,
``anthropic/…``, ``ollama/…`` with ``api_base``), so this module never names a
provider. What it adds on top of litellm:

* **Retries it controls, failures it names.** litellm's own retries are off
  (``num_retries=0``) so every HTTP attempt is counted for the manifest and the delays
  are deterministic: ``backoff * 2**n`` seconds, or the provider's ``Retry-After``
  (seconds or an HTTP date) when it sends one, capped at :data:`MAX_DELAY`. Each failure
  is named by :mod:`kgkit.backends.failures` (refused, reset, DNS, TLS, timeout, missing
  or rejected key, unknown model…); only those a retry can clear (resets, timeouts,
  408/429/5xx) are retried, up to ``llm.retries`` times. A configuration failure raises
  :class:`~kgkit.errors.ProviderConfigError` (exit 2). A refusal (400/413/422: a content
  filter, a prompt over the context window) is marked ``request_specific``, so the engine
  fails that chunk and goes on — unless it is the third in a row, which stops the run.
  A 429 holds back every thread's requests to the provider, and ``llm.rpm`` and ``llm.tpm``
  space them (:mod:`kgkit.backends.pace`).
  ``llm.timeout`` bounds the whole request (:mod:`kgkit.backends.deadline`), not each socket read,
  in whichever thread the pass runs.
* **The strongest output format the provider takes**: a strict JSON Schema
  (:mod:`kgkit.backends.structured`) where litellm's local model table says the model
  supports one, else JSON mode, else plain text; the choice is in each
  :class:`PassResult` and so in the manifest.
* **Answers it can use.** The reply is parsed tolerantly
  (:mod:`kgkit.backends.parse`) and validated against the pass's JSON Schema; an
  invalid answer is re-asked once with the problem appended as a user message; a
  second failure comes back as ``PassResult(ok=False)`` with the raw text, for the
  engine's review file. One bad chunk never stops a run.
* **A key that stays secret.** The key is read from the variable named by
  ``llm.api_key_env`` at call time and handed to litellm only; it is scrubbed from every
  error message and every answer (a provider may echo it) and never appears in
  :meth:`LLMBackend.describe`, :meth:`LLMBackend.cache_key_parts` or a :class:`PassResult`.

* **Two clients, one behaviour.** ``llm.client: auto`` (the default) sends ``openai/...``
  models — OpenAI, or any OpenAI-compatible server at ``api_base`` (vLLM, Ollama, llama.cpp,
  a proxy) — through :mod:`kgkit.backends.direct`, kgkit's own client over aiohttp, which
  costs a fraction of litellm's CPU per request and none of its import; every other
  provider goes through litellm. Both give the same answers, cache keys, run folders and
  errors; ``llm.client: litellm`` or ``direct`` overrides the choice, and the manifest names
  the client used.

Which client a model takes, and one attempt through each, is :mod:`kgkit.backends.clients`;
what a reply or an error says, :mod:`kgkit.backends.replies`.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Mapping
from urllib.parse import urlsplit

from kgkit.backends import direct, local
from kgkit.backends.base import PassRequest, PassResult, Remembered, Usage
from kgkit.backends.budget import answer_items, answer_tokens, decoding_schema, grammar_safe
from kgkit.backends.clients import (Errors, Sender, direct_sender, key_variable, litellm_sender, load_litellm,
                                    pick_client)
from kgkit.backends.deadline import DeadlineExceeded
from kgkit.backends.failures import REFUSAL_STATUS, Failure, classify
from kgkit.backends.pace import estimate_tokens, pace_for
from kgkit.backends.parse import AnswerParseError, parse_json_answer
from kgkit.backends.replies import provider_message, retry_after, schema_problem
from kgkit.backends.runaway import RunawayWatch, salvage
from kgkit.backends.structured import drop_unfilled, strict_schema
from kgkit.config.model import LimitsConfig, LLMConfig
from kgkit.errors import ProviderConfigError, ProviderError
from kgkit.prompts.render import render_request
from kgkit.guards.secrets import looks_like_key, scrub

log = logging.getLogger(__name__)

MAX_REFUSALS = 3  # refusals in a row (no success between) that mean every request is wrong
MAX_DELAY = 300.0  # seconds; a Retry-After of an hour should not silently stall a run that long
REASK = (
    "Your previous answer could not be used: {error}\n"
    "Reply again with only the corrected JSON object, following the required shape."
)


@dataclass
class _Tally:
    """What one pass cost: attempts, retries and usage over the first ask and the re-ask."""

    requests: int = 0
    retries: int = 0
    usage: Usage = field(default_factory=Usage)
    output_format: str | None = None
    reasked: bool = False
    cut: bool = False  # a runaway or an answer at max_tokens, kept up to its last complete item


class LLMBackend:
    """Runs passes against any litellm model.

    Args:
        llm: the effective LLM settings for one stage (``create_backend`` applies the
            per-stage overrides before constructing this).
        limits: the answer limits, which size each pass's ``max_tokens`` (:mod:`kgkit.backends.budget`).
        sleep: how to wait between retries; tests pass a recorder to check the delays
            without spending them.
        max_response_bytes: ``limits.max_response_bytes``, the most of one HTTP answer the
            direct client reads.
    """

    def __init__(
        self,
        llm: LLMConfig,
        *,
        limits: LimitsConfig | None = None,
        sleep: Callable[[float], None] = time.sleep,
        max_response_bytes: int = direct.MAX_RESPONSE_BYTES,
    ):
        if not llm.model:
            raise ValueError("LLMBackend needs llm.model; create_backend picks the offline backend without one")
        self.settings = llm
        self.limits = limits or LimitsConfig()
        self.name = llm.model
        self.llm_client = pick_client(llm)  # "direct" | "litellm" | "local", named in the manifest
        self._direct = direct.OpenAICompatible(llm.model, llm.api_base, max_response_bytes) if self.llm_client == "direct" else None
        self._local = (local.LocalModel(llm.model, sha256=llm.model_sha256, context_window=llm.context_window)
                       if self.llm_client == "local" else None)
        self._schema_format = True  # the server took a schema in response_format (False once it refused one)
        self._sleep = sleep
        self._format: str | None = None  # json_schema | json_object | plain, from litellm's table on the first call
        self._refusals = 0  # consecutive refused requests, reset by any answer
        self._rendered = Remembered()  # messages of the requests keyed (cache) and not yet sent

    # -- the Backend contract ------------------------------------------------------
    def describe(self) -> dict[str, Any]:
        """What shapes the answers, for the manifest (the engine's resume key reads it too,
        so transport settings such as timeout and retries stay out: raising
        ``llm.retries`` before ``--resume`` must not redo completed passes)."""
        s = self.settings
        out: dict[str, Any] = {
            "backend": "llama.cpp" if self._local is not None else "litellm",
            "model": s.model,
            "temperature": s.temperature,
            "max_tokens": s.max_tokens,  # the ceiling: each pass asks for what its chunk needs (budget.py)
            "json_mode": s.json_mode,
        }
        if self._local is not None:
            out.update(self._local.describe())
        if s.api_base:  # host and port only: a URL may carry user:password
            out["api_base_host"] = _host_port(s.api_base)
        return out

    def cache_key_parts(self, request: PassRequest) -> dict[str, Any]:
        """What decides the answer (see docs/design.md, "Caching contract")."""
        return {
            "model": self.settings.model,
            "messages": self.messages(request),
            "temperature": self.temperature_for(request),
            "max_tokens": self.max_tokens_for(request),
            "json_mode": self.settings.json_mode,
            "schema_sha256": _schema_hash(request.schema),
            "sample": request.sample,
            **({"model_sha256": self._local.sha256} if self._local is not None else {}),
        }

    def max_tokens_for(self, request: PassRequest) -> int:
        """The pass's ``max_tokens``: sized to its chunk and the item limit, ``llm.max_tokens`` at most."""
        return answer_tokens(request, self.settings.max_tokens, self.limits)

    def check_requests(self, requests: Iterable[PassRequest]) -> None:
        """Before any of ``requests`` is sent: a local model refuses a prompt its context window
        cannot hold (exit 2, with the chunk size that would fit). Remote providers say so themselves."""
        if self._local is None:
            return
        for request in requests:
            self._local.check_fits(self.messages(request), self.max_tokens_for(request),
                                   len(request.chunk.text), request.chunk.text)

    def messages(self, request: PassRequest) -> list[dict[str, str]]:
        """The rendered chat messages for ``request``.

        ``request.prompt`` already names the user's template when ``config.prompts``
        overrides the stage (the engine resolves that, so its resume key sees it too).
        The cache asks for the messages (its key) before the pass runs, often in another
        thread (the engine checks the cache for a whole stage at once): the pass then sends
        that rendering instead of making a second one.
        """
        return self._rendered.get(request, render_request)

    def forget(self, request: PassRequest) -> None:
        """Drop what was kept for ``request`` (the cache answered it: it is never sent)."""
        self._rendered.forget(request)

    def run(self, request: PassRequest) -> PassResult:
        """Ask, validate, re-ask once if needed.

        Raises:
            ProviderError: the provider failed in a way retries did not clear, or
                rejected the key. It carries ``requests`` and ``retries``: what the
                pass sent before giving up, so the manifest can still count it.
        """
        tally = _Tally()
        try:
            data, error, raw = self._ask(request, tally)
        except ProviderError as exc:
            exc.requests, exc.retries = tally.requests, tally.retries
            raise
        finally:
            self._rendered.forget(request)
        return PassResult(
            data=self.scrub(data),
            ok=error is None,
            error=self.scrub(error),
            raw=self.scrub(raw) if error is not None else None,
            usage=tally.usage,
            requests=tally.requests,
            retries=tally.retries,
            model=self.name,
            output_format=tally.output_format,
            reasked=tally.reasked,
            cut=tally.cut,
        )

    def _ask(self, request: PassRequest, tally: _Tally) -> tuple[dict[str, Any] | None, str | None, str]:
        """(data, error, raw text of the last answer) after at most one re-ask."""
        messages = self.messages(request)
        temperature = self.temperature_for(request)
        budget = (self.max_tokens_for(request), answer_items(request, self.limits))
        raw, finish = self._complete(messages, temperature, tally, request, budget)
        data, error = self.check_answer(raw, finish, request.schema, budget[0])
        if error is None:
            tally.cut = finish == "runaway"  # stopped as it closed: whole, but cut all the same
            return data, None, raw
        kept = self._cut(raw, finish, request.schema, tally)
        if kept is not None:
            return kept, None, raw
        log.info("%s: %s: answer invalid (%s); asking again", self.name, request.stage, error)
        messages = [
            *messages,
            {"role": "assistant", "content": raw},
            {"role": "user", "content": REASK.format(error=error)},
        ]
        first_error = error
        tally.reasked = True
        raw, finish = self._complete(messages, temperature, tally, request, budget)
        data, error = self.check_answer(raw, finish, request.schema, budget[0])
        if error is not None:
            kept = self._cut(raw, finish, request.schema, tally)
            if kept is not None:
                return kept, None, raw
            error = f"{error} (still invalid after one re-ask; first answer: {first_error})"
        return data, error, raw

    def _cut(self, raw: str, finish: str | None, schema: Mapping[str, Any],
             tally: _Tally) -> dict[str, Any] | None:
        """What an answer that ran away had produced, when that is a usable answer
        (kgkit/backends/runaway.py): kept and counted as cut, not re-asked. A runaway is one the
        local model's stream was stopped at, or one a server cut at max_tokens whose text shows
        it (old items repeated); an answer cut at max_tokens while still writing new items is
        re-asked (and fails if cut again), as a long answer that did not fit."""
        if finish not in ("length", "runaway"):
            return None
        if finish == "length" and not RunawayWatch().feed(raw):
            return None
        kept = salvage(raw, lambda data: schema_problem(drop_unfilled(data, schema), schema) is None)
        if kept is None:
            return None
        log.info("%s: an answer %s was cut at its last complete item", self.name,
                 "that ran away" if finish == "runaway" else "at max_tokens")
        tally.cut = True
        return drop_unfilled(kept, schema)

    # -- one answer ------------------------------------------------------------------
    def check_answer(
        self, raw: str, finish: str | None, schema: Mapping[str, Any], max_tokens: int | None = None
    ) -> tuple[dict[str, Any] | None, str | None]:
        """(data, None) for a usable answer, else (None, a short reason for the re-ask).
        A null for an optional property means "nothing there" (strict mode makes models
        write them; others do by habit), so it is dropped rather than re-asked."""
        try:
            data = parse_json_answer(raw)
            if "null" in raw:  # else there is no null to drop (JSON writes none otherwise)
                data = drop_unfilled(data, schema)
        except AnswerParseError as exc:
            reason = exc.reason
            if finish == "length":
                reason += (f" (the answer stopped at max_tokens={max_tokens or self.settings.max_tokens}, sized to "
                           f"its chunk; llm.max_tokens={self.settings.max_tokens} is the most a pass may take)")
            elif finish == "runaway":
                reason += " (the answer was cut: it had stopped producing new items)"
            return None, reason
        problem = schema_problem(data, schema)
        return (None, problem) if problem else (data, None)

    def temperature_for(self, request: PassRequest) -> float:
        """Sampling passes (skill rollouts) ask for their own temperature; extraction uses
        the configured one, 0 by default."""
        return request.temperature if request.temperature else self.settings.temperature

    # -- HTTP, with retries ------------------------------------------------------------
    def _complete(self, messages: list[dict[str, str]], temperature: float, tally: _Tally,
                  request: PassRequest, budget: tuple[int, int]) -> tuple[str, str | None]:
        if self._local is not None:
            return self._complete_here(messages, temperature, tally, request, budget)
        s = self.settings
        max_tokens, items = budget
        key = self.api_key()
        tally.output_format, response_format = self.response_format_for(request.schema, items, request)
        send, errors = self._sender(messages, temperature, key, response_format, max_tokens)
        attempt = 0
        pace, held = pace_for(self.name, s.api_base, s.rpm, s.tpm), False
        tokens = estimate_tokens(messages, max_tokens) if s.tpm else 0  # llm.tpm: booked before it leaves
        while True:
            if not held or s.tpm:  # after our own 429 we have waited out the hold already (tokens: book again)
                booking = pace.wait(self._sleep, tokens)
            held = False
            tally.requests += 1
            try:
                text, finish, usage = send()
            except errors + (DeadlineExceeded,) as exc:
                status = getattr(exc, "status_code", None)
                detail = self.scrub(provider_message(exc))
                failure = classify(exc, status=status, detail=detail, endpoint=self._endpoint(), timeout=s.timeout,
                                   key_variable=self._key_variable(), key_env_set=bool(s.api_key_env))
                if self._refused_schema(response_format, status, detail):
                    # A server that takes JSON mode but not a schema in it: JSON mode from now on.
                    tally.output_format, response_format = self.response_format_for(request.schema, items, request)
                    send, errors = self._sender(messages, temperature, key, response_format, max_tokens)
                    continue
                if not failure.retryable or attempt >= s.retries:
                    raise self._give_up(failure, status, attempt + 1) from None
                delay = retry_after(exc)
                delay = min(MAX_DELAY, delay if delay is not None else s.backoff * 2**attempt)
                log.warning("%s: %s; retry %d/%d in %.2fs", s.model, failure.what, attempt + 1, s.retries, delay)
                if status == 429:  # every worker slows down, not only this one (kgkit/backends/pace.py)
                    pace.settle(booking, 0)  # a refused request counts no tokens
                    pace.hold(delay)
                    held = True
                self._sleep(delay)
                attempt += 1
                tally.retries += 1
                continue
            self._refusals = 0
            pace.settle(booking, usage.tokens_in + usage.tokens_out)  # llm.tpm: what the provider counted
            tally.usage.add(usage)
            return text, finish

    def _complete_here(self, messages: list[dict[str, str]], temperature: float, tally: _Tally,
                       request: PassRequest, budget: tuple[int, int]) -> tuple[str, str | None]:
        """One answer from the in-process model (kgkit/backends/local.py): no network, so no
        retries or pacing; the schema constrains decoding unless llm.json_mode is off."""
        max_tokens, items = budget
        schema = decoding_schema(request.schema, items, request) if self.settings.json_mode else None
        tally.requests += 1
        assert self._local is not None  # called for a local model only
        completion, tally.output_format = self._local.complete(
            messages, temperature=temperature, max_tokens=max_tokens, schema=schema, seed=request.sample)
        tally.usage.add(Usage(tokens_in=completion.tokens_in, tokens_out=completion.tokens_out, cost=0.0))
        if completion.runaway:
            log.info("%s: %s: generation stopped: %s", self.name, request.stage, completion.runaway)
        return completion.text, completion.finish_reason

    def _refused_schema(self, response_format: dict[str, Any] | None, status: int | None, detail: str) -> bool:
        """Whether the server refused a schema inside JSON mode (then JSON mode alone is tried)."""
        if not (response_format and "schema" in response_format and self._schema_format):
            return False
        if status not in (400, 422, 500) or not re.search(r"response_format|json_object|schema", detail, re.I):
            return False
        log.warning("%s: the server refused a JSON Schema in response_format (%s); using JSON mode",
                    self.name, detail)
        self._schema_format = False
        return True

    def _sender(self, messages: list[dict[str, str]], temperature: float, key: str | None,
                response_format: dict[str, Any] | None, max_tokens: int) -> tuple[Sender, Errors]:
        """(one attempt through this backend's client -> (text, finish reason, usage), the errors it raises)."""
        if self._direct is not None:
            return direct_sender(self.settings, self._direct, self._key, messages, temperature, key,
                                 response_format, max_tokens)
        return litellm_sender(self.settings, messages, temperature, key, response_format, max_tokens)

    def response_format_for(self, schema: Mapping[str, Any], items: int | None = None,
                            request: PassRequest | None = None) -> tuple[str, dict[str, Any] | None]:
        """(output format, the ``response_format`` to send) for a pass with ``schema``.

        The strongest the provider takes, as litellm's local model table says: a strict JSON
        Schema, else JSON mode, else plain text (the prompt asks for JSON either way). A
        schema with no strict form (free-form role maps) goes as JSON mode. An
        OpenAI-compatible server at ``api_base`` (llama.cpp's, vLLM, Ollama) is sent JSON mode
        with the schema in it (``json_object_schema``), which llama.cpp's servers turn into a
        grammar; one that refuses it gets JSON mode alone from then on."""
        if self._format is None and self._direct is not None:
            self._format = self._direct.output_format(self.settings.json_mode)
        if self._format is None:  # decided whole, then set: a concurrent pass never sees a half-made choice
            chosen = "plain"
            litellm = load_litellm()
            if self.settings.json_mode:
                try:
                    model, provider, _, _ = litellm.get_llm_provider(self.settings.model)
                    if litellm.supports_response_schema(model=model, custom_llm_provider=provider):
                        chosen = "json_schema"
                    elif "response_format" in (
                            litellm.get_supported_openai_params(model=model, custom_llm_provider=provider) or []):
                        chosen = "json_object"
                except tuple(litellm.LITELLM_EXCEPTION_TYPES):
                    pass  # an unknown provider fails with a clear message at the call itself
            self._format = chosen
        if self._format == "json_schema":
            strict = strict_schema(schema)
            if strict is not None:
                return "json_schema", {"type": "json_schema", "json_schema": {
                    "name": _schema_name(schema), "schema": strict, "strict": True}}
            return "json_object", {"type": "json_object"}
        if self._format == "json_object" and self._schema_format and self.settings.api_base \
                and (self.settings.model or "").startswith(direct.PREFIX):
            bounded = decoding_schema(schema, items, request) if items else grammar_safe(schema)
            return "json_object_schema", {"type": "json_object", "schema": bounded}
        if self._format == "json_object":
            return "json_object", {"type": "json_object"}
        return "plain", None

    # -- the key and errors ------------------------------------------------------------
    def api_key(self) -> str | None:
        name = self.settings.api_key_env
        if not name:
            return None  # litellm reads its usual variables (OPENAI_API_KEY, …) itself
        if looks_like_key(name):
            raise ProviderConfigError(
                f"{self.settings.model}: llm.api_key_env must name an environment variable, and its value "
                "looks like a key itself (not shown)",
                hint="put the key in a variable (export MY_KEY=...) and write api_key_env: MY_KEY; "
                     "if that was a real key, revoke it",
            )
        key = os.environ.get(name)
        if not key:
            raise ProviderConfigError(
                f"{self.settings.model}: the environment variable {name} (llm.api_key_env) is not set",
                hint=f"export {name}=<your API key>",
            )
        return key

    def _key_variable(self) -> str:
        return key_variable(self.settings, self.llm_client)

    def _key(self) -> str | None:
        name = self.settings.api_key_env
        return os.environ.get(name) if name else os.environ.get(self._key_variable())

    def scrub(self, value: Any) -> Any:
        """``value`` with the key masked: some providers echo it back, in errors and answers."""
        return scrub(value, self._key())

    def _endpoint(self) -> str:
        """Where requests go, for messages: api_base's host and port, else the provider."""
        host = _host_port(self.settings.api_base or "")
        if host:
            return f"{urlsplit(self.settings.api_base or '').scheme}://{host}"
        return f"the {self.name.split('/', 1)[0]} API"

    def _give_up(self, failure: Failure, status: int | None, attempts: int) -> ProviderError:
        model = self.settings.model
        if failure.configuration:
            return ProviderConfigError(f"{model}: {failure.what}", hint=failure.hint)
        if failure.retryable:
            tries = f"{attempts} attempt{'s' if attempts != 1 else ''}"
            text = (f"provider failed after {tries}: {failure.what}" if failure.kind == "server"
                    else f"{failure.what} ({tries})")
            return ProviderError(f"{model}: {text}", hint=failure.hint)
        error = ProviderError(f"{model}: {failure.what}", hint=failure.hint)
        if status in REFUSAL_STATUS:
            # A content filter or an over-long prompt refuses one chunk: the engine fails that
            # chunk and goes on. The same refusal over and over means the request is wrong
            # for this provider (an unsupported parameter): stop the run instead.
            self._refusals += 1
            error.request_specific = self._refusals < MAX_REFUSALS
        return error


_SCHEMA_HASHES: dict[int, tuple[Any, str]] = {}  # id(schema) -> (schema, digest): a pass kind's schema is one object


def _schema_hash(schema: Mapping[str, Any]) -> str:
    """The digest of the schema's JSON, made once per schema object (the entry keeps it alive,
    so its id is not reused), as :func:`kgkit.backends.base.pass_validator` finds its validator."""
    hit = _SCHEMA_HASHES.get(id(schema))
    if hit is not None and hit[0] is schema:
        return hit[1]
    digest = hashlib.sha256(json.dumps(schema, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
    _SCHEMA_HASHES[id(schema)] = (schema, digest)
    return digest


def _host_port(url: str) -> str | None:
    """``host[:port]`` of ``url``, without any user:password it may carry."""
    parts = urlsplit(url)
    return parts.hostname + (f":{parts.port}" if parts.port else "") if parts.hostname else None


def _schema_name(schema: Mapping[str, Any]) -> str:
    """A name for the schema as strict mode wants one (letters, digits, _ and -; at most 64):
    the answer's top-level keys, which say what the pass returns."""
    keys = "_".join(sorted(schema.get("properties", {}))) or "answer"
    return re.sub(r"[^A-Za-z0-9_-]", "_", f"kgkit_{keys}")[:64]
