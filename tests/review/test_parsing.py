import pytest

from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus, ReasonCode
from authpairs.review.parsing import parse_json_decision
from authpairs.review.schemas import DIRECT_SCHEMA, STRUCTURED_SCHEMA

CHECK = '{"requirement": "r", "finding": "f", "evidence": ["e"]}'


@pytest.mark.parametrize("text", [
    '{"decision": "ALLOW"}',
    '  {"decision":"ALLOW"}\n',
    '```json\n{"decision": "ALLOW"}\n```',
    '```\n{"decision": "ALLOW"}\n```',
])
def test_clean_allow(text: str) -> None:
    outcome = parse_json_decision(text, "stop", DIRECT_SCHEMA)
    assert outcome.status is OutcomeStatus.DECISION
    assert outcome.decision is Decision.ALLOW
    assert outcome.dispatch is Dispatch.ALLOW


def test_block_and_unknown() -> None:
    block = parse_json_decision('{"decision": "BLOCK"}', "stop", DIRECT_SCHEMA)
    assert block.usable and block.dispatch is Dispatch.BLOCK
    unknown = parse_json_decision('{"decision": "UNKNOWN"}', "stop", DIRECT_SCHEMA)
    assert unknown.status is OutcomeStatus.ABSTENTION
    assert unknown.dispatch is Dispatch.BLOCK and not unknown.usable


@pytest.mark.parametrize(("text", "finish", "reason"), [
    ("", "stop", ReasonCode.EMPTY),
    ("   ", "stop", ReasonCode.EMPTY),
    ("I would allow this.", "stop", ReasonCode.NOT_JSON),
    ('Sure! {"decision": "ALLOW"}', "stop", ReasonCode.EXTRA_PROSE),
    ('{"decision": "ALLOW"} because the grant is active', "stop", ReasonCode.EXTRA_PROSE),
    ('{"decision": "ALLOW"}{"decision": "BLOCK"}', "stop", ReasonCode.MULTIPLE_OBJECTS),
    ('```json\n{"decision": "ALLOW"}\n```\n```json\n{"decision": "BLOCK"}\n```', "stop",
     ReasonCode.MULTIPLE_OBJECTS),
    ('Answer:\n```json\n{"decision": "ALLOW"}\n```', "stop", ReasonCode.EXTRA_PROSE),
    ('{"decision": "ALLOW", "decision": "BLOCK"}', "stop", ReasonCode.DUPLICATE_KEY),
    ('{"decision": "ALLOW", "score": NaN}', "stop", ReasonCode.NON_FINITE),
    ('{"decision": "ALLOW", "score": Infinity}', "stop", ReasonCode.NON_FINITE),
    ('{"decision": "ALLOW", "score": 1e999}', "stop", ReasonCode.NON_FINITE),
    ('["ALLOW"]', "stop", ReasonCode.NOT_OBJECT),
    ('```json\n["ALLOW"]\n```', "stop", ReasonCode.NOT_OBJECT),
    ('{"decision": "ALLOW"}', "max_tokens", ReasonCode.LENGTH),
    ('{}', "stop", ReasonCode.MISSING_FIELD),
    ('{"decision": "ALLOW", "why": "x"}', "stop", ReasonCode.EXTRA_FIELD),
    ('{"decision": true}', "stop", ReasonCode.WRONG_TYPE),
    ('{"decision": "allow"}', "stop", ReasonCode.INVALID_VALUE),
    ('{"decision": "ALLOW"', "stop", ReasonCode.NOT_JSON),
    ('{"decision": "ALLOW"}', "length", ReasonCode.LENGTH),
    ('{"decision": "ALLOW"}', "content_filter", ReasonCode.FILTERED),
])
def test_unclean_outputs_are_unavailable(text: str, finish: str, reason: ReasonCode) -> None:
    outcome = parse_json_decision(text, finish, DIRECT_SCHEMA)
    assert outcome.status is OutcomeStatus.UNAVAILABLE
    assert outcome.reason_code is reason
    assert outcome.dispatch is Dispatch.BLOCK


def test_top_level_array_with_object_is_not_an_object() -> None:
    outcome = parse_json_decision('[{"decision": "ALLOW"}]', "stop", DIRECT_SCHEMA)
    assert outcome.status is OutcomeStatus.UNAVAILABLE


def test_structured_answers() -> None:
    good = parse_json_decision(f'{{"checks": [{CHECK}], "decision": "BLOCK"}}', "stop",
                               STRUCTURED_SCHEMA)
    assert good.usable and good.checks == [{"requirement": "r", "finding": "f",
                                            "evidence": ["e"]}]
    no_checks = parse_json_decision('{"checks": [], "decision": "BLOCK"}', "stop",
                                    STRUCTURED_SCHEMA)
    assert no_checks.reason_code is ReasonCode.INVALID_VALUE
    many = ",".join([CHECK] * 13)
    assert parse_json_decision(f'{{"checks": [{many}], "decision": "BLOCK"}}', "stop",
                               STRUCTURED_SCHEMA).reason_code is ReasonCode.INVALID_VALUE
    five = '{"requirement": "r", "finding": "f", "evidence": ["a","b","c","d","e"]}'
    assert parse_json_decision(f'{{"checks": [{five}], "decision": "BLOCK"}}', "stop",
                               STRUCTURED_SCHEMA).reason_code is ReasonCode.INVALID_VALUE
    missing = '{"requirement": "r", "evidence": []}'
    assert parse_json_decision(f'{{"checks": [{missing}], "decision": "BLOCK"}}', "stop",
                               STRUCTURED_SCHEMA).reason_code is ReasonCode.MISSING_FIELD


def test_none_text_is_empty() -> None:
    assert parse_json_decision(None, "stop", DIRECT_SCHEMA).reason_code is ReasonCode.EMPTY
