"""A direct client for OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, llama.cpp, proxies).

litellm costs ~5 ms of CPU per request (its logging, cost and response objects around the
openai SDK) and seconds of import; at a few hundred requests a second that, not the
provider, bounds a run. For the one wire format most servers speak, this module sends
the request itself over aiohttp (which litellm brings anyway) and hands
:class:`kgkit.backends.llm.LLMBackend` the same three things litellm would: the answer's
text, its finish reason and its usage. Everything else — retries, pacing, the output
format, validation, re-asks, cache keys — stays in the backend, so both clients give the
same answers, the same run folders and the same errors.

Failures are raised so that :func:`kgkit.backends.failures.classify` names them as it
names litellm's: transport faults as aiohttp raises them (the socket error stays in the
chain), an HTTP error as :class:`StatusError` with the status, the provider's own message
and the response (for ``Retry-After``), and a 200 that is no chat completion as a 500,
as litellm reports it, and so is an answer of the wrong shape (a ``message`` that is no
object, a ``content`` that is no text), each named. Prices and "takes a strict JSON
Schema" come from litellm's local table (:mod:`kgkit.backends.cost_map`), read only when
needed; litellm is never imported.

What a server can send is bounded (docs/security.md, "The model server"): the body is read
in pieces, decompressed here (gzip or deflate, never more than the limit at a time), and
refused as :class:`ResponseTooLarge` once it passes ``limits.max_response_bytes``, however
it is framed (a ``Content-Length``, chunks without end, a gzip bomb). A redirect is followed
only to the same origin (307 and 308, which keep the request as it is); one to another
host, port or scheme is refused as :class:`RedirectRefused`, so the document's text never
goes where ``api_base`` does not point.

aiohttp is imported when the first request is built, not with this module. At import it
makes two TLS contexts and reads the system's certificate store into each, about a third of
its import, which a run pays before its first request; an ``http://`` endpoint (a local
vLLM, Ollama or llama.cpp server, a proxy beside the run) never uses them, so for one, with no
proxy set in the environment, aiohttp is imported with that read skipped (those two
contexts then trust nothing: were one ever used, the connection would fail, never go
unverified). An ``https://`` request carries a verified context of this module's own,
made on the first one.

Why aiohttp and not httpx: measured against the stub (benchmarks/provider_speed.py,
HISTORY.md), an httpx ``AsyncClient`` request costs 0.8-1.0 ms of CPU (httpcore, h11 and
anyio in pure Python), an aiohttp one 0.15 ms (its HTTP parser is compiled); at the 2 ms
a call the run may spend in all, that difference decides.
"""
from __future__ import annotations

import asyncio
import atexit
import json
import math
import os
import sys
import threading
import urllib.parse
import urllib.request
import weakref
import zlib
from dataclasses import dataclass
from typing import Any

from kgkit.backends import cost_map
from kgkit.backends.base import cached_tokens

PREFIX = "openai/"
OPENAI_BASE = "https://api.openai.com/v1"
# Models litellm rewrites parameters for (max_completion_tokens, no temperature): auto leaves them to litellm.
_REWRITTEN = ("o1", "o3", "o4", "gpt-5")
# How OpenAI-compatible servers say "the prompt is over the context window" (litellm's own list, in part).
_CONTEXT_WINDOW = ("maximum context length", "context_length_exceeded", "exceed context limit",
                   "model's maximum context limit", "is longer than the model's context length",
                   "exceeds the available context size", "prompt is too long")

_ACCOUNT_HEADERS = (("OPENAI_ORG_ID", "OpenAI-Organization"), ("OPENAI_PROJECT_ID", "OpenAI-Project"))

MAX_RESPONSE_BYTES = 4_000_000  # limits.max_response_bytes's default (kgkit/config/model.py)
_CHUNK = 64 * 1024  # bytes read from the socket at a time
_REDIRECTS = 5  # same-origin redirects followed for one request at most
_FOLLOWED = (307, 308)  # redirects that keep the method and body (301-303 would turn a POST into a GET)

_sessions: "weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, Any]" = weakref.WeakKeyDictionary()
_importing = threading.Lock()  # the aiohttp import, and the TLS context, made once across pass threads
_tls: list[Any] = []  # the verified TLS context every https request carries, once made
_imported: list[Any] = []  # aiohttp, once its import has finished


class StatusError(Exception):
    """The server answered with an HTTP error (or a body that is no chat completion)."""

    def __init__(self, status: int | None, message: str, response: Any = None):
        super().__init__(message)
        self.status_code = status
        self.message = message
        self.response = response


