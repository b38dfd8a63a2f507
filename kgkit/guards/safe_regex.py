"""User regexes (domain and template patterns and triggers, learned skills) that cannot stall a run.

A regex from a YAML file is code someone else wrote. With a backtracking engine a pattern
such as ``(a+)+$`` takes seconds on 28 characters and hours on 40. Two guards:

* At validation, :func:`nested_quantifier` refuses the shapes that backtrack exponentially:
  a repeated group whose body repeats something with nothing mandatory to separate one
  round from the next (``(a+)+``, ``(a*)*``, ``(\\w+\\s?)+``), and a repeated alternation
  whose branches match the same character (``(a|a)*``, ``(\\w|\\d)+``). It returns where
  the group starts, so the author can find it.
* At run time every user regex runs through :func:`finditer`, on the ``regex`` package
  (``re`` has no timeout) with a time budget per pattern per chunk
  (``input.regex_timeout``). A pattern that uses its budget up is skipped for the rest of
  the chunk and recorded in :class:`Budget`; the offline backend turns that into a review
  entry, so no pattern hangs a run, and none is dropped silently.

Before a pattern runs, its *required text* is looked for (:func:`required_text`): strings
one of which every match contains, read from the pattern's literal characters
(``University|Institute`` in an organisation pattern). Where none is in the text the pattern
cannot match and is not run: the ``regex`` engine tries a pattern at every character, under a
timeout that costs a third more, while ``str`` containment is a C scan.

Patterns are compiled case-insensitive and multi-line, as the offline backend always has
(``(?-i:...)`` where case matters).
"""
from __future__ import annotations

import contextlib
import contextvars
import logging
import re
import string
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache

import regex

log = logging.getLogger(__name__)

FLAGS = regex.IGNORECASE | regex.MULTILINE
DEFAULT_SECONDS = 1.0  # input.regex_timeout: per pattern, per chunk
error = regex.error


@lru_cache(maxsize=4096)
def compile(pattern: str) -> regex.Pattern:  # noqa: A001 - the name says what it replaces
    """``pattern`` compiled the way every user regex runs (regex.error if it is not valid)."""
    return regex.compile(pattern, FLAGS)


# --------------------------------------------------------------------------- run time


@dataclass
class Budget:
    """Seconds each pattern may still run in this chunk, and the patterns skipped (with why)."""

    seconds: float = DEFAULT_SECONDS
    spent: dict[str, float] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)  # pattern -> reason


_BUDGET: contextvars.ContextVar[Budget | None] = contextvars.ContextVar("kgkit_regex_budget", default=None)


@contextlib.contextmanager
def chunk_budget(seconds: float = DEFAULT_SECONDS) -> Iterator[Budget]:
    """Every :func:`finditer` inside shares one budget: ``seconds`` per pattern for this chunk."""
    budget = Budget(seconds)
    token = _BUDGET.set(budget)
    try:
        yield budget
    finally:
        _BUDGET.reset(token)


def finditer(pattern: str, text: str, pos: int = 0, endpos: int | None = None) -> list[regex.Match]:
    """All matches of a user ``pattern`` in ``text[pos:endpos]``, or none once it has used up
    its time in the current chunk (outside :func:`chunk_budget`, each call gets the default)."""
    end = len(text) if endpos is None else endpos
    return _run(pattern, text, pos, end, lambda rx, timeout: list(rx.finditer(text, pos, end, timeout=timeout)), [])


def search(pattern: str, text: str) -> regex.Match | None:
    """The first match of a user ``pattern`` in ``text``, under the same budget as :func:`finditer`."""
    return _run(pattern, text, 0, len(text), lambda rx, timeout: rx.search(text, timeout=timeout), None)


def _run(pattern: str, text: str, pos: int, end: int, call, nothing):
    budget = _BUDGET.get() or Budget()
    if pattern in budget.skipped:
        return nothing
    remaining = budget.seconds - budget.spent.get(pattern, 0.0)
    started = time.monotonic()
    try:
        rx = compile(pattern)
        needed = required_text(pattern)
        if needed is not None:
            folded = _folded(text)  # as long as text: offsets agree
            if not any(folded.find(s, pos, end) >= 0 for s in needed):
                return nothing  # no match can be there: every match holds one of ``needed``
        return call(rx, max(remaining, 0.001))
    except TimeoutError:
        budget.skipped[pattern] = f"regex_timeout: ran over its {budget.seconds:g}s budget (input.regex_timeout)"
    except regex.error as exc:  # a learned skill's regex is not validated like a domain's
        budget.skipped[pattern] = f"regex_invalid: {exc}"
    finally:
        budget.spent[pattern] = budget.spent.get(pattern, 0.0) + time.monotonic() - started
    log.warning("regex %r skipped on this chunk: %s", pattern, budget.skipped[pattern])
    return nothing


