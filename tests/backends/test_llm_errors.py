"""Each way a provider request fails, named as what it is, through the real CLI and real
sockets on 127.0.0.1: the message, how many requests went out (retried only where a retry
can help) and the exit code (2 when the fix is in the configuration, 3 when it is the
provider's). litellm folds most of these into "HTTP 500: Connection error"; kgkit reads
the cause from the exception chain (kgkit/backends/failures.py). Each runs through both
clients, the direct one and litellm, and must read the same."""
from __future__ import annotations

import socket
import struct
import threading
from pathlib import Path

import pytest

from kgkit.cli import main
from support.stub_provider import Reply

KEY_ENV = "KGKIT_ERRORS_TEST_KEY"
FAKE_KEY = "sk-errors-test-0a1b2c3d4e5f6a7b8c9d"
TEXT = "Ann Lee works for Acme Corp in Boston.\n"


@pytest.fixture(autouse=True, params=["direct", "litellm"])
def client(request, monkeypatch):
    """Every case through both clients (``llm.client``, here from KGKIT_LLM_CLIENT): the
    direct one for OpenAI-compatible servers, and litellm."""
    monkeypatch.setenv("KGKIT_LLM_CLIENT", request.param)
    return request.param


@pytest.fixture(autouse=True)
def _isolated(cli_home, monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    (cli_home / "doc.txt").write_text(TEXT)


def config(tmp_path: Path, api_base: str, *, retries: int = 2, timeout: float = 60.0, key: bool = True,
           model: str = "openai/stub-model") -> str:
    lines = ["llm:", f"  model: {model}", f"  api_base: {api_base}", f"  retries: {retries}",
             f"  timeout: {timeout}", "  backoff: 0"]
    if key:
        lines.append(f"  api_key_env: {KEY_ENV}")
    (tmp_path / "kgkit.yaml").write_text("\n".join(lines) + "\ncache: {enabled: false}\nskills: {enabled: false}\n")
    return str(tmp_path / "kgkit.yaml")


def retries_logged(caplog) -> int:
    """How many retries the backend logged (one warning each)."""
    return sum("; retry " in r.getMessage() for r in caplog.records)


def run(capsys, cfg: str) -> tuple[int, str]:
    with pytest.raises(SystemExit) as done:
        main(["extract", "doc.txt", "--view", "binary", "--config", cfg])
    out, err = capsys.readouterr()
    assert "Traceback" not in out + err
    assert FAKE_KEY not in out + err
    return done.value.code, err


class Listener:
    """A TCP server on 127.0.0.1 that does one thing to every connection, and counts them."""

    def __init__(self, handle):
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.1)
        self.connections = 0
        self.handle = handle
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return self.sock.getsockname()[1]

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        try:
            self.handle(conn, self._stop)
        except OSError:
            pass
        finally:
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(timeout=5)
        self.sock.close()


@pytest.fixture
def listener():
    made: list[Listener] = []

    def make(handle) -> Listener:
        made.append(Listener(handle))
        return made[-1]

    yield make
    for server in made:
        server.close()


def _reset(conn: socket.socket, stop) -> None:
    conn.recv(65536)
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # RST, not FIN


def _plain_http(conn: socket.socket, stop) -> None:
    conn.recv(65536)  # a TLS ClientHello, answered in plain HTTP
    conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")


def _trickle(conn: socket.socket, stop) -> None:
    conn.recv(65536)
    for byte in b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 400\r\n\r\n" + b" " * 400:
        if stop.wait(0.2):
            return
        conn.sendall(bytes([byte]))


def test_connection_refused_is_named_not_retried_exit_3(capsys, caplog, tmp_path):
    closed = socket.socket()
    closed.bind(("127.0.0.1", 0))
    port = closed.getsockname()[1]
    closed.close()  # nothing listens on this port now

    code, err = run(capsys, config(tmp_path, f"http://127.0.0.1:{port}/v1", retries=3))

    assert code == 3
    assert f"Error: openai/stub-model: connection refused by http://127.0.0.1:{port}: no server is listening there" in err
    assert "hint: start the model server, or correct the host and port in llm.api_base" in err
    assert retries_logged(caplog) == 0


