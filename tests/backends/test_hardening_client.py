"""The direct client against servers that send what they like: a body of any size or
framing is read up to ``limits.max_response_bytes`` (decompressed) and refused beyond,
not retried; a redirect to another origin is refused before any document text goes
there; an answer of the wrong shape is named and asked again. A run against a server
sending 300 MB stays bounded in memory and exits with the named error (docs/security.md,
"The model server")."""
from __future__ import annotations

import json
import os
import subprocess
import sys
import tracemalloc

import aiohttp  # noqa: F401 - imported before memory is traced: its import is no part of an answer
import pytest

from support.hostile_http import Hostile, completion, endless, gzip_bomb, head, redirect, send_body
from kgkit.backends.llm import LLMBackend
from kgkit.config.model import LLMConfig
from kgkit.errors import ProviderError
from test_llm_backend import ANSWER, FAKE_KEY, KEY_ENV, entities_request

LIMIT = 1_000_000


@pytest.fixture
def key(monkeypatch):
    monkeypatch.setenv(KEY_ENV, FAKE_KEY)


@pytest.fixture
def hostile():
    made: list[Hostile] = []

    def make(behaviour) -> Hostile:
        made.append(Hostile(behaviour))
        return made[-1]

    yield make
    for server in made:
        server.close()


def backend(base: str, retries: int = 2, limit: int = LIMIT) -> LLMBackend:
    return LLMBackend(LLMConfig(model="openai/test-model", api_base=base, api_key_env=KEY_ENV, backoff=0.0,
                                timeout=60.0, retries=retries, client="direct"),
                      sleep=lambda s: None, max_response_bytes=limit)


BODIES = {
    "48 MB announced": lambda: endless(False, total=48 << 20, announce=48 << 20),
    "48 MB read until close": lambda: endless(False, total=48 << 20),
    "chunks without end": lambda: endless(True),
    "a gzip bomb": lambda: gzip_bomb(64 << 20),
}


@pytest.mark.parametrize("case", sorted(BODIES))
def test_a_body_over_the_limit_is_refused_unread_and_not_asked_again(key, hostile, case):
    honest = hostile(send_body(completion(json.dumps(ANSWER))))
    backend(honest.base).run(entities_request())  # imports and price table loaded: no part of the peak
    server = hostile(BODIES[case]())
    tracemalloc.start()
    try:
        with pytest.raises(ProviderError) as err:
            backend(server.base).run(entities_request())
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "too large to read" in err.value.message and f"limits.max_response_bytes={LIMIT}" in err.value.message
    assert "raise limits.max_response_bytes" in err.value.hint
    assert len(server.paths) == 1  # refused once, not asked again
    assert peak < 5 * LIMIT, f"{peak} bytes allocated at the peak"


def test_an_honest_gzip_answer_within_the_limit_is_read(key, hostile):
    import gzip

    body = gzip.compress(completion(json.dumps(ANSWER)))
    server = hostile(send_body(body, Content_Encoding="gzip"))
    assert backend(server.base).run(entities_request()).data == ANSWER


def test_an_unknown_content_encoding_is_named(key, hostile):
    server = hostile(send_body(b"\x00" * 50, Content_Encoding="zstd"))
    with pytest.raises(ProviderError) as err:
        backend(server.base, retries=0).run(entities_request())
    assert "encoded as 'zstd', which this client does not read" in err.value.message


@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_refused_and_nothing_goes_there(key, hostile, status):
    elsewhere = hostile(send_body(completion(json.dumps(ANSWER))))
    server = hostile(redirect(status, f"http://127.0.0.1:{elsewhere.port}/v1/chat/completions"))

    with pytest.raises(ProviderError) as err:
        backend(server.base).run(entities_request())

    assert elsewhere.paths == []  # no prompt, no document text
    assert f"HTTP {status}" in err.value.message and "another origin" in err.value.message
    assert len(server.paths) == 1 and FAKE_KEY not in err.value.message


def test_a_same_origin_307_is_followed_and_a_302_is_not(key, hostile):
    def moved(conn, path, stop):
        if path == "/v1/chat/completions":
            conn.sendall(head("307 Temporary Redirect", Location="/v2/chat/completions", Content_Length="0"))
        else:
            body = completion(json.dumps(ANSWER))
            conn.sendall(head(Content_Length=str(len(body))) + body)

    server = hostile(moved)
    assert backend(server.base).run(entities_request()).data == ANSWER
    assert server.paths == ["/v1/chat/completions", "/v2/chat/completions"]

    found = hostile(redirect(302, "/v2/chat/completions"))
    with pytest.raises(ProviderError) as err:
        backend(found.base, retries=0).run(entities_request())
    assert "would turn the request into a GET" in err.value.message


