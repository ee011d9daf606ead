"""``policyguard``: PolicyGuard-4B on the raw policy and the prospective operation.

The policy text and a trajectory describing the agent's next action (the operation and the
evidence it has observed) form one user message. The model answers a label within a 4-token
output limit. By default (``labels: paper``) only the whole labels ``violation`` (-> BLOCK) and
``no_violation`` (-> ALLOW) are accepted, the paper's rule; ``interface_options: {labels: card}``
accepts the model card's spellings instead: ``violation``, ``no violation`` and ``no-violation``.
Either way the label must be the whole answer in exact (lower) case, surrounding whitespace
aside; a whole label that ends exactly at the limit (finish_reason ``length``) counts. A partial
label or any extra text is unavailable. The prompt is the same under both label sets.
"""

from __future__ import annotations

from typing import ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import LENGTH_STOPS, ascii_lower

LABEL_SETS: dict[str, dict[str, Decision]] = {
    "paper": {"violation": Decision.BLOCK, "no_violation": Decision.ALLOW},
    "card": {"violation": Decision.BLOCK, "no violation": Decision.ALLOW,
             "no-violation": Decision.ALLOW},
}
"""Accepted labels per ``labels`` option: the paper's rule, or the model card's spellings."""


class PolicyGuardInterface(NativeInterface):
    """PolicyGuard: policy + trajectory in, a whole violation/no_violation label out."""

    name = "policyguard"
    template_files = ("policyguard.j2", "operation.j2")
    length_ok = True
    output_contract: ClassVar[str] = (
        "exactly the label violation (-> BLOCK) or no_violation (-> ALLOW), lower case; with "
        "interface_options {labels: card} the card's 'no violation' / 'no-violation' instead of "
        "no_violation; a whole label cut at the 4-token limit counts, a partial label or extra "
        "text does not")

    def __init__(self, labels: str = "paper") -> None:
        self.check_choice("labels", labels, LABEL_SETS)
        self.labels = labels
        self.accepted = LABEL_SETS[labels]

    def render(self, case: PublicCase) -> ChatRequest:
        """One user message: policy, then the prospective action as a trajectory."""
        return ChatRequest(messages=[{"role": "user",
                                      "content": self.text("policyguard.j2", case)}])

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Whole labels only, exact case (surrounding whitespace ignored)."""
        label = text.strip()
        if label in self.accepted:
            return ReviewOutcome.decided(self.accepted[label])
        if finish_reason in LENGTH_STOPS:
            return ReviewOutcome.unavailable(ReasonCode.LENGTH,
                                             f"partial label {label[:40]!r} at the limit")
        return ReviewOutcome.unavailable(ReasonCode.NO_LABEL, self._why_not(label))

    def _why_not(self, label: str) -> str:
        """Detail of a rejected answer, naming the label set that would have taken it."""
        accepted = " or ".join(self.accepted)
        for other, labels in LABEL_SETS.items():
            if other != self.labels and label in labels:
                return (f"{label!r} is a '{other}' label; labels: {self.labels} accepts only "
                        f"{accepted}")
        if ascii_lower(label) in self.accepted:
            return f"{label[:40]!r}: labels are lower case ({accepted})"
        return f"{label[:40]!r} is not {accepted}"
