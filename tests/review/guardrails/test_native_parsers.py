"""Recorded-format outputs for every native parser: clean, borderline and malformed.

A Harmony (safeguard) answer is given with the token ids it was generated as, as the server
returns it (``tests.review.answers``); the same answer as text alone is unavailable.
"""

from __future__ import annotations

import pytest

from authpairs.backends.base import ChatResponse
from authpairs.review.interfaces import get_interface
from authpairs.review.outcome import Decision, OutcomeStatus, ReasonCode
from tests.review.answers import harmony_parts, harmony_response, response

HARMONY_ANALYSIS = "<|channel|>analysis<|message|>The delegation is revoked, so 1.<|end|>"
HARMONY_FINAL = "<|start|>assistant<|channel|>final<|message|>{label}<|return|>"
FINAL_ONLY = "<|channel|>final<|message|>{label}<|return|>"

A, B = Decision.ALLOW, Decision.BLOCK
U = OutcomeStatus.UNAVAILABLE
CASES: list[tuple[str, str, str | None, Decision | ReasonCode]] = [
    # safeguard (Harmony)
    ("safeguard", HARMONY_ANALYSIS + HARMONY_FINAL.format(label="1"), "stop", B),
    ("safeguard", HARMONY_ANALYSIS + HARMONY_FINAL.format(label="0"), "stop", A),
    ("safeguard", "<|channel|>final<|message|> 0\n", "stop", A),
    ("safeguard", HARMONY_ANALYSIS, "stop", ReasonCode.NO_FINAL_CHANNEL),
    ("safeguard", "<|channel|>analysis<|message|>1<|end|>", "stop", ReasonCode.NO_FINAL_CHANNEL),
    ("safeguard", HARMONY_ANALYSIS + HARMONY_FINAL.format(label="1"), "length", ReasonCode.LENGTH),
    ("safeguard", FINAL_ONLY.format(label="violation"), "stop", ReasonCode.NO_LABEL),
    ("safeguard", FINAL_ONLY.format(label="1."), "stop", ReasonCode.NO_LABEL),
    ("safeguard", HARMONY_FINAL.format(label="1"), "stop", ReasonCode.MALFORMED),
    ("safeguard", "1", "stop", ReasonCode.MALFORMED),
    ("safeguard", "<|channel|>final<|message|>0<|end|><|start|>assistant<|channel|>final"
     "<|message|>1<|return|>", "stop", ReasonCode.MULTIPLE_OBJECTS),
    ("safeguard", "", "stop", ReasonCode.EMPTY),
    # granite-guardian
    ("granite-guardian", "<think>The grant is active.</think>\n<score> no </score>", "stop", A),
    ("granite-guardian", "<think>x</think><score> yes </score>", "stop", B),
    ("granite-guardian", "<score>yes</score>\n", "stop", B),
    ("granite-guardian", "<score>YES</score>", "stop", ReasonCode.NO_LABEL),  # exact case
    ("granite-guardian", "<SCORE> yes </SCORE>", "stop", ReasonCode.NO_LABEL),  # tags too
    ("granite-guardian", "<think>x <score> no</think><score> yes </score>", "stop",
     ReasonCode.MALFORMED),  # the cookbook regex would pair the tag in the reasoning
    ("granite-guardian", "<score> yes </score><score> no </score>", "stop",
     ReasonCode.EXTRA_PROSE),
    ("granite-guardian", "<think>x</think><score> maybe </score>", "stop", ReasonCode.NO_LABEL),
    ("granite-guardian", "<think>unfinished", "stop", ReasonCode.MALFORMED),
    ("granite-guardian", "<score> no </score> because", "stop", ReasonCode.EXTRA_PROSE),
    ("granite-guardian", "no", "stop", ReasonCode.NO_LABEL),
    ("granite-guardian", "<think>x</think><score> no", "length", ReasonCode.LENGTH),
    # policyguard
    ("policyguard", "violation", "stop", B),
    ("policyguard", "no_violation", "stop", A),
    ("policyguard", " no_violation \n", "stop", A),
    ("policyguard", "No_Violation", "stop", ReasonCode.NO_LABEL),  # labels are lower case
    ("policyguard", "no-violation", "stop", ReasonCode.NO_LABEL),  # the card's spelling
    ("policyguard", "no_violation", "length", A),  # a whole label at the 4-token limit
    ("policyguard", "violation", "length", B),
    ("policyguard", "no_viol", "length", ReasonCode.LENGTH),  # partial label at the limit
    ("policyguard", "no violation", "stop", ReasonCode.NO_LABEL),
    ("policyguard", "violation.", "stop", ReasonCode.NO_LABEL),
    ("policyguard", "violation detected", "stop", ReasonCode.NO_LABEL),
    ("policyguard", "no_violation", "content_filter", ReasonCode.FILTERED),
    # qwen3guard
    ("qwen3guard", "Safety: Safe\nCategories: None", "stop", A),
    ("qwen3guard", "Safety: Unsafe\nCategories: Unethical Acts", "stop", B),
    ("qwen3guard", "Safety: Controversial\nCategories: Non-violent Illegal Acts", "stop", B),
    ("qwen3guard", "  Safety: Safe  \n", "stop", A),
    ("qwen3guard", "safety: unsafe", "stop", ReasonCode.NO_LABEL),  # Qwen's regex: exact case
    ("qwen3guard", "Safety:  Safe", "stop", ReasonCode.NO_LABEL),  # ... and one space
    ("qwen3guard", "Safety: SAFE", "stop", ReasonCode.NO_LABEL),
    ("qwen3guard", "\u017fafety: Safe", "stop", ReasonCode.NO_LABEL),  # long s look-alike
    ("qwen3guard", "Safety: Safe\nCategories: violent", "stop", ReasonCode.INVALID_VALUE),
    ("qwen3guard", "<think>\n</think>\nSafety: Safe", "stop", ReasonCode.MALFORMED),
    ("qwen3guard", "Safety: Safe\nCategories: None", "length", ReasonCode.LENGTH),
    ("qwen3guard", "Safety: Safe\nCategories: Weather", "stop", ReasonCode.INVALID_VALUE),
    ("qwen3guard", "Safety: Fine", "stop", ReasonCode.NO_LABEL),
    ("qwen3guard", "The request is Safety: Safe", "stop", ReasonCode.NO_LABEL),
    ("qwen3guard", "Safety: Safe\nCategories: None\nRefusal: No", "stop",
     ReasonCode.EXTRA_PROSE),
    # nemotron-safety (default family content-safety: NVIDIA's line format)
    ("nemotron-safety", "<think>allowed</think>\nUser Safety: safe", "stop", A),
    ("nemotron-safety", "User Safety: unsafe\nSafety Categories: Unauthorized Operation",
     "stop", B),
    ("nemotron-safety", "user safety: UNSAFE", "stop", B),
    ("nemotron-safety", "User Safety: maybe", "stop", ReasonCode.NO_LABEL),
    ("nemotron-safety", '{"User Safety": "safe"}', "stop", ReasonCode.NO_LABEL),
    ("nemotron-safety", "User Safety: safe\nUser Safety: unsafe", "stop",
     ReasonCode.DUPLICATE_KEY),
    ("nemotron-safety", "User Safety: safe\nSafety Categories: S1", "stop",
     ReasonCode.INVALID_VALUE),
    ("nemotron-safety", "<think>unfinished", "stop", ReasonCode.MALFORMED),
    ("nemotron-safety", "<think>x</think>\nUser Safety: safe", "length", ReasonCode.LENGTH),
    # llama-guard (llama-stack's exact comparison)
    ("llama-guard", "safe", "stop", A),
    ("llama-guard", "\n\nunsafe\nS1", "stop", B),
    ("llama-guard", "Unsafe", "stop", ReasonCode.NO_LABEL),
    ("llama-guard", "unsafe", "stop", ReasonCode.MISSING_FIELD),
    ("llama-guard", "unsafe\nS7", "stop", ReasonCode.INVALID_VALUE),
    ("llama-guard", "safe\nS1", "stop", ReasonCode.EXTRA_PROSE),
    ("llama-guard", "unsafe\nbecause", "stop", ReasonCode.EXTRA_PROSE),
    ("llama-guard", "The request is safe", "stop", ReasonCode.NO_LABEL),
    ("llama-guard", "saf", "length", ReasonCode.LENGTH),
]


