"""Property tests: no parser of any registered interface raises on any text, and a non-conforming
answer (judged by the independent checker in ``format_checker``) never yields a decision.

The test iterates over every registered interface (``INTERFACES.names()``), so interfaces added
later (guardrail formats, plugins) are fuzzed too. ``AUTHPAIRS_FUZZ_EXAMPLES`` raises the number
of examples (default 400 per interface and property; docs/reliability.md gives the counts used).
"""

from __future__ import annotations

import json
import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatResponse
from authpairs.review.interfaces import INTERFACES, ReviewInterface, get_interface
from authpairs.review.outcome import OutcomeStatus, ReviewOutcome
from authpairs.review.schemas import DIRECT_SCHEMA, STRUCTURED_SCHEMA
from tests.review.format_checker import conforming_decision

EXAMPLES = int(os.environ.get("AUTHPAIRS_FUZZ_EXAMPLES", "400"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
FINISH = st.sampled_from([None, "stop", "length", "max_tokens", "stop_sequence", "eos",
                          "end_turn", "content_filter", "tool_calls", "weird"])
DECISION = st.sampled_from(["ALLOW", "BLOCK", "UNKNOWN"] * 3 + ["allow", "Allow", "", "MAYBE"])
SURROGATE = st.characters(min_codepoint=0xD800, max_codepoint=0xDFFF)
ANY_CHAR = st.one_of(st.characters(), SURROGATE, st.sampled_from(list("{}[]\",:`\n\t\\\x00\x1f")))
SHORT = st.text(alphabet=ANY_CHAR, max_size=40)


def _check() -> st.SearchStrategy[dict[str, Any]]:
    return st.fixed_dictionaries({
        "requirement": st.text(max_size=210), "finding": st.text(max_size=30),
        "evidence": st.lists(st.text(max_size=170), max_size=5)})


ANSWER = st.one_of(
    st.fixed_dictionaries({"decision": DECISION}),
    st.fixed_dictionaries({"checks": st.lists(_check(), max_size=13), "decision": DECISION}),
    st.dictionaries(SHORT, st.one_of(DECISION, st.integers(), st.booleans(), st.none()),
                    max_size=4),
)


@st.composite
def _text(draw: st.DrawFn) -> str:
    """Answers in and around the documented formats, then damaged in many ways."""
    value: Any = draw(ANSWER)
    form = draw(st.sampled_from(["plain"] * 6 + ["array", "huge-int", "deep", "nan", "dup",
                                                  "escape"]))
    if form == "array":
        value = [value]
    text = json.dumps(value, indent=draw(st.sampled_from([None, 1, 2])),
                      ensure_ascii=draw(st.booleans()))
    if form == "huge-int":
        text = text[:-1] + (", " if len(text) > 2 else "") + '"n": ' + "9" * 5000 + "}"
    elif form == "deep":
        depth = draw(st.integers(1, 5000))
        text = "[" * depth + text + "]" * draw(st.sampled_from([depth, depth - 1, 0]))
    elif form == "nan":
        text = text.replace('"ALLOW"', "NaN", 1)
    elif form == "dup" and text.startswith('{"'):
        text = '{"decision": "BLOCK", ' + text[1:]
    elif form == "escape":
        text = text.replace("A", "\\ud800", 1)
    wrap = draw(st.sampled_from(["none"] * 3 + ["fence", "fence-json", "two-fences", "prose",
                                                 "trail"]))
    if wrap == "fence":
        text = f"```\n{text}\n```"
    elif wrap == "fence-json":
        text = f"```json \n{text}```"
    elif wrap == "two-fences":
        text = f"```json\n{text}\n```\n```json\n{text}\n```"
    elif wrap == "prose":
        text = draw(SHORT) + text
    elif wrap == "trail":
        text = text + draw(SHORT)
    for _ in range(draw(st.sampled_from([0, 0, 0, 1, 2, 3]))):  # point mutations
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        text = text[:at] + draw(st.text(alphabet=ANY_CHAR, max_size=3)) + text[at + 1:]
    return draw(st.sampled_from(["", " ", "\n"])) + text + draw(st.sampled_from(["", "\n  "]))


TEXT = st.one_of(_text(), st.text(alphabet=ANY_CHAR, max_size=300))


def _json_kind(interface: ReviewInterface) -> str | None:
    """Which documented JSON format an interface uses, when it parses with the shared parser."""
    if type(interface).parse is not ReviewInterface.parse:
        return None
    if interface.answer_schema == DIRECT_SCHEMA:
        return "direct"
    if interface.answer_schema == STRUCTURED_SCHEMA:
        return "structured"
    return None


@pytest.mark.parametrize("name", INTERFACES.names())
def test_no_parser_raises_on_any_text(name: str) -> None:
    interface = get_interface(name)

    @FUZZ
    @given(text=st.one_of(st.none(), TEXT), finish=FINISH)
    def check(text: str | None, finish: str | None) -> None:
        outcome = interface.parse(ChatResponse(text=text, finish_reason=finish))
        assert isinstance(outcome, ReviewOutcome)
        if outcome.status is OutcomeStatus.UNAVAILABLE:
            assert outcome.reason_code is not None
        if finish in ("length", "max_tokens") or not (text or "").strip():
            assert outcome.status is OutcomeStatus.UNAVAILABLE

    check()


@pytest.mark.parametrize("name", [n for n in INTERFACES.names()
                                  if _json_kind(get_interface(n)) is not None])
def test_non_conforming_answers_never_decide(name: str) -> None:
    interface = get_interface(name)
    kind = _json_kind(interface)
    assert kind is not None

    @FUZZ
    @given(text=TEXT, finish=FINISH)
    def check(text: str, finish: str | None) -> None:
        expected = conforming_decision(text, finish, kind)
        outcome = interface.parse(ChatResponse(text=text, finish_reason=finish))
        if expected is None:
            assert outcome.status is OutcomeStatus.UNAVAILABLE, (text, outcome)
        else:
            assert outcome.decision is not None and outcome.decision.value == expected

    check()


def test_the_generator_reaches_both_sides() -> None:
    """The fuzzer is not vacuous: it produces conforming and non-conforming answers."""
    seen = {True: 0, False: 0}

    @settings(max_examples=300, deadline=None, derandomize=True,
              suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
    @given(text=_text())
    def check(text: str) -> None:
        seen[any(conforming_decision(text, "stop", kind) is not None
                 for kind in ("direct", "structured"))] += 1

    check()
    assert seen[True] >= 15 and seen[False] >= 100, seen
