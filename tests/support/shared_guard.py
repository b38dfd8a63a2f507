"""A pytest plugin that fails collection when a test module reads the shared corpora.

The README's test command runs on a clone with nothing beside it, so no test module may read
``../shared`` (or ``KGKIT_SHARED_DATA``) while it is imported or collected: a glob in a
``parametrize`` or a constant built from a directory listing breaks collection there, and
passes unnoticed wherever the data happens to sit beside the checkout. This plugin watches
file opens and directory listings (Python's audit events) during collection and turns one
under the shared data into an error that names the rule, wherever the suite runs.
Tests that need the data read it when they run (tests/support/shared_data.py).
"""
from __future__ import annotations

import os
import sys

import pytest

from support.shared_data import DATA, REPO

_WATCHED = ("open", "os.scandir", "os.listdir")
_collecting = False


def _prefixes() -> tuple[str, ...]:
    roots = {DATA, REPO.parent / "shared"}
    paths = {os.path.abspath(p) for p in roots} | {os.path.realpath(p) for p in roots}
    return tuple(p.rstrip(os.sep) for p in paths)


_PREFIXES = _prefixes()


def _under_shared(path: object) -> bool:
    if not isinstance(path, (str, bytes, os.PathLike)):
        return False  # a file descriptor
    text = os.path.abspath(os.fsdecode(path))
    return any(text == p or text.startswith(p + os.sep) for p in _PREFIXES)


def _audit(event: str, args: tuple) -> None:
    if _collecting and event in _WATCHED and args and _under_shared(args[0]):
        raise RuntimeError(
            f"a test module read {os.fsdecode(args[0])} while being collected: tests must find the "
            "shared corpora when they run (mark them `corpus`), never at import or collection, "
            "or the README's test command fails on a clone with nothing beside it")


sys.addaudithook(_audit)


@pytest.hookimpl(hookwrapper=True)
def pytest_collection(session):
    """Watch reads while the suite is collected, and only then."""
    global _collecting
    _collecting = True
    try:
        yield
    finally:
        _collecting = False
