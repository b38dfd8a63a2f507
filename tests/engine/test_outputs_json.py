"""The run folder's JSON text (kgkit.engine.outputs.dumps) is ``json.dumps``'s, byte for byte,
whichever encoder writes it, and refuses what ``json`` refuses."""
from __future__ import annotations

import dataclasses
import datetime
import enum
import json
import math
import struct

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kgkit.engine import outputs


def reference(data) -> str:
    return (json.dumps(data, ensure_ascii=False, indent=2, sort_keys=False, allow_nan=False) + "\n").encode()


# every float, every character (surrogates aside: neither encoder writes them as UTF-8), deep nesting
finite = st.floats(allow_nan=False, allow_infinity=False)
scalars = st.none() | st.booleans() | st.integers(-2**70, 2**70) | finite | st.text(st.characters(blacklist_categories=("Cs",)))
values = st.recursive(scalars, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
                      | st.tuples(inner, inner), max_leaves=30)


@settings(max_examples=400, deadline=None)
@given(st.lists(values, max_size=3) | st.dictionaries(st.text(max_size=6), values, max_size=4))
def test_dumps_writes_what_json_writes(data):
    assert outputs.dumps(data) == reference(data)


def test_dumps_writes_every_float_as_json_does():
    """Numbers are where orjson and json write differently (1e-05 against 0.00001)."""
    floats = [struct.unpack("d", struct.pack("Q", bits))[0] for bits in range(0, 2**64, 2**64 // 20011)]
    floats += [m * 10.0 ** e for e in range(-12, 20) for m in (1, -1.5, 7.000000000000001)] + [-0.0, 5e-324]
    floats = [f for f in floats if math.isfinite(f)]
    data = {"all": floats, "each": [{"confidence": f} for f in floats]}
    assert outputs.dumps(data) == reference(data)
    assert outputs._orjson_text({"confidence": [0.5, 0.25, 1.0, 123.75]}) is not None  # the usual values stay fast


@dataclasses.dataclass
class Row:
    a: int = 1


class Colour(enum.Enum):
    RED = 1


@pytest.mark.parametrize("bad, error", [
    ({"confidence": float("nan")}, ValueError), ([1, [float("inf")]], ValueError), ([-math.inf], ValueError),
    ([Row()], TypeError), ({"when": datetime.date(2020, 1, 2)}, TypeError), ([Colour.RED], TypeError),
    ({"s": {1, 2}}, TypeError)])
def test_dumps_refuses_what_json_refuses(bad, error):
    with pytest.raises(error):
        outputs.dumps(bad)


def test_keys_json_turns_into_text_and_big_integers_are_kept():
    data = {1: "one", None: [2**80, -(2**65)], "t": (1, (2, 3))}
    assert outputs.dumps(data) == reference(data)
