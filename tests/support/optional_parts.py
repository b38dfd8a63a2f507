"""Tests that need an optional part (PostgreSQL, Ray) skip without it, unless told not to.

A fresh clone has neither, so the README's `pytest -q` skips those tests. CI installs both
and runs their suites with ``KGKIT_REQUIRE`` naming them (comma-separated: ``postgres``,
``ray``, ``tesseract``): there a missing part is a failure, so a suite that cannot start is never a green run.
"""
from __future__ import annotations

import importlib
import os
from types import ModuleType

import pytest


def unavailable(part: str, reason: str) -> None:
    """Skip the test for ``reason``; fail it when ``KGKIT_REQUIRE`` names ``part``."""
    if part in os.environ.get("KGKIT_REQUIRE", "").split(","):
        pytest.fail(f"{reason}; KGKIT_REQUIRE names {part!r}, so this is a failure, not a skip")
    pytest.skip(reason)


def require_module(name: str, part: str) -> ModuleType:
    """``pytest.importorskip(name)``, failing instead when ``KGKIT_REQUIRE`` names ``part``."""
    try:
        return importlib.import_module(name)
    except ImportError as exc:
        unavailable(part, f"could not import {name!r}: {exc}")