# --------------------------------------------------------------------------- required text

# The characters beyond ASCII that the ``regex`` package, case-insensitive, matches to an ASCII
# character (a test checks every code point): folded with them, a text holds a lower-case
# ASCII string wherever the pattern's literal characters can match.
_TO_ASCII = {0x130: "i", 0x131: "i", 0x17F: "s", 0x212A: "k"}
_folded_last: tuple[str, str] = ("", "")  # (text, folded): a chunk's text meets each pattern in turn


def _folded(text: str) -> str:
    """``text`` as :func:`required_text` strings are looked for in: lower case, with the
    characters that match an ASCII one folded to it. As long as ``text`` (the one character
    whose lower case is two, U+0130, is folded first)."""
    global _folded_last
    last = _folded_last
    if last[0] is text:
        return last[1]
    folded = (text if text.isascii() else text.translate(_TO_ASCII)).lower()
    _folded_last = (text, folded)
    return folded


_INLINE_FLAGS = re.compile(r"\(\?([aiLmsux]*(?:-[imsx]*)?)[:)]")


@lru_cache(maxsize=4096)
def required_text(pattern: str) -> tuple[str, ...] | None:
    """Lower-case ASCII strings one of which is in every match of ``pattern`` (compared with
    a text folded as :func:`_folded` does), or None when the pattern shows none.

    Read from the pattern's literal characters: a run of them matched exactly once, in
    sequence with nothing but zero-width assertions between, is in every match; a group
    that must match requires one of its branches' strings. Of a sequence's candidates the
    longest shortest string is kept. Case is ignored whatever the flags (a looser filter,
    never a wrong one). Only patterns Python's ``re`` reads the same way are analysed (no
    ``regex``-only syntax), and not conditional groups or verbose ones."""
    if "(?(" in pattern:
        return None  # a conditional's missing branch matches nothing
    if any("x" in flags.group(1) for flags in _INLINE_FLAGS.finditer(pattern)):
        return None  # verbose: "a ?" quantifies the a, which the parser does not see
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # "possible nested set": syntax the two packages read differently
            re.compile(pattern, re.I | re.M)
    except (re.error, FutureWarning, DeprecationWarning):
        return None
    parser = _Parser(pattern)
    needed = _branches_need(parser.sequence(True))
    return tuple(sorted(needed)) if needed else None


def _branches_need(branches: list[list[_Node]]) -> frozenset[str] | None:
    """What a choice of ``branches`` needs: every branch's strings together, or None."""
    needed: set[str] = set()
    for branch in branches:
        strings = _sequence_needs(branch)
        if strings is None:
            return None
        needed |= strings
    return frozenset(needed)


def _sequence_needs(seq: list[_Node]) -> frozenset[str] | None:
    candidates: list[frozenset[str]] = []
    run: list[str] = []

    def close() -> None:
        if run:
            candidates.append(frozenset(["".join(run).lower()]))
            run.clear()

    for node in _spliced(seq):
        if _zero_width(node):
            continue  # consumes nothing: the characters around it are adjacent in the match
        char = _literal(node)
        if char is not None:
            run.append(char)
            continue
        close()
        if node.alternatives and node.low >= 1 and not node.text.startswith("(?P="):
            inner = _branches_need(node.alternatives)
            if inner:
                candidates.append(inner)
    close()
    if not candidates:
        return None
    return max(candidates, key=lambda c: (min(map(len, c)), -len(c)))


def _spliced(seq: list[_Node]) -> Iterator[_Node]:
    """``seq`` with each group of one branch, matched exactly once, replaced by its nodes."""
    for node in seq:
        if (len(node.alternatives) == 1 and node.low == node.high == 1 and not _zero_width(node)
                and not node.text.startswith("(?P=")):
            yield from _spliced(node.alternatives[0])
        else:
            yield node


def _zero_width(node: _Node) -> bool:
    return node.text.startswith(("(?=", "(?!", "(?<=", "(?<!"))


