"""Tolerant parsing of a model's JSON answer.

Models asked for JSON still wrap it in code fences, open with "Here is the JSON:",
append an explanation, or leave a trailing comma. None of that should cost a re-ask,
so :func:`parse_json_answer` finds the JSON object in the text and repairs trailing
commas; anything it cannot read raises :class:`AnswerParseError` with a short reason
that is sent back to the model in the re-ask and kept in the review file.
"""
from __future__ import annotations

import json
import re
from typing import Any, Iterator

from kgkit.errors import KgkitError

_FENCE = re.compile(r"```[ \t]*([A-Za-z0-9_-]*)[ \t]*\r?\n(.*?)(?:```|\Z)", re.DOTALL)
_DECODER = json.JSONDecoder()
_MAX_STARTS = 20


class AnswerParseError(KgkitError):
    """The answer holds no readable JSON object; ``reason`` says why in a few words."""

    def __init__(self, reason: str):
        super().__init__(f"unparsable answer: {reason}")
        self.reason = reason


def parse_json_answer(text: str | None) -> dict[str, Any]:
    """Return the JSON object in ``text``.

    Tried in order: the whole text; the contents of each code fence; the first object
    that starts at a ``{`` anywhere in the text (prose before or after is ignored).
    Each candidate is also tried with trailing commas removed.

    Raises:
        AnswerParseError: empty answer, no object, a non-object top level, or an
            object cut off before it closes (e.g. at the token limit).
    """
    if text is None or not text.strip():
        raise AnswerParseError("empty answer")
    try:
        return _parse(text.lstrip("\ufeff"))
    except RecursionError:  # the json module recurses per nesting level
        raise AnswerParseError("JSON nested too deeply") from None


def _parse(text: str) -> dict[str, Any]:
    non_object: str | None = None
    for candidate in _candidates(text):
        for variant in _with_and_without_trailing_commas(candidate):
            try:
                value = json.loads(variant)
            except ValueError:
                continue
            if isinstance(value, dict):
                return value
            non_object = non_object or type(value).__name__
    if non_object:
        raise AnswerParseError(f"expected a JSON object, got a JSON {_json_kind(non_object)}")
    start = text.find("{")
    if start == -1:
        raise AnswerParseError("no JSON object found")
    found = _first_object(text, start)
    if isinstance(found, dict):
        return found
    if _unclosed(text[start:]):
        raise AnswerParseError("the JSON object is cut off before it closes (truncated answer?)")
    raise AnswerParseError(f"invalid JSON: {found.msg} at line {found.lineno} column {found.colno}")


def _candidates(text: str) -> list[str]:
    out = [text.strip()]
    out.extend(m.group(2).strip() for m in _FENCE.finditer(text))
    return out


def _first_object(text: str, start: int) -> dict[str, Any] | json.JSONDecodeError:
    """The first decodable object starting at some ``{`` (text after it is ignored),
    else the decoding error at the first ``{``.

    Only the first few ``{`` are tried: a real answer's object starts early, and a
    hostile text full of braces must not make this quadratic.
    """
    first_error: json.JSONDecodeError | None = None
    for _ in range(_MAX_STARTS):
        for variant in _with_and_without_trailing_commas(text[start:]):
            try:
                value, _end = _DECODER.raw_decode(variant)
            except json.JSONDecodeError as exc:
                first_error = first_error or exc
                continue
            if isinstance(value, dict):
                return value
        start = text.find("{", start + 1)
        if start == -1:
            break
    assert first_error is not None  # every start is a "{", so only errors or objects
    return first_error


def _with_and_without_trailing_commas(text: str) -> Iterator[str]:
    """``text``, then (only if asked for: the scan is the costly part of parsing a good
    answer) ``text`` without trailing commas."""
    yield text
    yield _drop_trailing_commas(text)


def _scan(text: str) -> Iterator[tuple[str, bool]]:
    """Each character of ``text`` and whether it belongs to a JSON string (quotes included)."""
    in_string = escaped = False
    for ch in text:
        if in_string:
            yield ch, True
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        else:
            in_string = ch == '"'
            yield ch, in_string


def _drop_trailing_commas(text: str) -> str:
    """Remove commas that directly precede ``}`` or ``]`` outside strings."""
    out: list[str] = []
    pending_comma: int | None = None  # index in out of a comma that may be trailing
    for ch, quoted in _scan(text):
        if not quoted and ch in "}]" and pending_comma is not None:
            out[pending_comma] = ""
        if quoted or not ch.isspace():
            pending_comma = len(out) if ch == "," and not quoted else None
        out.append(ch)
    return "".join(out)


def _unclosed(text: str) -> bool:
    """True when brackets opened outside strings are never closed (a cut-off answer)."""
    depth = 0
    for ch, quoted in _scan(text):
        if quoted:
            continue
        if ch in "{[":
            depth += 1
        elif ch in "}]":
            depth -= 1
            if depth == 0:
                return False
    return depth > 0


def _json_kind(python_type: str) -> str:
    return {"list": "array", "str": "string", "int": "number", "float": "number", "bool": "boolean"}.get(
        python_type, "null"
    )
