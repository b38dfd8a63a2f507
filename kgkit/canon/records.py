"""The records of the merge: a mention going in; a node, a merge record, a rejection, an ambiguity coming out."""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any


#: Every reason a surface form can have joined a node, in the order the stages run.
REASONS = ("exact", "case/punctuation", "legal-suffix", "declared-alias", "defined-term", "title", "region", "same-value",
           "fuzzy")


@dataclass(frozen=True)
class Mention:
    """One typed entity mention as a pass-1 answer gives it.

    ``span`` is ``(start, end)`` in DOCUMENT character offsets (``doc.text[start:end]``),
    or None when the mention could not be located; ``chunk_id`` and ``page`` say where it
    was read. ``aliases`` are other names the extractor declared for the same entity.
    """

    name: str
    type: str
    chunk_id: str | None = None
    span: tuple[int, int] | None = None
    page: int | None = None
    evidence: str | None = None
    confidence: float | None = None
    aliases: tuple[str, ...] = ()

    def _order(self) -> tuple:
        return (
            self.span is None, tuple(self.span or (0, 0)), self.chunk_id or "", self.name, self.type,
            self.page or 0, self.evidence or "", self.confidence if self.confidence is not None else -1.0,
            self.aliases,
        )


@dataclass(frozen=True)
class MergeRecord:
    """``merged`` (a surface form) joined the node displayed as ``kept``, and why."""

    type: str
    kept: str
    merged: str
    reason: str  # one of REASONS
    score: float  # 100.0 for rule and alias merges; the similarity for fuzzy ones

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, "kept": self.kept, "merged": self.merged, "reason": self.reason,
                "score": round(self.score, 2)}


@dataclass(frozen=True)
class Node:
    """A node of V_doc: one entity of one type, with every mention that named it.

    ``id`` derives from the type and the canonical key of ``name`` (see kgkit.ids), and
    ``name`` is the display name: the most frequent surface form, the longest on a tie
    (defined terms such as "the Company" are only chosen when nothing else names it).
    """

    id: str
    type: str
    name: str
    aliases: tuple[str, ...]
    mentions: tuple[Mention, ...]
    merged_from: tuple[dict[str, Any], ...]  # {"name", "reason", "score"}
    value: Any = None  # a literal's normalised value (ISO date, ISO duration, …); None for other types

    def to_dict(self) -> dict[str, Any]:
        """The node as ``nodes.json`` lists it (the engine adds ``origin``).

        A mention read twice at the same document span (two overlapping chunks hold the
        same sentence) is listed once, with the first chunk; mentions without a span are
        kept per chunk.
        """
        seen: dict[tuple, dict[str, Any]] = {}
        for m in self.mentions:
            entry = {"chunk": m.chunk_id, "span": list(m.span) if m.span else None, "page": m.page}
            seen.setdefault(tuple(m.span) if m.span else (m.chunk_id,), entry)
        out = {
            "id": self.id, "type": self.type, "name": self.name, "aliases": list(self.aliases),
            "mentions": list(seen.values()),
            "merged_from": [dict(r) for r in self.merged_from],
        }
        if self.value is not None:
            out["value"] = self.value
        return out


@dataclass(frozen=True)
class Rejection:
    """A mention left out of V_doc, with the reason (reported, never silently dropped)."""

    mention: Mention
    reason: str
    code: str  # "unknown_type" or "invalid_entity" (empty name): how the engine counts it


@dataclass(frozen=True)
class Ambiguity:
    """An alias claimed by more than one entity of a type: it merged nothing."""

    type: str
    alias: str
    claimants: tuple[str, ...]  # display names of the entities that claimed it