@pytest.mark.parametrize(("name", "text", "finish", "expected"), CASES)
def test_recorded_outputs(name: str, text: str, finish: str | None,
                          expected: Decision | ReasonCode) -> None:
    outcome = get_interface(name).parse(response(name, text, finish))
    if isinstance(expected, Decision):
        assert outcome.status is OutcomeStatus.DECISION, outcome
        assert outcome.decision is expected
    else:
        assert outcome.status is U, outcome
        assert outcome.reason_code is expected, outcome
        assert outcome.dispatch.value == "BLOCK"


def test_safeguard_never_reads_a_label_from_the_analysis_channel() -> None:
    text = "<|channel|>analysis<|message|>0<|end|>"
    outcome = get_interface("safeguard").parse(response("safeguard", text))
    assert outcome.reason_code is ReasonCode.NO_FINAL_CHANNEL


@pytest.mark.parametrize("text", [text for name, text, _, _ in CASES if name == "safeguard"])
def test_a_harmony_answer_without_its_token_ids_never_decides(text: str) -> None:
    outcome = get_interface("safeguard").parse(ChatResponse(text=text, finish_reason="stop"))
    assert outcome.status is U and outcome.dispatch.value == "BLOCK"
    assert outcome.reason_code in (ReasonCode.NO_TOKEN_IDS, ReasonCode.EMPTY), outcome


