"""The response cache: a paid answer is asked for once.

:class:`CachedBackend` wraps any backend that defines ``cache_key_parts(request)`` (see
docs/design.md, "Caching contract"). The key is the sha256 of the canonical JSON of
those parts and :data:`CACHE_VERSION`; the value is the answer's data, usage and model,
never credentials. Only successful answers are stored, so a failure is asked again on
the next run. The store is a :class:`diskcache.Cache` (SQLite underneath), which is safe
for several processes sharing one directory at once.

A busy cache never ends a run. The threads of one process take turns to write (one lock
per cache directory), so ``llm.concurrency`` pass threads do not fight over SQLite's write
lock (reads do not need it); another process holding it longer than :data:`LOCK_TIMEOUT`
makes that read a miss (the provider is asked) and that write skipped (the answer is still
kept in the run folder's ``state/``), each said once in the log, never a traceback.

Where: ``cache.dir`` in the config, else ``$KGKIT_CACHE_DIR``, else the user cache
directory (``platformdirs.user_cache_dir("kgkit")``).
"""
from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
import threading
from pathlib import Path
from typing import Any, Iterable

from kgkit.backends.base import Backend, PassRequest, PassResult, Remembered
from kgkit.config.loader import expand_path
from kgkit.config.model import CacheConfig, Config
from kgkit.errors import ConfigError
from kgkit.ids import canonical_json

# Bump when the stored value's shape or the key's recipe changes, so old entries are
# never read as new ones.
#   1: first version — value {"data", "usage", "model"}; key over cache_key_parts.
#   2: usage gains "tokens_cached" (prompt-cache reads), which version 1 cannot read back.
#      (The built-in prompts were reordered at the same time, static part first, so their
#      keys changed anyway; a user's own template keeps its text but not its old entries.)
CACHE_VERSION = 2

LOCK_TIMEOUT = 60.0  # seconds one cache read or write waits for SQLite's lock (diskcache's own default)

log = logging.getLogger(__name__)
_turns: dict[str, threading.Lock] = {}  # cache directory -> the lock this process's threads write by, in turn
_turns_lock = threading.Lock()
#: cache directory -> (the diskcache.Cache this process's backends share, its SQLite file's identity)
_shared: dict[str, tuple[Any, tuple[int, int] | None]] = {}

# Key parts must never carry credentials; a part named like one is a bug in a backend.
_CREDENTIAL = re.compile(r"api_?key|authorization|password|secret|token$", re.IGNORECASE)


def cache_dir(config: Config | CacheConfig) -> Path:
    """The directory the cache lives in (see the module docstring for the order)."""
    settings = config.cache if isinstance(config, Config) else config
    if settings.dir is not None:
        return expand_path(settings.dir, "cache -> dir")
    env = os.environ.get("KGKIT_CACHE_DIR")
    if env:
        return expand_path(env, "KGKIT_CACHE_DIR")
    import platformdirs

    return Path(platformdirs.user_cache_dir("kgkit"))


def open_cache(config: Config | CacheConfig):
    """The :class:`diskcache.Cache` for ``config`` (a Config or its ``cache`` section).

    Raises ConfigError when the directory cannot be created or written.
    """
    import sqlite3

    import diskcache

    directory = cache_dir(config)
    try:
        directory.mkdir(parents=True, exist_ok=True)
        return diskcache.Cache(str(directory), timeout=LOCK_TIMEOUT)
    except (OSError, sqlite3.Error, diskcache.Timeout) as exc:
        raise ConfigError(
            f"cannot use the cache directory {directory}: {getattr(exc, 'strerror', None) or exc}",
            hint="set cache.dir (or KGKIT_CACHE_DIR) to a writable folder, or run with --no-cache",
        ) from None


def shared_cache(config: Config | CacheConfig):
    """This process's one :class:`diskcache.Cache` for ``config``'s directory, opened on first use.

    diskcache opens an SQLite connection for every thread that uses a Cache object, and
    an opening costs about 0.6 ms (it sets the cache's pragmas again): the core and upgrade
    backends each opening their own doubled what ``llm.concurrency`` pass threads spend on
    it. A directory removed or replaced since (``kgkit cache clear`` keeps it; a user's
    ``rm -r`` does not) is opened again, so no answer is written to a file nobody reads.
    """
    where = os.path.realpath(cache_dir(config))
    with _turns_lock:
        known = _shared.get(where)
        if known is not None:
            if _identity(where) == known[1]:
                return known[0]
            known[0].close()  # this thread's connection to the file that is gone
        cache = open_cache(config)
        _shared[where] = (cache, _identity(where))
        return cache


def _identity(directory: str) -> tuple[int, int] | None:
    """(device, inode) of the cache's SQLite file, None when it is gone."""
    from diskcache.core import DBNAME

    try:
        found = os.stat(os.path.join(directory, DBNAME))
    except OSError:
        return None
    return found.st_dev, found.st_ino


def cache_key(parts: dict[str, Any]) -> str:
    """sha256 of the canonical JSON of the key parts and the cache format version."""
    _refuse_credentials(parts, ())
    return hashlib.sha256(canonical_json({"v": CACHE_VERSION, "parts": parts}).encode("utf-8")).hexdigest()


