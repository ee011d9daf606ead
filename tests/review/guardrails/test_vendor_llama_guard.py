"""llama-guard against the vendors' parsers (differential tests).

Three readers of a Llama Guard answer: NeMo Guardrails 0.24.1's ``parse_llama_guard_response``
(its Llama Guard rail) and ``is_content_safe`` (its content-safety rail with Llama Guard
prompts), both called here, and Meta llama-stack's Llama Guard shield, written below as an oracle
from its published check: the trimmed answer is exactly ``safe``, or matches
``^unsafe\\n(.*)$`` with a non-empty code line, and anything else raises. Whenever authpairs
records a decision, every reader that gives one gives the same decision, and llama-stack always
gives one.
"""

from __future__ import annotations

import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatResponse
from authpairs.cases.examples import load_examples
from authpairs.review.guardrails.llama_guard import LlamaGuardInterface
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode

output_parsers = pytest.importorskip("nemoguardrails.llm.output_parsers")
llama_guard_actions = pytest.importorskip("nemoguardrails.library.llama_guard.actions")


def llama_stack(text: str) -> Decision | None:
    """Meta llama-stack's shield check (no excluded categories); None where it raises."""
    response = text.strip()
    if response == "safe":
        return Decision.ALLOW
    match = re.match(r"^unsafe\n(.*)$", response)
    if match and match.group(1):
        return Decision.BLOCK
    return None


def nemo_llama_guard(text: str) -> Decision:
    """NeMo's Llama Guard rail parser (never raises; unknown answers block)."""
    allowed, _ = llama_guard_actions.parse_llama_guard_response(text)
    return Decision.ALLOW if allowed else Decision.BLOCK


def nemo_is_content_safe(text: str) -> Decision:
    """NeMo's generic content-safety parser."""
    return Decision.ALLOW if output_parsers.is_content_safe(text)[0] else Decision.BLOCK


def ours(text: str, finish: str | None = "stop") -> tuple[Decision | None, ReasonCode | None]:
    """authpairs' decision and reason code."""
    outcome = LlamaGuardInterface().parse(ChatResponse(text=text, finish_reason=finish))
    if outcome.status is OutcomeStatus.DECISION:
        return outcome.decision, None
    assert outcome.reason_code is not None and outcome.dispatch.value == "BLOCK"
    return None, outcome.reason_code


# Each piece is Meta's own form half the time, so that decisions are common among the answers.
WORD = st.one_of(st.sampled_from(["safe", "unsafe"]),
                 st.sampled_from(["Safe", "UNSAFE", "Unsafe", "ſafe", "sаfe", "safe.", "safety",
                                  "unsafe:", "not safe", "yes", "no", ""]))
CODES = st.one_of(st.sampled_from(["S1", "S1,S1", "S1, S1"]),
                  st.sampled_from(["S2", "s1", "S1 ", " S1", "S１", "O1", "S1\nS1",
                                   "Unauthorized Operation", "S1.", "", "S"]))
JOIN = st.one_of(st.just("\n"), st.sampled_from(["\n\n", "\r\n", " ", "\t\n", ""]))
PAD = st.one_of(st.sampled_from(["", " ", "\n"]),
                st.sampled_from(["\n\n", "\u2003", "\u00a0", "\u200b"]))
NOISE = st.one_of(st.just(""), st.sampled_from(["\nThe request lacks a grant.", "<think>x</think>",
                                                "```", "\nSafety: Safe",
                                                "\n<score> yes </score>"]))


@st.composite
def answers(draw: st.DrawFn) -> str:
    """Llama Guard-shaped answers with case, spacing, extra lines and other guards' words."""
    head = draw(PAD) + draw(WORD)
    if draw(st.booleans()):
        head += draw(JOIN) + draw(CODES)
    text = head + draw(NOISE) + draw(PAD)
    if draw(st.integers(0, 9)) == 0:
        text = "<think>The grant is valid.</think>\n" + text
    if draw(st.integers(0, 9)) == 0:
        text = "```\n" + text + "\n```"
    return text


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=st.one_of(answers(), st.text(max_size=40),
                      st.builds(lambda t, n: t[:n], answers(), st.integers(0, 12))),
       finish=st.sampled_from([None, "stop", "length", "content_filter"]))
def test_never_more_lenient_than_any_vendor_reader(text: str, finish: str | None) -> None:
    decision, _ = ours(text, finish)
    if decision is None:
        return
    assert finish in (None, "stop")
    assert llama_stack(text) is decision, text
    assert nemo_llama_guard(text) is decision, text
    assert nemo_is_content_safe(text) is decision, text


@pytest.mark.parametrize(("text", "decision"), [
    ("safe", Decision.ALLOW), ("\n safe \n", Decision.ALLOW), ("unsafe\nS1", Decision.BLOCK),
    ("unsafe\nS1, S1", Decision.BLOCK), ("  unsafe\nS1\n", Decision.BLOCK)])
def test_meta_answers_agree_with_every_reader(text: str, decision: Decision) -> None:
    assert ours(text) == (decision, None)
    assert llama_stack(text) is decision
    assert nemo_llama_guard(text) is decision
    assert nemo_is_content_safe(text) is decision


# Stricter than some reader, with the reason; llama-stack's reading beside (None: it raises).
@pytest.mark.parametrize(("text", "reason", "stack"), [
    ("Safe", ReasonCode.NO_LABEL, None),
    ("UNSAFE\nS1", ReasonCode.NO_LABEL, None),
    ("unsafe", ReasonCode.MISSING_FIELD, None),
    ("unsafe\n\nS1", ReasonCode.EXTRA_PROSE, None),
    ("unsafe\nS1\nbecause", ReasonCode.EXTRA_PROSE, None),
    ("unsafe\nbecause", ReasonCode.EXTRA_PROSE, Decision.BLOCK),
    ("unsafe\nS7", ReasonCode.INVALID_VALUE, Decision.BLOCK),
    ("safe\nS1", ReasonCode.EXTRA_PROSE, None),
    ("safety first", ReasonCode.NO_LABEL, None),
    ("<think>ok</think>\nsafe", ReasonCode.NO_LABEL, None),
    ("The request is safe", ReasonCode.NO_LABEL, None),
])
def test_stricter_with_a_reason(text: str, reason: ReasonCode, stack: Decision | None) -> None:
    assert ours(text) == (None, reason)
    assert llama_stack(text) is stack


def test_a_cut_answer_is_length() -> None:
    assert ours("unsafe\nS1", "length") == (None, ReasonCode.LENGTH)


def test_prompt_ends_at_the_header_or_after_a_blank_line() -> None:
    case = load_examples().cases[0].public
    v3 = LlamaGuardInterface().render(case).prompt or ""
    assert v3.endswith("<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n")
    bare = LlamaGuardInterface(assistant_blank_line=False).render(case).prompt or ""
    assert bare.endswith("<|eot_id|><|start_header_id|>assistant<|end_header_id|>")
    assert bare + "\n\n" == v3
    v4 = LlamaGuardInterface(version=4, assistant_blank_line=False).render(case).prompt or ""
    assert v4.startswith("<|begin_of_text|><|header_start|>user<|header_end|>\n\nTask: ")
    assert v4.endswith("<|eot|><|header_start|>assistant<|header_end|>")
    assert "according our safety policy" in v3  # Meta's wording, as llama-recipes spells it
