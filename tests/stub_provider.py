"""A scriptable LLM provider on 127.0.0.1 that litellm talks to over real HTTP.

Tests point litellm's ``api_base`` at it instead of mocking litellm, so everything from
request building to header handling and error mapping is exercised for real. It speaks
two wire formats:

* OpenAI-compatible ``POST /v1/chat/completions`` (``openai/...`` models,
  ``api_base = server.openai_base``);
* Anthropic ``POST /v1/messages`` (``anthropic/...`` models,
  ``api_base = server.anthropic_base``).

Every request is recorded (:attr:`StubProvider.requests`: path, headers, JSON body) and
answered by the test's script: :meth:`StubProvider.script` queues :class:`Reply` objects
(one per request, in order), and :attr:`StubProvider.responder` — a callable from the
:class:`Recorded` request to a :class:`Reply` — answers once the queue is empty. A reply
can be a model answer, an HTTP error with ``Retry-After``, a delay (a hang past the
client's timeout), a dropped connection, a body that is not JSON at all, or an answer cut
off at the token limit; the fault-injection suites build on exactly these.
"""
from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass, field
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Callable

OPENAI = "openai"
ANTHROPIC = "anthropic"


@dataclass
class Reply:
    """One scripted response.

    ``content`` is the model's text (a dict is JSON-encoded), wrapped in the wire
    format of the endpoint that was called. ``body`` replaces the whole HTTP body
    verbatim (malformed provider output); ``status`` >= 400 sends a provider-style
    error with ``message``. ``delay`` waits before answering; ``drop`` closes the
    connection without any answer (a reset).
    """

    content: str | dict | None = None
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    message: str = ""
    body: bytes | str | None = None
    delay: float = 0.0
    drop: bool = False
    finish_reason: str = "stop"  # "length" = cut off at max_tokens
    tokens_in: int = 11
    tokens_out: int = 7
    tokens_cached: int = 0  # of tokens_in, reported as read from the provider's prompt cache

    @classmethod
    def answer(cls, content: str | dict, **kw: Any) -> "Reply":
        return cls(content=content, **kw)

    @classmethod
    def error(cls, status: int, message: str = "", retry_after: str | float | None = None, **kw: Any) -> "Reply":
        headers = dict(kw.pop("headers", {}))
        if retry_after is not None:
            headers["Retry-After"] = str(retry_after)
        return cls(status=status, message=message or f"stub error {status}", headers=headers, **kw)


@dataclass
class Recorded:
    """A request as the stub received it."""

    wire: str  # OPENAI | ANTHROPIC | "" for unknown paths
    path: str
    headers: dict[str, str]  # names lower-cased
    body: Any  # parsed JSON, or the raw text if it was not JSON
    raw: bytes

    @property
    def messages(self) -> list[dict[str, Any]]:
        """Chat messages in OpenAI shape, whichever wire carried them (system first)."""
        body = self.body if isinstance(self.body, dict) else {}
        msgs = [dict(m) for m in body.get("messages", [])]
        if self.wire == ANTHROPIC:
            system = body.get("system")
            if isinstance(system, list):
                system = "".join(part.get("text", "") for part in system)
            for m in msgs:
                if isinstance(m.get("content"), list):
                    m["content"] = "".join(part.get("text", "") for part in m["content"])
            if system:
                msgs.insert(0, {"role": "system", "content": system})
        return msgs


class StubProvider:
    """The server; start with :meth:`start` (or use the ``stub_provider`` fixture)."""

    def __init__(self) -> None:
        self.requests: list[Recorded] = []
        self.responder: Callable[[Recorded], Reply] | None = None
        self._queue: deque[Reply] = deque()
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------
    def start(self) -> "StubProvider":
        stub = self

        class Handler(_Handler):
            provider = stub

        self._server = _Server(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._server.block_on_close = False  # a scripted hang must not block stop()
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, name="stub-provider", daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stopping.set()  # wakes handlers sleeping in a scripted delay
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    @property
    def url(self) -> str:
        assert self._server is not None, "start() the stub first"
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}"

    @property
    def openai_base(self) -> str:
        """``api_base`` for ``openai/...`` models (litellm appends /chat/completions)."""
        return self.url + "/v1"

    @property
    def anthropic_base(self) -> str:
        """``api_base`` for ``anthropic/...`` models (litellm appends /v1/messages)."""
        return self.url

    # -- scripting -------------------------------------------------------------------
    def script(self, *replies: Reply | str | dict) -> None:
        """Queue replies, one per incoming request; a str or dict is a plain answer."""
        with self._lock:
            for r in replies:
                self._queue.append(r if isinstance(r, Reply) else Reply.answer(r))

    def _next_reply(self, req: Recorded) -> Reply:
        with self._lock:
            self.requests.append(req)
            if self._queue:
                return self._queue.popleft()
        if self.responder is not None:
            return self.responder(req)
        return Reply.error(599, "stub provider: no scripted reply left for this request")

    def sleep(self, seconds: float) -> None:
        self._stopping.wait(seconds)


