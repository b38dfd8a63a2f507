"""Hostile OpenAI-compatible servers on 127.0.0.1, written at the socket so they can send
what no well-behaved framework would: bodies of hundreds of megabytes, chunks without end,
gzip bombs, redirects to another origin. Each :class:`Hostile` serves one behaviour to
every connection and records the requests it read (their paths), so a test can check
what reached it."""
from __future__ import annotations

import json
import socket
import threading
import zlib
from typing import Callable

Behaviour = Callable[[socket.socket, str, threading.Event], None]


class Hostile:
    """A TCP server doing ``behaviour(conn, path, stop)`` after reading each request."""

    def __init__(self, behaviour: Behaviour):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.sock.settimeout(0.1)
        self.behaviour = behaviour
        self.paths: list[str] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            conn.settimeout(10)
            path = _read_request(conn)
            self.paths.append(path)
            self.behaviour(conn, path, self._stop)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


def _read_request(conn: socket.socket) -> str:
    """Read one request (head and Content-Length body); its path."""
    data = b""
    while b"\r\n\r\n" not in data:
        piece = conn.recv(65536)
        if not piece:
            raise ConnectionError("closed before a request")
        data += piece
    head, _, body = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    length = next((int(line.split(":", 1)[1]) for line in lines if line.lower().startswith("content-length:")), 0)
    while len(body) < length:
        piece = conn.recv(65536)
        if not piece:
            break
        body += piece
    return lines[0].split(" ")[1]


def completion(content: str = '{"entities": []}', **message) -> bytes:
    """A chat completion's JSON body."""
    return json.dumps({"id": "x", "object": "chat.completion", "model": "m",
                       "choices": [{"index": 0, "message": {"role": "assistant", "content": content, **message},
                                    "finish_reason": "stop"}],
                       "usage": {"prompt_tokens": 3, "completion_tokens": 2}}).encode()


def head(status: str = "200 OK", **headers: str) -> bytes:
    lines = [f"HTTP/1.1 {status}", "Content-Type: application/json", "Connection: close",
             *(f"{k.replace('_', '-')}: {v}" for k, v in headers.items())]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


def send_body(body: bytes, **headers: str) -> Behaviour:
    """Answer with ``body`` and a Content-Length."""
    def behaviour(conn, path, stop):
        conn.sendall(head(Content_Length=str(len(body)), **headers) + body)
    return behaviour


def endless(chunked: bool, total: int | None = None, announce: int | None = None) -> Behaviour:
    """A 200 whose body is spaces without end (or ``total`` bytes): chunked, or read until close;
    ``announce`` sends that Content-Length first (a server lying about the size is the same)."""
    block = b" " * 65536

    def behaviour(conn, path, stop):
        extra = {"Transfer_Encoding": "chunked"} if chunked else {}
        if announce is not None:
            extra = {"Content_Length": str(announce)}
        conn.sendall(head(**extra))
        sent = 0
        while not stop.is_set() and (total is None or sent < total):
            conn.sendall(b"%x\r\n%s\r\n" % (len(block), block) if chunked else block)
            sent += len(block)
    return behaviour


def gzip_bomb(decompressed: int) -> Behaviour:
    """A 200 whose gzip body inflates to ``decompressed`` bytes of spaces (about 1000 to 1)."""
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b" " * (1 << 20)
    wire = b"".join(squeeze.compress(block) for _ in range(decompressed >> 20)) + squeeze.flush()

    def behaviour(conn, path, stop):
        conn.sendall(head(Content_Encoding="gzip", Content_Length=str(len(wire))) + wire)
    behaviour.wire_bytes = len(wire)  # type: ignore[attr-defined]
    return behaviour


def redirect(status: int, location: str) -> Behaviour:
    def behaviour(conn, path, stop):
        conn.sendall(head(f"{status} Redirect", Location=location, Content_Length="0"))
    return behaviour
