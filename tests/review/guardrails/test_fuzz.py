"""Property-based fuzz: native parsers never raise and never decide on non-conforming output
(a Harmony answer carries the token ids of its text, as the server returns them)."""

from __future__ import annotations

import re
from collections.abc import Callable

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from authpairs.backends.base import ChatResponse
from authpairs.review.interfaces import get_interface
from authpairs.review.outcome import OutcomeStatus
from tests.review.answers import response

FRAGMENTS = ["violation", "no_violation", "no", "yes", "safe", "unsafe", "Safety: ", "Safe",
             "Unsafe", "Controversial", "Categories: ", "None", "S1", "S9", "<think>",
             "</think>", "<score>", "</score>", " ", "\n", "0", "1", '{"User Safety": ',
             '"safe"', '"unsafe"', "}", "{", "```", "<|channel|>", "final", "analysis",
             "<|message|>", "<|end|>", "<|return|>", "<|start|>", "assistant", "ALLOW", ",",
             "User Safety: ", "Safety Categories: "]
TEXTS = st.one_of(st.text(max_size=80),
                  st.lists(st.sampled_from(FRAGMENTS), max_size=12).map("".join))
FINISH = st.sampled_from([None, "stop", "length", "content_filter", "eos", "tool_calls"])

# Independent, deliberately loose oracles: a *decision* is only allowed on text that at least
# has the shape of the format. A parser that decides outside these shapes is wrong.
CONFORMS: dict[str, Callable[[str], bool]] = {
    "policyguard": lambda t: t.strip() in ("violation", "no_violation"),
    "qwen3guard": lambda t: re.match(r"\s*Safety: (Safe|Unsafe|Controversial)(\s|$)",
                                     t) is not None,
    "llama-guard": lambda t: t.strip() == "safe" or t.strip().startswith("unsafe\n"),
    "granite-guardian": lambda t: re.search(r"<score>\s*(yes|no)\s*</score>\s*$",
                                            t) is not None,
    "nemotron-safety": lambda t: re.search(r"^\s*User Safety\s*:\s*(safe|unsafe)\b", t,
                                           re.IGNORECASE | re.MULTILINE) is not None,
    "safeguard": lambda t: re.search(r"<\|channel\|>final<\|message\|>\s*[01]\s*"
                                     r"(<\|return\|>|<\|end\|>|<\|call\|>)?\s*$", t) is not None,
}
CLEAN = (None, "stop", "eos", "length")


def _check(name: str, text: str, finish: str | None) -> None:
    outcome = get_interface(name).parse(response(name, text, finish))
    if outcome.status is OutcomeStatus.DECISION:
        assert finish in CLEAN, (name, text, finish)
        assert CONFORMS[name](text), (name, text, finish, outcome)
        if finish == "length":
            assert name == "policyguard", (name, text)
    else:
        assert outcome.dispatch.value == "BLOCK"


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(text=TEXTS, finish=FINISH, name=st.sampled_from(sorted(CONFORMS)))
def test_parsers_never_raise_and_never_decide_on_junk(name: str, text: str,
                                                      finish: str | None) -> None:
    _check(name, text, finish)


@settings(max_examples=60, deadline=None)
@given(noise=st.text(min_size=1, max_size=20).filter(lambda s: s.strip() != ""),
       label=st.sampled_from(["violation", "no_violation"]))
def test_policyguard_rejects_any_extra_text(noise: str, label: str) -> None:
    for text in (label + noise, noise + label):
        if text.strip() in ("violation", "no_violation"):
            continue
        response = ChatResponse(text=text, finish_reason="length")
        outcome = get_interface("policyguard").parse(response)
        assert outcome.status is OutcomeStatus.UNAVAILABLE