def _refuse_credentials(parts: dict[str, Any], path: tuple) -> None:
    """Parameters are mappings (lists hold content, such as messages, and are not looked at)."""
    for key, item in parts.items():
        if _CREDENTIAL.search(str(key)):
            raise ValueError(f"cache key part {'.'.join(map(str, path + (key,)))} looks like a credential")
        if isinstance(item, dict):
            _refuse_credentials(item, path + (key,))


class CachedBackend:
    """Answers from the cache when it can, from ``backend`` (then stored) when it must.

    A hit is ``PassResult(cached=True, requests=0)`` with empty ``usage``: nothing was
    spent, so a run's accounting can add up every result's usage (and counts the hits).
    """

    def __init__(self, backend: Backend, cache):
        if not hasattr(backend, "cache_key_parts"):
            raise TypeError(f"{type(backend).__name__} defines no cache_key_parts(); it cannot be cached")
        self.backend = backend
        self.cache = cache
        self.name = backend.name
        self.llm_client = getattr(backend, "llm_client", None)  # named in the manifest
        self._keys = Remembered()  # requests checked (holds) and not yet run
        self._turn = _turn_for(cache)
        self._told: set[str] = set()  # what a busy cache was already said to cost (once each)

    def _get(self, key: str) -> Any:
        """The stored value, or None; None also when the store stayed locked (a miss)."""
        return self._store("read", lambda: self.cache.get(key))

    def _store(self, what: str, operation: Any, busy: Any = None) -> Any:
        """``operation()`` on the store (a write in this process's turn); ``busy`` when another
        process held SQLite's lock past LOCK_TIMEOUT (said once per kind of operation)."""
        import diskcache

        with self._turn if what == "write" else contextlib.nullcontext():
            try:
                return operation()
            except diskcache.Timeout:
                pass
        if what not in self._told:
            self._told.add(what)
            directory = getattr(self.cache, "directory", "?")
            cost = ("the provider is asked instead" if what == "read"
                    else "answers are kept in the run folder only")
            log.warning("the response cache at %s stayed locked for more than %.0f s (another process "
                        "writing to it?): a %s timed out; %s", directory, LOCK_TIMEOUT, what, cost)
        return busy

    def run(self, request: PassRequest) -> PassResult:
        key = self._key(request)
        self._keys.forget(request)
        stored = self._get(key)
        if stored is not None:
            getattr(self.backend, "forget", lambda request: None)(request)  # never sent: drop its messages
            return PassResult(data=stored["data"], cached=True, requests=0, retries=0, model=stored["model"])
        result = self.backend.run(request)
        self.remember(request, result, key)
        return result

    def _key(self, request: PassRequest) -> str:
        """The request's key, computed once however often it is asked for (checked, then run)."""
        return self._keys.get(request, lambda r: cache_key(self.backend.cache_key_parts(r)))

    def holds(self, request: PassRequest) -> bool:
        """Whether the cache has the answer to ``request`` (a batch run sends it nowhere then)."""
        key = self._key(request)
        return bool(self._store("read", lambda: key in self.cache, busy=False))

    def remember(self, request: PassRequest, result: PassResult, key: str | None = None) -> None:
        """Store a successful answer, however it was obtained (directly or from a provider batch)."""
        if result.ok and result.data is not None:
            usage = result.usage
            key = key or cache_key(self.backend.cache_key_parts(request))
            value = {
                "data": result.data,
                "usage": {"tokens_in": usage.tokens_in, "tokens_out": usage.tokens_out, "cost": usage.cost,
                          "tokens_cached": usage.tokens_cached},
                "model": result.model,
            }
            self._store("write", lambda: self.cache.set(key, value))

    def describe(self) -> dict[str, Any]:
        return self.backend.describe()

    def check_requests(self, requests: Iterable[PassRequest]) -> None:
        """The wrapped backend's check before any request is sent (a local model's context window),
        of the requests the cache cannot answer. They are found as the backend reads them: one
        that checks nothing (a remote provider) costs the cache no read a request."""
        check = getattr(self.backend, "check_requests", None)
        if check is not None:
            check(r for r in requests if not self.holds(r))

    def cache_key_parts(self, request: PassRequest) -> dict[str, Any]:
        return self.backend.cache_key_parts(request)


def _turn_for(cache: Any) -> threading.Lock:
    """The lock this process's threads write to ``cache``'s directory by (one per directory,
    however many cache objects are open on it: the core and upgrade backends each hold one)."""
    directory = getattr(cache, "directory", None)
    where = os.path.realpath(directory) if isinstance(directory, str) else f"object {id(cache)}"
    with _turns_lock:
        return _turns.setdefault(where, threading.Lock())


def cache_stats(config: Config | CacheConfig) -> dict[str, Any]:
    """``{"dir", "entries", "size"}`` (size in bytes on disk); an absent cache is empty."""
    directory = cache_dir(config)
    if not directory.is_dir():
        return {"dir": str(directory), "entries": 0, "size": 0}
    with open_cache(config) as cache:
        entries = len(cache)
        size = cache.volume()
    return {"dir": str(directory), "entries": entries, "size": size}


def clear_cache(config: Config | CacheConfig) -> int:
    """Remove every entry; returns how many there were."""
    if not cache_dir(config).is_dir():
        return 0
    with open_cache(config) as cache:
        return cache.clear()