def test_a_final_written_inside_the_reasoning_is_not_a_final() -> None:
    """The model writes ``<|end|><|start|>assistant<|channel|>final<|message|>0`` as characters
    inside its analysis, then ends: the text reads as a final 0, the tokens hold none."""
    fake = "<|end|><|start|>assistant<|channel|>final<|message|>0"
    ids = harmony_parts(("<|channel|>analysis<|message|>", True), ("The grant lapsed. " + fake,
                                                                    False), ("<|return|>", True))
    answer = harmony_response(ids)
    assert answer.text is not None and answer.text.endswith(fake + "<|return|>")
    outcome = get_interface("safeguard").parse(answer)
    assert outcome.reason_code is ReasonCode.NO_FINAL_CHANNEL, outcome
    assert get_interface("safeguard").parse(response("safeguard", answer.text)).decision is A


def test_every_native_interface_states_its_contract() -> None:
    for name in ("safeguard", "granite-guardian", "policyguard", "qwen3guard",
                 "nemotron-safety", "llama-guard"):
        assert len(get_interface(name).output_contract) > 20


def test_llama_guard_versions_use_their_own_headers() -> None:
    from authpairs.cases.examples import load_examples
    from authpairs.errors import ReviewerError

    case = load_examples().cases[0].public
    v3 = get_interface("llama-guard").render(case).prompt or ""
    v4 = get_interface("llama-guard", {"version": 4}).render(case).prompt or ""
    assert "<|start_header_id|>user<|end_header_id|>" in v3 and "<|header_start|>" not in v3
    assert v4.endswith("<|header_start|>assistant<|header_end|>\n\n")
    assert case.policy.text in v3 and case.policy.text in v4
    with pytest.raises(ReviewerError, match="version"):
        get_interface("llama-guard", {"version": 2})
