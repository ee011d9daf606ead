"""Shared strict-parsing helpers for native guardrail outputs.

Native guardrails answer with short labels rather than JSON. These helpers check the finish
reason, split off a leading ``<think>`` block, and normalise whitespace and case. They never guess:
anything that is not exactly one whole label is *unavailable*.
"""

from __future__ import annotations

import re

from authpairs.backends.base import ChatResponse
from authpairs.review.outcome import ReasonCode, ReviewOutcome

CLEAN_FINISH = (None, "stop", "eos", "end_turn")
"""Finish reasons of a generation that ended by itself."""

_THINK = re.compile(r"\A\s*<think>(?P<reasoning>.*?)</think>(?P<answer>.*)\Z", re.DOTALL)


def finish_problem(finish_reason: str | None, *, length_ok: bool = False) -> ReviewOutcome | None:
    """An unavailable outcome for an unusable finish reason, or None when it is usable.

    ``length_ok`` accepts ``length`` (the caller then requires a whole label in the text).
    """
    if finish_reason == "length":
        if length_ok:
            return None
        return ReviewOutcome.unavailable(ReasonCode.LENGTH, "generation stopped at max_tokens")
    if finish_reason not in CLEAN_FINISH:
        return ReviewOutcome.unavailable(ReasonCode.FILTERED, f"finish_reason {finish_reason}")
    return None


def split_think(text: str) -> tuple[str, str | None] | None:
    """``(answer, reasoning)`` with a leading ``<think>...</think>`` removed.

    Text without a think block is returned whole with reasoning None. An unclosed ``<think>`` or
    a second think block returns None (the output is not clean).
    """
    if "<think>" not in text and "</think>" not in text:
        return text, None
    match = _THINK.match(text)
    if match is None:
        return None
    answer = match.group("answer")
    if "<think>" in answer or "</think>" in answer:
        return None
    return answer, match.group("reasoning")


def normalise(text: str) -> str:
    """Lower-case, with runs of whitespace collapsed to one space and the ends trimmed."""
    return " ".join(text.split()).lower()


def think_as_reasoning(response: ChatResponse) -> ChatResponse:
    """``response`` with a leading think block kept as its reasoning, when the server left the
    block in the content and reported no reasoning of its own."""
    split = split_think(response.text or "")
    if split is None or split[1] is None or response.reasoning:
        return response
    return response.model_copy(update={"reasoning": split[1]})
