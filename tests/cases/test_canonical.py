import math

import pytest

from authpairs.cases.canonical import canonical_json, sha256_hex


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
