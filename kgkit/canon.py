"""Canonical names, and the merge of a document's entity mentions into its node set V_doc.

Core-then-modes only saves calls if every view can point at the same node, so the one
place where "ACME Corp.", "Acme Corporation" and "the Company" become one node has to be
careful, explainable and deterministic. The merge runs in stages, cheapest and surest
first, and records why every surface form joined the node it did:

1. **Rules** -- :func:`canonical_key` folds Unicode (NFKC), case, accents, quotes,
   punctuation, a leading "the" and trailing legal suffixes. Equal keys within a type
   merge; the reason says which rule was needed: ``exact`` (only Unicode form or spacing
   differ), ``case/punctuation``, ``legal-suffix``.
2. **Declared aliases and defined terms** -- a mention's ``aliases`` (``declared-alias``),
   or a contract-style definition found right after it in the text, such as
   ``ABC Corp. (the "Company")`` (``defined-term``). An alias claimed by two different
   entities of a type merges nothing and is reported in ``CanonResult.ambiguous``.
   A defined term names the entity that defined it whatever type another mention gave
   it: ``Cool Technologies Inc. (hereinafter "COOL TECH")`` makes every "COOL TECH" the
   party, never a second node typed Location or DefinedTerm. A person's name with the
   title the text puts before it ("President John F. Kennedy", "Texas Gov. John
   Connally") is an alias of the person (``title``), and a place written with its state or
   country ("Memphis, Tenn.") is also called by the place's own name (``region``).
3. **Literal values** -- dates, durations, money and percentages (the domain types that
   receive them) keep their names as written ("26th day of May, 2017") and carry a
   normalised ``value`` (``2017-05-26``, ``P1Y``) computed here from the name; mentions of
   one value merge (``same-value``) and are never fuzzy-matched.
4. **Fuzzy** -- rapidfuzz token-sort similarity of the keys within a type, above a
   threshold. Candidates come from blocking (token prefixes and suffixes) and, within a
   block, from a q-gram filter that passes every name the ratio can reach
   (:mod:`kgkit.ratio_index`). A key held by more than ``block_cap`` (200) of the type's
   names ("<hol" of every "... Holdings") is purged for the names that hold a rarer one,
   which bounds the work a name costs, so the stage stays linear in the names; near names
   that share only such a key are then not compared (:func:`_usable_blocks`). No document
   of the shared gold sets has a key held by more than 18 names of a type.
   A group joins a cluster only if it is within the threshold of *every* member
   (complete link), so A~B and B~C never drag A and C together when A and C are below
   the threshold. Names whose
   numbers differ ("Phase 2", "Phase 3") or whose one-letter labels differ ("Exhibit A",
   "Exhibit B"; "John F. Smith", "John R. Smith") never fuzzy-merge.

Why token-sort ratio and not WRatio: WRatio (and token-set ratio) score a name that is
contained in a longer one very high -- "Apple" against "Apple Bank" gets 90 -- which
would merge distinct organisations. Token-sort ratio is symmetric, ignores word order
("Smith, John" = "John Smith") and penalises every extra word.

Running page headers and footers are not entities: a mention on a line that recurs three
or more times in the document (``Source: ACME CORP, 10-Q, 5/22/2017`` under every page)
and holds more than the mention itself is rejected with the reason ``page_furniture``.

The result is independent of the order of the input mentions: groups are processed in
an order derived from their content only, and every tie is broken by text.
"""
from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Any, Iterable

from rapidfuzz import fuzz, process

from kgkit import ids
from kgkit.type_kinds import generic_type_map, literal_types
from kgkit.backends.offline.literals import normalise, recurring
from kgkit.evidence import locate_mention
from kgkit.name_keys import canonical_key, fold_tokens, split_trade_name, squash
from kgkit.ratio_index import RatioIndex, could_reach as _could_reach
from kgkit.schema.model import Domain

#: Every reason a surface form can have joined a node, in the order the stages run.
REASONS = ("exact", "case/punctuation", "legal-suffix", "declared-alias", "defined-term", "title", "region", "same-value",
           "fuzzy")

#: A line seen this many times in one document is page furniture (a running header or footer).
FURNITURE_REPEATS = 3

# Tokens too common to be useful blocking keys.
_STOP_TOKENS = frozenset({"the", "of", "and", "for", "a", "an", "in", "on", "to", "de", "la"})

def _base_name(surface: str) -> str:
    """The display form of a surface: squashed, without a trade-name clause."""
    return split_trade_name(squash(surface))[0]


