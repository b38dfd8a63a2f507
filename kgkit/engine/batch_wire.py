"""The providers' batch APIs, one client per wire format: submit lines, poll, read results.

Two wire formats, each the provider's own:

* **OpenAI Batch** (``openai/...`` models and OpenAI-compatible servers that implement it):
  the lines go up as a JSONL file (``POST /files``), a batch is created over it
  (``POST /batches``), polled (``GET /batches/{id}``) and its output and error files read
  (``GET /files/{id}/content``) — all four through litellm's ``create_file``,
  ``create_batch``, ``retrieve_batch`` and ``file_content``.
* **Anthropic Message Batches** (``anthropic/...`` models): polled through litellm's
  ``retrieve_batch`` and read through its ``file_content`` (which fetches
  ``/v1/messages/batches/{id}/results``). litellm 1.110 does not create them
  (``AnthropicBatchesConfig.transform_create_batch_request`` raises NotImplementedError),
  so :meth:`BatchClient.submit` posts ``/v1/messages/batches`` itself over httpx, with
  the headers litellm's own Anthropic batch config builds.

Each line's request body is the one litellm would send for the same pass as a direct
call (``litellm.utils.return_raw_request``), so a batch asks exactly what a direct run
asks; each result is read back the way litellm reads a direct answer (Anthropic's
message through litellm's own ``AnthropicConfig.transform_parsed_response``). The price
is litellm's batch price (``input_cost_per_token_batches`` where its table has one, else
half the standard price, the discount both providers give batches:
``litellm.cost_calculator.batch_cost_calculator``).
"""
from __future__ import annotations

import functools
import json
from dataclasses import dataclass, field
from typing import Any, cast

from kgkit.backends.clients import load_litellm
from kgkit.backends.llm import LLMBackend
from kgkit.errors import ConfigError, ProviderError

WIRES = ("openai", "anthropic")
ENDED = "ended"  # a batch that will change no more: completed, expired, failed or cancelled
RUNNING = "running"
_OPENAI_ENDED = {"completed", "expired", "failed", "cancelled"}


class BatchNotFound(ProviderError):
    """The provider does not know a batch the run state records (deleted, other account or server)."""

    exit_code = 2


@dataclass
class BatchStatus:
    state: str  # RUNNING | ENDED
    detail: str  # the provider's own word: in_progress, completed, expired, ...
    counts: dict[str, int] = field(default_factory=dict)
    files: tuple[str, ...] = ()  # where the results are: OpenAI's output and error file ids


@dataclass
class LineResult:
    """One line's outcome: an answer (``text``), or an error with the HTTP status it stands for."""

    text: str | None = None
    finish: str | None = None
    usage: dict[str, Any] = field(default_factory=dict)  # tokens_in, tokens_out, tokens_cached, cost
    status: int = 200
    error: str | None = None


def wire_of(model: str) -> str:
    """``openai`` or ``anthropic``: the batch API a model's provider speaks; ConfigError otherwise."""
    litellm = load_litellm()
    try:
        provider = litellm.get_llm_provider(model)[1]
    except tuple(litellm.LITELLM_EXCEPTION_TYPES):
        provider = model.split("/", 1)[0]
    if provider not in WIRES:
        raise ConfigError(f"--batch: {model} is served by {provider!r}, which has no batch API kgkit speaks",
                          hint="batches go to openai/... and anthropic/... models; run without --batch")
    return provider


