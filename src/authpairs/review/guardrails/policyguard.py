"""``policyguard``: PolicyGuard-4B on the raw policy and the prospective operation.

The policy text and a trajectory describing the agent's next action (the operation and the
evidence it has observed) form one user message. The model answers a label within a 4-token
output limit: only the whole labels ``violation`` (-> BLOCK) and ``no_violation`` (-> ALLOW) are
accepted, including a whole label that ends exactly at the limit (finish_reason ``length``). A
partial label or any extra text is unavailable.
"""

from __future__ import annotations

from typing import ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

OUTPUT_LIMIT = 4
_LABELS = {"violation": Decision.BLOCK, "no_violation": Decision.ALLOW}


class PolicyGuardInterface(NativeInterface):
    """PolicyGuard: policy + trajectory in, a whole violation/no_violation label out."""

    name = "policyguard"
    template_files = ("policyguard.j2", "operation.j2")
    length_ok = True
    output_contract: ClassVar[str] = (
        "exactly the label violation (-> BLOCK) or no_violation (-> ALLOW); a whole label cut "
        "at the 4-token limit counts, a partial label or extra text does not")

    def render(self, case: PublicCase) -> ChatRequest:
        """One user message: policy, then the prospective action as a trajectory."""
        return ChatRequest(messages=[{"role": "user",
                                      "content": self.text("policyguard.j2", case)}])

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Whole labels only (surrounding whitespace and case ignored)."""
        label = text.strip().lower()
        if label in _LABELS:
            return ReviewOutcome.decided(_LABELS[label])
        if finish_reason == "length":
            return ReviewOutcome.unavailable(ReasonCode.LENGTH,
                                             f"partial label {label[:40]!r} at the limit")
        return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                         f"{label[:40]!r} is not violation or no_violation")