def _rule_reason(a: str, b: str) -> str:
    """Which normalisation level first makes surfaces ``a`` and ``b`` equal."""
    if squash(a) == squash(b):
        return "exact"
    if split_trade_name(a)[1] or split_trade_name(b)[1]:
        return "declared-alias"
    if fold_tokens(a) == fold_tokens(b):
        return "case/punctuation"
    return "legal-suffix"


# --------------------------------------------------------------------------- data


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


# --------------------------------------------------------------------------- types


def entity_type_name(domain: Domain | None, label: str) -> str | None:
    """The domain's declared entity type a label means, or None if it declares no such type.

    Matches type names and their ``aliases`` case-insensitively ("per", "PERSON" ->
    "Person"). With no domain every non-empty label is its own type.
    """
    label = (label or "").strip()
    if not label:
        return None
    if domain is None:
        return label
    wanted = label.casefold()
    for t in domain.entity_types:
        if t.name.casefold() == wanted or any(a.casefold() == wanted for a in t.aliases):
            return t.name
    return None


# --------------------------------------------------------------------------- merge

# A parenthesised definition right after a name, as contracts write them:
#   CCA Industries, Inc. ("Company")
#   Emerson HealthCare, LLC, a Pennsylvania limited liability company ("Contractor")
#   Cool Technologies Inc., a Nevada corporation (hereinafter referred to as "COOL TECH")
#   Solutions Media, Inc., dba SpinRecords.com a Delaware Corporation, with offices at
#     ... ("SpinRecords.com" or "Client")
# The appositive may not run past ", and" / ", or" / ";", where the next party starts.
_APPOSITIVE = r"""(?:,?\s*(?:an?|the)\s+(?:(?!,\s*(?:and|or)\s)[^()"\u201c\u201d;]){0,160}?)?"""
_QUOTED = r"""["\u201c][^"\u201c\u201d()]{1,60}["\u201d]"""
_TRADE_CLAUSE = r"(?:,?\s*(?:d\.?/?b\.?/?a\.?|doing\s+business\s+as|a\.?/?k\.?/?a\.?)\s+[^\s,()]+)?"
_DEFINED_TERMS = re.compile(
    r"[.]?" + _TRADE_CLAUSE + r"\s*" + _APPOSITIVE + r"\s*\(\s*(?:(?:hereinafter|herein|collectively)\b[^\"\u201c\u201d()]{0,40}?)?"
    r"(?:the\s+)?(" + _QUOTED + r"(?:\s*(?:,|or|,\s*or)\s*(?:the\s+)?" + _QUOTED + r")*)\s*\)",
    re.IGNORECASE,
)
_DEFINITION_REACH = 300  # characters after a name that its definition may take
_QUOTED_TEXT = re.compile(r"""["\u201c]([^"\u201c\u201d()]{1,60})["\u201d]""")


def defined_terms_after(text: str, end: int) -> list[str]:
    """The terms a contract defines for the name ending at ``text[end]``, if any.

    Only a parenthesised, quoted term list directly after the name (optionally after an
    appositive such as ", a Delaware corporation with offices at ...") counts, so a
    definition that belongs to the next party in a list is not picked up.
    """
    stop = min(len(text), end + _DEFINITION_REACH)
    if text.find("(", end, stop) < 0:  # every definition has its "(": skip the regex's slow failure
        return []
    m = _DEFINED_TERMS.match(text, end, stop)
    return [squash(t) for t in _QUOTED_TEXT.findall(m.group(1))] if m else []


# A title right before a person's name, optionally after the place or body it belongs to:
# "President", "Gov.", "Texas Gov.", "Chicago Mayor", "Superior Court Judge".
_TITLE = (r"(?:Vice\s+President|President|Prime\s+Minister|Minister|Governor|Gov\.|Senator|Sen\.|Rep\.|"
          r"Representative|General|Gen\.|Dr\.|Mr\.|Mrs\.|Ms\.|Judge|Justice|Mayor|Rev\.|Reverend|Chairman|"
          r"Secretary|Ambassador|King|Queen|Prince|Princess|Pope|Lt\.|Col\.|Capt\.|Sgt\.|Sir)")
_TITLE_BEFORE = re.compile(r"(?<![\w.])((?:(?!(?:The|A|An|Former|Then|Late)\b)[A-Z][a-z]+\s+){0,3}" + _TITLE + r")\s+$")


def titled_names(mention: Mention, text: str | None) -> list[str]:
    """The mention's name with the title the text writes right before it, if any."""
    if text is None or mention.span is None:
        return []
    m = _TITLE_BEFORE.search(text, max(0, mention.span[0] - 60), mention.span[0])
    return [squash(f"{m.group(1)} {mention.name}")] if m else []


