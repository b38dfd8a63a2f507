"""Prompt templates to chat messages: sandboxed, strict, and named in every error.

Templates are Jinja2 files: the built-ins live next to this module, and a user can
replace the one for a stage by path (``prompts: {entities: my/entities.j2}`` in
``kgkit.yaml``; the engine puts that path in ``PassRequest.prompt``). They are rendered in a :class:`~jinja2.sandbox.SandboxedEnvironment`
because a prompt template is user input that runs inside kgkit: it may read the
context it is given but not reach Python internals (``''.__class__.__mro__`` is an
error). ``StrictUndefined`` turns a misspelt key into an error instead of an empty
string silently missing from every prompt.

Message convention
------------------
A template produces chat messages with the ``message(role)`` call block::

    {% call message("system") %}You extract entities…{% endcall %}
    {% call message("user") %}{{ chunk.text | untrusted }}{% endcall %}

The built-ins do this once in ``_chat.j2``, which wraps ``{% block system %}`` and
``{% block user %}``; each built-in pass template extends it and fills both blocks.
So a user template can:

* extend a built-in and replace one block: ``{% extends "kgkit/entities.j2" %}``
  (the ``kgkit/`` prefix always means the built-in, even when the user's folder has
  a file of the same name);
* extend ``_chat.j2`` and write both blocks;
* or be plain text, which becomes a single user message.

Text outside ``message`` blocks is ignored once any block is used, so a message
boundary can only come from the template, never from the document text inside it.

Files: a template, and everything it includes, imports or extends, must be a ``.j2``,
``.jinja``, ``.jinja2`` or ``.txt`` file that stays inside its folder once symlinks are
resolved (:class:`_FolderLoader`). A shared kgkit.yaml or view naming ``/etc/passwd``, or a
template including a symlink to it, is refused by name, and the file's content is neither
sent nor shown.

Context: everything in ``PassRequest.context`` (``domain``, ``entities``, ``skills``,
``view``, ``template``, ``title``, …) plus ``chunk``, ``stage``, ``kind``, ``schema``
and ``sample``. Filters: ``untrusted`` fences a document text between marker lines
that carry a hash of the text (the text cannot contain its own closing marker);
``json`` dumps a value as JSON; ``worked_answer`` turns a domain's or template's
example into the answer the rules ask for (see :func:`worked_answer`). Macros shared by
the built-ins are in ``_common.j2``.

Order: every built-in puts what is the same for every chunk first (instructions, types,
skills, worked examples, rules, the answer's shape), then what belongs to the document
(its entities), and the chunk last, so providers' prompt caching reuses the prefix.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import threading
from functools import lru_cache
from json.encoder import encode_basestring as _encode_str
from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

from jinja2 import (
    ChoiceLoader,
    Environment,
    FileSystemLoader,
    PrefixLoader,
    StrictUndefined,
    TemplateNotFound,
    TemplateSyntaxError,
    UndefinedError,
)
from jinja2.loaders import split_template_path
from jinja2.exceptions import SecurityError, TemplateError as JinjaTemplateError
from jinja2.sandbox import SandboxedEnvironment

from kgkit.errors import TemplateError

if TYPE_CHECKING:
    from kgkit.backends.base import PassRequest

PROMPTS_DIR = Path(__file__).resolve().parent
ROLES = ("system", "user", "assistant")
TEMPLATE_SUFFIXES = (".j2", ".jinja", ".jinja2", ".txt")


def render_request(request: "PassRequest") -> list[dict[str, str]]:
    """Render the messages for one pass from ``request.prompt`` and its context."""
    context = dict(request.context)
    context.update(
        chunk=request.chunk,
        stage=request.stage,
        kind=request.kind,
        schema=request.schema,
        sample=request.sample,
    )
    return render_messages(request.prompt, context)


def render_messages(template: str | Path, context: Mapping[str, Any]) -> list[dict[str, str]]:
    """Render ``template`` (a built-in file name or a path) into chat messages.

    Raises:
        TemplateError: the template is missing or malformed, uses a key the context
            lacks, or tries an attribute the sandbox forbids — naming the template
            (and its line where Jinja knows it).
    """
    directory, name = _locate(template)
    env = _environment(directory)
    messages: list[dict[str, str]] = []

    def message(role: str, caller) -> str:
        if role not in ROLES:
            raise TemplateError(f"prompt template {name!r}: message role must be one of {', '.join(ROLES)}, not {role!r}")
        content = caller().strip()
        if content:
            messages.append({"role": role, "content": content})
        return ""

    try:
        text = env.get_template(name).render({**context, "message": message})
    except TemplateNotFound as exc:
        where = f"{directory} or the built-in prompts" if directory else "the built-in prompts"
        raise TemplateError(f"prompt template {exc.name!r} not found in {where}") from None
    except TemplateSyntaxError as exc:
        raise TemplateError(f"prompt template {exc.filename or name}:{exc.lineno}: {exc.message}") from None
    except SecurityError as exc:
        raise TemplateError(f"prompt template {_where(exc, name)}: forbidden: {exc}") from None
    except UndefinedError as exc:
        raise TemplateError(
            f"prompt template {_where(exc, name)}: missing key: {exc.message}",
            hint=f"the context has: {', '.join(sorted(context))}",
        ) from None
    except JinjaTemplateError as exc:
        raise TemplateError(f"prompt template {_where(exc, name)}: {exc}") from None
    if not messages and text.strip():
        messages.append({"role": "user", "content": text.strip()})
    if not messages:
        raise TemplateError(f"prompt template {name!r} rendered no message")
    return messages


_LOADING = threading.RLock()


class _LoadsOnce:
    """Templates loaded one thread at a time (the pass template, and what it extends or
    imports while it renders): Jinja's cache is safe to share, but threads that miss it
    together each compile the template (64 passes starting at once compiled the built-ins
    dozens of times, most of a cold run's CPU before the first answers)."""

    def _load_template(self, name, globals):
        with _LOADING:
            return super()._load_template(name, globals)


class _Plain(_LoadsOnce, Environment):
    pass


class _Sandboxed(_LoadsOnce, SandboxedEnvironment):
    pass


def fence_untrusted(text: str) -> str:
    """Wrap document text between marker lines that it cannot forge."""
    tag = hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:12]
    return f"BEGIN UNTRUSTED DOCUMENT {tag}\n{text}\nEND UNTRUSTED DOCUMENT {tag}"


