"""The merge's result: nodes, merge records, rejects, ambiguities, and name resolution against them."""
from __future__ import annotations

from collections import Counter


from kgkit.canon.records import Ambiguity, MergeRecord, Node, Rejection
from kgkit.canon.names import entity_type_name
from kgkit.canon.fuzzy import _labels_agree, BLOCK_CAP, _Group, _prepare, _usable, key_blocks
from kgkit.text.name_keys import canonical_key
from kgkit.text.ratio_index import RatioIndex


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
        reachable = self._reachable
        assert reachable is not None  # built by _index_blocks
        # the forms of these types that share a usable blocking key and reach the threshold, screened in C
        keys = [f"{t}\x1f{k}" for t in types if t in self._held
                for k in _usable(probe.blocks, self._held[t], self._block_cap)]
        scored: dict[str, float] = {}
        for j, score in reachable.matches(probe.sorted_form, keys):
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