# "Memphis, Tenn.", "Waterville, N. Y.", "Milan, Ohio": a place, a comma, its state or country.
_PLACE_WITH_REGION = re.compile(r"(?P<place>[A-Z][\w.'’ -]*?[\w.]),\s+[A-Z][\w.]*(?:\s+[A-Z][\w.]*)?")


def place_of_region(name: str) -> list[str]:
    """A place named with its region ("Memphis, Tenn.") is also called by its own name."""
    m = _PLACE_WITH_REGION.fullmatch(name)
    return [m.group("place")] if m else []


def _part_written(mention: Mention, surface: str, text: str | None) -> list[str]:
    """A place named with what it lies in, whose span writes only the place ("Ontario,
    Canada" read from "the Province of Ontario and the federal laws of Canada"), is also
    called by the part written there."""
    if text is None or mention.span is None or "," not in surface:
        return []
    written = text[mention.span[0]:mention.span[1]].strip()
    return [written] if written and surface.startswith(written + ",") else []


def _defined_terms(mention: Mention, text: str | None) -> list[str]:
    """Defined terms following the mention's name, in the document text or its evidence.

    The mention's span may cover the name itself or the whole evidence quote, so when
    nothing follows the span the name is also looked for inside it.
    """
    def places():
        # a definition needs its "(": where none follows, the name is not looked for
        if text is not None and mention.span is not None:
            start, end = mention.span
            yield text, end
            if end - start > len(mention.name) and "(" in text[start:end + _DEFINITION_REACH]:
                yield from ((text, start + e) for _, e in locate_mention(mention.name, text[start:end]))
        if mention.evidence and "(" in mention.evidence:
            yield from ((mention.evidence, e) for _, e in locate_mention(mention.name, mention.evidence))

    for where, end in places():
        terms = defined_terms_after(where, end)
        if terms:
            return terms
    return []


@dataclass
class _Group:
    """Mentions of one type sharing one canonical key."""

    type: str
    key: str
    mentions: list[Mention] = field(default_factory=list)
    surfaces: Counter = field(default_factory=Counter)
    sorted_form: str = ""
    numbers: tuple[str, ...] = ()
    letters: tuple[str, ...] = ()
    blocks: frozenset[str] = frozenset()


def _prepare(group: _Group) -> None:
    tokens = group.key.split()
    group.sorted_form = " ".join(sorted(tokens))
    group.numbers = tuple(t for t in tokens if any(c.isdigit() for c in t))  # in order: "3.1" != "1.3"
    group.letters = tuple(t for t in tokens if len(t) == 1 and t.isalpha())
    keys = set()
    for t in tokens:
        if t in _STOP_TOKENS or len(t) == 1:  # middle initials would put everyone in one block
            continue
        keys.add("<" + t[:3])
        if len(t) >= 4:
            keys.add(">" + t[-3:])
    group.blocks = frozenset(keys or {"<" + group.sorted_form[:3]})


def _labels_agree(a: _Group, b: _Group) -> bool:
    """Numbers must be equal; one-letter labels must not conflict (one side may lack them)."""
    return a.numbers == b.numbers and (a.letters == b.letters or not a.letters or not b.letters)


def _score(a: _Group, b: _Group, threshold: float) -> float:
    """Token-sort similarity of two groups, 0 when it cannot reach ``threshold``."""
    if not _labels_agree(a, b):
        return 0.0
    if not _could_reach(len(a.sorted_form), len(b.sorted_form), threshold):  # length alone rules it out
        return 0.0
    return fuzz.ratio(a.sorted_form, b.sorted_form, score_cutoff=threshold)


BLOCK_CAP = 200  # canon.block_cap's default: see _usable_blocks


def _usable_blocks(order: list[_Group], cap: int | None) -> tuple[dict[int, frozenset[str]], Counter]:
    """(id(group) -> the blocking keys the group is looked up under, key -> groups holding
    it): block purging (Papadakis et al.), which bounds what one name costs the fuzzy stage.

    A key held by more than ``cap`` of the type's groups says next to nothing about
    identity -- a first name, "holdings", "...ville" -- and is dropped for every group that
    holds at least one key under the cap, so two names that share only such keys are never
    compared. The count is over every group known up front (``order``), so the choice does
    not depend on the order the names are met in.

    The cap is a count, not a share of the groups: with a share the kept blocks still grow
    with the document and the work with its square, while with a count a name that holds a
    kept key is compared with at most ``cap`` groups per key. A group whose keys are all
    over the cap keeps its rarest key(s) (the least held; every one of them on a tie) rather
    than none: on the benchmark text (6.4 MB, cap 200) two groups in three are such, and
    leaving them without candidates kept 12,232 more nodes apart where the rarest key keeps
    3,528 (benchmarks/HISTORY.md). Such a key still finds no more than
    ``cap`` groups: :func:`_fuzzy_clusters` files only the first ``cap`` under it (the
    most mentioned first), so no name costs more than ``cap`` per key and the stage is
    linear in the number of names. ``cap`` None keeps every key.

    The default, :data:`BLOCK_CAP` (200), is ten times the largest block of any document
    of the shared gold sets (18 names), so none of them merges otherwise than with every
    key; on the benchmark's generated text (benchmarks/offline_speed.py: every name a
    distinct entity, near names differing in the first letters of their one distinctive
    word) it keeps apart pairs that share only "... Holdings" or "...ville", and the whole
    run stays linear to 6.4 MB where without it the merge grew 2.7-3.3x a doubling
    (benchmarks/HISTORY.md, 2026-11-30).
    """
    held = Counter(k for g in order for k in g.blocks) if cap is not None else Counter()
    return {id(g): _usable(g.blocks, held, cap) for g in order}, held


