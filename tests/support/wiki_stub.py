"""A scripted "model" for the wiki layer: answers each batch the way a careless model might.

For every batch it reads the article ids from the request (as the prompt lists them) and
answers with: one entity under three spellings (duplicates to de-duplicate), an entity
of a type the domain lacks, a claim on the first article and one on no article, and
edges that exercise the merge -- a relation written as an alias
(``references``, ``conflicts_with``, ``illustrates``, ``written_by``), one the domain does
not know, one that names the duplicate spelling (to be remapped), one whose end exists
nowhere (dangling), one without evidence. Batch ``fail_batch`` (1-based) gets an HTTP 500.
Used by tests/wiki/test_wiki_model.py and benchmarks/wiki.py.
"""
from __future__ import annotations

import json
import re

from support.stub_provider import Recorded, Reply

ARTICLE_LINE = re.compile(r"^Article (\d+) of \d+, id (\".*?\"), category", re.M)
FENCED = re.compile(r"BEGIN UNTRUSTED DOCUMENT (\w+)\n(.*?)\nEND UNTRUSTED DOCUMENT \1", re.S)


def batch_articles(request: Recorded) -> list[tuple[str, str]]:
    """(id, text) of each article in the request, in order."""
    user = request.messages[-1]["content"]
    ids = [json.loads(m.group(2)) for m in ARTICLE_LINE.finditer(user)]
    texts = [m.group(2) for m in FENCED.finditer(user)]
    return list(zip(ids, texts[-len(ids):] if ids else []))


def first_words(text: str, n: int = 6) -> str:
    """An exact quote: the first words of the article's first line with enough words."""
    for line in text.split("\n"):
        words = line.split()
        if len(words) >= n and not line.startswith(("---", "#", "|")):
            return " ".join(words[:n])
    return " ".join(text.split()[:n])


def answer_for(articles: list[tuple[str, str]]) -> dict:
    (first, text), *rest = articles
    second = rest[0][0] if rest else first
    quote = first_words(text)
    stem = first.rsplit("/", 1)[-1]
    return {
        "entities": [
            {"name": "Linked Notes Method", "type": "Concept", "articles": [first], "evidence": quote},
            {"name": "linked-notes method", "type": "concept", "articles": [second]},  # same name, other spelling
            {"name": "The Linked Notes Method", "summary": "", "articles": [second]},
            {"name": "Rendering Tool", "type": "Gadget", "articles": [first]},  # unknown type -> Concept
        ],
        "claims": [
            {"id": f"claim:{stem}:Main_Point", "text": "The first article makes a point.", "evidence": quote},
            {"id": "claim:no-such-article:x", "text": "A claim on an article that does not exist."},
        ],
        "edges": [
            {"source": first, "target": "linked notes method", "type": "illustrates", "evidence": quote},
            {"source": "LINKED-NOTES METHOD", "target": "Rendering Tool", "type": "references", "evidence": quote},
            {"source": f"claim:{stem}:main-point", "target": second, "type": "conflicts_with", "evidence": quote},
            {"source": first, "target": "Rendering Tool", "type": "written_by", "evidence": quote},
            {"source": "Rendering Tool", "target": first, "type": "vibes_with", "evidence": quote},
            {"source": first, "target": "no-such-note", "type": "builds_on", "evidence": quote},
            {"source": "Nobody Known", "target": first, "type": "builds_on", "evidence": quote},
            {"source": second, "target": "Rendering Tool", "type": "builds_on"},  # no evidence
            {"source": first, "target": first, "type": "builds_on", "evidence": quote},  # a loop
        ],
    }


def scripted_answers(fail_batch: int | None = None):
    """A responder for :class:`stub_provider.StubProvider`; batch ``fail_batch`` fails."""
    seen = {"batches": 0}

    def respond(request: Recorded) -> Reply:
        seen["batches"] += 1
        if fail_batch is not None and seen["batches"] == fail_batch:
            return Reply.error(500, "the scripted model is down for this batch")
        articles = batch_articles(request)
        if not articles:
            return Reply.answer({"entities": [], "claims": [], "edges": []})
        return Reply.answer(answer_for(articles))

    return respond
