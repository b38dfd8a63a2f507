"""Pick the skills worth prepending to a document's core prompts: a light lexical retriever.

A skill is scored against the document's title and first 2,000 characters:

    score = (phrases or regexes of the skill found in that text)
          + (share of the skill's content words — target, phrases, instruction, example — found there)

so a skill whose trigger actually occurs always outranks one that merely shares
vocabulary. A nearest-shaped relation cue (``(?#nearest)…``) occurs only where it could
bind: with a capitalised word among the three words on each side of its match, in one clause
(:func:`~kgkit.skills.cues.shaped_match_in`) — "in" or a blank matches any text.
Skills scoring 0 are never returned; ties go to the smaller id. The top ``k``
(default 3) are returned, best first. After them come the domain's *gazetteer* entries
whose name occurs in that text, as entity skills marked ``gazetteer: true`` (the offline
backend applies them; the LLM prompts leave them out — a training name is no guidance).
"""
from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path
from typing import Any

from kgkit.guards import safe_regex
from kgkit.skills.cues import NEAREST, shaped_match_in
from kgkit.skills.library import Library, domain_dir, load_library

HEAD_CHARS = 2000
STOPWORDS = frozenset(
    "a an and are as at be by for from has have he her his in is it its of on or she that the their them they this "
    "to was were when which who will with emit said says".split()
)


def words(text: str) -> set[str]:
    return {w for w in re.findall(r"\w+", text.lower()) if w not in STOPWORDS and len(w) > 1}


def score_skill(skill: dict[str, Any], head: str, head_words: set[str]) -> float:
    lowered = " ".join(head.lower().split())
    hits = sum(1 for p in skill["pattern"]["phrases"] if _phrase_in(p, lowered))
    hits += sum(1 for r in skill["pattern"]["regex"] if _regex_in(r, head))
    content = words(" ".join([skill["target"].replace("_", " "), *skill["pattern"]["phrases"],
                              skill.get("instruction", ""), skill.get("example", "")]))
    overlap = len(content & head_words) / len(content) if content else 0.0
    return hits + overlap


def _phrase_in(phrase: str, lowered: str) -> bool:
    return re.search(r"(?<!\w)" + re.escape(phrase) + r"(?!\w)", lowered) is not None


def _regex_in(pattern: str, text: str) -> bool:
    if pattern.startswith(NEAREST):  # found only where it could bind two names (shaped_match_in)
        return shaped_match_in(pattern, text)
    return safe_regex.search(pattern, text) is not None  # time-bounded; an invalid regex finds nothing


def rank_skills(library: Library, text_head: str, title: str | None, k: int = 3) -> list[tuple[float, dict[str, Any]]]:
    """(score, skill) for the top ``k`` skills of ``library`` with a positive score, then its
    gazetteer entries named in the text."""
    head = ((title or "") + "\n" + text_head[:HEAD_CHARS]).strip()
    head_words = words(head)
    scored = [(score_skill(s, head, head_words), s) for s in library.sorted_skills()]
    scored = [(sc, s) for sc, s in scored if sc > 0]
    scored.sort(key=lambda pair: (-pair[0], pair[1]["id"]))
    lowered = " ".join(head.lower().split())
    names = [(1.0, gazetteer_skill(g)) for g in sorted(library.gazetteer, key=lambda g: g["id"])
             if _phrase_in(" ".join(g["name"].lower().split()), lowered)]
    return scored[:k] + names


def gazetteer_skill(entry: dict[str, Any]) -> dict[str, Any]:
    """A gazetteer entry as the entity skill the offline backend applies (never put in a prompt)."""
    return {"id": entry["id"], "kind": "entity", "target": entry["type"], "gazetteer": True,
            "pattern": {"phrases": [" ".join(entry["name"].lower().split())], "regex": []},
            "instruction": "", "example": ""}


def retrieve_skills(domain_name: str, text_head: str, title: str | None, k: int = 3,
                    library_dir: str | Path | None = None) -> list[dict[str, Any]]:
    """The top ``k`` skills of ``domain_name``'s library for this document, best first.

    ``library_dir`` defaults as in :func:`kgkit.skills.library.library_root`; a domain
    without a library has no skills (an empty list, not an error).
    """
    if k <= 0:
        return []
    return [s for _, s in rank_skills(_library(domain_name, library_dir), text_head, title, k)]


def _library(domain_name: str, library_dir: str | Path | None) -> Library:
    """The library as on disk, parsed once per content state (extraction asks once per document)."""
    folder = domain_dir(domain_name, library_dir)
    files = sorted(folder.glob("skills/*.yaml")) if folder.is_dir() else []
    state = tuple((p.name, p.stat().st_mtime_ns, p.stat().st_size) for p in files)
    return _parsed(str(folder), domain_name, str(library_dir) if library_dir is not None else None, state)


@lru_cache(maxsize=8)
def _parsed(folder: str, domain_name: str, library_dir: str | None, state: tuple) -> Library:
    return load_library(domain_name, library_dir)
