"""The engine's and the modes' shortcuts give what the long way gives, and save the work.

Each stands in for work a run repeated (a name resolved for every relation end, chunk and
view; a chunk's share of the skeleton built per view; every item of an answer measured as
JSON): these tests compare it with the long way and count the calls it saves.
"""
from __future__ import annotations

import random

from kgkit.canon.records import Mention
from kgkit.canon.merge import merge_entities
from kgkit.modes.base import Skeleton
from kgkit.formats.model import Domain, EntityType

DOMAIN = Domain(name="test", entity_types=(EntityType("Person"), EntityType("Organization"), EntityType("Location")))
NAMES = ["Acme Corp", "Acme Corporation", "ACME", "Jane Doe", "Doe", "Jane Do", "Berlin", "Paris", "Acme",
         "Globex Ltd", "Globex", "Initech", "Jane", "Paris Hilton", "Hilton"]
TYPES = ["Person", "Organization", "Location"]


def _old_lookup(resolve, candidates, name, types=()):
    """Skeleton.lookup as it was before the memo: every call asks the merge."""
    typed = [t for t in types if t != "*"]
    if not typed or len(typed) < len(types):
        found = resolve(name, None)
        if found:
            return found
        every = candidates(name)
        return every[0] if len(every) == 1 else None
    hits = {resolve(name, t) for t in typed} - {None}
    return hits.pop() if len(hits) == 1 else None


def test_lookup_memo_answers_as_the_merge_does_and_asks_once_per_name_and_type():
    rng = random.Random(5)
    for _ in range(40):
        mentions = [Mention(name=rng.choice(NAMES), type=rng.choice(TYPES), chunk_id="c0")
                    for _ in range(rng.randint(1, 12))]
        merged = merge_entities(mentions, DOMAIN)
        asked = {"resolve": 0, "candidates": 0}

        def resolve(name, type_):
            asked["resolve"] += 1
            found = merged.resolve(name, type_)
            return found.id if found else None

        def candidates(name):
            asked["candidates"] += 1
            return [n.id for n in merged.resolve_all(name)]

        nodes = [{**n.to_dict(), "origin": "core"} for n in merged.nodes]
        skeleton = Skeleton(doc_id="d", nodes=nodes, edges=[], resolve=resolve, candidates=candidates)
        queries = [(rng.choice(NAMES + ["Nobody", "Acme Corp."]),
                    tuple(rng.sample(TYPES + ["*"], rng.randint(0, 3)))) for _ in range(60)]
        for name, types in queries * 3:
            expected = _old_lookup(lambda n, t: (merged.resolve(n, t) or None) and merged.resolve(n, t).id,
                                   lambda n: [x.id for x in merged.resolve_all(n)], name, types)
            assert skeleton.lookup(name, types) == expected
            assert skeleton.meanings(name) == [x.id for x in merged.resolve_all(name)]
        distinct_resolves = {(name, t) for name, types in queries
                             for t in ([None] if not [t for t in types if t != "*"] or "*" in types
                                       else [t for t in types if t != "*"])}
        assert asked["resolve"] <= len(distinct_resolves)
        assert asked["candidates"] <= len({name for name, _ in queries})


def test_lookup_of_an_unknown_name_is_remembered_as_none():
    asked = []
    skeleton = Skeleton(doc_id="d", nodes=[], edges=[], resolve=lambda n, t: asked.append((n, t)),
                        candidates=lambda n: [])
    assert skeleton.lookup("Nobody", ("Person",)) is None
    assert skeleton.lookup("Nobody", ("Person",)) is None
    assert asked == [("Nobody", "Person")]


def _chunk(i: int, text: str):
    from kgkit.documents.types import Chunk

    return Chunk(id=f"c{i}", doc_id="d", index=i, text=text, start=0, end=len(text))


