"""The response cache: hits, misses, failures, keys without secrets, two processes, CLI."""
from __future__ import annotations

import hashlib
import subprocess
import sys
import textwrap

import pytest

from kgkit.backends.base import ENTITIES, PassRequest, PassResult, Usage
from kgkit.backends.cache import CACHE_VERSION, CachedBackend, cache_dir, cache_key, cache_stats, clear_cache, open_cache
from kgkit.config.loader import load_config
from kgkit.config.model import CacheConfig, Config, LLMConfig
from kgkit.documents.types import Chunk
from kgkit.errors import ConfigError
from kgkit.ids import canonical_json

from support.cli_support import kgkit

SCHEMA = {"type": "object", "required": ["entities"]}


@pytest.fixture(autouse=True)
def isolated(tmp_path, monkeypatch):
    monkeypatch.setenv("KGKIT_CACHE_DIR", str(tmp_path / "env-cache"))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    for name in ("KGKIT_MODEL", "KGKIT_API_BASE", "KGKIT_DOMAIN"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


class Scripted:
    """A paid backend stand-in: answers from a list, counts what it was asked."""

    name = "scripted/model"

    def __init__(self, *answers: PassResult):
        self.answers = list(answers)
        self.asked: list[PassRequest] = []

    def run(self, request: PassRequest) -> PassResult:
        self.asked.append(request)
        return self.answers.pop(0)

    def describe(self):
        return {"model": self.name}

    def cache_key_parts(self, request: PassRequest):
        return {"model": self.name, "text": request.chunk.text, "sample": request.sample,
                "temperature": request.temperature, "schema": request.schema}


def request(text: str = "Acme hired Jane.", **kw) -> PassRequest:
    chunk = Chunk(id="c_1", doc_id="d_1", index=0, text=text, start=0, end=len(text))
    return PassRequest(kind=ENTITIES, stage="entities", chunk=chunk, schema=SCHEMA, context={}, prompt="entities.j2", **kw)


def answer(names=("Acme",), **kw) -> PassResult:
    data = {"entities": [{"name": n, "type": "Org"} for n in names]}
    return PassResult(data=data, usage=Usage(30, 5, 0.0001), requests=1, model="scripted/model", **kw)


def test_second_identical_pass_is_a_hit_with_no_request(tmp_path):
    backend = Scripted(answer(("Acme", "Jane")))
    cached = CachedBackend(backend, open_cache(CacheConfig(dir=tmp_path / "c")))
    first = cached.run(request())
    again = cached.run(request())
    assert (first.cached, first.requests) == (False, 1)
    assert (again.cached, again.requests, again.retries) == (True, 0, 0)
    assert again.data == first.data and again.ok
    assert (again.usage.tokens_in, again.usage.tokens_out, again.usage.cost) == (0, 0, None)  # nothing spent
    assert again.model == "scripted/model"
    assert len(backend.asked) == 1
    # another process (a fresh cache object on the same directory) sees it too
    later = CachedBackend(Scripted(), open_cache(CacheConfig(dir=tmp_path / "c")))
    assert later.run(request()).cached


@pytest.mark.parametrize("change", [dict(sample=1), dict(temperature=0.7), dict(text="Other text.")])
def test_what_changes_the_answer_changes_the_key(tmp_path, change):
    backend = Scripted(answer(), answer(("Beta",)))
    cached = CachedBackend(backend, open_cache(CacheConfig(dir=tmp_path / "c")))
    cached.run(request())
    text = change.pop("text", "Acme hired Jane.")
    result = cached.run(request(text, **change))
    assert not result.cached and result.data["entities"][0]["name"] == "Beta"
    assert len(backend.asked) == 2


def test_failures_are_not_cached(tmp_path):
    failed = PassResult(data=None, ok=False, error="invalid JSON after re-ask", raw="oops", requests=2)
    backend = Scripted(failed, answer())
    cached = CachedBackend(backend, open_cache(CacheConfig(dir=tmp_path / "c")))
    assert cached.run(request()).ok is False
    retried = cached.run(request())
    assert retried.ok and not retried.cached
    assert len(backend.asked) == 2
    assert cached.run(request()).cached


def test_key_recipe_is_versioned_and_refuses_credentials():
    parts = {"model": "m", "messages": [{"role": "user", "content": "my token is in the text, fine"}]}
    assert cache_key(parts) == hashlib.sha256(
        canonical_json({"v": CACHE_VERSION, "parts": parts}).encode()).hexdigest()
    for bad in ({"model": "m", "api_key": "sk-1"}, {"params": {"Authorization": "Bearer x"}}):
        with pytest.raises(ValueError, match="looks like a credential"):
            cache_key(bad)


def test_a_backend_without_cache_key_parts_cannot_be_wrapped(tmp_path):
    class Free:
        name = "offline"

    with pytest.raises(TypeError, match="defines no cache_key_parts"):
        CachedBackend(Free(), open_cache(CacheConfig(dir=tmp_path)))


def test_cache_directory_order(tmp_path, monkeypatch):
    assert cache_dir(CacheConfig(dir=tmp_path / "conf")) == tmp_path / "conf"
    assert cache_dir(Config()) == tmp_path / "env-cache"
    monkeypatch.delenv("KGKIT_CACHE_DIR")
    assert cache_dir(Config()) == tmp_path / "xdg" / "kgkit"  # platformdirs' user cache dir


def test_an_unusable_cache_directory_is_a_config_error(tmp_path):
    (tmp_path / "a-file").write_text("not a folder")
    with pytest.raises(ConfigError) as err:
        open_cache(CacheConfig(dir=tmp_path / "a-file" / "cache"))
    assert err.value.message.startswith(f"cannot use the cache directory {tmp_path / 'a-file' / 'cache'}: ")
    assert err.value.hint == "set cache.dir (or KGKIT_CACHE_DIR) to a writable folder, or run with --no-cache"


def test_disabled_cache_means_no_wrapper():
    from kgkit.backends.factory import create_backend

    on = create_backend(Config(llm=LLMConfig(model="openai/test-model")))
    off = create_backend(load_config(env={}, overrides={"llm.model": "openai/test-model", "cache.enabled": False}))
    assert isinstance(on, CachedBackend) and not isinstance(off, CachedBackend)


class Counted:
    """A cache store that counts its reads (``in`` and get), on a real diskcache underneath."""

    def __init__(self, cache):
        self.cache, self.directory, self.reads = cache, cache.directory, 0

    def __contains__(self, key):
        self.reads += 1
        return key in self.cache

    def get(self, key):
        self.reads += 1
        return self.cache.get(key)

    def set(self, key, value):
        return self.cache.set(key, value)


class Checking(Scripted):
    """A backend with a check before sending (as a local model's context window): it reads
    every request it is given, or none when ``reads`` is off (a remote provider's)."""

    def __init__(self, *answers: PassResult, reads: bool = True):
        super().__init__(*answers)
        self.reads = reads
        self.checked: list[str] = []

    def check_requests(self, requests):
        if self.reads:
            self.checked += [r.chunk.text for r in requests]


def test_the_check_before_sending_sees_only_what_the_cache_cannot_answer(tmp_path):
    store = Counted(open_cache(CacheConfig(dir=tmp_path / "c")))
    cached = CachedBackend(Checking(answer()), store)
    cached.run(request("Asked before."))
    cached.check_requests([request("Asked before."), request("New text.")])
    assert cached.backend.checked == ["New text."]


def test_a_backend_that_checks_nothing_costs_the_cache_no_read(tmp_path):
    store = Counted(open_cache(CacheConfig(dir=tmp_path / "c")))
    cached = CachedBackend(Checking(answer(), reads=False), store)
    cached.check_requests([request("One."), request("Two.")])
    assert store.reads == 0
    cached.run(request("One."))  # the pass itself still asks the cache first
    assert store.reads == 1


def test_a_process_opens_one_cache_a_directory_and_again_once_it_is_removed(tmp_path):
    import shutil

    from kgkit.backends.factory import create_backend

    config = Config(llm=LLMConfig(model="openai/test-model"), cache=CacheConfig(dir=tmp_path / "c"))
    core, upgrades = create_backend(config, "core"), create_backend(config, "upgrades")
    assert core.cache is upgrades.cache  # one SQLite connection a pass thread, not one a stage
    shutil.rmtree(tmp_path / "c")
    again = create_backend(config, "core")
    assert again.cache is not core.cache
    again.cache.set("k", {"data": {}, "usage": {}, "model": "m"})
    with open_cache(CacheConfig(dir=tmp_path / "c")) as reopened:  # written where a later run reads
        assert "k" in reopened


WRITER = textwrap.dedent("""
    import sys
    from kgkit.backends.base import PassResult
    from kgkit.backends.cache import open_cache
    from kgkit.config.model import CacheConfig
    directory, who, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
    cache = open_cache(CacheConfig(dir=directory))
    for i in range(n):
        cache.set(f"{who}-{i}", {"data": {"i": i}, "usage": {"tokens_in": 1, "tokens_out": 1, "cost": None}, "model": who})
        cache.set(f"shared-{i}", {"data": {"i": i}, "usage": {"tokens_in": 1, "tokens_out": 1, "cost": None}, "model": who})
    print("done")
""")


def test_two_processes_share_one_cache_safely(tmp_path):
    directory = tmp_path / "shared-cache"
    procs = [subprocess.Popen([sys.executable, "-c", WRITER, str(directory), who, "300"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for who in ("a", "b")]
    outs = [p.communicate(timeout=120) for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs
    with open_cache(CacheConfig(dir=directory)) as cache:
        assert len(cache) == 900
        assert all(cache.get(f"{who}-{i}")["model"] == who for who in "ab" for i in range(300))
        assert all(cache.get(f"shared-{i}")["data"] == {"i": i} for i in range(300))


def test_real_backend_leaves_no_key_in_the_cache_files(stub_provider, tmp_path, monkeypatch):
    from kgkit.backends.factory import create_backend

    secret = "sk-cache-test-0a9b8c7d6e5f"
    monkeypatch.setenv("KGKIT_CACHE_TEST_KEY", secret)
    stub_provider.script({"entities": [{"name": "Acme", "type": "Org"}]})
    config = Config(llm=LLMConfig(model="openai/test-model", api_base=stub_provider.openai_base,
                                  api_key_env="KGKIT_CACHE_TEST_KEY", timeout=60.0, retries=0),
                    cache=CacheConfig(dir=tmp_path / "c"))
    from kgkit.formats.model import Domain, EntityType

    domain = Domain(name="d", entity_types=(EntityType("Org"),))
    req = PassRequest(kind=ENTITIES, stage="entities", chunk=request().chunk, context={"domain": domain, "skills": []},
                      schema={"type": "object", "required": ["entities"]}, prompt="entities.j2")
    assert create_backend(config).run(req).ok
    assert create_backend(config).run(req).cached
    assert len(stub_provider.requests) == 1
    assert stub_provider.requests[0].headers["authorization"] == f"Bearer {secret}"
    files = [p for p in (tmp_path / "c").rglob("*") if p.is_file()]
    assert files and not any(secret.encode() in p.read_bytes() for p in files)


# ------------------------------------------------------------------ CLI


def test_cache_stats_and_clear_from_the_cli(tmp_path):
    cached = CachedBackend(Scripted(answer(), answer()), open_cache(Config()))
    cached.run(request())
    cached.run(request("Second question."))
    stats = cache_stats(Config())
    assert (stats["entries"], stats["dir"]) == (2, str(tmp_path / "env-cache"))
    assert stats["size"] > 0

    result = kgkit("cache", "stats")
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[:2] == [f"dir: {tmp_path / 'env-cache'}", "entries: 2"]
    assert lines[2].startswith("size: ") and lines[2].endswith(("bytes", "KiB", "MiB"))

    result = kgkit("cache", "clear")
    assert (result.exit_code, result.stdout) == (0, f"Removed 2 entries from {tmp_path / 'env-cache'}\n")
    assert cache_stats(Config())["entries"] == 0
    assert clear_cache(Config()) == 0


def test_cache_cli_follows_the_config_file(tmp_path, monkeypatch):
    monkeypatch.delenv("KGKIT_CACHE_DIR")  # the environment would win over the file
    (tmp_path / "proj").mkdir()
    (tmp_path / "proj" / "kgkit.yaml").write_text("cache: {dir: .kgcache}\n")
    result = kgkit("cache", "stats", "--config", str(tmp_path / "proj" / "kgkit.yaml"))
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[:2] == [f"dir: {tmp_path / 'proj' / '.kgcache'}", "entries: 0"]
    assert not (tmp_path / "proj" / ".kgcache").exists()  # looking does not create it


def test_cache_cli_config_error_exit_code(tmp_path):
    (tmp_path / "kgkit.yaml").write_text("cache: {dri: x}\n")
    result = kgkit("cache", "stats")
    assert result.exit_code == 2
    assert "cache -> dri: unknown key 'dri' (did you mean 'dir'?)" in result.stderr


def test_a_request_checked_then_run_is_keyed_once_and_the_same_key_is_stored(tmp_path):
    """The engine checks a stage against the cache in the document's thread, then runs each
    pass in a worker: the key (its prompt rendered) is made once, and it is the one stored."""
    class Counting(Scripted):
        keyed = 0

        def cache_key_parts(self, request):
            Counting.keyed += 1
            return super().cache_key_parts(request)

    backend = Counting(answer())
    cached = CachedBackend(backend, open_cache(CacheConfig(dir=tmp_path / "c")))
    one = request()
    assert not cached.holds(one)
    assert not cached.run(one).cached
    assert Counting.keyed == 1
    assert cached.holds(request()) and Counting.keyed == 2  # an equal request, another object: keyed anew
    assert cached.run(request()).cached


class Locked:
    """A cache whose store another process holds past the lock timeout: every operation times out."""

    directory = "/nowhere/locked-cache"

    def get(self, *args):
        import diskcache

        raise diskcache.Timeout

    set = __contains__ = get


def test_a_cache_locked_past_its_timeout_is_a_miss_and_a_skipped_write_never_a_failure(caplog):
    backend = Scripted(answer(("Acme",)), answer(("Acme",)))
    cached = CachedBackend(backend, Locked())
    with caplog.at_level("WARNING", logger="kgkit.backends.cache"):
        first = cached.run(request())
        assert not cached.holds(request())
        again = cached.run(request())
    assert first.ok and again.ok and not again.cached  # asked the provider, twice: nothing could be stored
    assert len(backend.asked) == 2
    warned = [r.getMessage() for r in caplog.records]
    assert len(warned) == 2  # once for reads, once for writes, however many timed out
    assert all("/nowhere/locked-cache" in w and "more than 60 s" in w for w in warned)
    assert any("a read timed out; the provider is asked instead" in w for w in warned)
    assert any("a write timed out; answers are kept in the run folder only" in w for w in warned)


def test_every_cache_object_on_one_directory_writes_in_turn_by_one_lock(tmp_path):
    from kgkit.backends.cache import LOCK_TIMEOUT

    one = open_cache(CacheConfig(dir=tmp_path / "c"))
    two = open_cache(CacheConfig(dir=tmp_path / "c"))
    other = open_cache(CacheConfig(dir=tmp_path / "d"))
    assert one.timeout == LOCK_TIMEOUT
    turns = [CachedBackend(Scripted(), cache)._turn for cache in (one, two, other)]
    assert turns[0] is turns[1] and turns[0] is not turns[2]
