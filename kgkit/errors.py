"""One structured error family, formatted only at the CLI edge.

Library code raises these; ``kgkit.cli`` turns them into messages and exit codes.
Exit codes are few and documented in the README:

* 0 — success
* 1 — the run finished but some chunks failed (kept for ``--resume``)
* 2 — bad input or configuration (file, YAML, schema, unknown view, …)
* 3 — provider failure that retries could not clear (refused, reset, timeouts, rate limit at the limit);
  a provider that cannot work as configured (no or rejected key, unknown model, a bad
  ``api_base``) is 2, like any other configuration mistake
* 75 — ``--batch``: work is waiting in a provider batch; run the same command again later
  (``kgkit batch status --wait`` waits for it)
* 130 — interrupted (Ctrl-C, or SIGTERM to the installed ``kgkit``); the run folder can be resumed
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

EXIT_OK = 0
EXIT_PARTIAL = 1
EXIT_INPUT = 2
EXIT_PROVIDER = 3
EXIT_PENDING = 75  # sysexits' EX_TEMPFAIL: not done yet, come back later
EXIT_INTERRUPTED = 130


@dataclass(frozen=True)
class Issue:
    """One problem found in a file, located as precisely as the input allows."""

    file: str
    line: int | None  # 1-based
    column: int | None  # 1-based
    path: tuple[str | int, ...]  # key path inside the document, e.g. ("relation_types", 0, "head")
    message: str
    hint: str | None = None  # e.g. "did you mean 'entity_types'?"

    def format(self) -> str:
        where = self.file
        if self.line is not None:
            where += f":{self.line}"
            if self.column is not None:
                where += f":{self.column}"
        keys = " -> ".join(str(p) for p in self.path)
        text = f"{where}: {keys + ': ' if keys else ''}{self.message}"
        if self.hint:
            text += f" ({self.hint})"
        return text

    def sort_key(self):
        return (self.file, self.line or 0, self.column or 0, self.message)


def did_you_mean(word: str, candidates: Iterable[str], n: int = 1) -> str | None:
    """A "did you mean 'x'?" hint naming the ``n`` closest candidates (case-insensitive), or None."""
    import difflib

    by_lower: dict[str, str] = {}
    for c in candidates:
        by_lower.setdefault(str(c).lower(), str(c))
    close = difflib.get_close_matches(str(word).lower(), list(by_lower), n=n, cutoff=0.6)
    return f"did you mean {', '.join(repr(by_lower[c]) for c in close)}?" if close else None


class KgkitError(Exception):
    """Base class: every error kgkit raises on purpose carries an exit code."""

    exit_code = EXIT_INPUT

    def __init__(self, message: str, *, hint: str | None = None):
        super().__init__(message)
        self.message = message
        self.hint = hint

    def format(self) -> str:
        return self.message + (f"\n  hint: {self.hint}" if self.hint else "")


class ValidationError(KgkitError):
    """A file (domain, view, template, config, gold) failed validation; all issues at once."""

    def __init__(self, issues: list[Issue], message: str | None = None):
        self.issues = sorted(issues, key=Issue.sort_key)
        n = len(self.issues)
        super().__init__(message or f"{n} problem{'s' if n != 1 else ''} found")

    def format(self) -> str:
        return "\n".join(i.format() for i in self.issues) + f"\n{self.message}"


class InputError(KgkitError):
    """A document or path cannot be used: missing, unreadable, encrypted, empty, no text layer."""


class ConfigError(KgkitError):
    """Configuration is invalid: unknown key, missing ${ENV} variable, bad value."""

    def __init__(self, message: str, *, hint: str | None = None, issues: Iterable[Issue] = ()):
        super().__init__(message, hint=hint)
        self.issues = list(issues)  # located problems, when the message lists them (kgkit validate)


class NotFoundError(KgkitError):
    """A named domain, view, template, run or skill does not exist; lists what does."""


class ProviderError(KgkitError):
    """The LLM provider failed in a way retries could not clear.

    ``request_specific``: the provider refuses this one request for good (a content filter,
    a prompt over the context window), so the engine fails its chunk and goes on; otherwise
    (auth, outage, unknown model) every other pass would fail the same way and the run
    stops. ``requests`` and ``retries``: what the pass sent before giving up, for the
    manifest's counts."""

    exit_code = EXIT_PROVIDER

    def __init__(self, message: str, *, hint: str | None = None, request_specific: bool = False,
                 requests: int = 0, retries: int = 0):
        super().__init__(message, hint=hint)
        self.request_specific = request_specific
        self.requests = requests
        self.retries = retries


class TemplateError(KgkitError):
    """A prompt template is missing a variable or tried something the sandbox forbids."""


class ProviderConfigError(ProviderError):
    """The provider cannot work as configured: no key or a rejected one, an unknown model, an
    ``api_base`` whose host does not resolve or does not speak TLS. Exit 2, because editing
    the configuration, not waiting, is what helps."""

    exit_code = EXIT_INPUT
