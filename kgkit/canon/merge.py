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
   (:mod:`kgkit.text.ratio_index`). A key held by more than ``block_cap`` (200) of the type's
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

from collections import defaultdict
from dataclasses import dataclass, field
from typing import Callable, Iterable

from rapidfuzz import fuzz

from kgkit import ids
from kgkit.canon.records import Ambiguity, Mention, MergeRecord, Node, Rejection
from kgkit.canon.names import (
    _base_name, _defined_terms, _on_furniture, _rule_reason, entity_type_name, furniture_lines, part_written,
    place_of_region, titled_names,
)
from kgkit.canon.fuzzy import BLOCK_CAP, _Group, _UnionFind, _fuzzy_clusters, _prepare
from kgkit.config.model import CanonConfig
from kgkit.formats.model import Domain
from kgkit.text.literals import normalise, recurring
from kgkit.text.name_keys import canonical_key, split_trade_name, squash
from kgkit.text.type_kinds import generic_type_map, literal_types
from kgkit.canon.result import CanonResult


# --------------------------------------------------------------------------- data


# --------------------------------------------------------------------------- types


# --------------------------------------------------------------------------- merge


@dataclass(frozen=True)
class _Kinds:
    """What the merge reads of the domain: which declared types are literals, persons,
    locations, defined terms."""

    declared: str  # the declared entity types, for a rejection's message
    literal_kind: dict[str, str]  # entity type -> literal kind ("date", "money", …)
    person: str | None
    location: str | None
    term: str | None

    @classmethod
    def of(cls, domain: Domain | None) -> "_Kinds":
        if domain is None:
            return cls("", {}, None, None, None)
        generic = generic_type_map(domain.entity_types)
        return cls(", ".join(t.name for t in domain.entity_types), literal_types(domain.entity_types),
                   generic.get("person"), generic.get("location"), generic.get("defined_term"))


class _Keys:
    """Canonical keys and base names, each computed once per distinct name: the names recur
    in every stage of the merge."""

    def __init__(self, legal_suffixes: bool):
        self.legal_suffixes = legal_suffixes
        self.cache: dict[str, str] = {}
        self._bases: dict[str, str] = {}

    def key(self, name: str) -> str:
        if name not in self.cache:
            self.cache[name] = canonical_key(name, legal_suffixes=self.legal_suffixes)
        return self.cache[name]

    def base(self, surface: str) -> str:
        if surface not in self._bases:
            self._bases[surface] = _base_name(surface)
        return self._bases[surface]


GroupKey = tuple[str, str]  # (entity type, canonical key)


@dataclass
class _Grouping:
    """Stage 1: the mentions grouped by (type, key), the aliases each group claims, the rejects."""

    groups: dict[GroupKey, _Group] = field(default_factory=dict)
    # alias (type, key) -> claiming group -> (reason, the alias as written)
    claims: dict[GroupKey, dict[GroupKey, tuple[str, str]]] = field(default_factory=lambda: defaultdict(dict))
    rejected: list[Rejection] = field(default_factory=list)


@dataclass
class _Clustering:
    """Stage 3: groups clustered (fuzzy within a type, by value for literals, alias targets alone)."""

    clusters: list[list[_Group]]
    cluster_of: dict[GroupKey, int]
    in_value_cluster: set[GroupKey]


@dataclass
class _Linking:
    """Stage 4: clusters joined through the aliases one cluster alone claims."""

    members: dict[int, list[_Group]]  # root cluster -> its groups
    aliases_of: dict[int, set[str]]  # root cluster -> declared alias strings
    link_reason: dict[GroupKey, str]  # alias-target group -> reason it joined
    unambiguous: dict[GroupKey, int]  # alias -> the cluster that alone claims it
    ambiguous: list[tuple[GroupKey, list[int]]]  # alias -> the clusters that claim it
    find: Callable[[int], int]


def _reject(m: Mention, kinds: _Kinds, domain: Domain | None, text: str | None,
            furniture: dict[int, str]) -> Rejection | str:
    """A mention's rejection, or its entity type."""
    if not isinstance(m.name, str) or not m.name.strip():
        return Rejection(m, "empty entity name", "invalid_entity")
    etype = entity_type_name(domain, m.type if isinstance(m.type, str) else "")
    if etype is None:
        return Rejection(m, f"unknown entity type {m.type!r} (declared: {kinds.declared or 'none'})", "unknown_type")
    if _on_furniture(m, text, furniture):
        return Rejection(m, "on a line repeated on every page (a running header or footer)", "page_furniture")
    return etype