def _usable(blocks: frozenset[str], held: Counter, cap: int | None) -> frozenset[str]:
    """The keys of ``blocks`` that ``held`` (key -> groups holding it) leaves under ``cap``;
    the least held ones if none is (see :func:`_usable_blocks`); all of them if ``cap`` is None."""
    if cap is None:
        return blocks
    kept = frozenset(k for k in blocks if held[k] <= cap)
    if kept:
        return kept
    fewest = min(held[k] for k in blocks)
    return frozenset(k for k in blocks if held[k] == fewest)


def _fuzzy_clusters(groups: list[_Group], threshold: float, blocking: bool,
                    cap: int | None = None) -> list[list[_Group]]:
    """Complete-link clusters of one type's groups, in a content-derived order.

    Each group joins the candidate cluster whose *weakest* similarity to it is highest,
    if that reaches the threshold. Candidates are the clusters filed under a usable
    blocking key of it (:func:`_usable_blocks`: keys held by more than ``cap`` groups are
    purged, and one a group must keep files no more than ``cap`` clusters) whose first
    member it reaches (a cluster that fails there fails complete link anyway); they are
    then checked member by member. The first members that reach it come from
    :meth:`~kgkit.ratio_index.RatioIndex.matches`: a q-gram filter, then rapidfuzz on
    what passes. Without a cap the stage stays quadratic on names that share a common key
    (the ratio_index docstring says why no sharper exact filter was found).
    """
    order = sorted(groups, key=lambda g: (-len(g.mentions), g.key))
    if threshold > 100:  # fuzzy merging switched off
        return [[g] for g in order]
    everything = frozenset({""})  # the one key when not blocking
    if blocking:
        usable, held = _usable_blocks(order, cap)
    else:
        usable, held, cap = {id(g): everything for g in order}, Counter(), None
    filed: Counter = Counter()  # clusters filed so far under each key over the cap

    def fileable(keys: frozenset[str]) -> frozenset[str]:
        if cap is None or all(held[k] <= cap for k in keys):
            return keys
        keys = frozenset(k for k in keys if held[k] <= cap or filed[k] < cap)
        filed.update(k for k in keys if held[k] > cap)
        return keys

    clusters: list[list[_Group]] = []
    blocks: list[frozenset[str]] = []  # the keys each cluster is filed under (its members')
    reachable = RatioIndex((g.sorted_form for g in order), threshold)
    for g in order:
        keys = usable[id(g)]
        best, best_score = None, 0.0
        for c, _ in reachable.matches(g.sorted_form, keys):
            worst = min(_score(g, member, threshold) for member in clusters[c])
            if worst and worst > best_score:
                best, best_score = c, worst
        if best is None:
            clusters.append([g])
            blocks.append(fileable(keys))
            reachable.add(g.sorted_form, len(clusters) - 1, blocks[-1])
        else:
            clusters[best].append(g)
            if not keys <= blocks[best]:
                more = fileable(keys - blocks[best])
                reachable.add_keys(best, more)
                blocks[best] |= more
    return clusters


def key_blocks(key: str) -> frozenset[str]:
    """The blocking keys of a canonical key (token prefixes and suffixes): names that share
    none are never compared. Public so the corpus graph (:mod:`kgkit.graph`) blocks alike."""
    group = _Group(type="", key=key)
    _prepare(group)
    return group.blocks


def key_similarity(a: str, b: str, threshold: float) -> float:
    """Token-sort similarity of two canonical keys as the fuzzy stage scores it; 0 when it
    cannot reach ``threshold`` or their numbers or one-letter labels conflict."""
    ga, gb = _Group(type="", key=a), _Group(type="", key=b)
    _prepare(ga)
    _prepare(gb)
    return _score(ga, gb, threshold)


