"""Bounds on what one pass's answer may put into the run, whoever answered.

A model can answer with 10,000 invented entities, a 5 MB name or a ``NaN`` confidence;
left alone they become 10,000 nodes, make every later prompt 5 MB and write view files
that ``JSON.parse`` refuses. :func:`bound_answer` cuts each answer to the configured
limits (``limits`` in kgkit.yaml) before it is stored in ``state/`` or read by the
engine, for the offline backend and every LLM alike. Nothing is dropped silently: each
item left out is written to review (its long texts clipped) with the reason, and counted
as held back.
"""
from __future__ import annotations

import json
import math
from typing import Any

import orjson

from kgkit.config.model import LimitsConfig

_QUOTE_KEYS = ("evidence",)  # free text, bounded by the answer size alone
# An item's size as JSON (``json.dumps(item, ensure_ascii=False)``): items are taken while
# their sizes add up to no more than answer_chars, and all of them do when the whole
# answer, separators and all, is no longer than that.
_SIZE = json.JSONEncoder(ensure_ascii=False)


def clip(value: Any, chars: int) -> Any:
    """``value`` with every string cut to ``chars`` (the cut said) and non-finite numbers as
    text: safe to write to review.jsonl however large or odd the original."""
    if isinstance(value, str):
        return value if len(value) <= chars else f"{value[:chars]}… [{len(value)} characters]"
    if isinstance(value, float) and not math.isfinite(value):
        return repr(value)
    if isinstance(value, dict):
        return {clip(k, chars): clip(v, chars) for k, v in value.items()}
    if isinstance(value, list):
        return [clip(v, chars) for v in value]
    return value


_LEAVES = (int, bool, type(None))  # values no limit applies to


def _problem(value: Any, limits: LimitsConfig) -> tuple[str, str] | None:
    """Why one item cannot be taken: ``(reason, detail)``, or None. The usual item (an object
    of short texts, numbers and lists of short texts, nothing over a limit) is passed over
    in one loop; anything else is walked by :func:`_first_problem`, which names the problem."""
    if type(value) is dict and _plain_item(value, limits.name_chars):
        return None
    return _first_problem([(None, value)], limits, "")


def _plain_item(item: dict[str, Any], chars: int) -> bool:
    """Whether ``item`` surely has no problem: str keys and texts within ``chars`` (an evidence
    quote of any length), finite floats, ints, booleans, nulls, lists of such texts. False
    says nothing (the full walk decides)."""
    for key, child in item.items():
        if type(key) is not str or len(key) > chars:
            return False
        kind = type(child)
        if kind is str:
            if len(child) > chars and key not in _QUOTE_KEYS:
                return False
        elif kind is float:
            if not math.isfinite(child):
                return False
        elif kind is list:
            if not all(type(v) is str and len(v) <= chars for v in child):
                return False
        elif kind not in _LEAVES:
            return False
    return True


def _first_problem(children: Any, limits: LimitsConfig, where: str) -> tuple[str, str] | None:
    """The first problem among ``children``, the ``(key, value)`` pairs of the container at
    path ``where`` (key None: the item itself). Leaves are checked in the loop and a path is
    spelled out only for a container entered or a problem found: an answer holds tens of
    thousands of leaves, and nearly all of them are fine."""
    for key, child in children:
        if isinstance(key, str) and len(key) > limits.name_chars:
            return "over_limit", f"a key of {len(key)} characters (limits.name_chars is {limits.name_chars})"
        if isinstance(child, str):
            if len(child) > limits.name_chars:
                path = _path(where, key)
                if path.rsplit("/", 1)[-1] not in _QUOTE_KEYS:
                    return "over_limit", (f"{path or 'value'} has {len(child)} characters "
                                          f"(limits.name_chars is {limits.name_chars})")
        elif isinstance(child, float):
            if not math.isfinite(child):
                return "non_finite", f"{_path(where, key) or 'value'} is {child!r}, not a number JSON can hold"
        elif isinstance(child, (dict, list)):
            found = _first_problem(child.items() if isinstance(child, dict) else enumerate(child), limits,
                                   _path(where, key))
            if found:
                return found
    return None


def _path(where: str, key: Any) -> str:
    return where if key is None else f"{where}/{key}" if where else str(key)


def _roomy(data: dict[str, Any], answer_chars: int) -> bool:
    """Whether all of ``data`` is within ``answer_chars`` as JSON (``_SIZE``'s text). First
    from orjson's compact UTF-8 (a tenth of the standard encoder's CPU): that text is at
    least a third as long as the standard one, which adds one blank per separator (at most
    one a character), escapes the same characters no more than three times as long, and
    writes a number in as many characters give or take two; bytes are no fewer than
    characters. Only an answer near the bound (or one orjson refuses) is measured exactly."""
    try:
        if 3 * len(orjson.dumps(data)) <= answer_chars:
            return True
    except (TypeError, orjson.JSONEncodeError):
        pass
    try:
        return len(_SIZE.encode(data)) <= answer_chars
    except (TypeError, ValueError, RecursionError):
        return False


def bound_answer(data: dict[str, Any], limits: LimitsConfig) -> tuple[dict[str, Any], list[tuple[Any, str, str]]]:
    """``(answer within limits, [(item left out, reason, detail)])``.

    Each list in the answer keeps its first ``items_per_answer`` acceptable items, and
    items are taken in order while the answer stays within ``answer_chars`` as JSON; an
    item with a non-finite number or a text over ``name_chars`` (its evidence quote aside)
    is left out wherever it stands.
    """
    kept: dict[str, Any] = {}
    out: list[tuple[Any, str, str]] = []
    size = 0
    roomy = _roomy(data, limits.answer_chars)  # the usual answer: no item needs measuring
    for key, value in data.items():
        items = value if isinstance(value, list) else [value]
        taken: list[Any] = []
        for item in items:
            problem = _problem(item, limits)
            if problem is None and isinstance(value, list) and len(taken) >= limits.items_per_answer:
                problem = ("over_limit", f"more than {limits.items_per_answer} {key} in one answer "
                                         "(limits.items_per_answer)")
            if problem is None and not roomy:
                cost = len(_SIZE.encode(item))
                if size + cost > limits.answer_chars:
                    problem = ("over_limit", f"the answer is over {limits.answer_chars} characters "
                                             "(limits.answer_chars); the rest of it is left out")
                else:
                    size += cost
            if problem:
                out.append((item, *problem))
            else:
                taken.append(item)
        if isinstance(value, list):
            kept[key] = taken
        elif taken:
            kept[key] = taken[0]
    return kept, out
