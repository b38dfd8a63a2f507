"""Block purging in the fuzzy merge (kgkit.canon.merge): a blocking key held by more than a cap of a
type's groups finds no candidates for a name that holds a rarer key."""
from __future__ import annotations

import random

from rapidfuzz import fuzz

from kgkit.canon.records import Mention
from kgkit.canon.fuzzy import _Group, _prepare, _usable_blocks
from kgkit.canon.merge import merge_entities

# Companies whose only shared words are "Holdings": eight fillers and a near pair.
FILLERS = ["Alpha", "Bravo", "Charlie", "Delta", "Echo", "Foxtrot", "Golf", "Hotel"]


def groups_of(keys: list[str]) -> list[_Group]:
    out = []
    for key in keys:
        g = _Group(type="Thing", key=key, mentions=[None])
        _prepare(g)
        out.append(g)
    return out


def usable_by_key(keys: list[str], cap: int | None) -> dict[str, set[str]]:
    groups = groups_of(keys)
    usable, _ = _usable_blocks(groups, cap)
    return {g.key: set(usable[id(g)]) for g in groups}


def holdings(*words: str) -> list[Mention]:
    return [Mention(f"{w} Holdings", "Organization") for w in [*FILLERS, *words]]


def node_count(result, type: str = "Organization") -> int:
    return sum(n.type == type for n in result.nodes)


def test_a_key_over_the_cap_is_not_used_by_a_name_that_holds_a_rarer_one():
    keys = ["anna berg", "anna borg", "anna burg", "hanna berg"]  # <ann: 3 groups, >nna: 4, <ber and >erg: 2
    assert usable_by_key(keys, 2) == {
        "anna berg": {"<ber", ">erg"}, "anna borg": {"<bor", ">org"}, "anna burg": {"<bur", ">urg"},
        "hanna berg": {"<han", "<ber", ">erg"},
    }
    assert usable_by_key(keys, 3)["anna berg"] == {"<ann", "<ber", ">erg"}  # at the cap: kept
    assert usable_by_key(keys, None)["anna berg"] == {"<ann", ">nna", "<ber", ">erg"}  # no cap: every key


def test_a_name_whose_keys_are_all_over_the_cap_keeps_its_rarest_ones():
    keys = ["anna berg", "anna borg", "anna burg", "hanna berg"]
    usable = usable_by_key(keys, 0)
    assert usable["anna berg"] == {"<ber", ">erg"}  # held by 2, against 3 and 4: both least held
    assert usable["anna borg"] == {"<bor", ">org"}
    assert usable["hanna berg"] == {"<han"}


def test_a_pair_sharing_only_a_purged_key_does_not_merge():
    a, b = "Kalomirentorvas", "Kelomirentorvaz"  # token-sort 91.7: only "<hol" and ">ngs" in common
    assert fuzz.token_sort_ratio(f"{a} Holdings", f"{b} Holdings") >= 90
    mentions = holdings(a, b)
    assert node_count(merge_entities(mentions)) == 9  # unpurged, "Holdings" brings them together
    assert node_count(merge_entities(mentions, block_cap=5)) == 10  # held by 10 > 5: purged
    assert node_count(merge_entities(mentions, block_cap=10)) == 9  # at the cap the key is still used


def test_a_pair_sharing_a_kept_key_still_merges():
    a, b = "Kalomirentorvas", "Kalomirentorvis"  # "<kal" held by these two only
    result = merge_entities(holdings(a, b), block_cap=5)
    assert node_count(result) == 9
    [record] = result.merges
    assert (record.reason, {record.kept, record.merged}) == ("fuzzy", {f"{a} Holdings", f"{b} Holdings"})


def test_names_made_only_of_purged_keys_merge_through_their_rarest_key():
    # every key of these towns is held by more than one group: "<kal" by two, ">lle" by all
    towns = ["Kalomirentorville", "Kalomirentarville", "Belville", "Dumville", "Ostorville"]
    mentions = [Mention(t, "Location") for t in towns]
    assert node_count(merge_entities(mentions, block_cap=1), "Location") == 4
    assert node_count(merge_entities(mentions, block_cap=None), "Location") == 4