def test_a_redirect_loop_on_one_origin_ends(key, hostile):
    server = hostile(redirect(307, "/v1/chat/completions"))
    with pytest.raises(ProviderError) as err:
        backend(server.base, retries=0).run(entities_request())
    assert "more than 5 redirects" in err.value.message and len(server.paths) == 6


def _shaped(choice_message) -> bytes:
    return json.dumps({"choices": [{"message": choice_message, "finish_reason": "stop"}]}).encode()


SHAPES = {
    "a message that is text": (_shaped("hello"), "a 'message' that is text, not an object"),
    "a content that is a list": (_shaped({"content": [{"type": "text", "text": "{}"}]}),
                                 "a 'content' that is a list, not text"),
    "a content that is a number": (_shaped({"content": 42}), "a 'content' that is a number, not text"),
    "choices that are an object": (json.dumps({"choices": {"0": {}}}).encode(), "no 'choices'"),
    "an answer nested too deep": (b"[" * 200_000 + b"]" * 200_000, "HTTP 500"),
}


@pytest.mark.parametrize("case", sorted(SHAPES))
def test_an_answer_of_the_wrong_shape_is_named_and_asked_again(key, hostile, case):
    body, named = SHAPES[case]
    server = hostile(send_body(body))
    with pytest.raises(ProviderError) as err:
        backend(server.base, retries=1).run(entities_request())
    assert named in err.value.message and "Traceback" not in err.value.message
    assert len(server.paths) == 2  # asked again once (llm.retries=1), then named


@pytest.mark.parametrize("usage", [{"prompt_tokens": "many", "completion_tokens": None},
                                   {"prompt_tokens": 1e300, "completion_tokens": -4},
                                   {"prompt_tokens": [1], "completion_tokens": {"n": 1},
                                    "prompt_tokens_details": {"cached_tokens": 1e400}},
                                   "usage"])
def test_garbage_usage_numbers_count_as_zero(key, hostile, usage):
    body = json.loads(completion(json.dumps(ANSWER)))
    body["usage"] = usage
    raw = json.dumps(body).replace("1e+400", "Infinity").encode()
    server = hostile(send_body(raw))
    result = backend(server.base).run(entities_request())
    assert result.data == ANSWER
    assert (result.usage.tokens_in, result.usage.tokens_out, result.usage.tokens_cached) == (0, 0, 0)


# The child's own peak, VmHWM of its memory map, written at exit: rusage's maxrss would count the
# parent's size too (Linux carries the forking process's high-water mark across exec).
_PEAK = """
import atexit, os

def _peak():
    with open("/proc/self/status") as status:
        kb = next(line.split()[1] for line in status if line.startswith("VmHWM:"))
    with open(os.environ["KGKIT_TEST_PEAK"], "w") as out:
        out.write(kb)

atexit.register(_peak)
from kgkit.cli import run
run()
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/status"), reason="reads the peak from Linux's /proc")
def test_a_run_against_a_server_sending_300_mb_stays_bounded_and_names_it(hostile, tmp_path):
    """The whole CLI in a child process against a server sending 300 MB."""
    server = hostile(endless(False, total=300 << 20))
    (tmp_path / "doc.txt").write_text("Ann Lee works for Acme Corp in Boston.\n")
    (tmp_path / "kgkit.yaml").write_text(
        f"llm: {{model: openai/stub-model, api_base: '{server.base}', api_key_env: {KEY_ENV}, retries: 2,"
        " backoff: 0, timeout: 30}\ncache: {enabled: false}\nskills: {enabled: false}\n")
    env = {**os.environ, KEY_ENV: FAKE_KEY, "KGKIT_CONFIG_DIR": str(tmp_path / "home"),
           "KGKIT_CACHE_DIR": str(tmp_path / "cache"), "KGKIT_TEST_PEAK": str(tmp_path / "peak")}
    done = subprocess.run([sys.executable, "-c", _PEAK, "extract", "doc.txt", "--view", "binary",
                           "--config", "kgkit.yaml", "--out", "out"], cwd=tmp_path, env=env,
                          stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, timeout=120)
    peak_mb = int((tmp_path / "peak").read_text()) / 1024
    assert done.returncode == 3, done.stderr
    assert "too large to read" in done.stderr and "limits.max_response_bytes=4000000" in done.stderr
    assert "Traceback" not in done.stderr
    assert peak_mb < 300, f"peak {peak_mb:.0f} MB"
