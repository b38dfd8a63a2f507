"""A scriptable LLM provider on 127.0.0.1 that litellm talks to over real HTTP.

Tests point litellm's ``api_base`` at it instead of mocking litellm, so everything from
request building to header handling and error mapping is exercised for real. It speaks
these wire formats:

* OpenAI-compatible ``POST /v1/chat/completions`` (``openai/...`` models,
  ``api_base = server.openai_base``);
* Anthropic ``POST /v1/messages`` (``anthropic/...`` models,
  ``api_base = server.anthropic_base``);
* OpenAI-compatible ``POST /v1/embeddings`` (``litellm.embedding`` with ``openai/...``
  models): a :class:`Reply` with ``vectors``, one per input.

Every request is recorded (:attr:`StubProvider.requests`: path, headers, JSON body) and
answered by the test's script: :meth:`StubProvider.script` queues :class:`Reply` objects
(one per request, in order), and :attr:`StubProvider.responder` — a callable from the
:class:`Recorded` request to a :class:`Reply` — answers once the queue is empty. A reply
can be a model answer, an HTTP error with ``Retry-After``, a delay (a hang past the
client's timeout), a dropped connection, a body that is not JSON at all, or an answer cut
off at the token limit; the fault-injection suites build on exactly these.

It also serves the providers' batch APIs over the same HTTP, each line of a batch answered
by the same script and responder (and recorded, with :attr:`Recorded.batch` naming its
batch): OpenAI's ``POST /v1/files``, ``POST /v1/batches``, ``GET /v1/batches/{id}`` and
``GET /v1/files/{id}/content``; Anthropic's ``POST /v1/messages/batches``,
``GET /v1/messages/batches/{id}`` and ``GET /v1/messages/batches/{id}/results``.
:attr:`StubProvider.batch` (:class:`BatchKnobs`) makes batches stay in progress, expire
part-way or fail some of their lines.
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
EMBEDDINGS = "embeddings"  # OpenAI-compatible POST /v1/embeddings (litellm.embedding)


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
    vectors: list[list[float]] | None = None  # an embeddings answer: one vector per input, in order

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
    batch: str | None = None  # the batch id, for a line of a batch (its body is the line's request)

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


@dataclass
class BatchKnobs:
    """How the stub's batches behave, read when a batch is processed (its first poll).

    ``in_progress``: batches stay in progress (a poll reports so) until set back to False.
    ``expire_after``: only that many lines of each batch are answered; the batch ends
    expired and the others come back expired. ``fail_lines``: that many of the answered
    lines, the first ones, come back as a server error (500) instead of an answer.
    """

    in_progress: bool = False
    expire_after: int | None = None
    fail_lines: int = 0


@dataclass
class StubBatch:
    """One batch the stub holds: its lines (custom id, request body) and, once processed, results."""

    id: str
    wire: str
    lines: list[tuple[str, Any]]
    input_file_id: str | None = None
    created: float = field(default_factory=time.time)
    status: str = "in_progress"  # in_progress | completed | expired
    results: list[dict[str, Any]] = field(default_factory=list)  # one result line per answered line
    errors: list[dict[str, Any]] = field(default_factory=list)  # OpenAI's error file


class StubProvider:
    """The server; start with :meth:`start` (or use the ``stub_provider`` fixture)."""

    def __init__(self) -> None:
        self.batch = BatchKnobs()
        self.batches: dict[str, StubBatch] = {}
        self.files: dict[str, bytes] = {}  # OpenAI file id -> content (uploads and result files)
        self.batch_calls: list[tuple[str, str]] = []  # (method, path) of every batch/file endpoint call
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

    # -- batches ----------------------------------------------------------------------
    def batch_lines(self) -> list[Recorded]:
        """The batch lines answered so far (each is also in :attr:`requests`)."""
        return [r for r in self.requests if r.batch is not None]

    def _new_batch(self, wire: str, lines: list[tuple[str, Any]], input_file_id: str | None = None) -> StubBatch:
        with self._lock:
            n = len(self.batches) + 1
            batch_id = f"batch_stub{n:04d}" if wire == OPENAI else f"msgbatch_stub{n:04d}"
            self.batches[batch_id] = StubBatch(batch_id, wire, lines, input_file_id)
        return self.batches[batch_id]

    def _process(self, batch: StubBatch) -> None:
        """Answer a batch's lines with the script and responder, once, as the knobs say."""
        if batch.status != "in_progress" or self.batch.in_progress:
            return
        knobs = self.batch
        answered = batch.lines if knobs.expire_after is None else batch.lines[:knobs.expire_after]
        path = "/v1/chat/completions" if batch.wire == OPENAI else "/v1/messages"
        for i, (custom_id, body) in enumerate(answered):
            raw = json.dumps(body).encode()
            req = Recorded(batch.wire, path, {}, body, raw, batch=batch.id)
            reply = self._next_reply(req)
            if i < knobs.fail_lines:
                reply = Reply.error(500, "stub: this line failed")
            batch.results.append(_batch_result(batch.wire, custom_id, req, reply))
        for custom_id, _ in batch.lines[len(answered):]:
            if batch.wire == ANTHROPIC:
                batch.results.append({"custom_id": custom_id, "result": {"type": "expired"}})
            else:
                batch.errors.append({"id": f"batch_req_{custom_id}", "custom_id": custom_id, "response": None,
                                     "error": {"code": "batch_expired", "message": "This request could not be "
                                               "executed before the completion window expired."}})
        if batch.wire == OPENAI:  # OpenAI puts failed lines in the error file, answered ones in the output file
            batch.errors = [r for r in batch.results if r["response"]["status_code"] >= 400] + batch.errors
            batch.results = [r for r in batch.results if r["response"]["status_code"] < 400]
            for kind, rows in (("output", batch.results), ("error", batch.errors)):
                if rows:
                    self.files[f"file-{batch.id}-{kind}"] = "".join(json.dumps(r) + "\n" for r in rows).encode()
        batch.status = "expired" if len(answered) < len(batch.lines) else "completed"


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
        if self.path.split("?", 1)[0].endswith(("/files", "/batches")):
            self._batch_post(self.path.split("?", 1)[0], raw)
            return
        try:
            body: Any = json.loads(raw)
        except ValueError:
            body = raw.decode("utf-8", "replace")
        path = self.path.split("?", 1)[0]
        wire = (OPENAI if path.endswith("/chat/completions") else ANTHROPIC if path.endswith("/messages")
                else EMBEDDINGS if path.endswith("/embeddings") else "")
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

    # -- batch endpoints --------------------------------------------------------------
    def _send_json(self, status: int, payload: Any, content_type: str = "application/json") -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        head = [f"{self.protocol_version} {status} {_reason(status)}", f"Content-Type: {content_type}",
                f"Content-Length: {len(data)}"]
        self.wfile.write(("\r\n".join(head) + "\r\n\r\n").encode("latin-1") + data)

    def _batch_post(self, path: str, raw: bytes) -> None:
        stub = self.provider
        stub.batch_calls.append(("POST", path))
        if path.endswith("/v1/files"):
            content = _multipart_file(self.headers.get("Content-Type", ""), raw)
            file_id = f"file-stub{len(stub.files) + 1:04d}"
            stub.files[file_id] = content
            self._send_json(200, {"id": file_id, "object": "file", "bytes": len(content), "created_at": int(time.time()),
                                  "filename": "batch.jsonl", "purpose": "batch", "status": "processed"})
            return
        body = json.loads(raw)
        if path.endswith("/v1/messages/batches"):
            batch = stub._new_batch(ANTHROPIC, [(r["custom_id"], r["params"]) for r in body["requests"]])
            self._send_json(200, _anthropic_batch(batch))
            return
        content = stub.files.get(body.get("input_file_id", ""))
        if content is None:
            self._send_json(404, {"error": {"message": f"No such File object: {body.get('input_file_id')}",
                                            "type": "invalid_request_error", "code": None}})
            return
        lines = [json.loads(line) for line in content.decode().splitlines() if line.strip()]
        batch = stub._new_batch(OPENAI, [(line["custom_id"], line["body"]) for line in lines], body["input_file_id"])
        self._send_json(200, _openai_batch(batch))

    def do_GET(self) -> None:  # noqa: N802 (http.server naming)
        stub = self.provider
        path = self.path.split("?", 1)[0]
        stub.batch_calls.append(("GET", path))
        parts = path.strip("/").split("/")
        if parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
            if parts[2] not in stub.files:
                self._send_json(404, {"error": {"message": f"No such File object: {parts[2]}",
                                                "type": "invalid_request_error", "code": None}})
                return
            self._send_json(200, stub.files[parts[2]], "application/octet-stream")
            return
        batch_id = parts[-2] if parts[-1] == "results" else parts[-1]
        batch = stub.batches.get(batch_id)
        anthropic = parts[:3] == ["v1", "messages", "batches"]
        if batch is None or parts[:2] != ["v1", "batches"] and not anthropic:
            if anthropic:
                self._send_json(404, {"type": "error", "error": {"type": "not_found_error",
                                                                 "message": f"batch {batch_id} not found"}})
            else:
                self._send_json(404, {"error": {"message": f"No batch found with id '{batch_id}'.",
                                                "type": "invalid_request_error", "code": None}})
            return
        stub._process(batch)
        if parts[-1] == "results":
            self._send_json(200, "".join(json.dumps(r) + "\n" for r in batch.results).encode(),
                            "application/binary")
        else:
            self._send_json(200, _anthropic_batch(batch) if anthropic else _openai_batch(batch))

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
    if wire == EMBEDDINGS:
        return {"object": "list", "model": model,
                "data": [{"object": "embedding", "index": i, "embedding": v} for i, v in enumerate(reply.vectors or [])],
                "usage": {"prompt_tokens": reply.tokens_in, "total_tokens": reply.tokens_in}}
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