def test_purged_merge_does_not_depend_on_input_order():
    rng = random.Random(7)
    mentions = holdings("Kalomirentorvas", "Kelomirentorvaz") + [
        Mention(f"Anna {w}", "Person") for w in ("Berg", "Borg", "Burg", "Bergs", "Kalomirentor", "Kalomirentar")]
    expected = merge_entities(mentions, block_cap=3)
    snapshot = ([n.to_dict() for n in expected.nodes], [r.to_dict() for r in expected.merges])
    assert len(expected.merges) == 2  # "Anna Berg(s)" and "Anna Kalomirentor/ar" share a kept key
    assert len(merge_entities(mentions).merges) == 3  # the cap kept the Holdings pair apart
    for _ in range(10):
        shuffled = mentions[:]
        rng.shuffle(shuffled)
        result = merge_entities(shuffled, block_cap=3)
        assert ([n.to_dict() for n in result.nodes], [r.to_dict() for r in result.merges]) == snapshot


def test_resolution_screens_only_names_sharing_a_usable_key():
    """A fuzzy lookup compares a name as the merge would: not with a name that shares no
    blocking key, nor with one that shares only a purged key."""
    far = merge_entities([Mention("Abcdefghijklmnopqrst", "Organization")])
    assert fuzz.ratio("xbcdefghijklmnopqrsy", "abcdefghijklmnopqrst") >= 90  # first and last letters differ
    assert far.resolve("Xbcdefghijklmnopqrsy", "Organization") is None  # no token prefix or suffix in common
    assert far.resolve("Abcdefghijklmnopqrsy", "Organization").name == "Abcdefghijklmnopqrst"  # "<abc" in common

    mentions = holdings("Kalomirentorvas")
    open_, purged = merge_entities(mentions), merge_entities(mentions, block_cap=5)
    assert open_.resolve("Kelomirentorvaz Holdings", "Organization").name == "Kalomirentorvas Holdings"
    assert purged.resolve("Kelomirentorvaz Holdings", "Organization") is None  # only "<hol", ">ngs" in common
    assert purged.resolve("Kalomirentorvis Holdings", "Organization").name == "Kalomirentorvas Holdings"
    assert purged.resolve("Kalomirentorvis Holdings").name == "Kalomirentorvas Holdings"  # any type


def test_config_canon_block_cap_reaches_the_merge(tmp_path):
    """``canon.block_cap`` in the configuration purges in a real offline run: the near pair
    that shares only "Holdings" stays two nodes with the cap and is one without it."""
    import kgkit
    from kgkit.config.model import CacheConfig, CanonConfig, Config

    words = [*FILLERS, "Kalomirentorvas", "Kelomirentorvaz"]
    doc = tmp_path / "doc.txt"
    doc.write_text("\n\n".join(f"On May {i + 1}, 2020 the board of {w} Holdings Ltd. met in Paris."
                               for i, w in enumerate(words)) + "\n", encoding="utf-8")

    def holdings_nodes(cap):
        config = Config(cache=CacheConfig(enabled=False), canon=CanonConfig(block_cap=cap))
        result = kgkit.extract([doc], domain="general", views="binary", config=config,
                               out_dir=tmp_path / f"out-{cap}", skills=False)[0]
        return sorted(n["name"] for n in result.nodes if n["name"].endswith("Holdings Ltd."))

    assert len(holdings_nodes(None)) == 9
    assert holdings_nodes(5) == sorted(f"{w} Holdings Ltd." for w in words)


def test_one_default_cap_for_the_merge_the_engine_and_the_configuration():
    """Purging is on by default, at the same cap wherever the merge is reached from."""
    import inspect

    from kgkit.canon.fuzzy import BLOCK_CAP
    from kgkit.config.model import CanonConfig
    from kgkit.engine.core import CoreSettings

    assert BLOCK_CAP == 200
    assert CanonConfig().block_cap == CoreSettings().block_cap == BLOCK_CAP
    assert inspect.signature(merge_entities).parameters["block_cap"].default == BLOCK_CAP