class BatchClient:
    """Batches of one stage's model (``llm`` as :func:`kgkit.backends.factory.stage_llm` gives it)."""

    def __init__(self, backend: LLMBackend):
        self.backend = backend
        self.settings = backend.settings
        # never None: stage_backends refuses a batch run without a model, and a recorded job names its model
        self.model = cast(str, self.settings.model)
        self.wire = wire_of(self.model)

    # -- lines --------------------------------------------------------------------------
    def line(self, custom_id: str, kwargs: dict[str, Any]) -> dict[str, Any]:
        """The batch line for one completion (``kwargs`` as for ``litellm.completion``)."""
        from litellm.types.utils import CallTypes

        litellm = load_litellm()
        where = {"api_base": self.settings.api_base} if self.settings.api_base else {}  # it sets a fake key itself
        raw = litellm.utils.return_raw_request(CallTypes.completion, {**kwargs, **where})
        body = raw.get("raw_request_body")
        if not isinstance(body, dict):
            raise ConfigError(f"--batch: litellm could not build the request for {self.settings.model}: "
                              f"{raw.get('error') or 'no body'}")
        if self.wire == "anthropic":
            return {"custom_id": custom_id, "params": body}
        body = {k: v for k, v in body.items() if k != "extra_body"}
        body.update(raw["raw_request_body"].get("extra_body") or {})  # as the OpenAI SDK sends it
        return {"custom_id": custom_id, "method": "POST", "url": "/v1/chat/completions", "body": body}

    # -- the endpoints ----------------------------------------------------------------------
    def submit(self, lines: list[dict[str, Any]]) -> str:
        """Upload ``lines`` as one batch; its id."""
        litellm = load_litellm()
        with self._errors("submit a batch"):
            if self.wire == "anthropic":
                return self._submit_anthropic(lines)
            data = "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines).encode()
            upload = litellm.create_file(file=("kgkit-batch.jsonl", data), purpose="batch",
                                         custom_llm_provider="openai", **self._where())
            batch = litellm.create_batch(completion_window="24h", endpoint="/v1/chat/completions",
                                         input_file_id=upload.id, custom_llm_provider="openai", **self._where())
            return batch.id

    def _submit_anthropic(self, lines: list[dict[str, Any]]) -> str:
        """``POST /v1/messages/batches`` over httpx: litellm 1.110 retrieves Anthropic batches
        but cannot create one (see the module docstring); the headers are those its own
        Anthropic batch config builds for the retrieve call."""
        import httpx
        from litellm.llms.anthropic.batches.transformation import AnthropicBatchesConfig

        config = AnthropicBatchesConfig()
        where = self._where()
        headers = config.validate_environment(headers={}, model=self.model, messages=[], optional_params={},
                                              litellm_params={}, api_key=where.get("api_key"),
                                              api_base=where.get("api_base"))
        url = config.get_complete_batch_url(api_base=where.get("api_base"), api_key=None, model=self.model,
                                            optional_params={}, litellm_params={}, data={})
        response = httpx.post(url, json={"requests": lines}, headers=headers, timeout=self.settings.timeout)
        response.raise_for_status()
        return response.json()["id"]

    def poll(self, batch_id: str) -> BatchStatus:
        litellm = load_litellm()
        with self._errors(f"poll batch {batch_id}", batch_id):
            batch = litellm.retrieve_batch(batch_id=batch_id, custom_llm_provider=self.wire, **self._where())
        counts = batch.request_counts
        counts = {"total": counts.total, "completed": counts.completed, "failed": counts.failed} if counts else {}
        if self.wire == "anthropic":  # litellm maps Anthropic's "ended" to completed
            ended = batch.status not in ("in_progress", "cancelling")
            files: tuple[str, ...] = (batch_id,) if ended else ()
        else:
            ended = batch.status in _OPENAI_ENDED
            files = tuple(f for f in (batch.output_file_id, batch.error_file_id) if f) if ended else ()
        return BatchStatus(ENDED if ended else RUNNING, batch.status, counts, files)

    def results(self, batch_id: str, status: BatchStatus) -> dict[str, LineResult]:
        """custom id -> outcome for every line the ended batch has a result for (an expired or
        cancelled line: an error with status 0, as a retry can clear it)."""
        litellm = load_litellm()
        out: dict[str, LineResult] = {}
        for file_id in status.files:
            with self._errors(f"read the results of batch {batch_id}", batch_id):
                content = litellm.file_content(file_id=file_id, custom_llm_provider=self.wire, **self._where()).content
            for text in content.decode("utf-8").splitlines():
                if text.strip():
                    row = json.loads(text)
                    out[row["custom_id"]] = (self._anthropic_result(row["result"]) if self.wire == "anthropic"
                                             else self._openai_result(row))
        return out

    # -- reading one result ------------------------------------------------------------------
    def _openai_result(self, row: dict[str, Any]) -> LineResult:
        response = row.get("response") or {}
        body = response.get("body") or {}
        status = int(response.get("status_code") or 0)
        if row.get("error") or status >= 400 or not body.get("choices"):
            error = row.get("error") or body.get("error") or {}
            return LineResult(status=status, error=str(error.get("message") or error.get("code") or "no answer"))
        choice = body["choices"][0]
        usage = body.get("usage") or {}
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return LineResult(text=(choice.get("message") or {}).get("content") or "", finish=choice.get("finish_reason"),
                          usage=self._usage(int(usage.get("prompt_tokens") or 0),
                                            int(usage.get("completion_tokens") or 0), int(cached)))

    def _anthropic_result(self, result: dict[str, Any]) -> LineResult:
        kind = result.get("type")
        if kind != "succeeded":
            error = ((result.get("error") or {}).get("error") or {})
            status = {"invalid_request_error": 400, "authentication_error": 401, "permission_error": 403,
                      "not_found_error": 404, "request_too_large": 413, "rate_limit_error": 429,
                      "overloaded_error": 529}.get(str(error.get("type")), 500) if kind == "errored" else 0
            return LineResult(status=status, error=str(error.get("message") or f"the line {kind}"))
        import httpx
        from litellm import AnthropicConfig, ModelResponse

        message = result["message"]
        response = AnthropicConfig().transform_parsed_response(
            completion_response=dict(message), raw_response=httpx.Response(200, json=message),
            model_response=ModelResponse(), json_mode=True)
        usage = response.usage
        cached = int(getattr(usage, "cache_read_input_tokens", 0) or 0)
        return LineResult(text=response.choices[0].message.content or "", finish=response.choices[0].finish_reason,
                          usage=self._usage(int(usage.prompt_tokens or 0), int(usage.completion_tokens or 0), cached))

    def _usage(self, tokens_in: int, tokens_out: int, cached: int) -> dict[str, Any]:
        """Tokens and their cost at the batch price (None when litellm has no price for the model)."""
        litellm = load_litellm()
        from litellm.cost_calculator import batch_cost_calculator

        try:
            usage = litellm.Usage(prompt_tokens=tokens_in, completion_tokens=tokens_out,
                                  total_tokens=tokens_in + tokens_out)
            prompt, completion = batch_cost_calculator(usage, self.model)
            cost = float(prompt + completion) if self.price_basis else None
        except Exception:  # noqa: BLE001 - litellm raises assorted types for "not in the price table"
            cost = None
        return {"tokens_in": tokens_in, "tokens_out": tokens_out, "tokens_cached": cached, "cost": cost}

    @functools.cached_property
    def price_basis(self) -> str | None:
        """How the batch price is known: ``batch`` (litellm's table has the model's batch
        price), ``half`` (it has the standard price only; batches cost half at both
        providers) or None (no price at all)."""
        litellm = load_litellm()
        try:
            info = litellm.get_model_info(self.settings.model)
        except Exception:  # noqa: BLE001 - unknown model
            return None
        if info.get("input_cost_per_token_batches") is not None:
            return "batch"
        return "half" if info.get("input_cost_per_token") is not None else None

    # -- plumbing ----------------------------------------------------------------------------
    def _where(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        if self.settings.api_base:
            out["api_base"] = self.settings.api_base
        key = self.backend.api_key()
        if key:
            out["api_key"] = key
        return out

    def _errors(self, what: str, batch_id: str | None = None):
        return _ProviderErrors(self, what, batch_id)


class _ProviderErrors:
    """Turns a provider's failure on a batch endpoint into a named kgkit error (key scrubbed):
    a 404 on a recorded batch is :class:`BatchNotFound`, a missing or rejected key a
    configuration error (exit 2), anything else a provider failure (exit 3)."""

    def __init__(self, client: BatchClient, what: str, batch_id: str | None):
        self.client, self.what, self.batch_id = client, what, batch_id

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, tb) -> None:
        if exc is None or isinstance(exc, (KeyboardInterrupt, SystemExit, ConfigError, ProviderError)):
            return None
        response = getattr(exc, "response", None)
        status = getattr(exc, "status_code", None) or getattr(response, "status_code", None)
        detail = (self.client.backend.scrub(str(getattr(exc, "message", None) or exc)).splitlines() or [""])[0][:300]
        model = self.client.settings.model
        if status == 404 and self.batch_id:
            raise BatchNotFound(f"{model}: the provider does not know batch {self.batch_id} (404 not found)",
                                hint="check that llm.api_base and the key are those the batch was submitted "
                                     f"with; if it is gone for good, `kgkit batch forget {self.batch_id}` "
                                     "lets the next run submit its passes again") from None
        if status in (401, 403):
            from kgkit.errors import ProviderConfigError

            raise ProviderConfigError(f"{model}: cannot {self.what}: the provider refused the key ({status})",
                                      hint="check the key in llm.api_key_env") from None
        raise ProviderError(f"{model}: cannot {self.what}: {detail}",
                            hint="run the same command again later; nothing answered is lost") from None