def similar_keys(key: str, others: list[str], threshold: float, *, forms: list[str] | None = None) -> list[int]:
    """Indices of the ``others`` the fuzzy stage could join with ``key``: one vectorised
    rapidfuzz screen over all of them, then the label check on the few that pass.
    ``forms``: the others' sorted token forms, if the caller keeps them."""
    if threshold > 100 or not others:
        return []
    probe = _Group(type="", key=key)
    _prepare(probe)
    if forms is None:
        forms = [" ".join(sorted(k.split())) for k in others]
    hits = process.extract(probe.sorted_form, forms, scorer=fuzz.ratio, score_cutoff=threshold, limit=None)
    found = []
    for _, _, i in hits:
        other = _Group(type="", key=others[i])
        _prepare(other)
        if _score(probe, other, threshold):
            found.append(i)
    return sorted(found)


class _UnionFind:
    def __init__(self, n: int):
        self.parent = list(range(n))

    def find(self, i: int) -> int:
        while self.parent[i] != i:
            self.parent[i] = self.parent[self.parent[i]]
            i = self.parent[i]
        return i

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


class CanonResult:
    """The outcome of :func:`merge_entities`: nodes, merge records, rejects, ambiguities.

    Use :meth:`resolve` to map a name (a relation end, a role filler, a gold entity) to
    its node.
    """

    def __init__(self, nodes, merges, rejected, ambiguous, index, domain, threshold, legal_suffixes, keys=None,
                 block_cap=BLOCK_CAP):
        self.nodes: list[Node] = nodes
        self.merges: list[MergeRecord] = merges
        self.rejected: list[Rejection] = rejected
        self.ambiguous: list[Ambiguity] = ambiguous
        self.threshold = threshold
        self._index: dict[tuple[str, str], list[str]] = index  # (type, key) -> node ids
        self._by_id = {n.id: n for n in nodes}
        self._domain = domain
        self._legal = legal_suffixes
        # name -> canonical key: the merge's, since the views resolve the names it has keyed
        self._keys: dict[str, str] = keys if keys is not None else {}
        self._choices: list[tuple[str, str, str]] = [  # (type, sorted key, key): what fuzzy lookups screen
            (t, " ".join(sorted(key.split())), key) for (t, key) in sorted(index)]
        self._forms = [form for _, form, _ in self._choices]
        self._types = {t for t, _, _ in self._choices}
        self._block_cap = block_cap
        self._reachable: RatioIndex | None = None  # built on the first fuzzy lookup
        self._held: dict[str, Counter] = {}  # type -> blocking key -> names of the type holding it
        self._found: dict[tuple[str, str | None], tuple[list[tuple[Node, float]], bool]] = {}

    def node(self, node_id: str) -> Node | None:
        return self._by_id.get(node_id)

    def _candidates(self, name: str, type: str | None) -> tuple[list[tuple[Node, float]], bool]:
        """Candidate nodes with scores, and whether they matched exactly (key or alias).

        Kept per (name, type): the views ask for the same relation ends and fillers again
        and again."""
        if not isinstance(name, str) or not (type is None or isinstance(type, str)):
            return self._lookup(name, type)
        if (name, type) not in self._found:
            self._found[(name, type)] = self._lookup(name, type)
        return self._found[(name, type)]

    def _lookup(self, name: str, type: str | None) -> tuple[list[tuple[Node, float]], bool]:
        if not isinstance(name, str) or not name.strip():
            return [], False
        if type is not None:
            wanted = entity_type_name(self._domain, type)
            if self._domain is None and wanted is not None:  # no declared types: any spelling of one seen
                wanted = next((t for t in sorted(self._types) if t.casefold() == wanted.casefold()), wanted)
            if wanted is None:
                return [], False
            type = wanted
        types = [type] if type is not None else sorted(self._types)
        key = self._keys.get(name)
        if key is None:
            key = self._keys[name] = canonical_key(name, legal_suffixes=self._legal)
        exact = dict.fromkeys(i for t in types for i in self._index.get((t, key), ()))
        if exact:
            return [(self._by_id[i], 100.0) for i in exact], True
        if self.threshold > 100:  # fuzzy matching switched off
            return [], False
        probe = _Group(type="", key=key)
        _prepare(probe)
        if self._reachable is None:
            self._index_blocks()
        # the forms of these types that share a usable blocking key and reach the threshold, screened in C
        keys = [f"{t}\x1f{k}" for t in types if t in self._held
                for k in _usable(probe.blocks, self._held[t], self._block_cap)]
        scored: dict[str, float] = {}
        for j, score in self._reachable.matches(probe.sorted_form, keys):
            t, _, other_key = self._choices[j]
            other = _Group(type=t, key=other_key)
            _prepare(other)
            if not _labels_agree(other, probe):
                continue
            for node_id in self._index[(t, other.key)]:
                scored[node_id] = max(scored.get(node_id, 0.0), score)
        ranked = sorted(scored, key=lambda i: (-scored[i], i))
        return [(self._by_id[i], scored[i]) for i in ranked], False

    def _index_blocks(self) -> None:
        """File every (type, key) under its usable blocking keys (the merge's rule and cap,
        counted over the names and aliases this result knows), so a fuzzy lookup screens
        the names that share a usable key with it, not every name of the type: the views
        look up thousands of names under types they do not have."""
        blocks = [key_blocks(key) for _, _, key in self._choices]
        for (t, _, _), b in zip(self._choices, blocks):
            self._held.setdefault(t, Counter()).update(b)
        self._reachable = RatioIndex(self._forms, self.threshold)
        for i, ((t, form, _), b) in enumerate(zip(self._choices, blocks)):
            self._reachable.add(form, i, [f"{t}\x1f{k}" for k in _usable(b, self._held[t], self._block_cap)])

    def resolve_all(self, name: str, type: str | None = None) -> list[Node]:
        """Every node ``name`` may mean, best first.

        Exact canonical key or alias first (all such nodes, across types when ``type`` is
        None); only if there is none, fuzzy matches within the type at or above the
        threshold among the names sharing a usable blocking key with it (as the merge
        compares them), best score first. An unknown ``type`` resolves to nothing.
        """
        return [n for n, _ in self._candidates(name, type)[0]]

    def resolve(self, name: str, type: str | None = None) -> Node | None:
        """The one node ``name`` means, or None when there is none or it is ambiguous.

        Ambiguous means several nodes share the exact key or alias (homonyms of different
        types when ``type`` is None, or an alias two entities claim), or several tie for
        the best fuzzy score. :meth:`resolve_all` lists the candidates.
        """
        found, exact = self._candidates(name, type)
        if len(found) == 1:
            return found[0][0]
        if len(found) > 1 and not exact and found[0][1] > found[1][1]:
            return found[0][0]
        return None