def _multipart_file(content_type: str, raw: bytes) -> bytes:
    """The uploaded file's bytes from a multipart/form-data body (the ``file`` field)."""
    from email.parser import BytesParser
    from email.policy import HTTP

    message = BytesParser(policy=HTTP).parsebytes(f"Content-Type: {content_type}\r\n\r\n".encode() + raw)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            return part.get_payload(decode=True)
    return b""


def _batch_result(wire: str, custom_id: str, req: Recorded, reply: Reply) -> dict[str, Any]:
    """One line of a batch's results, in the wire's own shape."""
    if wire == ANTHROPIC:
        if reply.status >= 400:
            return {"custom_id": custom_id, "result": {"type": "errored", "error": _error_body(wire, reply)}}
        return {"custom_id": custom_id, "result": {"type": "succeeded", "message": _answer_body(wire, req, reply)}}
    body = _error_body(wire, reply) if reply.status >= 400 else _answer_body(wire, req, reply)
    return {"id": f"batch_req_{custom_id}", "custom_id": custom_id, "error": None,
            "response": {"status_code": reply.status, "request_id": f"req_{custom_id}", "body": body}}


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))


def _openai_batch(batch: StubBatch) -> dict[str, Any]:
    done = batch.status != "in_progress"
    failed = sum(1 for r in batch.errors if r.get("response"))
    return {"id": batch.id, "object": "batch", "endpoint": "/v1/chat/completions", "errors": None,
            "input_file_id": batch.input_file_id, "completion_window": "24h", "status": batch.status,
            "output_file_id": f"file-{batch.id}-output" if done and batch.results else None,
            "error_file_id": f"file-{batch.id}-error" if done and batch.errors else None,
            "created_at": int(batch.created), "in_progress_at": int(batch.created),
            "expires_at": int(batch.created) + 86400, "completed_at": int(time.time()) if done else None,
            "request_counts": {"total": len(batch.lines), "completed": len(batch.results) if done else 0,
                               "failed": failed},
            "metadata": None}


def _anthropic_batch(batch: StubBatch) -> dict[str, Any]:
    done = batch.status != "in_progress"
    kinds = [r["result"]["type"] for r in batch.results]
    counts = {"processing": 0 if done else len(batch.lines), "succeeded": kinds.count("succeeded"),
              "errored": kinds.count("errored"), "canceled": 0, "expired": kinds.count("expired")}
    return {"id": batch.id, "type": "message_batch", "processing_status": "ended" if done else "in_progress",
            "request_counts": counts, "ended_at": _iso(time.time()) if done else None,
            "created_at": _iso(batch.created), "expires_at": _iso(batch.created + 86400),
            "cancel_initiated_at": None, "archived_at": None,
            "results_url": f"/v1/messages/batches/{batch.id}/results" if done else None}
