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
    if isinstance(value, (dict, list)) and _surely_absent(value, key):
        return value  # every answer passes here: most hold no key, and one look finds that
    if isinstance(value, dict):
        return {scrub(k, key): scrub(v, key) for k, v in value.items()}
    if isinstance(value, list):
        return [scrub(v, key) for v in value]
    return value


def _surely_absent(value: dict | list, key: str) -> bool:
    """Whether no text in ``value`` (keys and values) holds ``key``, by one search of its
    JSON (orjson, in C) instead of a walk over every string. JSON writes printable ASCII as
    it is but for ``"`` and ``\\``, so for a key of such characters an occurrence in any text
    is in the JSON too. False when unsure (another kind of key, data JSON cannot hold):
    the walk decides then."""
    if not (key.isascii() and key.isprintable()) or '"' in key or "\\" in key:
        return False
    import orjson

    try:
        return key.encode() not in orjson.dumps(value)
    except (TypeError, orjson.JSONEncodeError):
        return False


# scheme://user:PASSWORD@host: the password runs to the last "@" before the path (a raw "@" in it is a user's typo
# that must not leak it); a query's password=, sslpassword= too
_URL_PASSWORD = re.compile(r"^([a-z][a-z0-9+.-]*://[^/?#@:]*):([^/?#]*)@", re.IGNORECASE)
_QUERY_PASSWORD = re.compile(r"([?&](?:ssl)?pass(?:word|wd)=)([^&#]*)", re.IGNORECASE)


def url_secrets(url: str) -> list[str]:
    """The passwords written into ``url`` (and their percent-decoded forms): what an error
    about the URL must not show. Works on malformed URLs too: no parsing that could fail."""
    from urllib.parse import unquote

    found = [m.group(2) for m in [_URL_PASSWORD.match(url)] if m and m.group(2)]
    found += [m.group(2) for m in _QUERY_PASSWORD.finditer(url) if m.group(2)]
    return sorted({form for secret in found for form in (secret, unquote(secret))}, key=len, reverse=True)


def mask_url(url: str, mask: str = MASK) -> str:
    """``url`` with its passwords masked: ``postgresql://u:********@host/db?password=********``."""
    url = _URL_PASSWORD.sub(lambda m: f"{m.group(1)}:{mask}@", url)
    return _QUERY_PASSWORD.sub(lambda m: m.group(1) + mask, url)


def scrub_url(text: str, url: str) -> str:
    """``text`` (a driver's error about ``url``) without any password of ``url``."""
    for secret in url_secrets(url):
        if len(secret) >= 1:
            text = text.replace(secret, MASK)
    return text
