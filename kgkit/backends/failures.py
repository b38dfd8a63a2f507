"""A failed provider request named as what it is, with whether asking again can help.

litellm folds most transport faults into one ``InternalServerError`` ("HTTP 500:
Connection error"): a refused connection, a host name that does not resolve, an
``https://`` api_base in front of a plain HTTP server and a missing key all read the
same, and all used to be retried for ~13 s before "try again later". The cause is still
there, in the exception chain litellm keeps (``ConnectionRefusedError``,
``socket.gaierror``, ``ssl.SSLError``, httpx's ``RemoteProtocolError``…), so
:func:`classify` walks that chain first and reads the HTTP status only after.

Each :class:`Failure` says whether a retry can help (a reset, a timeout, 429/5xx) and
whether the fix is in the configuration (a key, the model name, api_base: exit 2) or
with the provider (exit 3).
"""
from __future__ import annotations

import socket
import ssl
from dataclasses import dataclass
from typing import Iterator

from kgkit.backends.deadline import DeadlineExceeded

RETRY_STATUS = frozenset({408, 429, 500, 502, 503, 504})
AUTH_STATUS = frozenset({401, 403})
REFUSAL_STATUS = frozenset({400, 413, 422})  # this request, as sent, will never be taken
# The peer closed the connection during or after the handshake: a drop, like a reset, not a
# TLS mismatch (that one is "wrong version number" or a certificate error).
_TLS_CLOSED = (ssl.SSLEOFError, ssl.SSLZeroReturnError)
_RESET_NAMES = frozenset({"RemoteProtocolError", "ReadError", "WriteError", "IncompleteRead",
                          "ServerDisconnectedError", "ClientPayloadError"})  # httpx's, then aiohttp's
_MISSING_KEY = ("missing credentials", "api key is missing", "no key is set", "missing anthropic api key",
                "api_key client option must be set")


@dataclass(frozen=True)
class Failure:
    """One failed request: ``kind`` names it ("refused", "reset", "dns", "tls", "timeout",
    "missing_key", "rejected_key", "unknown_model", "refusal", "server", "other")."""

    kind: str
    what: str  # the user-facing description, without the model prefix
    hint: str
    retryable: bool = False
    configuration: bool = False  # exit 2: the fix is in kgkit.yaml or the environment


def classify(exc: BaseException, *, status: int | None, detail: str, endpoint: str, timeout: float,
             key_variable: str, key_env_set: bool) -> Failure:
    """Name the failure of one request.

    Args:
        exc: what litellm or the direct client raised.
        status: its HTTP status, if any (litellm invents 500 and 408 for transport faults).
        detail: the provider's own words, already scrubbed of the key.
        endpoint: where the request went, for the message ("127.0.0.1:8080", "the openai API").
        timeout: ``llm.timeout``, for the timeout message.
        key_variable: the variable the key is read from.
        key_env_set: whether ``llm.api_key_env`` named it (else it is litellm's usual one).

    The exception chain is read first (:func:`_transport_failure`): litellm's status for a
    transport fault is invented, the cause in the chain is not. The status and the provider's
    words only after (:func:`_reply_failure`).
    """
    transport = _transport_failure(list(_chain(exc)), endpoint, timeout)
    if transport is not None:
        return transport
    return _reply_failure(exc, status, detail, endpoint, key_variable, key_env_set)


