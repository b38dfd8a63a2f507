"""The clients a chat completion goes through: which one a model's requests take, and one
attempt through each.

``llm.client: auto`` sends ``openai/...`` models (OpenAI, or any OpenAI-compatible server at
``api_base``) through :mod:`kgkit.backends.direct`, and every other provider through litellm;
a model :mod:`kgkit.backends.local` serves runs in this process. A sender is one HTTP attempt
that returns (text, finish reason, :class:`~kgkit.backends.base.Usage`) or raises one of the
errors named with it; the retries around it are :class:`~kgkit.backends.llm.LLMBackend`'s.

litellm is slow to import and fetches price and header tables from the network unless
told otherwise, so it is imported inside :func:`load_litellm` with those fetches disabled.
"""
from __future__ import annotations

import os
import re
from typing import Any, Callable

from kgkit.backends import direct, local
from kgkit.backends.base import Usage, cached_tokens
from kgkit.backends.deadline import run_within
from kgkit.config.model import LLMConfig
from kgkit.errors import ProviderConfigError

CLIENTS = ("auto", "litellm", "direct")  # llm.client
Sender = Callable[[], tuple[str, str | None, Usage]]  # one attempt: (text, finish reason, usage)
Errors = tuple[type[BaseException], ...]  # the exception types a sender raises for a failed attempt


def pick_client(llm: LLMConfig) -> str:
    """``direct`` or ``litellm`` for these settings (``llm.client``; ``auto`` picks direct for
    the ``openai/...`` models whose parameters litellm sends as they are)."""
    if llm.client not in CLIENTS:
        raise ProviderConfigError(f"llm.client is {llm.client!r}; expected one of {', '.join(CLIENTS)}",
                                  hint="auto picks the direct client for openai/... models and litellm for the rest")
    if local.serves(llm.model or ""):
        return "local"  # in this process: no client sends anything
    if llm.client == "litellm" or (llm.client == "auto" and not direct.serves(llm.model or "")):
        return "litellm"
    if llm.client == "direct" and not (llm.model or "").startswith(direct.PREFIX) and not llm.api_base:
        raise ProviderConfigError(
            f"{llm.model}: llm.client: direct speaks the OpenAI chat completions API, and this model "
            "names another provider with no api_base",
            hint="use an openai/... model (with api_base for a compatible server), or llm.client: auto",
        )
    return "direct"


def key_variable(llm: LLMConfig, client: str | None = None) -> str:
    """The variable the key is read from: llm.api_key_env, else the usual one for the
    provider (OPENAI_API_KEY for the direct client; litellm's ANTHROPIC_API_KEY, …).
    Imports litellm for a litellm model without api_key_env: only on error paths and dry runs."""
    if llm.api_key_env:
        return llm.api_key_env
    if (client or pick_client(llm)) == "direct":
        return "OPENAI_API_KEY"
    litellm = load_litellm()
    try:
        provider = litellm.get_llm_provider(llm.model)[1]
    except tuple(litellm.LITELLM_EXCEPTION_TYPES):
        provider = (llm.model or "").split("/", 1)[0]
    return f"{re.sub(r'[^A-Za-z0-9]', '_', provider).upper()}_API_KEY"


def load_litellm():
    """Import litellm with its start-up network fetches turned off (first call only pays).

    Set, not defaulted: a ``LITELLM_LOCAL_MODEL_COST_MAP=False`` left in the environment
    must not make kgkit fetch a price table from the network."""
    os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] = "True"  # bundled price table
    os.environ["LITELLM_LOCAL_ANTHROPIC_BETA_HEADERS"] = "True"  # bundled header table
    import litellm

    litellm.suppress_debug_info = True  # no "Give Feedback / Get Help" banners on stdout
    litellm.disable_aiohttp_transport = True  # async requests over httpx: the same errors as the sync path
    return litellm


def litellm_sender(s: LLMConfig, messages: list[dict[str, str]], temperature: float, key: str | None,
                   response_format: dict[str, Any] | None, max_tokens: int) -> tuple[Sender, Errors]:
    """(one attempt through litellm -> (text, finish reason, usage), the errors it raises)."""
    litellm = load_litellm()
    kwargs: dict[str, Any] = {
        "model": s.model,
        "messages": messages,
        "temperature": temperature,
        "max_tokens": max_tokens,
        "timeout": s.timeout,
        "num_retries": 0,  # retries are ours: counted, logged, Retry-After honoured
        "max_retries": 0,  # and the provider SDK's own retries off too
    }
    if s.api_base:
        kwargs["api_base"] = s.api_base
    if key:
        kwargs["api_key"] = key
    if response_format:
        kwargs["response_format"] = response_format

    def send() -> tuple[str, str | None, Usage]:
        response = run_within(lambda: litellm.acompletion(**kwargs), s.timeout)
        if not response.choices:  # litellm hands such an answer on; the direct client calls it a 500
            raise litellm.APIError(500, "the provider returned a response with no 'choices'", s.model, s.model)
        choice = response.choices[0]
        return choice.message.content or "", getattr(choice, "finish_reason", None), litellm_usage(litellm, response, s.model)

    return send, tuple(litellm.LITELLM_EXCEPTION_TYPES)


def direct_sender(s: LLMConfig, client: direct.OpenAICompatible, fallback_key: Callable[[], str | None],
                  messages: list[dict[str, str]], temperature: float, key: str | None,
                  response_format: dict[str, Any] | None, max_tokens: int) -> tuple[Sender, Errors]:
    """(one attempt through the direct client -> (text, finish reason, usage), the errors it raises).
    ``fallback_key`` reads the key when ``key`` is None, at each attempt."""
    body: dict[str, Any] = {"messages": messages, "temperature": temperature, "max_tokens": max_tokens}
    if response_format:
        body["response_format"] = response_format

    def send() -> tuple[str, str | None, Usage]:
        answer = run_within(lambda: client.complete(body, key or fallback_key(), s.timeout), s.timeout)
        usage = answer.usage
        cost = client.cost(usage) if usage["tokens_in"] or usage["tokens_out"] else None
        return answer.text, answer.finish_reason, Usage(cost=cost, **usage)

    return send, client.errors()


def litellm_usage(litellm: Any, response: Any, model: str | None) -> Usage:
    """The tokens and cost of a litellm response (cost None where litellm's price table has no entry)."""
    usage = getattr(response, "usage", None)
    try:
        cost = float(litellm.completion_cost(completion_response=response, model=model))
    except Exception:  # noqa: BLE001 - litellm raises assorted types for "not in the price table"
        cost = None
    return Usage(
        tokens_in=int(getattr(usage, "prompt_tokens", 0) or 0),
        tokens_out=int(getattr(usage, "completion_tokens", 0) or 0),
        cost=cost,
        tokens_cached=cached_tokens(usage),
    )