def _literal(node: _Node) -> str | None:
    """The ASCII character an atom matched exactly once stands for, or None."""
    if node.alternatives or node.low != 1 or node.high != 1 or node.guarded:
        return None
    text = node.text
    if len(text) == 1 and text not in ".()[]{}|*+?^$\\":
        char = text
    elif len(text) == 2 and text[0] == "\\" and not text[1].isalnum() and text[1] != "_":
        char = text[1]
    else:
        return None
    return char if char.isascii() else None


# --------------------------------------------------------------------------- validation

# Characters a single-character atom is tried against to tell whether two atoms overlap.
_SAMPLE = string.printable + "\u00a0\u2003\u00e9\u00df\u00c4\u0436\u4e2d\u0663\u00bd_"
_QUANT = re.compile(r"\{(\d*)(,?)(\d*)\}")


@dataclass
class _Node:
    start: int
    chars: frozenset[str]  # sample characters it can consume (a group: any of its atoms')
    alternatives: list[list[_Node]] = field(default_factory=list)  # a group's branches
    low: int = 1
    high: int | None = 1  # None: unbounded
    guarded: bool = False  # atomic group, possessive quantifier or lookaround: no backtracking into it
    text: str = ""

    @property
    def repeats(self) -> bool:
        return not self.guarded and (self.high is None or self.high > 1)


class _Parser:
    """Just enough of Python's regex syntax to see groups, atoms and quantifiers, with positions.

    Only called on patterns that already compile, so malformed input need not be handled.
    """

    def __init__(self, pattern: str):
        self.p = pattern
        self.i = 0
        self.verbose = bool(re.match(r"\(\?[aiLmsux]*x", pattern))

    def sequence(self, ignorecase: bool) -> list[list[_Node]]:
        branches: list[list[_Node]] = [[]]
        while self.i < len(self.p) and self.p[self.i] != ")":
            c = self.p[self.i]
            if c == "|":
                self.i += 1
                branches.append([])
                continue
            if self.verbose and c in " \t\n\r\f\v":
                self.i += 1
                continue
            if self.verbose and c == "#":
                end = self.p.find("\n", self.i)
                self.i = len(self.p) if end < 0 else end + 1
                continue
            node = self.atom(ignorecase)
            if node is not None:
                self.quantifier(node)
                branches[-1].append(node)
        return branches

    def atom(self, ignorecase: bool) -> _Node | None:
        p, start = self.p, self.i
        c = p[start]
        if c in "^$":
            self.i += 1
            return None
        if c == "(":
            return self.group(ignorecase)
        if c == "[":
            j = start + 1
            if j < len(p) and p[j] == "^":
                j += 1
            if j < len(p) and p[j] == "]":
                j += 1
            while j < len(p) and p[j] != "]":
                j += 2 if p[j] == "\\" else 1
            self.i = j + 1
        elif c == "\\":
            nxt = p[start + 1] if start + 1 < len(p) else ""
            if nxt in "bBAZ":
                self.i = start + 2
                return None
            m = re.compile(r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|\d{1,2}|.)",
                           re.S).match(p, start)
            self.i = m.end() if m else start + 2
        else:
            self.i = start + 1
        text = p[start:self.i]
        return _Node(start, _chars(text, ignorecase), text=text)

    def group(self, ignorecase: bool) -> _Node | None:
        p, start = self.p, self.i
        self.i += 1
        guarded = False
        if p.startswith("?", self.i):
            if p.startswith("?#", self.i):  # a comment
                self.i = p.index(")", self.i) + 1
                return None
            if p.startswith("?P=", self.i):  # a back-reference: could be anything
                self.i = p.index(")", self.i) + 1
                return _Node(start, frozenset(_SAMPLE), text=p[start:self.i])
            flags = re.match(r"\?([aiLmsux]*)(?:-([imsx]*))?([:)])", p[self.i:])
            if flags:
                on, off, end = flags.groups()
                self.i += flags.end()
                if end == ")":  # global flags such as (?i): no group
                    return None
                ignorecase = (ignorecase or "i" in on) and "i" not in (off or "")
            elif p.startswith(("?=", "?!"), self.i):
                self.i += 2
                guarded = True
            elif p.startswith(("?<=", "?<!"), self.i):
                self.i += 3
                guarded = True
            elif p.startswith("?>", self.i):
                self.i += 2
                guarded = True
            elif p.startswith("?P<", self.i):
                self.i = p.index(">", self.i) + 1
            elif p.startswith("?(", self.i):  # conditional: (?(id)yes|no)
                self.i = p.index(")", self.i) + 1
        branches = self.sequence(ignorecase)
        self.i += 1  # the closing ")"
        chars = frozenset().union(*(n.chars for b in branches for n in b)) if any(branches) else frozenset()
        return _Node(start, chars, branches, guarded=guarded, text=p[start:self.i])

    def quantifier(self, node: _Node) -> None:
        start = self.i
        self.i = self._blanks_after(start)  # verbose: "(a+) +" repeats the group
        before = self.i
        self._quantifier(node)
        if self.i == before:
            self.i = start  # no quantifier: the blanks are the sequence's to skip
        node.text += self.p[start:self.i]

    def _blanks_after(self, i: int) -> int:
        """The first position from ``i`` that is not whitespace or a comment, in a verbose
        pattern (where both are ignored, also between an atom and its quantifier)."""
        p = self.p
        while self.verbose and i < len(p) and (p[i] in " \t\n\r\f\v" or p[i] == "#"):
            if p[i] == "#":
                i = p.find("\n", i)
                if i < 0:
                    return len(p)
            i += 1
        return i

    def _quantifier(self, node: _Node) -> None:
        p, i = self.p, self.i
        if i >= len(p):
            return
        if p[i] in "*+?":
            node.low, node.high = {"*": (0, None), "+": (1, None), "?": (0, 1)}[p[i]]
            self.i = i + 1
        else:
            m = _QUANT.match(p, i)
            if not m or not (m.group(1) or m.group(3)):
                return
            low = int(m.group(1) or 0)
            node.low, node.high = low, (int(m.group(3)) if m.group(3) else (None if m.group(2) else low))
            self.i = m.end()
        suffix = self._blanks_after(self.i)
        if suffix < len(p) and p[suffix] in "?+":
            self.i = suffix
            node.guarded = node.guarded or p[self.i] == "+"  # possessive: gives nothing back
            self.i += 1