def test_part_for_is_made_once_per_chunk_and_its_lists_are_the_callers():
    nodes = [{"id": "a", "name": "Acme Corp", "type": "Org", "aliases": ["Acme"], "mentions": [{"chunk": "c0"}]},
             {"id": "j", "name": "Jane Doe", "type": "Person", "aliases": [], "mentions": [{"chunk": "c1"}]}]
    edges = [{"id": "e", "head": "a", "relation": "employs", "tail": "j", "evidence": {"chunk": "c0"}}]
    skeleton = Skeleton(doc_id="d", nodes=nodes, edges=edges, resolve=lambda n, t: None, candidates=lambda n: [])
    chunk = _chunk(0, "Acme hired Jane Doe.")
    first = skeleton.part_for(chunk)
    assert first == ([{"id": "a", "name": "Acme Corp", "type": "Org", "aliases": ["Acme"]},
                      {"id": "j", "name": "Jane Doe", "type": "Person", "aliases": []}],
                     [{"id": "e", "head": "Acme Corp", "relation": "employs", "tail": "Jane Doe"}])
    first[0].clear()  # a caller's list is its own
    again = skeleton.part_for(chunk)
    assert len(again[0]) == 2 and again[0][0] is skeleton.part_for(chunk)[0][0]  # the rows are made once
    # the same row stands for the node in a relation prompt's list
    assert skeleton.prompt_rows(skeleton.node_positions(_chunk(1, "no names"), {"a"}))[0] is again[0][0]
    # a chunk of another text under the same id is a chunk of its own
    assert skeleton.part_for(_chunk(0, "Nothing named."))[0] == [again[0][0]]  # mentioned there, not named


def test_part_for_forgets_what_it_made_when_the_nodes_change():
    nodes = [{"id": "a", "name": "Acme Corp", "type": "Org", "aliases": []}]
    skeleton = Skeleton(doc_id="d", nodes=nodes, edges=[], resolve=lambda n, t: None, candidates=lambda n: [])
    chunk = _chunk(0, "Acme Corp hired Jane Doe.")
    assert [n["id"] for n in skeleton.part_for(chunk)[0]] == ["a"]
    skeleton.nodes[0] = {"id": "b", "name": "Jane Doe", "type": "Person", "aliases": []}
    skeleton.nodes.append({"id": "a", "name": "Acme Corp", "type": "Org", "aliases": []})
    skeleton._by_id = {n["id"]: n for n in skeleton.nodes}
    assert [n["id"] for n in skeleton.part_for(chunk)[0]] == ["b", "a"]


def test_bound_answer_measures_the_whole_answer_once_and_cuts_as_item_by_item(monkeypatch):
    import json

    from kgkit.config.model import LimitsConfig
    from kgkit.engine import limits as limits_module
    from kgkit.engine.limits import bound_answer

    class ItemByItem(json.JSONEncoder):
        """Refuses the whole answer, so bound_answer measures every item on its own (the long way)."""

        def encode(self, o):
            if isinstance(o, dict) and "entities" in o:
                raise TypeError("measure each item")
            return super().encode(o)

    def _old_bound_answer(data, limits):
        with monkeypatch.context() as m:
            m.setattr(limits_module, "_SIZE", ItemByItem(ensure_ascii=False))
            return bound_answer(data, limits)

    rng = random.Random(9)
    cut = whole = 0
    for _ in range(600):
        def item():
            return {"name": rng.choice(NAMES) * rng.randint(1, 4), "type": rng.choice(TYPES),
                    "evidence": "é" * rng.randint(0, 60),
                    "confidence": rng.choice([0.5, 1.0, None, float("nan"), float("inf")])}
        data = {"entities": [item() for _ in range(rng.randint(0, 8))],
                "relations": [item() for _ in range(rng.randint(0, 3))], "note": item()}
        limits = LimitsConfig(answer_chars=rng.randint(50, 1500), items_per_answer=rng.randint(1, 8),
                              name_chars=rng.randint(10, 60))
        got, expected = bound_answer(data, limits), _old_bound_answer(data, limits)
        assert repr(got) == repr(expected)  # repr: NaN items compare equal as written
        cut += any(reason == "over_limit" and "answer_chars" in detail for _, reason, detail in expected[1])
        whole += not expected[1]
    assert cut > 50 and whole > 20  # both ways were taken


def test_an_answer_is_taken_whole_from_orjson_s_bound_only_where_its_exact_size_allows_it():
    from kgkit.engine.limits import _SIZE, _roomy

    rng = random.Random(11)
    texts = ["Acme", "é" * 7, "a\nb\u0001\"q\"", "\u2028", "x" * 40, "日本"]
    numbers = [0.5, 1e-05, 1e16, -1e300, 5e-324, float("nan"), float("-inf"), 2**40, True, None]
    for _ in range(800):
        def value(depth=0):
            kind = rng.random()
            if depth < 3 and kind < 0.3:
                return {rng.choice(texts): value(depth + 1) for _ in range(rng.randint(0, 4))}
            if depth < 3 and kind < 0.5:
                return [value(depth + 1) for _ in range(rng.randint(0, 4))]
            return rng.choice(texts) if kind < 0.75 else rng.choice(numbers)
        data = {"entities": [value() for _ in range(rng.randint(0, 6))]}
        exact = len(_SIZE.encode(data))
        for bound in (exact - 1, exact, exact + rng.randint(0, 3 * exact), 3 * exact + 400):
            assert _roomy(data, bound) == (exact <= bound), (data, bound)


