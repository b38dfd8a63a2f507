"""Shared fixtures."""
from __future__ import annotations

import pytest

from stub_provider import StubProvider


@pytest.fixture
def stub_provider():
    """A scriptable OpenAI/Anthropic-compatible server on 127.0.0.1 (see stub_provider.py)."""
    server = StubProvider().start()
    yield server
    server.stop()