def _chars(text: str, ignorecase: bool) -> frozenset[str]:
    try:
        with warnings.catch_warnings():  # "possible nested set": validation has said so already
            warnings.simplefilter("ignore", FutureWarning)
            rx = re.compile(text, re.I if ignorecase else 0)
    except re.error:
        return frozenset(_SAMPLE)
    return frozenset(c for c in _SAMPLE if rx.fullmatch(c))


def _repeated_inside(seq: list[_Node], chain: tuple[list[_Node], ...]) -> Iterator[tuple[_Node, tuple]]:
    """Repeating nodes in ``seq`` (through plain groups), each with the sequences around it."""
    for node in seq:
        if node.guarded:
            continue
        if node.repeats:
            yield node, chain + (seq,)
        for branch in node.alternatives:
            yield from _repeated_inside(branch, chain + (seq,))


def _separated(inner: _Node, chain: tuple[list[_Node], ...]) -> bool:
    """Whether some sequence around ``inner`` has a mandatory part ``inner`` cannot consume."""
    return any(n is not inner and n.low >= 1 and n.chars and not (n.chars & inner.chars)
               for seq in chain for n in seq)


def _groups(seq: list[_Node]) -> Iterator[_Node]:
    for node in seq:
        if node.alternatives:
            yield node
            for branch in node.alternatives:
                yield from _groups(branch)


def nested_quantifier(pattern: str, ignorecase: bool = True) -> tuple[int, str] | None:
    """Where ``pattern`` can backtrack exponentially, as (position, why); None if it cannot.

    ``pattern`` must compile. Conservative by design: it looks for the classic shapes, and
    the time budget of :func:`finditer` covers whatever it misses.
    """
    parser = _Parser(pattern)
    top = parser.sequence(ignorecase)
    for group in (g for branch in top for g in _groups(branch)):
        if not group.repeats:
            continue
        for branch in group.alternatives:
            for inner, chain in _repeated_inside(branch, ()):
                if not _separated(inner, chain):
                    return group.start, (f"'{group.text}' repeats '{inner.text}' with nothing between the rounds "
                                         "(nested quantifiers)")
        singles = [b[0] for b in group.alternatives if len(b) == 1 and b[0].high == 1 and not b[0].alternatives]
        for a, b in ((a, b) for k, a in enumerate(singles) for b in singles[k + 1:]):
            if a.chars & b.chars:
                return group.start, f"'{group.text}' repeats alternatives '{a.text}' and '{b.text}' that match the same text"
        texts = ["".join(n.text for n in b) for b in group.alternatives]
        if len(set(texts)) < len(texts):
            return group.start, f"'{group.text}' repeats the same alternative twice"
    return None