def test_an_item_problem_is_found_and_worded_as_by_the_walk_of_every_path():
    """_problem passes a short text or a finite number without a call; what it finds, and
    the path it names, are those of the walk that visits every value with its path."""
    import math

    from kgkit.config.model import LimitsConfig
    from kgkit.engine.limits import _QUOTE_KEYS, _problem

    def walk(value, limits, where=""):
        if isinstance(value, float) and not math.isfinite(value):
            return "non_finite", f"{where or 'value'} is {value!r}, not a number JSON can hold"
        if isinstance(value, str):
            if len(value) > limits.name_chars and where.rsplit("/", 1)[-1] not in _QUOTE_KEYS:
                return "over_limit", (f"{where or 'value'} has {len(value)} characters "
                                      f"(limits.name_chars is {limits.name_chars})")
            return None
        children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in children:
            if isinstance(key, str) and len(key) > limits.name_chars:
                return "over_limit", f"a key of {len(key)} characters (limits.name_chars is {limits.name_chars})"
            found = walk(child, limits, f"{where}/{key}" if where else str(key))
            if found:
                return found
        return None

    rng = random.Random(10)
    keys = ["name", "evidence", "roles", "a/evidence", "x" * 12, 3]
    leaves = [lambda: "n" * rng.randint(0, 14), lambda: rng.choice([0.5, 2, None, True, float("nan"), float("-inf")])]

    def value(depth):
        if depth > 2 or rng.random() < 0.4:
            return rng.choice(leaves)()
        if rng.random() < 0.5:
            return [value(depth + 1) for _ in range(rng.randint(0, 3))]
        return {rng.choice(keys): value(depth + 1) for _ in range(rng.randint(0, 3))}

    problems = 0
    for _ in range(4000):
        item, limits = value(0), LimitsConfig(name_chars=rng.randint(5, 13))
        assert _problem(item, limits) == walk(item, limits), item
        problems += walk(item, limits) is not None
    assert 500 < problems < 3500


def test_a_chunk_is_read_into_sentence_parts_once_for_every_view_that_reads_it_alike(monkeypatch):
    import gc

    from kgkit.backends.offline import upgrades
    from kgkit.catalog.load import load_domain

    general, contracts = load_domain("general"), load_domain("legal_contracts")
    text = ("Acme Corp hired Jane Doe on May 4, 2017. Jane Doe works for Acme Corp since March 3, 2018. "
            "Acme Corp paid Jane Doe $5 million on June 1, 2020.")
    entities = [{"name": "Acme Corp", "type": "Organization", "aliases": ["Acme"]},
                {"name": "Jane Doe", "type": "Person", "aliases": []}]
    edges = [{"id": "e", "head": "Jane Doe", "relation": "works_for", "tail": "Acme Corp"}]
    expected = {fn: getattr(upgrades, fn)(text, general, entities, edges)
                for fn in ("nary_answer", "event_answer", "temporal_answer")}
    assert all(next(iter(answer.values())) for answer in expected.values())  # every view finds something
    reads = []
    real = upgrades.sentence_parts
    monkeypatch.setattr(upgrades, "sentence_parts", lambda *a, **k: reads.append(a[0]) or real(*a, **k))
    chunk = _chunk(0, text)
    for _ in range(2):
        for fn, answer in expected.items():
            assert getattr(upgrades, fn)(chunk.text, general, entities, edges, chunk) == answer
    assert len(reads) == 1  # the three views read their literal kinds alike in general
    assert upgrades.chunk_parts(text, chunk, entities[:1], general.entity_types, ["date"]) == \
        real(text, entities[:1], general.entity_types, ["date"])  # other entities, kinds: read anew
    assert len(reads) == 2
    # a domain whose types have label cues runs their regexes on every reading, under each pass's budget
    upgrades.chunk_parts(text, chunk, entities, contracts.entity_types, ["date"])
    upgrades.chunk_parts(text, chunk, entities, contracts.entity_types, ["date"])
    assert len(reads) == 4
    del chunk
    gc.collect()
    assert len(upgrades._READINGS) == 0  # kept no longer than the chunk


