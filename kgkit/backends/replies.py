"""What a provider sends back, read: its error's own words, the wait it asks for, and an
answer's most relevant schema violation, each short enough for one log line or re-ask.
"""
from __future__ import annotations

import email.utils
import json
import time
from typing import Any, Mapping

from kgkit.backends.base import pass_validator, surely_conforms


def schema_problem(data: dict[str, Any], schema: Mapping[str, Any]) -> str | None:
    """The most relevant schema violation, located by key path, or None."""
    if surely_conforms(data, schema):  # the usual case, in compiled code
        return None
    validator = pass_validator(schema)
    if validator.is_valid(data):
        return None
    import jsonschema  # only for an answer the compiled check refused

    error = jsonschema.exceptions.best_match(validator.iter_errors(data))
    if error is None:
        return None
    where = "/".join(str(p) for p in error.absolute_path) or "(top level)"
    return f"schema violation at {where}: {clip(error.message)}"


def provider_message(exc: BaseException) -> str:
    """The provider's own words, without litellm's class-name prefixes."""
    text = str(getattr(exc, "message", None) or exc)
    tail = text.split("Exception - ", 1)[-1].strip()
    tail = tail.split(". Handle with `litellm.", 1)[0]
    try:
        body = json.loads(tail)
    except ValueError:
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict) and body["error"].get("message"):
        tail = str(body["error"]["message"])
    return clip(tail)


def clip(text: str, limit: int = 300) -> str:
    """``text`` cut to ``limit`` characters, "..." marking a cut: a reason stays one readable line."""
    return text if len(text) <= limit else text[:limit - 3] + "..."


def retry_after(exc: BaseException) -> float | None:
    """Seconds the provider asked us to wait (``Retry-After`` as seconds or an HTTP date)."""
    headers = getattr(exc, "litellm_response_headers", None)
    if headers is None:
        response = getattr(exc, "response", None)
        headers = getattr(response, "headers", None)
    value = next((v for k, v in (headers or {}).items() if k.lower() == "retry-after"), None)
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time.time())