class ContextWindowExceededError(StatusError):
    """A 400 that says the prompt is longer than the model's context window."""


class MissingKeyError(StatusError):
    """No key to send: refused before any request, as the openai SDK does."""


class ResponseTooLarge(StatusError):
    """The answer's body, decompressed, is over ``limits.max_response_bytes``: not read further."""


class RedirectRefused(StatusError):
    """A redirect this client does not follow: to another origin, or one that would change the request."""


def serves(model: str) -> bool:
    """Whether ``auto`` sends ``model`` through the direct client: ``openai/...`` models
    (OpenAI itself, or any OpenAI-compatible server at ``api_base``), except those whose
    parameters litellm rewrites."""
    return model.startswith(PREFIX) and not model[len(PREFIX):].startswith(_REWRITTEN)


@dataclass(frozen=True)
class Answer:
    text: str
    finish_reason: str | None
    usage: dict[str, Any]


class OpenAICompatible:
    """Chat completions at ``api_base`` (or ``$OPENAI_BASE_URL``, ``$OPENAI_API_BASE``, OpenAI's)."""

    def __init__(self, model: str, api_base: str | None, max_response_bytes: int = MAX_RESPONSE_BYTES):
        self.max_response_bytes = max_response_bytes
        self.model = model[len(PREFIX):] if model.startswith(PREFIX) else model.split("/", 1)[-1]
        base = api_base or os.environ.get("OPENAI_BASE_URL") or os.environ.get("OPENAI_API_BASE") or OPENAI_BASE
        self.url = base.rstrip("/") + "/chat/completions"
        self._https = urllib.parse.urlsplit(self.url).scheme == "https"
        # The openai SDK (under litellm) sends these when they are set; so does this client.
        self.headers = {"Content-Type": "application/json", "Accept": "application/json",
                        "Accept-Encoding": "gzip, deflate",  # what _read decompresses, within the limit
                        **{header: os.environ[name] for name, header in _ACCOUNT_HEADERS if os.environ.get(name)}}

    def output_format(self, json_mode: bool) -> str:
        """json_schema where litellm's table says the model takes one, else json_object (every
        OpenAI-compatible model takes ``response_format``), plain without json_mode."""
        if not json_mode:
            return "plain"
        return "json_schema" if cost_map.supports_response_schema(self.model) else "json_object"

    def cost(self, usage: dict[str, Any]) -> float | None:
        return cost_map.cost(self.model, usage["tokens_in"], usage["tokens_out"], usage["tokens_cached"])

    def errors(self) -> tuple[type[BaseException], ...]:
        """What one request may raise: an HTTP error, or a transport fault. Asked for in the pass's
        thread before each attempt, so aiohttp (and an https request's TLS context) is ready then,
        not made on the event loop."""
        if self._https:
            _tls_context()
        return StatusError, _aiohttp(self.url).ClientError, OSError

    async def complete(self, body: dict[str, Any], key: str | None, timeout: float) -> Answer:
        """One request. Raises StatusError (and its kinds) or what aiohttp raises."""
        if not key:
            raise MissingKeyError(None, "no key is set: the api_key client option must be set")
        session = _session(timeout, self.url)
        tls = _tls_context() if self._https else True
        payload = _request_body({**body, "model": self.model})
        headers = {**self.headers, "Authorization": f"Bearer {key}"}
        url = self.url
        for _ in range(_REDIRECTS + 1):
            async with session.post(url, data=payload, headers=headers, allow_redirects=False,
                                    ssl=tls) as response:
                if 300 <= response.status < 400 and response.status != 304:
                    url = _redirect_target(url, response)
                    continue
                content = await _read(response, self.max_response_bytes)
            break
        else:
            raise RedirectRefused(None, f"more than {_REDIRECTS} redirects for one request", None)
        if response.status >= 400:
            raise _status_error(response, content)
        try:
            data = _parsed(content)
        except (ValueError, RecursionError) as exc:  # an HTML error page behind a 200: litellm reports it as a 500
            raise StatusError(500, str(exc), response) from None
        return _answer(data, response)