class _Server(ThreadingHTTPServer):
    # A client at llm.concurrency 64 opens its connections at once; the default backlog of 5
    # would drop some (resets, a SYN retried after a second) and charge the delay to kgkit.
    request_queue_size = 256


class _Handler(BaseHTTPRequestHandler):
    provider: StubProvider
    protocol_version = "HTTP/1.1"

    def setup(self) -> None:
        super().setup()
        # Each answer goes out in one write (see do_POST) and at once: no Nagle delay of its own.
        self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # keep pytest output clean
        pass

    def do_POST(self) -> None:  # noqa: N802 (http.server naming)
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        wire = OPENAI if path.endswith("/chat/completions") else ANTHROPIC if path.endswith("/messages") else ""
        req = Recorded(wire, path, {k.lower(): v for k, v in self.headers.items()}, body, raw)
        reply = self.provider._next_reply(req)
        if reply.delay:
            self.provider.sleep(reply.delay)
        if reply.drop:
            self._reset()
            return
        if reply.body is not None:
            payload = reply.body.encode() if isinstance(reply.body, str) else reply.body
        elif reply.status >= 400:
            payload = json.dumps(_error_body(wire, reply)).encode()
        else:
            payload = json.dumps(_answer_body(wire, req, reply)).encode()
        try:
            # Status line, headers and body in one write: in two, Nagle's algorithm and the
            # client's delayed ACK hold the body back ~40 ms on every call.
            head = [f"{self.protocol_version} {reply.status} {_reason(reply.status)}",
                    "Content-Type: application/json", f"Content-Length: {len(payload)}",
                    *(f"{name}: {value}" for name, value in reply.headers.items())]
            self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + payload)
        except OSError:  # the client gave up first (a scripted hang past its timeout)
            self.close_connection = True

    def _reset(self) -> None:
        """Close with RST instead of FIN: the client sees 'connection reset by peer'."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.connection.close()


def _reason(status: int) -> str:
    try:
        return HTTPStatus(status).phrase
    except ValueError:
        return "Stub Status"  # 599 and other invented codes


def _text(content: str | dict | None) -> str:
    if content is None:
        return ""
    return content if isinstance(content, str) else json.dumps(content)


def _answer_body(wire: str, req: Recorded, reply: Reply) -> dict[str, Any]:
    model = req.body.get("model", "stub") if isinstance(req.body, dict) else "stub"
    text = _text(reply.content)
    if wire == ANTHROPIC:
        stop = {"stop": "end_turn", "length": "max_tokens"}.get(reply.finish_reason, reply.finish_reason)
        return {
            "id": f"msg_stub_{len(req.raw)}",
            "type": "message",
            "role": "assistant",
            "model": model,
            "content": [{"type": "text", "text": text}],
            "stop_reason": stop,
            "stop_sequence": None,
            "usage": {"input_tokens": reply.tokens_in, "output_tokens": reply.tokens_out,
                      "cache_read_input_tokens": reply.tokens_cached},
        }
    return {
        "id": f"chatcmpl-stub-{len(req.raw)}",
        "object": "chat.completion",
        "created": int(time.time()),
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": text},
                "finish_reason": reply.finish_reason,
            }
        ],
        "usage": {
            "prompt_tokens": reply.tokens_in,
            "completion_tokens": reply.tokens_out,
            "total_tokens": reply.tokens_in + reply.tokens_out,
            "prompt_tokens_details": {"cached_tokens": reply.tokens_cached},
        },
    }


def _error_body(wire: str, reply: Reply) -> dict[str, Any]:
    if wire == ANTHROPIC:
        kind = {401: "authentication_error", 403: "permission_error", 429: "rate_limit_error"}.get(
            reply.status, "api_error"
        )
        return {"type": "error", "error": {"type": kind, "message": reply.message}}
    return {"error": {"message": reply.message, "type": "stub_error", "code": reply.status}}
