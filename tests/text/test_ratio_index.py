"""The q-gram filter behind fuzzy matching may only leave out pairs whose fuzz.ratio is below
the threshold: checked against brute force on random strings, short ones included."""
import random
from collections import Counter

import pytest
from rapidfuzz import fuzz

from kgkit.text.ratio_index import RatioIndex, qgram_elements, shared_qgrams_bound


def random_strings(rng: random.Random, n: int, alphabet: str, lengths: tuple[int, int]) -> list[str]:
    """Random strings plus near copies of them (a few characters dropped, added or changed),
    so many pairs sit just above and just below the thresholds."""
    out = []
    for _ in range(n):
        if out and rng.random() < 0.6:
            s = list(rng.choice(out))
            for _ in range(rng.randint(1, 3)):
                i = rng.randrange(len(s) + 1)
                op = rng.choice("dia")
                if op == "d" and i < len(s):
                    del s[i]
                elif op == "i":
                    s.insert(i, rng.choice(alphabet))
                elif i < len(s):
                    s[i] = rng.choice(alphabet)
            out.append("".join(s))
        else:
            out.append("".join(rng.choice(alphabet) for _ in range(rng.randint(*lengths))))
    return out


@pytest.mark.parametrize("q", [2, 3])
@pytest.mark.parametrize("threshold", [50.0, 80.0, 90.0, 95.0, 100.0])
def test_shared_qgram_bound_holds_for_every_pair_that_reaches(q, threshold):
    rng = random.Random(q * 1000 + int(threshold))
    strings = random_strings(rng, 300, "abcd ", (0, 24))
    for a in strings:
        for b in strings:
            if fuzz.ratio(a, b, score_cutoff=threshold):
                shared = sum((Counter(qgram_elements(a, q)) & Counter(qgram_elements(b, q))).values())
                assert shared >= shared_qgrams_bound(len(a), len(b), threshold, q), (a, b)


def test_the_bound_is_zero_or_less_for_short_strings():
    # two 1-character strings, or 2 and 3: nothing shared is guaranteed, so every pair stays a candidate
    assert shared_qgrams_bound(1, 1, 90.0, 2) <= 0
    assert shared_qgrams_bound(2, 3, 80.0, 3) <= 0
    assert shared_qgrams_bound(20, 20, 90.0, 2) > 0


@pytest.mark.parametrize("q", [2, 3])
@pytest.mark.parametrize("threshold", [0.0, 50.0, 85.0, 90.0, 100.0])
@pytest.mark.parametrize("alphabet,lengths", [("abc", (0, 6)), ("abcdefgh ", (4, 30))])
def test_candidates_hold_every_item_the_ratio_reaches(q, threshold, alphabet, lengths):
    rng = random.Random(hash((q, threshold, alphabet)) & 0xFFFF)
    strings = random_strings(rng, 400, alphabet, lengths)
    stored, probes = strings[:250], strings[250:] + ["zzzz", ""]  # probes may hold q-grams nothing stored has
    index = RatioIndex(stored[:100], threshold, q=q)  # strings stored later may hold q-grams the order never saw
    keys_of = {i: ["k%d" % (i % 3), "all"] if i % 5 else ["k%d" % (i % 3)] for i in range(len(stored))}
    for i, s in enumerate(stored):
        index.add(s, i, keys_of[i][:1])
    for i, s in enumerate(stored):
        index.add_keys(i, keys_of[i][1:])  # keys added later count like the first ones
    left_out = 0
    for probe in probes + stored:
        for keys in (["k0"], ["k1", "all"], ["none"]):
            found = index.candidates(probe, keys)
            for i, s in enumerate(stored):
                if set(keys) & set(keys_of[i]) and fuzz.ratio(probe, s, score_cutoff=threshold) >= threshold:
                    assert i in found, (probe, s, keys)
                if set(keys).isdisjoint(keys_of[i]):
                    assert i not in found
                left_out += i not in found
    assert left_out  # the filter does filter


def test_the_filter_leaves_out_most_unlike_strings():
    rng = random.Random(3)
    strings = ["".join(rng.choice("abcdefghijklmnopqrstuvwxyz") for _ in range(15)) for _ in range(500)]
    index = RatioIndex(strings, 90.0)
    for i, s in enumerate(strings):
        index.add(s, i, [""])
    assert sum(len(index.candidates(s, [""])) for s in strings) < 0.1 * len(strings) ** 2


def syllable_names(rng: random.Random, n: int) -> list[str]:
    """Names built like benchmarks/offline_speed.py's (its own syllables, not its text): a
    few syllables, then a common word or first name, token-sorted as the merge compares them,
    so most pairs share long common parts and only a few reach the threshold."""
    syllables = ("ka", "lo", "mi", "ren", "tor", "vas", "bel", "os", "ul", "zu")
    out = []
    for _ in range(n):
        word = "".join(rng.choice(syllables) for _ in range(rng.randint(1, 4)))
        form = rng.choice([f"{word} holdings", f"{word}ville", f"anna {word}", f"{word} {word[:3]}", word])
        out.append(" ".join(sorted(form.split())))
    return out


@pytest.mark.parametrize("threshold", [0.0, 60.0, 90.0, 97.0, 100.0])
@pytest.mark.parametrize("kind", ["random", "repeats", "syllables"])
def test_matches_are_exactly_the_stored_items_that_reach_the_threshold(threshold, kind):
    rng = random.Random(hash((threshold, kind)) & 0xFFFF)
    if kind == "random":
        strings = random_strings(rng, 300, "abcdefgh ", (0, 20))
    elif kind == "repeats":  # runs and repeated q-grams ("aaaa", "abab"), short ones included
        strings = random_strings(rng, 300, "ab", (0, 10))
    else:
        strings = syllable_names(rng, 400)
    stored, probes = strings[: len(strings) // 2], strings[len(strings) // 2:]
    index = RatioIndex(stored[: len(stored) // 2], threshold)
    for i, s in enumerate(stored):
        index.add(s, i, ["k%d" % (i % 2)])
    found_any = 0
    for probe in probes + stored[:50]:
        for keys in (["k0"], ["k0", "k1"]):
            expected = [(i, fuzz.ratio(probe, s)) for i, s in enumerate(stored)
                        if "k%d" % (i % 2) in keys and fuzz.ratio(probe, s) >= threshold]
            got = index.matches(probe, keys)
            assert [i for i, _ in got] == [i for i, _ in expected], (probe, keys)
            assert [round(x, 6) for _, x in got] == [round(x, 6) for _, x in expected]
            found_any += len(got)
    assert found_any  # the strings were built so that some pairs reach every threshold
