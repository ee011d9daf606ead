"""``granite-guardian``: IBM Granite Guardian with custom criteria and thinking.

The operation and evidence are the user message; the authorization policy is the custom criterion,
passed the model card's way, through the chat template (``guardian_config.custom_criteria``, with
``think`` on). The model answers ``<think>...</think>`` then ``<score> yes </score>`` (the text
meets the criterion: a violation -> BLOCK) or ``<score> no </score>`` (-> ALLOW). Exactly one
score tag, last, with nothing but the think block before it.
"""

from __future__ import annotations

import re
from typing import ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.labels import normalise, split_think, think_as_reasoning
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

_SCORE = re.compile(r"\A<score>(?P<label>[^<>]*)</score>\Z", re.IGNORECASE)
_LABELS = {"yes": Decision.BLOCK, "no": Decision.ALLOW}


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
        answer = split[0].strip()
        match = _SCORE.match(answer)
        if match is None:
            reason = ReasonCode.EXTRA_PROSE if "<score>" in answer.lower() else ReasonCode.NO_LABEL
            return ReviewOutcome.unavailable(reason, f"no single score tag in {answer[:60]!r}")
        label = normalise(match.group("label"))
        if label not in _LABELS:
            return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                             f"score {label[:40]!r} is not yes or no")
        return ReviewOutcome.decided(_LABELS[label])