def _request_body(body: dict[str, Any]) -> bytes:
    """The request as UTF-8 JSON, by orjson (a tenth of the standard encoder's CPU on a
    prompt of a few thousand characters). What orjson refuses or would write otherwise (a
    number beyond 64 bits, text that is no valid UTF-8, a NaN setting, which it writes as null) goes
    through the standard encoder, which writes it or raises as before. Only the settings are
    looked at for a NaN: one nested in a view's output schema (a YAML ``.nan``) goes out as
    null, where the standard encoder refused the request; no provider could read either."""
    import orjson

    if all(math.isfinite(v) for v in body.values() if isinstance(v, float)):  # the settings: temperature, top_p
        try:
            return orjson.dumps(body)
        except (TypeError, orjson.JSONEncodeError):
            pass
    return json.dumps(body, ensure_ascii=False, allow_nan=False).encode()


def _parsed(content: bytes) -> Any:
    """The response body as JSON: orjson's reading, or, where it refuses (a NaN literal, a
    number beyond 64 bits, a body that is no JSON), the standard parser's value or error."""
    import orjson

    try:
        return orjson.loads(content)
    except orjson.JSONDecodeError:
        return json.loads(content)


def _answer(data: Any, response: Any) -> Answer:
    """The chat completion in ``data``, or a 500 naming what is wrong with its shape."""
    choices = data.get("choices") if isinstance(data, dict) else None
    if not choices or not isinstance(choices, list) or not isinstance(choices[0], dict):
        raise StatusError(500, "the provider returned a response with no 'choices'", response)
    message = choices[0].get("message")
    if message is None:
        message = {}
    if not isinstance(message, dict):
        raise StatusError(500, f"the provider's answer has a 'message' that is {_kind(message)}, not an object",
                          response)
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise StatusError(500, f"the provider's answer has a 'content' that is {_kind(content)}, not text", response)
    finish = choices[0].get("finish_reason")
    return Answer(text=content or "", finish_reason=finish if isinstance(finish, str) else None,
                  usage=_usage(data.get("usage")))


def _kind(value: Any) -> str:
    """How a JSON value is named in a message (never the value itself: it may be huge)."""
    return {dict: "an object", list: "a list", str: "text", bool: "a boolean", int: "a number",
            float: "a number"}.get(type(value), "null")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    default = {"http": 80, "https": 443}.get(parts.scheme)
    try:
        port = parts.port or default
    except ValueError:
        port = None
    return parts.scheme, (parts.hostname or "").lower(), port


def _redirect_target(url: str, response: Any) -> str:
    """Where a redirect may be followed to: the same origin, with the request unchanged; else
    RedirectRefused (its status is the redirect's, so the message shows it)."""
    location = response.headers.get("Location", "")
    target = urllib.parse.urljoin(url, location)
    status = response.status
    if not location:
        raise RedirectRefused(status, "the server answered with a redirect that names no Location", response)
    if _origin(target) != _origin(url):
        scheme, host, port = _origin(target)
        raise RedirectRefused(status, f"the server redirected the request to another origin ({scheme}://{host}"
                              f"{f':{port}' if port else ''}): not followed, so no document text went there", response)
    if status not in _FOLLOWED:
        raise RedirectRefused(status, f"the server answered {status} (a redirect that would turn the request "
                              "into a GET): not followed", response)
    return target


async def _read(response: Any, limit: int) -> bytes:
    """The body, decompressed, of at most ``limit`` bytes; ResponseTooLarge as soon as it is
    over (nothing more is read: the connection is dropped). The decompressor never makes more
    than what is left of the limit at a time, so a gzip bomb costs no more than an honest body."""
    length = response.content_length
    encoding = response.headers.get("Content-Encoding", "identity").strip().lower()
    if encoding in ("", "identity") and length is not None and length > limit:
        raise ResponseTooLarge(None, _too_large(limit, f"it announces {length} bytes"), response)
    if encoding in ("gzip", "x-gzip"):
        inflate = zlib.decompressobj(16 + zlib.MAX_WBITS)
    elif encoding == "deflate":
        inflate = zlib.decompressobj(32 + zlib.MAX_WBITS)  # zlib-wrapped, as RFC 9110 says (or gzip)
    elif encoding in ("", "identity"):
        inflate = None
    else:
        raise StatusError(500, f"the answer is encoded as {encoding[:40]!r}, which this client does not read",
                          response)
    body = bytearray()
    try:
        async for chunk in response.content.iter_chunked(_CHUNK):
            if inflate is None:
                body += chunk
            else:
                while chunk:
                    body += inflate.decompress(chunk, limit + 1 - len(body))
                    if len(body) > limit:
                        break
                    chunk = inflate.unconsumed_tail
            if len(body) > limit:
                response.close()
                raise ResponseTooLarge(None, _too_large(limit, "its body is longer"), response)
        if inflate is not None:
            body += inflate.flush(limit + 1 - len(body))
    except zlib.error as exc:
        raise StatusError(500, f"the answer's {encoding} encoding is broken ({exc})", response) from None
    if len(body) > limit:
        raise ResponseTooLarge(None, _too_large(limit, "decompressed, it is longer"), response)
    return bytes(body)


