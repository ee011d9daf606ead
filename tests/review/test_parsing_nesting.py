"""The parser's nesting check and schema rejections.

* The nesting check cuts strings out with a regular expression; it must agree with a plain
  character-by-character scan, escapes and unterminated strings included.
* A schema rejection keeps jsonschema's reason and message.
"""

from __future__ import annotations

import json

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.review import parsing
from authpairs.review.schemas import DIRECT_SCHEMA

SETTINGS = settings(max_examples=300, deadline=None, derandomize=True,
                    suppress_health_check=[HealthCheck.too_slow])


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
