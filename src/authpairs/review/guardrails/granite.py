"""``granite-guardian``: IBM Granite Guardian with custom criteria and thinking.

The operation and evidence are the user message; the authorization policy is the custom criterion,
passed the model card's way, through the chat template (``guardian_config.custom_criteria``, with
``think`` on). The model answers ``<think>...</think>`` then ``<score> yes </score>`` (the text
meets the criterion: a violation -> BLOCK) or ``<score> no </score>`` (-> ALLOW). Exactly one
score tag, last, with nothing but the think block before it.

IBM's cookbook parser reads the last ``<score>(.*?)</score>`` match, tag names case-sensitive;
authpairs reads the same tag the same way and accepts only the words ``yes`` and ``no`` (exact
case, surrounding whitespace allowed) inside it. It is stricter in what may surround the tag
(format card ``granite-guardian``).
"""

from __future__ import annotations

import re
from typing import ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.labels import split_think, think_as_reasoning
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

SCORE_OPEN, SCORE_CLOSE = "<score>", "</score>"
_SCORE = re.compile(r"\A<score>(?P<label>[^<>]*)</score>\Z")  # tag names case-sensitive
SCORE_LABELS = {"yes": Decision.BLOCK, "no": Decision.ALLOW}
"""The words inside the score tag (exact case) and what each means for the operation."""


class GraniteGuardianInterface(NativeInterface):
    """Granite Guardian: custom criteria through the chat template, ``<score>`` yes/no."""

    name = "granite-guardian"
    template_files = ("granite_criteria.j2", "granite_user.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        "optional <think>...</think>, then exactly <score> yes </score> (violation -> BLOCK) "
        "or <score> no </score> (-> ALLOW)")

    def __init__(self, think: bool = True) -> None:
        self.think = think

    def render(self, case: PublicCase) -> ChatRequest:
        """The operation as the user message; the policy as the custom criterion."""
        criteria = self.text("granite_criteria.j2", case).rstrip("\n")
        kwargs = {"guardian_config": {"custom_criteria": criteria}, "think": self.think}
        return ChatRequest(
            messages=[{"role": "user", "content": self.text("granite_user.j2", case)}],
            options={"chat_template_kwargs": kwargs})

    def finish(self, response: ChatResponse) -> ChatResponse:
        """Keep the think block as reasoning when the server left it in the content."""
        return think_as_reasoning(response)

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """The last thing in the answer must be one whole score tag."""
        split = split_think(text)
        if split is None:
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED, "unbalanced <think> block")
        answer, reasoning = split[0].strip(), split[1] or ""
        if SCORE_OPEN in reasoning or SCORE_CLOSE in reasoning:
            # the cookbook's regex would pair a tag inside the reasoning with the one after it
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED,
                                             "a score tag inside the <think> block")
        match = _SCORE.match(answer)
        if match is None:
            if SCORE_OPEN in answer or SCORE_CLOSE in answer:
                return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                                 f"text around the score tag in {answer[:60]!r}")
            return ReviewOutcome.unavailable(
                ReasonCode.NO_LABEL, f"no <score> tag in {answer[:60]!r} (tag names are "
                "case-sensitive, as in IBM's cookbook parser)")
        label = match.group("label").strip()
        if label not in SCORE_LABELS:
            return ReviewOutcome.unavailable(
                ReasonCode.NO_LABEL, f"score {label[:40]!r} is not exactly yes or no")
        return ReviewOutcome.decided(SCORE_LABELS[label])