def _too_large(limit: int, why: str) -> str:
    return f"the answer is over limits.max_response_bytes={limit} ({why}): not read further"


def _session(timeout: float, url: str):
    """This event loop's pooled session (the provider loop is one per process: one pool, no
    bound of its own: ``llm.concurrency`` bounds the requests). The whole-request deadline is
    :mod:`kgkit.backends.deadline`'s; aiohttp's own timeouts only bound a connect or a read."""
    loop = asyncio.get_running_loop()
    session = _sessions.get(loop)
    if session is None:
        aiohttp = _aiohttp(url)
        if not _sessions:
            atexit.register(_close_sessions)
        session = _sessions[loop] = aiohttp.ClientSession(
            # A proxy from the environment, as litellm's client honours one; read only when
            # one is set (aiohttp looks it up on a worker thread for every request).
            connector=aiohttp.TCPConnector(limit=0), trust_env=bool(urllib.request.getproxies()),
            auto_decompress=False,  # _read decompresses, within limits.max_response_bytes
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=timeout, sock_read=timeout))
    return session


def _close_sessions() -> None:
    """At exit: close the pooled connections on their loops (briefly: exit must stay quick), so
    aiohttp has no unclosed session to warn about."""
    for loop, session in list(_sessions.items()):
        if loop.is_running() and not session.closed:
            future = asyncio.run_coroutine_threadsafe(session.close(), loop)
            try:
                future.result(timeout=0.2)
            except BaseException:  # noqa: BLE001 - a stuck close must not hold the exit
                future.cancel()
    _sessions.clear()


def _aiohttp(url: str) -> Any:
    """aiohttp, imported on first use; for an ``http://`` url with no proxy in the
    environment, without the certificate reads of its import (see the module docstring).
    Only a finished import is handed out: pass threads ask at once, and ``sys.modules``
    holds aiohttp while another thread is still importing it."""
    if _imported:
        return _imported[0]
    with _importing:
        if not _imported:
            if "aiohttp" in sys.modules or urllib.parse.urlsplit(url).scheme != "http" or urllib.request.getproxies():
                import aiohttp
            else:
                import ssl

                verify_paths = ssl.SSLContext.set_default_verify_paths
                ssl.SSLContext.set_default_verify_paths = lambda self: None  # type: ignore[method-assign]
                try:
                    import aiohttp
                finally:
                    ssl.SSLContext.set_default_verify_paths = verify_paths  # type: ignore[method-assign]
            _imported.append(aiohttp)
    return _imported[0]


def _tls_context() -> Any:
    """The verified TLS context of every https request (the system's certificates, HTTP/1.1
    offered, as aiohttp's own default is made), made once."""
    if not _tls:
        with _importing:
            if not _tls:
                import ssl

                context = ssl.create_default_context()
                context.set_alpn_protocols(("http/1.1",))
                _tls.append(context)
    return _tls[0]


def _status_error(response: Any, content: bytes) -> StatusError:
    """The provider's own words for an HTTP error, as the openai SDK and litellm pass them on."""
    status = response.status
    try:
        body = json.loads(content)
    except ValueError:
        body = None
    error = body.get("error") if isinstance(body, dict) else None
    if isinstance(error, dict) and error.get("message"):
        message = str(error["message"])
    elif isinstance(error, str) and error:
        message = error
    else:
        message = f"Error code: {status}"
    lowered = message.lower()
    kind = ContextWindowExceededError if status == 400 and any(s in lowered for s in _CONTEXT_WINDOW) else StatusError
    return kind(status, message, response)


def _usage(usage: Any) -> dict[str, Any]:
    usage = usage if isinstance(usage, dict) else {}

    def number(value: Any) -> int:
        """A token count as a server may garble it (text, a float, negative, huge): 0 if it is none."""
        if isinstance(value, bool) or not isinstance(value, (int, float, str)):
            return 0
        try:
            value = float(value)
        except ValueError:
            return 0
        return int(value) if math.isfinite(value) and 0 <= value < 1e15 else 0

    return {"tokens_in": number(usage.get("prompt_tokens")), "tokens_out": number(usage.get("completion_tokens")),
            "tokens_cached": number(cached_tokens(usage))}
