import datetime
import enum
import hashlib
import json
import math
import uuid
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.cases.canonical import canonical_ascii_json, canonical_json, sha256_hex


def test_canonical_json_sorts_keys_and_is_compact() -> None:
    expected = '{"a":[1,{"c":"é","d":2}],"b":1}'
    assert canonical_json({"b": 1, "a": [1, {"d": 2, "c": "é"}]}) == expected


def test_same_value_same_hash_regardless_of_key_order() -> None:
    assert sha256_hex({"x": 1, "y": 2}) == sha256_hex({"y": 2, "x": 1})
    assert sha256_hex({"x": 1}) != sha256_hex({"x": 2})


def test_non_finite_numbers_are_refused() -> None:
    with pytest.raises(ValueError):
        canonical_json({"x": math.nan})
    with pytest.raises(ValueError):
        canonical_json({"x": math.inf})


def test_bytes_and_text_hash_as_is() -> None:
    assert sha256_hex("abc") == sha256_hex(b"abc")
    assert sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"


# -- the text is the json module's, and it never changes silently ----------------------------

REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                             allow_nan=False)
SETTINGS = settings(max_examples=200, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False,
                                                                       allow_infinity=False),
                    st.text(), st.text(alphabet="0.e-9x\x7f\ud800"))
KEYS = st.one_of(st.text(max_size=6), st.text(alphabet="ab\x7f\ud800\uffff\U00010000",
                                               max_size=3))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.dictionaries(KEYS, inner, max_size=5)), max_leaves=30)


@SETTINGS
@given(JSON_VALUES)
def test_ascii_text_reads_back_as_the_same_value(value: Any) -> None:
    text = canonical_ascii_json(value)
    assert text.isascii()
    assert json.loads(text) == json.loads(REFERENCE.encode(value))
    assert canonical_json(json.loads(text)) == canonical_json(value)


@SETTINGS
@given(st.dictionaries(st.text(max_size=4), SCALARS, max_size=6))
def test_hashes_follow_the_reference_text(value: dict[str, Any]) -> None:
    try:
        expected = hashlib.sha256(REFERENCE.encode(value).encode()).hexdigest()
    except UnicodeEncodeError:  # a lone surrogate has no UTF-8 form: refused alike
        with pytest.raises(UnicodeEncodeError):
            sha256_hex(value)
        return
    assert sha256_hex(value) == expected


def test_pinned_texts_and_digests() -> None:
    """The canonical text of these values is part of every stored hash: it must never change."""
    value = {"b": [1, 2.5, 1e-05, None, True], "a": "Zoë \ud800", "c": {"z": 1, "y": -0.0}}
    assert canonical_json(value) == '{"a":"Zoë \ud800","b":[1,2.5,1e-05,null,true],' \
        '"c":{"y":-0.0,"z":1}}'
    assert canonical_ascii_json(value) == '{"a":"Zo\\u00eb \\ud800","b":[1,2.5,1e-05,null,' \
        'true],"c":{"y":-0.0,"z":1}}'
    assert sha256_hex({"x": [1, "é"]}) == hashlib.sha256('{"x":[1,"é"]}'.encode()).hexdigest()


def test_cycles_are_refused() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError):
        canonical_json(cyclic)


def test_enums_and_uuids_are_written_as_their_value() -> None:
    class Colour(enum.Enum):
        RED = 1

    ident = uuid.UUID(int=7)
    assert canonical_json([Colour.RED, ident, 1e-5]) == f'[1,"{ident}",1e-05]'
    with pytest.raises(TypeError):
        canonical_json([datetime.date(2026, 1, 1)])