def _transport_failure(chain: list[BaseException], endpoint: str, timeout: float) -> Failure | None:
    """A failure the exception chain names (TLS, DNS, refused, timeout, reset), else None."""
    # The ssl module's own error (it has a reason), not a client library's subclass wrapping it.
    tls = next((e for e in chain if isinstance(e, ssl.SSLError) and not isinstance(e, _TLS_CLOSED)
                and hasattr(e, "reason")), None)
    if isinstance(tls, ssl.SSLCertVerificationError):
        return Failure("tls", f"the TLS certificate of {endpoint} is not trusted ({tls.verify_message or tls})",
                       "point SSL_CERT_FILE at the CA bundle that signed it, or fix llm.api_base", configuration=True)
    if tls is not None:  # the SSL library's own reason ("wrong version number"), not litellm's "Connection error."
        return Failure("tls", f"TLS handshake with {endpoint} failed ({tls.reason or tls})",
                       "the server does not speak TLS there: use http:// in llm.api_base, or the server's TLS port",
                       configuration=True)
    if any(isinstance(e, socket.gaierror) for e in chain):
        return Failure("dns", f"cannot resolve the host name of {endpoint} (DNS lookup failed)",
                       "check the host name in llm.api_base, and that this machine can reach a DNS server",
                       configuration=True)
    if any(isinstance(e, ConnectionRefusedError) for e in chain):
        return Failure("refused", f"connection refused by {endpoint}: no server is listening there",
                       "start the model server, or correct the host and port in llm.api_base")
    if any(isinstance(e, (TimeoutError, DeadlineExceeded)) or "Timeout" in type(e).__name__ for e in chain):
        return Failure("timeout", f"no complete answer from {endpoint} within llm.timeout={timeout:g}s",
                       "raise llm.timeout, or lower llm.max_tokens / chunk_size so answers come sooner", retryable=True)
    if any(isinstance(e, (ConnectionResetError, ConnectionAbortedError, BrokenPipeError, *_TLS_CLOSED))
           or type(e).__name__ in _RESET_NAMES for e in chain):
        return Failure("reset", f"the connection to {endpoint} was closed before an answer arrived",
                       "the server or a proxy in between dropped it; try again later", retryable=True)
    return None


def _reply_failure(exc: BaseException, status: int | None, detail: str, endpoint: str, key_variable: str,
                   key_env_set: bool) -> Failure:
    """A failure named by the exception's class, the HTTP status and the provider's words."""
    name = type(exc).__name__
    if name == "ResponseTooLarge":  # the direct client's: a server sending without end is not asked again
        return Failure("too_large", f"{endpoint} sent an answer too large to read: {detail}",
                       "raise limits.max_response_bytes if the server's answers really are this large, "
                       "or check llm.api_base")
    if name == "RedirectRefused":
        return Failure("redirect", status_text(status, detail),
                       "point llm.api_base at the server it redirects to, if you trust that server")
    lowered = detail.lower()
    if any(phrase in lowered for phrase in _MISSING_KEY):
        other = "" if key_env_set else ", or name the variable holding your key in llm.api_key_env"
        return Failure("missing_key", f"no API key: {key_variable} is not set", f"export {key_variable}=<your API key>"
                       + other, configuration=True)
    if status in AUTH_STATUS:
        hint = (f"set {key_variable} (named by llm.api_key_env) to a valid key" if key_env_set
                else f"set {key_variable}, or name the variable holding your key in llm.api_key_env")
        return Failure("rejected_key", f"the provider rejected the API key (HTTP {status}: {detail})", hint,
                       configuration=True)
    if status == 404 or "NotFound" in type(exc).__name__ or "llm provider not provided" in lowered:
        return Failure("unknown_model", f"the provider does not know this model ({status_text(status, detail)})",
                       "check llm.model (provider/model-name, as litellm spells it) and llm.api_base",
                       configuration=True)
    if status in RETRY_STATUS or "APIConnectionError" in type(exc).__name__:
        return Failure("server", status_text(status, detail), "try again later, or raise llm.retries / llm.timeout",
                       retryable=True)
    if "ContextWindowExceeded" in type(exc).__name__:
        return Failure("refusal", f"provider refused the request: {status_text(status, detail)}",
                       "the prompt is longer than the model's context window: lower chunk_size")
    if status in REFUSAL_STATUS:
        return Failure("refusal", f"provider refused the request: {status_text(status, detail)}",
                       "check llm.model and llm.api_base")
    return Failure("other", f"provider refused the request: {status_text(status, detail)}",
                   "check llm.model and llm.api_base")


def status_text(status: int | None, detail: str) -> str:
    return f"HTTP {status}: {detail}" if status else detail


def _chain(exc: BaseException | None) -> Iterator[BaseException]:
    """``exc`` and every exception it was raised from or while handling."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        yield exc
        exc = exc.__cause__ or exc.__context__