def _group_mentions(mentions: Iterable[Mention], domain: Domain | None, kinds: _Kinds, keys: _Keys,
                    text: str | None) -> _Grouping:
    """Stage 1: each usable mention into its (type, key) group, with the aliases it claims
    (declared, defined terms after it, trade names, titles, regions)."""
    out = _Grouping()
    furniture = furniture_lines(text)
    for m in sorted(mentions, key=Mention._order):
        etype = _reject(m, kinds, domain, text, furniture)
        if isinstance(etype, Rejection):
            out.rejected.append(etype)
            continue
        surface = m.name.strip()  # as written: a re-spaced copy is recorded as an "exact" merge
        gkey = (etype, keys.key(surface))
        group = out.groups.get(gkey)
        if group is None:
            group = out.groups[gkey] = _Group(type=etype, key=gkey[1])
        group.mentions.append(m)
        group.surfaces[surface] += 1
        titles = titled_names(m, text) if etype == kinds.person else []
        places = place_of_region(surface) if etype == kinds.location else part_written(m, surface, text)
        for alias, reason in [(a, "declared-alias") for a in m.aliases] + [
            (t, "defined-term") for t in _defined_terms(m, text)
        ] + [(a, "declared-alias") for a in [split_trade_name(surface)[1]] if a] + [(t, "title") for t in titles] + [
            (p, "region") for p in places]:
            if isinstance(alias, str) and alias.strip():
                akey = keys.key(squash(alias))
                if akey != gkey[1]:
                    out.claims[(etype, akey)].setdefault(gkey, (reason, squash(alias)))
    return out


def _claim_defined_terms(grouping: _Grouping, kinds: _Kinds) -> None:
    """Stage 2, in place: a defined term is its definer whatever type another mention gave
    it (a group of another type named by a term exactly one entity defined joins that
    entity); a term the document defines (typed as the domain's defined-term type) is that
    term, not also an organisation or a place of the same name."""
    groups, claims = grouping.groups, grouping.claims
    definers: dict[str, set[GroupKey]] = defaultdict(set)
    for (etype, akey), by in claims.items():
        definers[akey].update(g for g, (reason, _) in by.items() if reason == "defined-term")
    term_type = kinds.term
    for (etype, key) in list(groups):
        if (etype, key) in claims or etype in kinds.literal_kind:
            continue
        owners = definers.get(key, set())
        if not owners and term_type and etype != term_type and (term_type, key) in groups:
            owners = {(term_type, key)} if (term_type, key) not in claims else set(claims[(term_type, key)])
        if len(owners) == 1:
            [owner] = owners
            if owner[0] != etype:
                claims[(etype, key)][owner] = ("defined-term", squash(next(iter(groups[(etype, key)].surfaces))))


def _cluster(grouping: _Grouping, kinds: _Kinds, threshold: float, blocking: bool,
             block_cap: int | None) -> _Clustering:
    """Stage 3: alias targets stay out of fuzzy matching ("the Company" must join its
    claimant, not a look-alike); literals match by value, never by spelling."""
    groups, claims = grouping.groups, grouping.claims
    targets = {k for k in claims if k in groups}
    by_type: dict[str, list[_Group]] = defaultdict(list)
    by_value: dict[tuple[str, str], list[_Group]] = defaultdict(list)
    for k, g in groups.items():
        _prepare(g)
        if k in targets:
            continue
        if g.type in kinds.literal_kind:
            surface = next(iter(g.surfaces))
            value = normalise(kinds.literal_kind[g.type], surface)
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
    return _Clustering(clusters, cluster_of, in_value_cluster)


def _link(grouping: _Grouping, clustering: _Clustering) -> _Linking:
    """Stage 4: an alias one cluster alone claims joins its target's cluster to the claimant;
    one several claim joins nothing and is reported."""
    claims, groups, cluster_of = grouping.claims, grouping.groups, clustering.cluster_of
    uf = _UnionFind(len(clustering.clusters))
    link_reason: dict[GroupKey, str] = {}
    ambiguous: list[tuple[GroupKey, list[int]]] = []
    alias_surfaces: dict[int, set[str]] = defaultdict(set)  # cluster -> declared alias strings
    unambiguous: dict[GroupKey, int] = {}
    for akey in sorted(claims):
        claimants = sorted({cluster_of[g] for g in claims[akey]})
        if len(claimants) > 1:
            ambiguous.append((akey, claimants))
            continue
        owner = claimants[0]
        alias_surfaces[owner].update(surface for _, surface in claims[akey].values())
        unambiguous[akey] = owner
        if akey in groups:
            uf.union(owner, cluster_of[akey])
            link_reason[akey] = sorted(r for r, _ in claims[akey].values())[0]
    members: dict[int, list[_Group]] = defaultdict(list)
    aliases_of: dict[int, set[str]] = defaultdict(set)
    for i, c in enumerate(clustering.clusters):
        members[uf.find(i)].extend(c)
    for i, surfaces in alias_surfaces.items():
        aliases_of[uf.find(i)] |= surfaces
    return _Linking(members, aliases_of, link_reason, unambiguous, ambiguous, uf.find)


