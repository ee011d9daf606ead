"""The parser's fast paths agree with the slow reference on every input.

* The schema check confirms valid answers with fastjsonschema and leaves every rejection to
  jsonschema; the two must agree on validity for the interfaces' schemas, or a value could pass
  that the reference rejects.
* The nesting check cuts strings out with a regular expression; it must agree with a plain
  character-by-character scan, escapes and unterminated strings included.
"""

from __future__ import annotations

import json
from typing import Any

import jsonschema
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.review import parsing
from authpairs.review.schemas import CHECK_SCHEMA, DIRECT_SCHEMA, STRUCTURED_SCHEMA

SETTINGS = settings(max_examples=600, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])
SCALARS = st.one_of(st.none(), st.booleans(), st.integers(-3, 3), st.floats(allow_nan=False),
                    st.sampled_from(["ALLOW", "BLOCK", "UNKNOWN", "allow", "", "x" * 201]),
                    st.text(max_size=12))
JSON_VALUES = st.recursive(SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=5),
    st.dictionaries(st.sampled_from(["decision", "checks", "requirement", "finding",
                                     "evidence", "other"]), inner, max_size=4)), max_leaves=20)


def _check_like() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries(
        {"requirement": st.text(max_size=205), "finding": st.one_of(st.text(max_size=5),
                                                                    st.integers()),
         "evidence": st.lists(st.text(max_size=165), max_size=5)},
        optional={"extra": st.none()})


NEAR_VALID = st.fixed_dictionaries(
    {"decision": st.sampled_from(["ALLOW", "BLOCK", "UNKNOWN", "MAYBE", True, 1])},
    optional={"checks": st.lists(_check_like(), max_size=13), "extra": st.none()})


def _reference_valid(value: Any, schema: dict[str, Any]) -> bool:
    return jsonschema.Draft202012Validator(schema).is_valid(value)


@pytest.mark.parametrize("schema", [DIRECT_SCHEMA, STRUCTURED_SCHEMA, CHECK_SCHEMA],
                         ids=["direct", "structured", "check"])
@SETTINGS
@given(value=st.one_of(JSON_VALUES, NEAR_VALID))
def test_fast_schema_check_agrees_with_jsonschema(schema: dict[str, Any], value: Any) -> None:
    fast = parsing._fast_validator(schema)
    assert fast is not None
    try:
        fast(value)
        fast_valid = True
    except Exception:
        fast_valid = False
    assert fast_valid == _reference_valid(value, schema), value


def test_schemas_outside_the_safe_subset_use_jsonschema_only() -> None:
    assert parsing._fast_validator({"type": "integer"}) is None
    assert parsing._fast_validator({"enum": [1, 2]}) is None
    assert parsing._fast_validator({"type": "string", "format": "date"}) is None
    assert parsing._fast_validator({"type": "array", "prefixItems": [{}]}) is None
    assert parsing._fast_validator(DIRECT_SCHEMA) is not None


def test_rejections_keep_the_reference_reason_and_message() -> None:
    outcome = parsing.parse_json_decision('{"decision": "MAYBE"}', "stop", DIRECT_SCHEMA)
    assert outcome.reason_code is not None and outcome.reason_code.value == "invalid_value"
    assert outcome.detail == "decision: 'MAYBE' is not one of ['ALLOW', 'BLOCK', 'UNKNOWN']"
    outcome = parsing.parse_json_decision('{"decision": "BLOCK", "x": 1}', "stop",
                                          DIRECT_SCHEMA)
    assert outcome.reason_code is not None and outcome.reason_code.value == "extra_field"


def _scan_depth(payload: str) -> int:
    """The reference: one step per character."""
    depth = deepest = 0
    in_string = escaped = False
    for char in payload:
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == '"':
                in_string = False
        elif char == '"':
            in_string = True
        elif char in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif char in "]}":
            depth -= 1
    return deepest


NESTING = st.text(alphabet=st.sampled_from(list('[]{}"\\ a:,')), max_size=300)


@SETTINGS
@given(payload=st.one_of(NESTING, st.builds(lambda n, tail: "[" * n + tail + "]" * n,
                                            st.integers(55, 75), NESTING)))
def test_nesting_check_agrees_with_a_character_scan(payload: str) -> None:
    assert parsing._too_deep(payload) == (_scan_depth(payload) > parsing.MAX_DEPTH)


def test_brackets_inside_strings_do_not_count() -> None:
    deep_string = json.dumps({"decision": "ALLOW", "note": "[" * 500})
    assert not parsing._too_deep(deep_string)
    assert parsing._too_deep("[" * 65 + "]" * 65)
    assert not parsing._too_deep("[" * 64 + "]" * 64)
    assert not parsing._too_deep('"' + "[" * 100)  # an unterminated string runs to the end