def test_connection_reset_is_named_and_retried_then_exit_3(capsys, caplog, tmp_path, listener):
    server = listener(_reset)

    code, err = run(capsys, config(tmp_path, f"http://127.0.0.1:{server.port}/v1", retries=2))

    assert code == 3
    assert f"the connection to http://127.0.0.1:{server.port} was closed before an answer arrived (3 attempts)" in err
    assert server.connections == 3  # a reset may clear: asked again, llm.retries times
    assert retries_logged(caplog) == 2
    assert "HTTP 408" not in err and "HTTP 500" not in err


def test_dns_failure_is_configuration_not_retried_and_fails_fast(capsys, caplog, tmp_path):
    code, err = run(capsys, config(tmp_path, "http://kgkit-nohost.invalid/v1", retries=3))

    assert code == 2
    assert "Error: openai/stub-model: cannot resolve the host name of http://kgkit-nohost.invalid (DNS lookup failed)" in err
    assert "hint: check the host name in llm.api_base" in err
    assert retries_logged(caplog) == 0  # .invalid never resolves (RFC 6761): named at the first attempt


def test_tls_against_a_plain_http_server_is_configuration_with_the_fix(capsys, tmp_path, listener):
    server = listener(_plain_http)

    code, err = run(capsys, config(tmp_path, f"https://127.0.0.1:{server.port}/v1", retries=3))

    assert code == 2
    assert f"Error: openai/stub-model: TLS handshake with https://127.0.0.1:{server.port} failed" in err
    assert "hint: the server does not speak TLS there: use http:// in llm.api_base" in err
    assert server.connections == 1


def test_timeout_is_named_retried_and_exit_3(capsys, tmp_path, stub_provider):
    stub_provider.responder = lambda request: Reply(delay=3600, content={"entities": []})  # until the stub stops

    code, err = run(capsys, config(tmp_path, stub_provider.openai_base, retries=1, timeout=0.5))

    assert code == 3
    assert "no complete answer from http://127.0.0.1" in err and "within llm.timeout=0.5s (2 attempts)" in err
    assert "hint: raise llm.timeout" in err
    assert len(stub_provider.requests) == 2


def test_a_trickling_server_cannot_hold_a_request_past_the_timeout(capsys, tmp_path, listener):
    """One byte every 0.2 s restarts httpx's read timeout forever; llm.timeout is a deadline.
    The whole answer would take ~80 s and then fail as a body that is not JSON: a timeout
    named after one attempt is the deadline cutting it."""
    server = listener(_trickle)

    code, err = run(capsys, config(tmp_path, f"http://127.0.0.1:{server.port}/v1", retries=0, timeout=1.0))

    assert code == 3 and "within llm.timeout=1s (1 attempt)" in err
    assert server.connections == 1


def test_missing_key_is_configuration_not_sent(capsys, tmp_path, stub_provider):
    """No llm.api_key_env and no OPENAI_API_KEY: litellm says "Missing credentials" (HTTP 500)."""
    code, err = run(capsys, config(tmp_path, stub_provider.openai_base, key=False))

    assert code == 2
    assert "Error: openai/stub-model: no API key: OPENAI_API_KEY is not set" in err
    assert "hint: export OPENAI_API_KEY=<your API key>, or name the variable holding your key in llm.api_key_env" in err
    assert stub_provider.requests == []


def test_missing_key_variable_named_in_config_is_configuration(capsys, tmp_path, stub_provider, monkeypatch):
    monkeypatch.delenv(KEY_ENV)

    code, err = run(capsys, config(tmp_path, stub_provider.openai_base))

    assert code == 2
    assert f"the environment variable {KEY_ENV} (llm.api_key_env) is not set" in err
    assert stub_provider.requests == []


@pytest.mark.parametrize("status", [401, 403])
def test_rejected_key_is_configuration_asked_once(capsys, tmp_path, stub_provider, status):
    stub_provider.responder = lambda request: Reply.error(status, f"bad key {FAKE_KEY}")

    code, err = run(capsys, config(tmp_path, stub_provider.openai_base, retries=3))

    assert code == 2
    assert f"Error: openai/stub-model: the provider rejected the API key (HTTP {status}: bad key ***)" in err
    assert f"hint: set {KEY_ENV} (named by llm.api_key_env) to a valid key" in err
    assert len(stub_provider.requests) == 1


