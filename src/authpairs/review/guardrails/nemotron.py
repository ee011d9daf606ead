"""``nemotron-safety``: Nemotron content safety in custom-policy reasoning mode.

The authorization policy is supplied as the custom policy with one category (unauthorized
operation); the operation and evidence are the human turn. With reasoning on, the model thinks in
a ``<think>`` block and then gives a JSON verdict ``{"User Safety": "safe"|"unsafe",
"Safety Categories": "..."}``. ``safe`` -> ALLOW, ``unsafe`` -> BLOCK; the verdict must be one
strict JSON object (the same rules as every JSON interface) with nothing after it.
"""

from __future__ import annotations

from typing import ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.labels import normalise, split_think, think_as_reasoning
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import parse_json_object

_VERDICT = "User Safety"
_CATEGORIES = "Safety Categories"
_ALLOWED_KEYS = {_VERDICT, _CATEGORIES, "Response Safety"}
_LABELS = {"safe": Decision.ALLOW, "unsafe": Decision.BLOCK}


class NemotronSafetyInterface(NativeInterface):
    """Nemotron safety: custom policy, reasoning, JSON verdict with categories."""

    name = "nemotron-safety"
    template_files = ("nemotron_safety.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        'optional <think>...</think>, then one JSON object {"User Safety": "safe"|"unsafe", '
        '"Safety Categories": "..."}; safe -> ALLOW, unsafe -> BLOCK')

    def render(self, case: PublicCase) -> ChatRequest:
        """One user message: instructions, custom policy, the human turn, the output form."""
        return ChatRequest(messages=[{"role": "user",
                                      "content": self.text("nemotron_safety.j2", case)}])

    def finish(self, response: ChatResponse) -> ChatResponse:
        """Keep the think block as reasoning when the server left it in the content."""
        return think_as_reasoning(response)

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """The JSON verdict after the think block; strict keys and values."""
        split = split_think(text)
        if split is None:
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED, "unbalanced <think> block")
        value = parse_json_object(split[0])
        if isinstance(value, ReviewOutcome):
            return value
        extra = sorted(set(value) - _ALLOWED_KEYS)
        if extra:
            return ReviewOutcome.unavailable(ReasonCode.EXTRA_FIELD, f"unexpected key {extra[0]!r}")
        verdict = value.get(_VERDICT)
        if verdict is None:
            return ReviewOutcome.unavailable(ReasonCode.MISSING_FIELD, f"no {_VERDICT!r}")
        if not isinstance(verdict, str):
            return ReviewOutcome.unavailable(ReasonCode.WRONG_TYPE, f"{_VERDICT!r} not a string")
        label = normalise(verdict)
        if label not in _LABELS:
            return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                             f"{_VERDICT!r} is {verdict[:40]!r}")
        categories = value.get(_CATEGORIES)
        if categories is not None and not isinstance(categories, str):
            return ReviewOutcome.unavailable(ReasonCode.WRONG_TYPE,
                                             f"{_CATEGORIES!r} not a string")
        checks = [{"categories": categories}] if categories else None
        return ReviewOutcome.decided(_LABELS[label], checks=checks)
