"""NeMo self-check through the real nemoguardrails action (extra 'nemo')."""

from __future__ import annotations

import asyncio
import re
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.config import SamplingConfig
from authpairs.cases.dataset import Dataset
from authpairs.cases.examples import load_examples
from authpairs.errors import TransportError
from authpairs.review.guardrails.nemo import (
    NemoResponse,
    NemoSelfCheckGuardrail,
    NemoSelfCheckReviewer,
    jinja_literal,
    nemo_content,
    recognised_word,
)
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode

pytest.importorskip("nemoguardrails")


class _Answers:
    """Backend test double: a fixed answer, remembering what NeMo sent."""

    name = "answers"

    def __init__(self, text: str | None, error: Exception | None = None,
                 reasoning: str | None = None) -> None:
        self.text = text
        self.error = error
        self.reasoning = reasoning
        self.requests: list[ChatRequest] = []

    def describe(self) -> dict[str, Any]:
        return {"kind": self.name, "model": "double"}

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        self.requests.append(request)
        if self.error is not None:
            raise self.error
        return ChatResponse(text=self.text, reasoning=self.reasoning, finish_reason="stop",
                            output_tokens=1)


async def _run(text: str | None, examples: Dataset,
               reasoning: str | None = None) -> tuple[Any, _Answers, ChatRequest]:
    backend = _Answers(text, reasoning=reasoning)
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
    recognised = recognised_word(nemo_content(text, None)) is not None and bool(text.strip())
    # NeMo's Boolean decides whenever NeMo recognised a word, a cut answer included
    assert (outcome.status is OutcomeStatus.DECISION) is (
        recognised and finish != "content_filter")
    if outcome.status is OutcomeStatus.DECISION:
        native = (bool(is_content_safe(nemo_content(text, None))[0]) if allowed is None
                  else allowed)
        assert (outcome.decision is Decision.ALLOW) is native
    else:
        assert outcome.dispatch.value == "BLOCK"


# --- <think> blocks: NeMo's llm_call removes them before its parser, live and in replay -------

@pytest.mark.parametrize(("text", "expected"), [
    ("<think>The grant is active.</think>\nNo", Decision.ALLOW),
    ("<think>Is it safe? yes</think> Yes", Decision.BLOCK),
    ("<think>a</think>safe<think>b</think>", Decision.ALLOW),  # every complete block goes
    ("<think>\n</think>\n\nunsafe", Decision.BLOCK),
])
async def test_a_think_block_is_removed_as_nemos_llm_call_removes_it(
        text: str, expected: Decision, examples: Dataset) -> None:
    outcome, _backend, _request = await _run(text, examples)
    assert outcome.status is OutcomeStatus.DECISION and outcome.decision is expected, outcome
    replayed = NemoSelfCheckReviewer(_Answers(None), SamplingConfig()).parse(  # type: ignore[arg-type]
        ChatResponse(text=text, finish_reason="stop"))
    assert replayed == outcome  # a replay (no native Boolean) reads the answer the same way


@pytest.mark.parametrize("text", [
    "<think>safe</think>",                 # nothing after the block
    "<think>unfinished, safe",             # no closing tag: NeMo leaves the text as it is
    "x</think> safe",                      # no opening tag: likewise ('x think' first)
])
async def test_think_text_nemo_does_not_recognise_is_its_fallback(text: str,
                                                                 examples: Dataset) -> None:
    outcome, _backend, _request = await _run(text, examples)
    assert outcome.status is OutcomeStatus.UNAVAILABLE
    assert outcome.reason_code is ReasonCode.NATIVE_FALLBACK and "native Boolean block" in (
        outcome.detail or "")


async def test_with_the_servers_reasoning_nemo_keeps_the_content_whole(examples: Dataset) -> None:
    """NeMo strips think blocks only when the server reported no reasoning of its own."""
    outcome, _backend, _request = await _run("<think>x</think> No", examples, reasoning="r")
    assert outcome.reason_code is ReasonCode.NATIVE_FALLBACK  # NeMo reads '<think>x...' itself
    plain, _backend, _request = await _run("No", examples, reasoning="The grant is active.")
    assert plain.decision is Decision.ALLOW


PIECES = st.lists(st.sampled_from(["<think>", "</think>", "safe", "unsafe", "yes", "no", "No",
                                   "maybe", " ", "\n", ".", "x"]), max_size=8).map("".join)


def nemo_recognises(text: str, reasoning: str | None) -> bool:
    """Whether NeMo's own pipeline finds a registered word: llm_call's think stripping (when
    the server sent no reasoning), then is_content_safe's first two normalised words."""
    from nemoguardrails.llm.call import _extract_and_remove_think_tags
    from nemoguardrails.types import LLMResponse

    response = LLMResponse(content=text, reasoning=reasoning or None)
    if not response.reasoning:
        _extract_and_remove_think_tags(response)
    words = re.sub(r"\W+", " ", response.content.lower().strip()).split(" ")[:2]
    return any(word in words for word in ("safe", "unsafe", "yes", "no"))


@settings(max_examples=60, deadline=None)
@given(text=PIECES, reasoning=st.sampled_from([None, "", "server reasoning"]))
def test_live_and_replayed_answers_decide_as_nemos_action(text: str,
                                                          reasoning: str | None) -> None:
    """Whenever NeMo's pipeline recognises a word, the record is the real action's Boolean;
    the recorded answer replayed (no native Boolean) gets the same outcome."""
    reviewer = NemoSelfCheckReviewer(_Answers(text, reasoning=reasoning), SamplingConfig())  # type: ignore[arg-type]
    request = reviewer.render(load_examples().cases[0].public)
    live = asyncio.run(reviewer.answer(request))
    outcome = reviewer.parse(live)
    if nemo_recognises(text, reasoning) and text.strip():
        assert outcome.status is OutcomeStatus.DECISION, (text, reasoning, outcome)
        assert (outcome.decision is Decision.ALLOW) is live.native_allowed
    else:
        assert outcome.status is OutcomeStatus.UNAVAILABLE
    replayed = reviewer.parse(ChatResponse(text=text, reasoning=reasoning, finish_reason="stop"))
    assert replayed.status is outcome.status and replayed.decision is outcome.decision
    assert replayed.reason_code is outcome.reason_code