def _locate(template: str | Path) -> tuple[Path | None, str]:
    """(user directory or None for built-ins, template name within the loader)."""
    path = Path(template)
    if path.is_absolute() and path.parent != PROMPTS_DIR:  # a built-in named by its path (views do) is a built-in
        return path.parent, path.name
    return None, path.name if path.is_absolute() else str(template)


@lru_cache(maxsize=32)
def _environment(directory: Path | None) -> Environment:
    """One environment per template folder, so compiled templates are reused across chunks.

    A user's folder gets the sandbox (its templates are user input). The built-ins
    (``directory`` None) are kgkit's own code, compiled once and never reloaded: they get a
    plain environment, whose attribute lookups cost a third less per render than the
    sandbox's checks (the document text is only ever data to them, never template code)."""
    search = [str(directory), str(PROMPTS_DIR)] if directory else [str(PROMPTS_DIR)]
    env = (_Sandboxed if directory else _Plain)(
        loader=ChoiceLoader([PrefixLoader({"kgkit": _FolderLoader(str(PROMPTS_DIR))}), _FolderLoader(search)]),
        undefined=StrictUndefined,
        autoescape=False,  # prompts are plain text, not HTML
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=False,
        auto_reload=directory is not None,  # a user may edit theirs between runs of one process
    )
    env.filters["untrusted"] = fence_untrusted
    env.filters["json"] = _json
    env.filters["worked_answer"] = worked_answer
    return env


def _json(value: Any, indent: int | None = None) -> str:
    """The ``json`` filter: ``json.dumps(value, ensure_ascii=False)``; a name (the usual value:
    every entity line of a relation prompt) by the encoder's own string function, which is
    what ``dumps`` ends in for one, without building an encoder per call."""
    if type(value) is str and indent is None:
        return _encode_str(value)
    return json.dumps(_plain(value), ensure_ascii=False, indent=indent)


EXAMPLE_CONFIDENCE = 0.9
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")


def worked_answer(example: Any, key: str) -> dict[str, Any]:
    """``{key: items}`` of a worked example, as the rules beside it ask answers to be.

    Domain and template files write an example's items as names only (``{name, type}``,
    ``{head, relation, tail}``, ``{relation, roles}``). The prompt's rules ask for an
    ``evidence`` quote and a ``confidence`` on every item, and an example that breaks its
    own rules teaches the model to break them too; so each item gets, unless its file
    gave them, the first sentence of the example text that holds all its names (the whole
    text when none does) and a confidence of :data:`EXAMPLE_CONFIDENCE`."""
    def field(name: str) -> Any:  # a domain's Example object, or a template's example mapping
        return example.get(name) if isinstance(example, Mapping) else getattr(example, name, None)

    text = str(field("text") or "")
    sentences = [s for s in _SENTENCE_END.split(text) if s]
    items = []
    for item in _plain(field(key) or []):
        names = [v for k, v in item.items() if k in ("name", "head", "tail")]
        for value in (item.get("roles") or {}).values():
            names += value if isinstance(value, list) else [value]
        quote = next((s for s in sentences if all(str(n) in s for n in names)), text)
        items.append({**item, "evidence": item.get("evidence", quote.rstrip(" ;")),
                      "confidence": item.get("confidence", EXAMPLE_CONFIDENCE)})
    return {key: items}


class _FolderLoader(FileSystemLoader):
    """A FileSystemLoader that reads a template only if it is a template file inside the
    folder it is looked up in, after symlinks are resolved.

    Jinja already refuses ``..`` in a template name, but it follows symlinks, and a file
    named by path (``prompts: {entities: /etc/passwd}``) is "inside" its own folder; so the
    real path and the file name are checked before anything is read."""

    def get_source(self, environment, template):
        pieces = split_template_path(template)  # raises TemplateNotFound on '..'
        for folder in self.searchpath:
            candidate = os.path.join(folder, *pieces)
            if not os.path.isfile(candidate):
                continue
            real, root = os.path.realpath(candidate), os.path.realpath(folder)
            if os.path.commonpath([real, root]) != root:
                raise TemplateError(f"prompt template {candidate}: refused: it is a link to a file outside {root}",
                                    hint="copy the file into the template's folder")
            if not real.endswith(TEMPLATE_SUFFIXES):
                raise TemplateError(f"prompt template {candidate}: refused: not a template file "
                                    f"(the name must end in {', '.join(TEMPLATE_SUFFIXES)})")
            break
        return super().get_source(environment, template)


def _plain(value: Any) -> Any:
    """Tuples and other sequences from the frozen model as JSON-ready lists and dicts."""
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _where(exc: BaseException, name: str) -> str:
    """'name' or 'file:line' of the innermost template frame in the traceback."""
    where = repr(name)
    tb = exc.__traceback__
    while tb is not None:
        if "__jinja_exception__" in tb.tb_frame.f_globals:  # a frame Jinja rewrote to a template line
            where = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return where
