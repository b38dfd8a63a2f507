"""Typed retrieval: one text query ranks nodes of several types at once, fused and
reduced to what the consumer acts on.

1. **Ranked lists per type**, by BM25 through the full-text index (kgkit/query/text.py):
   entity names with aliases, one list per entity type (``Party``, ``Tool``, ...);
   evidence quotes of statements, one list per kind (``quote:edge``, ``quote:hyperedge``,
   ``quote:event``, ``quote:temporal``); quotes that describe a node itself, one list per
   its type (``mention:Tool``).
2. **Weighted reciprocal-rank fusion**: a child at rank r (1-based) of list L scores
   ``weight(L) / (k + r)``, summed over the lists it is in (``query.search.k`` and
   ``query.search.weights``, keyed by list, by entity type, or by source ``name`` /
   ``quote``: :meth:`Fusion.weight`).
3. **Owner reduction** (``reduce``): ``document`` reduces every child to the documents it
   came from (an entity to the documents naming it, a quote to its document), ``entity``
   to the entities it is about (a quote of a statement to the statement's nodes), ``none``
   keeps the children. An owner scores its best child (``owner_score`` max) or the sum of
   its children (``query.search.owner_score``, sum by default), and keeps its best-ranked
   evidence; then the top ``limit``.

An ``intent`` re-weights the lists as the design suggests: ``lookup`` favours names,
``comparison`` and ``lineage`` favour statements, ``general`` changes nothing.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from kgkit.errors import InputError
from kgkit.graph.links import CHUNK
from kgkit.query import text
from kgkit.query.reader import Reader
from kgkit.query.results import Answer, Evidence, Hit

REDUCE = ("document", "entity", "none")
OWNER_SCORES = ("max", "sum")
INTENTS = {"general": {}, "lookup": {"name": 1.5}, "comparison": {"quote": 1.5}, "lineage": {"quote": 1.3}}
FTS_DEPTH = 5000  # full-text rows read at most, before they are split into lists


@dataclass
class Fusion:
    k: int = 30
    weights: dict[str, float] = field(default_factory=dict)
    depth: int = 100
    intent: str = "general"
    owner_score: str = "sum"

    def weight(self, name: str) -> float:
        """A list named in ``weights`` takes its weight; any other the weight of the type
        it ranks (``Server`` for ``Server`` and ``mention:Server``) times that of its
        source (``name`` or ``quote``), each 1 when not given; the intent multiplies."""
        if name == "embedding":  # one list over every kind of text: its own weight only
            return self.weights.get(name, 1.0)
        source = "name" if ":" not in name else "quote"
        if name in self.weights:
            w = self.weights[name]
        else:
            w = self.weights.get(name.split(":")[-1], 1.0) * self.weights.get(source, 1.0)
        return w * INTENTS[self.intent].get(source, 1.0)


def list_name(hit: text.TextHit) -> str:
    return _list_of(hit.kind, hit.type)


def _list_of(kind: str, type_: str) -> str:
    """The ranked list a full-text hit of ``kind`` (entity, quote) and ``type_`` goes to."""
    if kind == "entity":
        return type_
    if type_.startswith("mention:"):
        return type_
    return "quote:" + type_.split(":")[0]


def ranked_lists(reader: Reader, query: str, depth: int, types: list[str] | None = None) -> dict[str, list]:
    """list name -> hits best first, at most ``depth`` each."""
    counts: dict[str, int] = {}

    def keep(kind: str, type_: str) -> bool:
        name = _list_of(kind, type_)
        if types and name not in types and name.split(":")[-1] not in types:
            return False
        counts[name] = counts.get(name, 0) + 1
        return counts[name] <= depth

    lists: dict[str, list[text.TextHit]] = {}
    for hit in text.hits(reader, query, depth=FTS_DEPTH, keep=keep):
        lists.setdefault(list_name(hit), []).append(hit)
    return lists


def _typed(hit: text.TextHit, types: list[str] | None) -> bool:
    name = list_name(hit)
    return not types or name in types or name.split(":")[-1] in types


def search(reader: Reader, query: str, *, fusion: Fusion, limit: int = 10, reduce: str = "document",
           types: list[str] | None = None, embedder=None) -> Answer:
    owner_score = fusion.owner_score
    if reduce not in REDUCE:
        raise InputError(f"unknown reduction {reduce!r}", hint=f"one of {', '.join(REDUCE)}")
    if owner_score not in OWNER_SCORES:
        raise InputError(f"unknown owner score {owner_score!r}", hint=f"one of {', '.join(OWNER_SCORES)}")
    if fusion.intent not in INTENTS:
        raise InputError(f"unknown intent {fusion.intent!r}", hint=f"one of {', '.join(INTENTS)}")
    answer = Answer("search", reader.tenant, reader.version,
                    {"text": query, "reduce": reduce, "intent": fusion.intent, "types": types or []},
                    limits={"limit": limit, "k": fusion.k, "depth": fusion.depth, "owner_score": owner_score,
                            "weights": dict(sorted(fusion.weights.items()))})
    lists = ranked_lists(reader, query, fusion.depth, types)
    if embedder is not None:
        _embedding_list(reader, query, lists, fusion.depth, types, embedder, answer)
    fused: dict[tuple, float] = {}
    best: dict[tuple, tuple[int, str, text.TextHit]] = {}
    for name, hits in lists.items():
        w = fusion.weight(name)
        for rank, hit in enumerate(hits, 1):
            child = (hit.kind, hit.ref, hit.doc, hit.view) if hit.kind == "quote" else ("entity", hit.ref, "", "")
            fused[child] = fused.get(child, 0.0) + w / (fusion.k + rank)
            if child not in best or rank < best[child][0]:
                best[child] = (rank, name, hit)
    answer.report = {**answer.report, "lists": {name: len(hits) for name, hits in sorted(lists.items())}}
    shown: dict[tuple, str] = {}
    owners = _owners(reader, list(fused), reduce, shown)
    scores: dict[tuple[str, str], float] = {}
    via: dict[tuple[str, str], list[tuple[float, tuple]]] = {}
    for child, score in fused.items():
        for owner in owners.get(child, []):
            scores[owner] = max(scores.get(owner, 0.0), score) if owner_score == "max" else scores.get(owner, 0) + score
            via.setdefault(owner, []).append((score, child))
    ranked = sorted(scores, key=lambda o: (-scores[o], o))
    answer.cut("limit", len(ranked) - limit)
    top = {owner: sorted(via[owner], key=lambda v: (-v[0], v[1]))[:3] for owner in ranked[:limit]}
    names = reader.doc_names([ref for kind, ref in top if kind == "document"])  # in one read each, not one per hit
    reader.doc_ids({best[child][2].doc for steps in top.values() for _, child in steps if best[child][2].doc})
    answer.hits = [_hit(reader, owner, scores[owner], steps, best, shown, names) for owner, steps in top.items()]
    answer.partial = reader.budget.ran_out
    return answer


def _embedding_list(reader: Reader, query: str, lists: dict[str, list], depth: int, types: list[str] | None,
                    embedder, answer: Answer) -> None:
    """Add the ``embedding`` list (kgkit/query/embeddings.py); a provider failure leaves the
    BM25 lists and says why."""
    from kgkit.errors import ProviderError

    found = [h for hits in lists.values() for h in hits]
    try:
        ranked, cut = embedder.ranked(reader, query, found, depth * 4 if types else depth)
    except ProviderError as exc:
        answer.note = f"BM25 lists only: the embedding model failed ({exc.message})"
        answer.report["embeddings"] = {"model": embedder.model, "error": exc.message}
        return
    answer.cut("embeddings", cut)
    ranked = [h for h in ranked if _typed(h, types)][:depth]
    if ranked:
        lists["embedding"] = ranked
    answer.report["embeddings"] = {"model": embedder.model, "listed": len(ranked)}


def _owners(reader: Reader, children: list[tuple], reduce: str,
            shown: dict[tuple, str]) -> dict[tuple, list[tuple[str, str]]]:
    """child -> its owners, each (kind, id); ``shown`` gets child -> the id an answer gives it:
    an entity's id, or a statement's id as a snapshot has it (the same for every document
    stating it, so two documents' quotes of one statement reduce to one item)."""
    entity_refs = {c[1] for c in children if c[0] == "entity"}
    mention_nodes = {c[1] for c in children if c[0] == "quote"}
    canon = reader.entity_of(mention_nodes)  # a quote's ref is a node (mention) or a stored item id
    doc_id = reader.doc_ids({c[2] for c in children if c[0] == "quote"})
    info = reader.entities(entity_refs | set(canon.values()), documents=reduce == "document")
    if reduce == "document":
        _hub_documents(reader, info, set(doc_id.values()))
    items = {s.key: s for s in reader.items({(c[2], c[3], c[1]) for c in children
                                             if c[0] == "quote" and c[1] not in canon})}
    item_ids = reader.snapshot_ids(items.values())
    out: dict[tuple, list[tuple[str, str]]] = {}
    for c in children:
        kind, ref, doc, view = c
        if kind == "entity":
            if ref not in info:
                continue
            docs, about, own = info[ref]["documents"], [ref], ("entity", ref)
        elif ref in canon:
            docs, about, own = [doc_id.get(doc, "")], [canon[ref]], ("entity", canon[ref])
        else:
            s = items.get((doc, view, ref))
            if s is None or s.key not in item_ids:
                continue  # held or filtered: not visible
            docs, about, own = [doc_id.get(doc, "")], sorted({e for _, e in s.fillers}), (s.kind, item_ids[s.key])
        shown[c] = own[1]
        if reduce == "document":
            out[c] = [("document", d) for d in docs if d]
        elif reduce == "entity":
            out[c] = [("entity", e) for e in about]
        else:
            out[c] = [own]
    return out


def _hub_documents(reader: Reader, info: dict[str, dict], reached: set[str]) -> None:
    """An entity named in more documents than ``query.documents`` is listed with the first of
    them only; as a child it reduces to those and to every other document it is named in that
    the other children reach (``reached``, d_ ids), so a hub lifts the documents a query finds
    anyway, not a few chosen by name."""
    hubs = [e for e in info if e in reader.documents_cut]
    if not hubs or not reached:
        return
    id_of = {name: i for i, name in reader.doc_names(reached).items()}
    names = sorted(id_of)
    for node, entity in sorted(reader.members(hubs).items()):
        found = set(info[entity]["documents"])
        for i in range(0, len(names), CHUNK):
            part = names[i:i + CHUNK]
            found |= {id_of[doc] for (doc,) in reader.store._q(
                f"SELECT doc FROM doc_nodes WHERE tenant = ? AND node = ? AND doc IN ({','.join('?' * len(part))})",
                node, *part)}
        info[entity] = {**info[entity], "documents": sorted(found)}


def _hit(reader: Reader, owner: tuple[str, str], score: float, via: list[tuple[float, tuple]], best,
         shown: dict[tuple, str], doc_names: dict[str, str]) -> Hit:
    kind, ref = owner
    if kind == "document":
        name = doc_names.get(ref, ref)
    elif kind == "entity":
        name = reader.entities([ref]).get(ref, {}).get("name", ref)
    else:
        name = ref
    steps, evidence = [], []
    ids = reader.doc_ids({best[child][2].doc for _, child in via if best[child][2].doc})  # a name's hit has none
    for s, child in via:
        rank, list_, hit = best[child]
        steps.append({"id": shown.get(child, child[1]), "kind": child[0], "list": list_, "rank": rank, "score": round(s, 6),
                      "name": hit.text.split("\n")[0][:120]})
        if hit.kind == "quote":
            evidence.append(Evidence(hit.doc, ids.get(hit.doc, ""), None, hit.text, None, hit.view))
    return Hit(ref, kind, name, round(score, 6), steps, evidence)
