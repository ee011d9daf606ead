"""NeMo self-check through the real nemoguardrails action (extra 'nemo')."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.cases.dataset import Dataset
from authpairs.errors import TransportError
from authpairs.review.guardrails.nemo import (
    NemoResponse,
    NemoSelfCheckGuardrail,
    NemoSelfCheckReviewer,
    jinja_literal,
    recognised_word,
)
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode

pytest.importorskip("nemoguardrails")


class _Answers:
    """Backend test double: a fixed answer, remembering what NeMo sent."""

    name = "answers"

    def __init__(self, text: str | None, error: Exception | None = None) -> None:
        self.text = text
        self.error = error
        self.requests: list[ChatRequest] = []

    def describe(self) -> dict[str, Any]:
        return {"kind": self.name, "model": "double"}

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return ChatResponse(text=self.text, finish_reason="stop", output_tokens=1)


async def _run(text: str | None, examples: Dataset) -> tuple[Any, _Answers, ChatRequest]:
    backend = _Answers(text)
    reviewer = NemoSelfCheckGuardrail().build("nemo-self-check", {}, backend,  # type: ignore[arg-type]
                                              SamplingConfig())
    request = reviewer.render(examples.cases[0].public)
    return reviewer.parse(await reviewer.answer(request)), backend, request


@pytest.mark.parametrize(("text", "expected"), [
    ("No", Decision.ALLOW), ("Yes", Decision.BLOCK), ("yes, it must be blocked", Decision.BLOCK),
    ("Safe.", Decision.ALLOW), ("unsafe", Decision.BLOCK), ("  NO\n", Decision.ALLOW),
    ("Answer: No", Decision.ALLOW),
])
async def test_recognised_answers_follow_nemos_boolean(text: str, expected: Decision,
                                                       examples: Dataset) -> None:
    outcome, backend, request = await _run(text, examples)
    assert outcome.status is OutcomeStatus.DECISION and outcome.decision is expected
    assert backend.requests[0].messages == request.messages  # NeMo sent exactly the rendering


@pytest.mark.parametrize(("text", "reason"), [
    ("I cannot tell from this.", ReasonCode.NATIVE_FALLBACK),
    ("The answer is no", ReasonCode.NATIVE_FALLBACK),  # 'no' is the fourth word, not first two
    ("", ReasonCode.EMPTY), (None, ReasonCode.EMPTY),
])
async def test_fallback_and_no_output_are_kept_apart(text: str | None, reason: ReasonCode,
                                                     examples: Dataset) -> None:
    outcome, _backend, _request = await _run(text, examples)
    assert outcome.status is OutcomeStatus.UNAVAILABLE and outcome.reason_code is reason


async def test_policy_is_in_the_self_check_prompt(examples: Dataset) -> None:
    _outcome, backend, _request = await _run("No", examples)
    prompt = backend.requests[0].messages[-1]["content"]
    case = examples.cases[0].public
    assert case.policy.text in prompt and case.request.resource in prompt
    assert prompt.rstrip().endswith("Answer:")


async def test_transport_errors_reach_the_orchestrator(examples: Dataset) -> None:
    backend = _Answers("No", error=TransportError("refused"))
    reviewer = NemoSelfCheckReviewer(backend, SamplingConfig())  # type: ignore[arg-type]
    with pytest.raises(TransportError, match="refused"):
        await reviewer.answer(reviewer.render(examples.cases[0].public))


def test_policy_text_is_literal_for_nemos_jinja() -> None:
    from jinja2.sandbox import SandboxedEnvironment

    text = "Use {{ secret }} and {% if x %} and {% endraw %} literally"
    assert SandboxedEnvironment().from_string(jinja_literal(text)).render() == text
    assert recognised_word("No.") == "no" and recognised_word("maybe later") is None


async def test_recorded_input_is_what_the_backend_received(examples: Dataset) -> None:
    """So a NeMo run can be replayed: the record's input hash is the backend request's."""
    _outcome, backend, request = await _run("No", examples)
    assert backend.requests[0].sha256() == request.sha256()
    assert request.options is None and request.prompt is None


@settings(max_examples=120, deadline=None)
@given(text=st.one_of(st.text(max_size=40), st.lists(st.sampled_from(
    ["yes", "no", "safe", "unsafe", "Yes", "NO", " ", "\n", ".", "maybe", "blocked", ","]),
    max_size=6).map("".join)), allowed=st.one_of(st.none(), st.booleans()),
    finish=st.sampled_from(["stop", "length", None, "content_filter"]))
def test_nemo_parser_never_raises_and_decides_only_on_a_registered_word(
        text: str, allowed: bool | None, finish: str | None) -> None:
    from nemoguardrails.llm.output_parsers import is_content_safe

    reviewer = NemoSelfCheckReviewer(_Answers(None), SamplingConfig())  # type: ignore[arg-type]
    outcome = reviewer.parse(NemoResponse(text=text, finish_reason=finish,
                                          native_allowed=allowed))
    recognised = recognised_word(text) is not None and bool(text.strip())
    # NeMo's Boolean decides whenever NeMo recognised a word, a cut answer included
    assert (outcome.status is OutcomeStatus.DECISION) is (
        recognised and finish != "content_filter")
    if outcome.status is OutcomeStatus.DECISION:
        native = bool(is_content_safe(text)[0]) if allowed is None else allowed
        assert (outcome.decision is Decision.ALLOW) is native
    else:
        assert outcome.dispatch.value == "BLOCK"
