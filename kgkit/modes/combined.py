"""One pass per chunk for every upgrade view (``upgrades.combine``): n·(2 + 1) calls, not n·(2 + upgrades).

A combined pass asks one question made of each view's own task — its role line and
instructions, rendered from the view's template with ``task_only`` — followed once by the
chunk's entities, relations and text (``combined.j2``). Its schema is one object with a key
per view (the view's name) holding exactly that view's answer, so the answer splits into
the answers separate passes would have given, and each goes through its view's mode as
before: same validation, ids, evidence checks, review and held-back handling.

A view takes part when its prompt is a built-in template (a view whose prompt a user's
``prompts:`` entry or own file replaces keeps its own pass: its task cannot be cut out of it) and its
pass context shows the same entities and relations as the others'. A chunk with one such
view busy gets that view's ordinary pass (the same key as without the option, so nothing
is paid twice); the key of a combined pass names every part, so it never meets a
single-view one.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any, Sequence

from kgkit.backends.base import COMBINED, UPGRADE, PassRequest
from kgkit.backends.contexts import CombinedContext
from kgkit.documents.types import Chunk
from kgkit.formats.model import Domain, View

STAGE = "combined"  # the stage of a combined pass: state/combined/, calls.upgrade["combined"]
PROMPT = "combined.j2"


def combinable(prompt: str) -> bool:
    """Whether a view whose passes use ``prompt`` can answer inside a combined pass: one of the
    built-in templates, which render their task alone when asked (``task_only``)."""
    from kgkit.prompts.render import PROMPTS_DIR

    path = Path(prompt)
    return not path.is_absolute() or path.resolve().parent == PROMPTS_DIR


def task(view: View, domain: Domain, prompt: str) -> dict[str, str]:
    """``{"role", "task"}``: the view's own role line and instructions, as its pass says them."""
    from kgkit.prompts.render import render_messages

    context: dict[str, Any] = {"domain": domain, "view": view, "task_only": True, "stage": view.name,
                               "kind": UPGRADE, "schema": view.output_schema or {}, "sample": 0}
    if view.template is not None:
        context["template"] = view.template
    messages = render_messages(prompt, context)
    role = next((m["content"] for m in messages if m["role"] == "system"), "")
    return {"role": role, "task": "\n\n".join(m["content"] for m in messages if m["role"] != "system")}


def schema(views: Sequence[View]) -> dict[str, Any]:
    """The combined answer: one key per view, each holding what that view's pass returns."""
    return {"type": "object", "required": [v.name for v in views], "additionalProperties": False,
            "properties": {v.name: v.output_schema or {"type": "object"} for v in views}}


def shape(views: Sequence[View]) -> dict[str, Any]:
    """The form of the combined answer, for the prompt: each view's required lists, empty."""
    return {v.name: {key: [] for key in (v.output_schema or {}).get("required", [])} for v in views}


def request(parts: Sequence[tuple[View, dict[str, Any], dict[str, str]]], chunk: Chunk, domain: Domain,
            answer_schema: dict[str, Any]) -> PassRequest:
    """The combined pass on ``chunk`` for ``parts`` (view, its single pass's context, its task)."""
    first = parts[0][1]
    context: CombinedContext = {
        "domain": domain, "entities": first.get("entities", []), "skeleton": first.get("skeleton", []),
        "title": first.get("title"), "shape": shape([view for view, _, _ in parts]),
        "parts": [{"key": view.name, "view": view, "context": ctx, **text} for view, ctx, text in parts]}
    return PassRequest(kind=COMBINED, stage=STAGE, chunk=chunk, schema=answer_schema, prompt=PROMPT,
                       context=context)


