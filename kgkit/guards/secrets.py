"""Keeping the API key out of everything kgkit writes or prints.

The key is read from the environment at call time and handed to litellm only. Two
things can still carry it back: a provider that echoes it (in an error, or inside a
normal answer that then flows into nodes, views, review.jsonl, state/ and the cache),
and a user who pastes the key where a variable *name* belongs (``api_key_env``). The
first is scrubbed at the backend, before an answer goes anywhere; the second is caught
by :func:`looks_like_key` so the value is never echoed in a message.
"""
from __future__ import annotations

import re
from typing import Any

MASK = "***"
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Vendor prefixes (OpenAI sk-/sk-proj-, Anthropic sk-ant-, Google AIza, GitHub gh?_, xAI
# xai-, Hugging Face hf_, Groq gsk_) and long random tokens. A variable name is upper
# case words: OPENAI_API_KEY, MY_KEY_2.
_PREFIX = re.compile(r"^(sk|sk-proj|sk-ant|pk|rk|gsk|xai|hf|gh[pousr]|AIza)[-_]", re.IGNORECASE)


def looks_like_key(value: str) -> bool:
    """True when ``value`` is better not printed: it is not a plain variable name, carries a
    key prefix, or is a long mixed-case/digit token such as a pasted secret."""
    if not _NAME.fullmatch(value) or _PREFIX.match(value):
        return True
    if len(value) < 20:
        return False
    kinds = sum(bool(re.search(p, value)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return kinds == 3 or (len(value) >= 32 and kinds >= 2 and "_" not in value)


def scrub(value: Any, key: str | None) -> Any:
    """``value`` (text, or JSON-like data) with every occurrence of ``key`` masked.

    Keys shorter than 4 characters are left alone: masking them would mangle ordinary
    text and they are no secret worth the name."""
    if not key or len(key) < 4:
        return value
    if isinstance(value, str):
        return value.replace(key, MASK)
    if isinstance(value, dict):
        return {scrub(k, key): scrub(v, key) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    return value