def test_document_level_picks_the_nodes_a_full_sort_picks():
    from kgkit.engine.core import document_level

    rng = random.Random(3)
    for _ in range(300):
        nodes = [{"id": f"n{i}", "mentions": [{"chunk": f"c{rng.randrange(4)}"} for _ in range(rng.randint(0, 5))]}
                 for i in range(rng.randint(0, 30))]
        n = rng.randint(0, 12)
        ranked = sorted(range(len(nodes)), key=lambda i: (
            not any(m.get("chunk") == "c0" for m in nodes[i]["mentions"]), -len(nodes[i]["mentions"]), i))
        assert document_level(nodes, "c0", n) == {nodes[i]["id"] for i in ranked[:n]}


def test_normalised_values_are_read_once_and_each_caller_gets_its_own_mapping():
    from kgkit.modes.base import _normalised, normalised
    from kgkit.text.timex import normalise

    _normalised.cache_clear()
    for kind, text in [("money", "$5 million"), ("date", "May 4, 2017"), ("duration", "sixty (60) days"),
                       ("quantity", "3 tons"), ("date", "not a date")] * 2:
        assert normalised(kind, text) == normalise(kind, text)
    assert _normalised.cache_info().hits == 5
    first, second = normalised("money", "$5 million"), normalised("money", "$5 million")
    first["amount"] = 0
    assert second == {"amount": 5000000.0, "currency": "USD"} == normalised("money", "$5 million")


def test_role_cues_are_the_declared_qualifiers_with_triggers_whatever_was_asked_before():
    from kgkit.backends.offline.upgrades import _cues
    from kgkit.catalog.load import load_domain

    for name in ("general", "legal_contracts", "finance"):
        domain = load_domain(name)
        for rel in [*domain.nary_relation_types, *domain.event_types]:
            by_name = {q.name: q for q in domain.qualifiers if q.triggers}
            expected = {r.name: by_name[r.name] for r in rel.roles if r.name in by_name}
            assert _cues(rel.roles, domain.qualifiers) == expected
            assert _cues(rel.roles, domain.qualifiers) is _cues(rel.roles, domain.qualifiers)


def test_a_name_in_plain_ascii_text_is_located_as_the_pattern_locates_it():
    import re

    from kgkit.text import evidence

    rng = random.Random(11)
    alphabet = ["a", "b", "A", "B", "_", "1", " ", " ", "'", "`", "-", ".", "ab", "Ab"]
    plain = 0
    for _ in range(4000):
        name = "".join(rng.choice(alphabet[:-2] + ["\t"]) for _ in range(rng.randint(1, 5)))
        pieces = alphabet + ["\n", "  "] * (rng.random() < 0.2) + [name, name.upper()] * 3  # overlapping repeats too
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 30)))
        surface = name.strip()
        if not surface:
            continue
        pattern = re.compile(r"(?<!\w)(?:" + evidence._surface_pattern(surface) + r")(?!\w)", re.IGNORECASE)
        assert evidence.locate_mention(name, text) == [(m.start(), m.end()) for m in pattern.finditer(text)], \
            (name, text)
        plain += bool(text) and not evidence._ODD_SPACE.search(text)
    assert plain > 2000  # the str.find way was taken


def _yaml_files():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for kind, schema in (("domains", "domain"), ("views", "view"), ("templates", "template")):
        for folder in (root / kind, root / "tests" / "broken" / kind, root / "tests" / "schema_fixtures" / kind):
            for path in sorted(folder.glob("*.yaml")):
                yield schema, path


def test_the_compiled_schema_check_says_yes_only_where_jsonschema_finds_no_error():
    import copy

    import yaml

    from kgkit.formats.json_schemas import _conforms, validator

    rng = random.Random(2)
    seen = {True: 0, False: 0}
    odd = [None, 1, 1.5, True, "", "x\n", "Has Space", "ok_name", [], {}, {"x": 1}, ["a"], "é", "bad-", "2x"]

    def mutate(value):
        """The value with one random place changed (a key dropped, a value swapped)."""
        if isinstance(value, dict) and value and rng.random() < 0.8:
            key = rng.choice(list(value))
            if rng.random() < 0.15:
                value.pop(key)
            elif rng.random() < 0.3:
                value[key] = rng.choice(odd)
            else:
                mutate(value[key])
        elif isinstance(value, list) and value and rng.random() < 0.8:
            i = rng.randrange(len(value))
            if rng.random() < 0.3:
                value[i] = rng.choice(odd)
            else:
                mutate(value[i])

    for schema, path in _yaml_files():
        try:
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        except (yaml.YAMLError, UnicodeDecodeError, ValueError):
            continue
        for attempt in range(40):
            value = copy.deepcopy(data)
            if attempt:
                mutate(value)
            yes = _conforms(schema, value)
            seen[yes] += 1
            if yes:
                assert not list(validator(schema).iter_errors(value)), (path, value)
    assert seen[True] > 100 and seen[False] > 100