def furniture_lines(text: str | None) -> dict[int, str]:
    """Start offset -> line, for the lines of ``text`` that recur :data:`FURNITURE_REPEATS`
    or more times (stripped, at least 8 characters): running headers and footers."""
    if not text:
        return {}
    counts: Counter = Counter()
    lines: list[tuple[int, str]] = []
    at = 0
    for raw in text.split("\n"):
        line = raw.strip()
        if len(line) >= 8:
            counts[line] += 1
            lines.append((at, raw))
        at += len(raw) + 1
    return {start: raw for start, raw in lines if counts[raw.strip()] >= FURNITURE_REPEATS}


def _on_furniture(m: Mention, text: str | None, furniture: dict[int, str]) -> bool:
    """Whether the mention sits on a running header/footer line that says more than its name."""
    if not furniture or m.span is None or text is None:
        return False
    line_start = text.rfind("\n", 0, m.span[0]) + 1
    line = furniture.get(line_start)
    return line is not None and m.span[1] <= line_start + len(line) and squash(line) != squash(m.name)


def merge_entities(
    mentions: Iterable[Mention],
    domain: Domain | None = None,
    *,
    threshold: float = 90.0,
    legal_suffixes: bool = True,
    text: str | None = None,
    blocking: bool = True,
    block_cap: int | None = BLOCK_CAP,
) -> CanonResult:
    """Merge mentions into nodes: rules, declared aliases and defined terms, then fuzzy.

    Parameters:
        mentions: pass-1 mentions from every chunk of one document.
        domain: types are matched to its declared entity types (name or alias,
            case-insensitive); mentions of undeclared types go to ``rejected``. None keeps
            every type as given.
        threshold: token-sort similarity (0-100) at or above which two names of one type
            merge; above 100 disables fuzzy merging.
        legal_suffixes: strip legal forms when comparing names (config ``canon.legal_suffixes``).
        text: the document text; with it, a definition after a mention's span
            (``Acme Corp. (the "Company")``) is found even when the evidence quote is short.
        blocking: compare only names sharing a token prefix or suffix (the merge;
            :meth:`CanonResult.resolve` always blocks). Exists so the benchmark and a
            test can compare against the exhaustive search.
        block_cap: block purging (config ``canon.block_cap``) -- a blocking key held by
            more than this many groups of a type is not used for the names that hold a
            rarer one (see :func:`_usable_blocks`); None uses every key.

    Returns a :class:`CanonResult`; nothing is dropped without a reason.
    """
    rejected: list[Rejection] = []
    groups: dict[tuple[str, str], _Group] = {}
    claims: dict[tuple[str, str], dict[tuple[str, str], tuple[str, str]]] = defaultdict(dict)
    key_cache: dict[str, str] = {}  # per distinct name: the names recur in every stage below
    base_cache: dict[str, str] = {}

    def key_of(name: str) -> str:
        if name not in key_cache:
            key_cache[name] = canonical_key(name, legal_suffixes=legal_suffixes)
        return key_cache[name]

    def base_name(surface: str) -> str:
        if surface not in base_cache:
            base_cache[surface] = _base_name(surface)
        return base_cache[surface]

    declared = ", ".join(t.name for t in domain.entity_types) if domain is not None else ""
    literal_kind = literal_types(domain.entity_types) if domain is not None else {}
    person_type = generic_type_map(domain.entity_types).get("person") if domain is not None else None
    location_type = generic_type_map(domain.entity_types).get("location") if domain is not None else None
    furniture = furniture_lines(text)
    for m in sorted(mentions, key=Mention._order):
        if not isinstance(m.name, str) or not m.name.strip():
            rejected.append(Rejection(m, "empty entity name", "invalid_entity"))
            continue
        etype = entity_type_name(domain, m.type if isinstance(m.type, str) else "")
        if etype is None:
            rejected.append(Rejection(m, f"unknown entity type {m.type!r} (declared: {declared or 'none'})",
                                      "unknown_type"))
            continue
        if _on_furniture(m, text, furniture):
            rejected.append(Rejection(m, "on a line repeated on every page (a running header or footer)",
                                      "page_furniture"))
            continue
        surface = m.name.strip()  # as written: a re-spaced copy is recorded as an "exact" merge
        gkey = (etype, key_of(surface))
        group = groups.setdefault(gkey, _Group(type=etype, key=gkey[1]))
        group.mentions.append(m)
        group.surfaces[surface] += 1
        titles = titled_names(m, text) if etype == person_type else []
        places = place_of_region(surface) if etype == location_type else _part_written(m, surface, text)
        for alias, reason in [(a, "declared-alias") for a in m.aliases] + [
            (t, "defined-term") for t in _defined_terms(m, text)
        ] + [(a, "declared-alias") for a in [split_trade_name(surface)[1]] if a] + [(t, "title") for t in titles] + [
            (p, "region") for p in places]:
            if isinstance(alias, str) and alias.strip():
                akey = key_of(squash(alias))
                if akey != gkey[1]:
                    claims[(etype, akey)].setdefault(gkey, (reason, squash(alias)))

    # A defined term is its definer whatever type another mention gave it: a group of
    # another type named by a term exactly one entity defined joins that entity.
    definers: dict[str, set[tuple[str, str]]] = defaultdict(set)
    for (etype, akey), by in claims.items():
        definers[akey].update(g for g, (reason, _) in by.items() if reason == "defined-term")
    # A term the document defines (typed as the domain's defined-term type) is that term,
    # not also an organisation or a place of the same name.
    term_type = generic_type_map(domain.entity_types).get("defined_term") if domain is not None else None
    for (etype, key) in list(groups):
        if (etype, key) in claims or etype in literal_kind:
            continue
        owners = definers.get(key, set())
        if not owners and term_type and etype != term_type and (term_type, key) in groups:
            owners = {(term_type, key)} if (term_type, key) not in claims else set(claims[(term_type, key)])
        if len(owners) == 1:
            [owner] = owners
            if owner[0] != etype:
                claims[(etype, key)][owner] = ("defined-term", squash(next(iter(groups[(etype, key)].surfaces))))

    # Alias targets stay out of fuzzy matching: "the Company" must join its claimant, not a
    # look-alike. Literals match by value, never by spelling.
    targets = {k for k in claims if k in groups}
    by_type: dict[str, list[_Group]] = defaultdict(list)
    by_value: dict[tuple[str, str], list[_Group]] = defaultdict(list)
    for k, g in groups.items():
        _prepare(g)
        if k in targets:
            continue
        if g.type in literal_kind:
            surface = next(iter(g.surfaces))
            value = normalise(literal_kind[g.type], surface)
            by_value[(g.type, repr(value) + "+" * recurring(surface) if value is not None else "?" + g.key)].append(g)
        else:
            by_type[g.type].append(g)

    clusters: list[list[_Group]] = []
    for etype in sorted(by_type):
        clusters.extend(_fuzzy_clusters(by_type[etype], threshold, blocking, block_cap))
    for vkey in sorted(by_value):
        clusters.append(sorted(by_value[vkey], key=lambda g: (-len(g.mentions), g.key)))
    value_cluster = {id(c) for c in clusters[len(clusters) - len(by_value):]}
    for k in sorted(targets):
        clusters.append([groups[k]])
    cluster_of = {(g.type, g.key): i for i, c in enumerate(clusters) for g in c}
    in_value_cluster = {(g.type, g.key) for c in clusters if id(c) in value_cluster for g in c}

    uf = _UnionFind(len(clusters))
    link_reason: dict[tuple[str, str], str] = {}  # alias-target group -> reason it joined
    ambiguous_claims: list[tuple[tuple[str, str], list[int]]] = []
    alias_surfaces: dict[int, set[str]] = defaultdict(set)  # cluster -> declared alias strings
    unambiguous_alias: dict[tuple[str, str], int] = {}
    for akey in sorted(claims):
        claimants = sorted({cluster_of[g] for g in claims[akey]})
        if len(claimants) > 1:
            ambiguous_claims.append((akey, claimants))
            continue
        owner = claimants[0]
        alias_surfaces[owner].update(surface for _, surface in claims[akey].values())
        unambiguous_alias[akey] = owner
        if akey in groups:
            uf.union(owner, cluster_of[akey])
            link_reason[akey] = sorted(r for r, _ in claims[akey].values())[0]

    members: dict[int, list[_Group]] = defaultdict(list)
    aliases_of: dict[int, set[str]] = defaultdict(set)  # root cluster -> declared alias strings
    for i, c in enumerate(clusters):
        members[uf.find(i)].extend(c)
    for i, surfaces in alias_surfaces.items():
        aliases_of[uf.find(i)] |= surfaces

    nodes: list[Node] = []
    merges: list[MergeRecord] = []
    index: dict[tuple[str, str], list[str]] = defaultdict(list)
    node_of_root: dict[int, Node] = {}
    for root, gs in members.items():
        primary = [g for g in gs if (g.type, g.key) not in link_reason] or gs
        counts: dict[str, int] = {}  # "X dba Y" counts as X: the node is X, Y an alias
        for g in primary:
            for surface, n in g.surfaces.items():
                base = base_name(surface)
                counts[base] = counts.get(base, 0) + n
        name = min(counts, key=lambda s: (-counts[s], -len(s), s))
        home = next(g for g in primary if any(base_name(s) == name for s in g.surfaces))
        etype = home.type
        merged_from = []
        for g in sorted(gs, key=lambda g: g.key):
            for surface in sorted(g.surfaces):
                if surface == name:
                    continue
                if g is home:
                    reason, score = _rule_reason(surface, name), 100.0
                elif (g.type, g.key) in link_reason:
                    reason, score = link_reason[(g.type, g.key)], 100.0
                elif (g.type, g.key) in in_value_cluster:
                    reason, score = "same-value", 100.0
                else:
                    reason, score = "fuzzy", fuzz.ratio(g.sorted_form, home.sorted_form)
                merged_from.append({"name": surface, "reason": reason, "score": round(score, 2)})
                merges.append(MergeRecord(etype, name, surface, reason, score))
        surfaces = {squash(s) for g in gs for s in g.surfaces} | aliases_of[root]
        mentions = tuple(sorted((m for g in gs for m in g.mentions), key=Mention._order))
        value = normalise(literal_kind[etype], name) if etype in literal_kind else None
        node = Node(ids.key_node_id(etype, key_of(name)), etype, name,
                    tuple(sorted(surfaces - {name})), mentions, tuple(merged_from), value)
        nodes.append(node)
        node_of_root[root] = node
        for g in gs:
            index[(g.type, g.key)].append(node.id)

    for akey, owner in unambiguous_alias.items():
        nid = node_of_root[uf.find(owner)].id
        if nid not in index[akey]:
            index[akey].append(nid)
    ambiguous = []
    for akey, claimant_clusters in ambiguous_claims:
        claimants = {n.id: n for n in (node_of_root[uf.find(c)] for c in claimant_clusters)}
        index[akey] = sorted(set(index.get(akey, [])) | set(claimants))
        alias_text = sorted(s for _, s in claims[akey].values())[0]
        ambiguous.append(Ambiguity(akey[0], alias_text, tuple(sorted(n.name for n in claimants.values()))))

    nodes.sort(key=lambda n: (n.type, n.name, n.id))
    merges.sort(key=lambda r: (r.type, r.kept, r.merged))
    return CanonResult(nodes, merges, rejected, ambiguous, dict(index), domain, threshold, legal_suffixes, key_cache,
                       block_cap)