def _node(gs: list[_Group], aliases: set[str], linking: _Linking, clustering: _Clustering, kinds: _Kinds,
          keys: _Keys, merges: list[MergeRecord]) -> Node:
    """Stage 5, for one root cluster: its name (the most written base name of the groups
    not joined by an alias), its merge records (appended to ``merges``) and the node."""
    primary = [g for g in gs if (g.type, g.key) not in linking.link_reason] or gs
    counts: dict[str, int] = {}  # "X dba Y" counts as X: the node is X, Y an alias
    for g in primary:
        for surface, n in g.surfaces.items():
            base = keys.base(surface)
            counts[base] = counts.get(base, 0) + n
    name = min(counts, key=lambda s: (-counts[s], -len(s), s))
    home = next(g for g in primary if any(keys.base(s) == name for s in g.surfaces))
    etype = home.type
    merged_from = []
    for g in sorted(gs, key=lambda g: g.key):
        for surface in sorted(g.surfaces):
            if surface == name:
                continue
            if g is home:
                reason, score = _rule_reason(surface, name), 100.0
            elif (g.type, g.key) in linking.link_reason:
                reason, score = linking.link_reason[(g.type, g.key)], 100.0
            elif (g.type, g.key) in clustering.in_value_cluster:
                reason, score = "same-value", 100.0
            else:
                reason, score = "fuzzy", fuzz.ratio(g.sorted_form, home.sorted_form)
            merged_from.append({"name": surface, "reason": reason, "score": round(score, 2)})
            merges.append(MergeRecord(etype, name, surface, reason, score))
    surfaces = {squash(s) for g in gs for s in g.surfaces} | aliases
    # a group's mentions are in that order already (stage 1 takes them sorted)
    mentions = tuple(gs[0].mentions if len(gs) == 1 else sorted((m for g in gs for m in g.mentions),
                                                                key=Mention._order))
    value = normalise(kinds.literal_kind[etype], name) if etype in kinds.literal_kind else None
    return Node(ids.key_node_id(etype, keys.key(name)), etype, name,
                tuple(sorted(surfaces - {name})), mentions, tuple(merged_from), value)


def _index_aliases(index: dict[GroupKey, list[str]], node_of_root: dict[int, Node], grouping: _Grouping,
                   linking: _Linking) -> list[Ambiguity]:
    """Stage 6, in place: every alias indexed to its node, an ambiguous one to all its
    claimants; the ambiguities."""
    for akey, owner in linking.unambiguous.items():
        nid = node_of_root[linking.find(owner)].id
        if nid not in index[akey]:
            index[akey].append(nid)
    ambiguous = []
    for akey, claimant_clusters in linking.ambiguous:
        claimants = {n.id: n for n in (node_of_root[linking.find(c)] for c in claimant_clusters)}
        index[akey] = sorted(set(index.get(akey, [])) | set(claimants))
        alias_text = sorted(s for _, s in grouping.claims[akey].values())[0]
        ambiguous.append(Ambiguity(akey[0], alias_text, tuple(sorted(n.name for n in claimants.values()))))
    return ambiguous


def merge_entities(
    mentions: Iterable[Mention],
    domain: Domain | None = None,
    *,
    threshold: float = CanonConfig.fuzzy_threshold,
    legal_suffixes: bool = CanonConfig.legal_suffixes,
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

    Returns a :class:`CanonResult`; nothing is dropped without a reason. The stages, each a
    function of its own: group the mentions (:func:`_group_mentions`), claim defined terms
    across types (:func:`_claim_defined_terms`), cluster (:func:`_cluster`), join through
    aliases (:func:`_link`), one node per joined cluster (:func:`_node`), index the aliases
    (:func:`_index_aliases`).
    """
    kinds, keys = _Kinds.of(domain), _Keys(legal_suffixes)
    grouping = _group_mentions(mentions, domain, kinds, keys, text)
    _claim_defined_terms(grouping, kinds)
    clustering = _cluster(grouping, kinds, threshold, blocking, block_cap)
    linking = _link(grouping, clustering)
    nodes: list[Node] = []
    merges: list[MergeRecord] = []
    index: dict[GroupKey, list[str]] = defaultdict(list)
    node_of_root: dict[int, Node] = {}
    for root, gs in linking.members.items():
        node = _node(gs, linking.aliases_of[root], linking, clustering, kinds, keys, merges)
        nodes.append(node)
        node_of_root[root] = node
        for g in gs:
            index[(g.type, g.key)].append(node.id)
    ambiguous = _index_aliases(index, node_of_root, grouping, linking)
    nodes.sort(key=lambda n: (n.type, n.name, n.id))
    merges.sort(key=lambda r: (r.type, r.kept, r.merged))
    return CanonResult(nodes, merges, grouping.rejected, ambiguous, dict(index), domain, threshold, legal_suffixes,
                       keys.cache, block_cap)