def test_unknown_model_is_configuration_asked_once(capsys, tmp_path, stub_provider):
    stub_provider.responder = lambda request: Reply.error(404, "The model `stub-model` does not exist")

    code, err = run(capsys, config(tmp_path, stub_provider.openai_base, retries=3))

    assert code == 2
    assert "Error: openai/stub-model: the provider does not know this model (HTTP 404" in err
    assert "hint: check llm.model" in err
    assert len(stub_provider.requests) == 1


def test_a_key_typed_into_api_key_env_is_never_printed(capsys, tmp_path, stub_provider):
    pasted = "sk_live_9f8e7d6c5b4a39281706"  # a valid variable name, but a key
    cfg = config(tmp_path, stub_provider.openai_base, key=False)
    Path(cfg).write_text(Path(cfg).read_text().replace("llm:\n", f"llm:\n  api_key_env: {pasted}\n"))

    code, err = run(capsys, cfg)

    assert code == 2 and pasted not in err
    assert "llm.api_key_env must name an environment variable" in err
    assert stub_provider.requests == []


def test_server_errors_are_still_retried_then_exit_3(capsys, tmp_path, stub_provider):
    stub_provider.responder = lambda request: Reply.error(503, "overloaded")

    code, err = run(capsys, config(tmp_path, stub_provider.openai_base, retries=2))

    assert code == 3 and "provider failed after 3 attempts: HTTP 503: overloaded" in err
    assert len(stub_provider.requests) == 3


def test_a_key_that_is_no_variable_name_is_not_echoed_by_validation_or_config_show(capsys, tmp_path):
    pasted = "sk-proj-Zx81LmQ02nVb7Rt5"  # not a valid variable name: the schema refuses it
    (tmp_path / "bad.yaml").write_text(f"llm:\n  model: openai/x\n  api_key_env: {pasted}\n")
    (tmp_path / "odd.yaml").write_text("llm:\n  model: openai/x\n  api_key_env: sk_live_9f8e7d6c5b4a39281706\n")

    code, err = run(capsys, str(tmp_path / "bad.yaml"))
    with pytest.raises(SystemExit):
        main(["config", "show", "--config", str(tmp_path / "odd.yaml")])
    shown = capsys.readouterr().out

    assert code == 2 and pasted not in err
    assert "bad.yaml:3:16: llm -> api_key_env: the value (not shown: it looks like a key) is not a valid name" in err
    assert "sk_live_" not in shown and "api_key_env: '********'" in shown


@pytest.mark.parametrize("value, secret", [
    ("OPENAI_API_KEY", False), ("MY_KEY_2", False), ("KGKIT_TEST_PROVIDER_KEY", False),
    ("sk-abc123", True), ("sk_live_9f8e7d6c5b4a39281706", True), ("AIzaSyA1b2C3d4E5f6G7h8", True),
    ("hf_AbCdEf", True), ("Xk29vLq81ZpRt0sW3yNb", True), ("a" * 40 + "1", True),
])
def test_what_looks_like_a_key(value, secret):
    from kgkit.guards.secrets import looks_like_key

    assert looks_like_key(value) is secret


def test_a_tls_connection_closed_mid_handshake_is_a_drop_not_a_configuration_error():
    """An https server (or proxy) that hangs up during the handshake raises SSLEOFError: a
    retry may help, unlike a server that does not speak TLS at all."""
    import ssl

    from kgkit.backends.failures import classify

    try:
        try:
            raise ssl.SSLEOFError(8, "EOF occurred in violation of protocol")
        except ssl.SSLError as cause:
            raise ConnectionError("Connection error.") from cause
    except ConnectionError as exc:
        failure = classify(exc, status=500, detail="Connection error.", endpoint="https://h", timeout=1,
                           key_variable="K", key_env_set=True)

    assert (failure.kind, failure.retryable, failure.configuration) == ("reset", True, False)
