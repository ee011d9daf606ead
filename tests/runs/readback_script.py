"""A model and a guardrail that answer whatever text :data:`ANSWER` holds (set by the read-back
tests before each run; importable as 'tests.runs.readback_script:NAME')."""

from __future__ import annotations

from authpairs.backends.base import ChatRequest, ChatResponse

ANSWER = ""
"""The text every request is answered with."""


def answer(request: ChatRequest) -> ChatResponse:
    """The scripted model: :data:`ANSWER`, a clean stop."""
    return ChatResponse(text=ANSWER, finish_reason="stop", input_tokens=3, output_tokens=2)


def guard(case: object) -> str:
    """The callable guardrail: :data:`ANSWER` as its string verdict."""
    return ANSWER