def test_a_view_schema_is_taken_without_jsonschema_only_where_jsonschema_takes_it():
    import copy

    import yaml
    from jsonschema import Draft202012Validator
    from jsonschema.exceptions import SchemaError

    from kgkit.catalog.validation import _certainly_a_schema

    rng = random.Random(8)
    odd = ["strin", "string", -1, 0, 2.5, None, True, [], {}, ["a", "a"], {"type": "object"}, "x"]
    seen = {True: 0, False: 0}
    schemas = []
    for kind, path in _yaml_files():
        if kind == "view":
            try:
                data = yaml.safe_load(path.read_text(encoding="utf-8"))
            except (yaml.YAMLError, UnicodeDecodeError, ValueError):
                continue
            schema = ((data or {}).get("upgrade") or {}).get("output_schema") if isinstance(data, dict) else None
            if isinstance(schema, dict):
                schemas.append(schema)
    assert schemas
    for schema in schemas:
        for attempt in range(300):
            value = copy.deepcopy(schema)
            for _ in range(attempt % 3):
                place, keys = value, []
                while isinstance(place, dict) and place and rng.random() < 0.7:
                    key = rng.choice(list(place))
                    keys.append(key)
                    if not isinstance(place[key], dict):
                        break
                    place = place[key]
                if isinstance(place, dict):
                    place[rng.choice(keys or ["type"]) if rng.random() < 0.7 else
                          rng.choice(["type", "minItems", "required", "items", "enum", "minimum"])] = \
                        copy.deepcopy(rng.choice(odd))
            yes = _certainly_a_schema(value)
            seen[yes] += 1
            if yes:
                try:
                    Draft202012Validator.check_schema(value)
                except SchemaError as exc:  # pragma: no cover - the failure this test looks for
                    raise AssertionError((value, exc.message)) from None
    assert seen[True] > 100 and seen[False] > 100


def test_the_collector_is_paced_while_documents_run_and_left_as_it_was():
    import gc
    import threading

    from kgkit.engine import collector

    before = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        first, second = collector.paced(), collector.paced()
        first.__enter__()
        assert gc.get_threshold() == (collector.YOUNG, 10, 10)
        second.__enter__()  # a second document overlapping the first
        first.__exit__(None, None, None)  # the first ends before the second
        assert gc.get_threshold() == (collector.YOUNG, 10, 10)
        second.__exit__(None, None, None)
        assert gc.get_threshold() == (700, 10, 10)
        gc.set_threshold(50_000, 20, 5)  # a process that set its own pace keeps what is higher
        with collector.paced():
            assert gc.get_threshold() == (50_000, 20, 10)
        assert gc.get_threshold() == (50_000, 20, 5)
        gc.set_threshold(700, 10, 10)

        unpaced = []

        def documents():
            for _ in range(200):
                with collector.paced():
                    unpaced.append(gc.get_threshold()[0] != collector.YOUNG)

        threads = [threading.Thread(target=documents) for _ in range(4)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert gc.get_threshold() == (700, 10, 10) and len(unpaced) == 800 and not any(unpaced)
    finally:
        gc.set_threshold(*before)


def test_a_run_paces_the_collector_and_restores_it(tmp_path, monkeypatch):
    import gc

    import kgkit
    from kgkit.config.model import CacheConfig, Config
    from kgkit.engine import run as run_module

    seen = []
    real = run_module.extract_document
    monkeypatch.setattr(run_module, "extract_document", lambda *a, **k: seen.append(gc.get_threshold()) or real(*a, **k))
    before = gc.get_threshold()
    text = tmp_path / "doc.txt"
    text.write_text("Acme Corp hired Jane Doe in Paris on May 4, 2017.\n", encoding="utf-8")
    kgkit.extract([text], domain="general", views="binary", config=Config(cache=CacheConfig(enabled=False)),
                  out_dir=tmp_path / "out", skills=False)
    assert seen and seen[0][0] >= 20_000 and gc.get_threshold() == before
