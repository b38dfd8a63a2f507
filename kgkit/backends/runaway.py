"""Answers that run away: seen while they stream, and what is kept of them when cut.

A small model asked for a JSON list often stops producing new items and goes on writing old
ones (the same three entities, over and over) until ``max_tokens``; the answer is then cut
off before it closes, and minutes of generation are thrown away as unparsable.
:class:`RunawayWatch` reads an answer as it streams and says when it has stopped producing
anything new — several items in a row that repeat earlier ones, one string far longer than
any name or quote, or a long stretch of nothing but whitespace — so generation can stop
there. :func:`salvage` then keeps what the answer had produced: the text up to its last
complete list item, with the open brackets closed and repeated items dropped. It serves
an answer cut at ``max_tokens`` by a server too.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Callable

REPEATS = 4  # list items in a row that repeat earlier ones: the answer has stopped producing new ones
LONGEST_STRING = 2_000  # characters of one JSON string (a name or a quote is far shorter)
BLANK_RUN = 200  # characters of nothing but whitespace outside strings
_CLOSE = {"{": "}", "[": "]"}
_MAX_TRIES = 20  # cut points tried by salvage, from the last one back


@dataclass
class _Scanner:
    """Where a JSON text stands, character by character: open brackets, strings, and the end
    of every complete list element (a point the text can be cut at and closed)."""

    stack: list[str] = field(default_factory=list)
    in_string: bool = False
    escaped: bool = False
    string_length: int = 0
    blank: int = 0
    position: int = 0
    item_start: int | None = None  # where the list element being read began (an object in a list)
    cuts: list[tuple[int, str]] = field(default_factory=list)  # (end of an element, closers after it)

    def feed(self, text: str, on_item: Callable[[int, int], None] | None = None) -> None:
        for ch in text:
            self._step(ch, on_item)
            self.position += 1

    def _step(self, ch: str, on_item: Callable[[int, int], None] | None) -> None:
        if self.in_string:
            self.string_length += 1
            if self.escaped:
                self.escaped = False
            elif ch == "\\":
                self.escaped = True
            elif ch == '"':
                self.in_string = False
            return
        if ch.isspace():
            self.blank += 1
            return
        self.blank = 0
        if ch == '"':
            self.in_string, self.string_length = True, 0
        elif ch in "{[":
            if ch == "{" and self.stack and self.stack[-1] == "[":
                self.item_start = self.position
            self.stack.append(ch)
        elif ch in "}]" and self.stack:
            opened = self.stack.pop()
            if self.stack and self.stack[-1] == "[":  # a complete element of a list
                self.cuts.append((self.position + 1, "".join(_CLOSE[c] for c in reversed(self.stack))))
                if opened == "{" and self.item_start is not None and on_item:
                    on_item(self.item_start, self.position + 1)
                self.item_start = None


class RunawayWatch:
    """Fed an answer as it streams; :attr:`reason` is set once it has run away."""

    def __init__(self, repeats: int = REPEATS, longest_string: int = LONGEST_STRING, blank_run: int = BLANK_RUN):
        self.repeats, self.longest_string, self.blank_run = repeats, longest_string, blank_run
        self.text = ""
        self.reason: str | None = None
        self._scanner = _Scanner()
        self._seen: set[str] = set()
        self._in_a_row = 0

    def feed(self, delta: str) -> bool:
        """Take the next piece of the answer; True once it has run away (stop generating)."""
        if self.reason is not None:
            return True
        start = len(self.text)
        self.text += delta
        self._scanner.feed(self.text[start:], self._item)
        s = self._scanner
        if self.reason is None and s.in_string and s.string_length > self.longest_string:
            self.reason = f"a string ran past {self.longest_string} characters"
        elif self.reason is None and s.blank > self.blank_run:
            self.reason = f"{s.blank} characters of whitespace in a row"
        return self.reason is not None

    def _item(self, start: int, end: int) -> None:
        key = _canonical(self.text[start:end])
        if key in self._seen:
            self._in_a_row += 1
            if self._in_a_row >= self.repeats and self.reason is None:
                self.reason = f"{self._in_a_row} items in a row repeated earlier ones"
        else:
            self._seen.add(key)
            self._in_a_row = 0


def salvage(text: str, usable: Callable[[dict[str, Any]], bool] = lambda data: True) -> dict[str, Any] | None:
    """What a cut-off answer had produced: its text up to a complete list element, closed,
    with repeated list items dropped — the last such cut that parses and is ``usable``
    (validates against the pass's schema), or None."""
    start = text.find("{")
    if start == -1:
        return None
    scanner = _Scanner()
    scanner.feed(text[start:])
    for end, closers in reversed(scanner.cuts[-_MAX_TRIES:]):
        try:
            data = json.loads(text[start:start + end] + closers)
        except ValueError:
            continue
        if isinstance(data, dict):
            data = _without_repeats(data)
            if usable(data):
                return data
    return None


def _without_repeats(value: Any) -> Any:
    """``value`` with each list's repeated items left out (their first occurrence stays)."""
    if isinstance(value, dict):
        return {k: _without_repeats(v) for k, v in value.items()}
    if isinstance(value, list):
        seen: set[str] = set()
        kept = []
        for item in value:
            key = json.dumps(item, sort_keys=True, ensure_ascii=False)
            if key not in seen:
                seen.add(key)
                kept.append(_without_repeats(item))
        return kept
    return value


def _canonical(item_text: str) -> str:
    try:
        return json.dumps(json.loads(item_text), sort_keys=True, ensure_ascii=False)
    except ValueError:
        return " ".join(item_text.split())
