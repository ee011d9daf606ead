import datetime
import enum
import hashlib
import json
import math
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.cases.canonical import (
    canonical_ascii_json,
    canonical_json,
    sha256_hex,
    sha256_hex_and_member,
)


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


# -- the orjson fast path writes exactly what the json module writes ---------------------------

REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                             allow_nan=False)
ASCII_REFERENCE = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True,
                                   allow_nan=False)
SETTINGS = settings(max_examples=600, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
FLOATS = st.one_of(st.floats(), st.floats(min_value=-1e-3, max_value=1e-3),
                   st.sampled_from([1e-5, 1e-9, 1.5e-7, 1e16, 1e-4, 0.00012, -0.0, 5e-324]))
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(), FLOATS,
                    st.integers(-2**70, 2**70), st.text(), st.text(alphabet="0.e-9x\x7f\ud800"))
KEYS = st.one_of(st.text(max_size=6), st.text(alphabet="ab\x7f\ud800\uffff\U00010000",
                                               max_size=3))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5), st.tuples(inner, inner),
    st.dictionaries(KEYS, inner, max_size=5)), max_leaves=30)


def _outcome(encode: Callable[[Any], str], value: Any) -> tuple[str, str]:
    try:
        return "ok", encode(value)
    except (TypeError, ValueError) as exc:
        return "error", type(exc).__name__


@SETTINGS
@given(JSON_VALUES)
def test_canonical_json_is_byte_identical_to_the_json_module(value: Any) -> None:
    assert _outcome(canonical_json, value) == _outcome(REFERENCE.encode, value)


@SETTINGS
@given(JSON_VALUES)
def test_canonical_ascii_json_is_byte_identical_to_the_json_module(value: Any) -> None:
    assert _outcome(canonical_ascii_json, value) == _outcome(ASCII_REFERENCE.encode, value)


@SETTINGS
@given(st.dictionaries(st.text(max_size=4), st.one_of(FLOATS, st.none(), st.text(max_size=4)),
                       max_size=6))
def test_hashes_follow_the_reference_text(value: dict[str, Any]) -> None:
    kind, text = _outcome(REFERENCE.encode, value)
    if kind == "ok":
        assert sha256_hex(value) == hashlib.sha256(text.encode("utf-8")).hexdigest()


@pytest.mark.parametrize("value", [
    [math.nan], {"a": None, "b": -math.inf}, {"deep": [[[{"x": math.inf}]]], "n": None},
    [None, 1e-5], {"x": 1e-9}, [2**64], {1: "int key"}, ["\ud800"], [datetime.date(2026, 1, 1)],
    {"a": {"b": "c"} | {"d": None}}, [float("nan"), None],
])
def test_every_difference_of_orjson_falls_back(value: Any) -> None:
    assert _outcome(canonical_json, value) == _outcome(REFERENCE.encode, value)
    assert _outcome(canonical_ascii_json, value) == _outcome(ASCII_REFERENCE.encode, value)


def test_cycles_and_deep_nesting_fall_back() -> None:
    cyclic: list[Any] = []
    cyclic.append(cyclic)
    with pytest.raises(ValueError):
        canonical_json(cyclic)
    deep: Any = 1
    for _ in range(400):  # deeper than orjson's limit of 254 levels
        deep = [deep]
    assert canonical_json(deep) == REFERENCE.encode(deep)


def test_enums_and_uuids_encode_alike_on_both_paths() -> None:
    class Colour(enum.Enum):
        RED = 1

    ident = uuid.UUID(int=7)
    assert canonical_json([Colour.RED, ident]) == f'[1,"{ident}"]'
    assert canonical_json([Colour.RED, ident, math.ulp(0.0)]) == f'[1,"{ident}",5e-324]'
    assert canonical_json([Colour.RED, 1e-5]) == "[1,1e-05]"  # the fallback path


def test_ordinary_data_takes_the_fast_path() -> None:
    """A case's data (floats, nulls, non-ASCII text) is written by orjson, not the fallback."""
    from authpairs.cases import canonical

    data = {"amount": 75.0, "note": None, "text": "Zoë's one-time refund", "n": [1, 2.5, True]}
    fast = canonical._fast(data, ascii_only=False)
    assert fast is not None and fast.decode() == REFERENCE.encode(data)
    assert canonical._fast(data, ascii_only=True) is None  # non-ASCII: the fallback escapes it


@SETTINGS
@given(st.dictionaries(KEYS, JSON_VALUES, max_size=4), JSON_VALUES)
def test_whole_and_member_hashes_equal_two_separate_hashes(rest: dict[str, Any],
                                                           member: Any) -> None:
    value = {**rest, "public": member}
    assert _outcome(lambda v: sha256_hex_and_member(v, "public"), value) == _outcome(
        lambda v: (sha256_hex(v), sha256_hex(v["public"])), value)


@pytest.mark.parametrize("member", ["text", "", "é", {"a": 1.5}, [None, "x"], 3])
def test_a_text_member_is_hashed_as_text_like_sha256_hex(member: Any) -> None:
    value = {"id": "c1", "public": member}
    assert sha256_hex_and_member(value, "public") == (sha256_hex(value), sha256_hex(member))


# -- the manifest skips the non-finite check: a case's JSON-mode dump never holds NaN ---------

def _json_types(schema: Any) -> set[str]:
    """Every JSON Schema ``type`` named anywhere in ``schema``."""
    if isinstance(schema, dict):
        found = {schema["type"]} if isinstance(schema.get("type"), str) else set()
        for value in schema.values():
            found |= _json_types(value)
        return found
    if isinstance(schema, list):
        return set().union(*(_json_types(item) for item in schema)) if schema else set()
    return set()


def test_a_case_has_no_float_field() -> None:
    from authpairs.cases.models import Case

    assert "number" not in _json_types(Case.model_json_schema())


def test_a_non_finite_number_in_a_case_is_dumped_as_null(examples: Any) -> None:
    from authpairs.cases.dataset import Dataset

    case = examples.cases[0]
    arguments = {"limit": math.nan, "scores": [math.inf, -math.inf, 1.5e-7], "n": {"x": math.nan}}
    odd = case.model_copy(update={"public": case.public.model_copy(update={
        "request": case.public.request.model_copy(update={"arguments": arguments})})})
    dumped = odd.model_dump(mode="json")
    assert dumped["public"]["request"]["arguments"] == {
        "limit": None, "scores": [None, None, 1.5e-7], "n": {"x": None}}
    # The manifest's unchecked path gives the digests the checked path gives.
    assert sha256_hex_and_member(dumped, "public", finite=True) == sha256_hex_and_member(
        dumped, "public")
    manifest = Dataset("odd", [odd]).manifest()
    whole, public = sha256_hex_and_member(dumped, "public")
    assert manifest.public_sha256 == sha256_hex([(odd.case_id, public)])
    assert manifest.full_sha256 == sha256_hex([(odd.case_id, whole)])


@SETTINGS
@given(st.dictionaries(KEYS, JSON_VALUES, max_size=4), JSON_VALUES)
def test_finite_data_hashes_alike_with_and_without_the_check(rest: dict[str, Any],
                                                             member: Any) -> None:
    value = {**rest, "public": member}
    try:
        checked = sha256_hex_and_member(value, "public")
    except (TypeError, ValueError):
        return  # non-finite or not JSON: the caller of finite=True vouches it is neither
    assert sha256_hex_and_member(value, "public", finite=True) == checked
