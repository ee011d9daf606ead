"""Shared strict-parsing helpers for native guardrail outputs.

Native guardrails answer with short labels rather than JSON. These helpers check the finish
reason (with the same :func:`~authpairs.review.parsing.finish_outcome` as the JSON interfaces),
split off a leading ``<think>`` block, and normalise whitespace and ASCII case. They never guess:
anything that is not exactly one whole label is *unavailable*.
"""

from __future__ import annotations

import re

from authpairs.backends.base import ChatResponse
from authpairs.review.outcome import ReviewOutcome
from authpairs.review.parsing import CLEAN_STOPS, ascii_lower, finish_outcome

CLEAN_FINISH = CLEAN_STOPS
"""Finish reasons of a generation that ended by itself (the JSON interfaces' set)."""

_THINK = re.compile(r"\A\s*<think>(?P<reasoning>.*?)</think>(?P<answer>.*)\Z", re.DOTALL)


def finish_problem(finish_reason: str | None, *, length_ok: bool = False) -> ReviewOutcome | None:
    """An unavailable outcome for an unusable finish reason, or None when it is usable.

    :func:`~authpairs.review.parsing.finish_outcome`, the mapping every interface shares;
    ``length_ok`` accepts a stop at the token limit (the caller then requires a whole label in
    the text).
    """
    return finish_outcome(finish_reason, length_ok=length_ok)


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
    """ASCII letters lower-cased (no other character changes), runs of whitespace collapsed to
    one space and the ends trimmed."""
    return ascii_lower(" ".join(text.split()))


def think_as_reasoning(response: ChatResponse) -> ChatResponse:
    """``response`` with a leading think block kept as its reasoning, when the server left the
    block in the content and reported no reasoning of its own."""
    split = split_think(response.text or "")
    if split is None or split[1] is None or response.reasoning:
        return response
    return response.model_copy(update={"reasoning": split[1]})
