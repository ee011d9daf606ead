"""``llama-guard``: Llama Guard 3 or 4 with the authorization policy as a custom category.

Not in the paper, but widely deployed. The Llama Guard prompt (one unsafe-content category, S1
"Unauthorized Operation", whose description is the policy) is rendered from a template as a raw
prompt and sent to ``/v1/completions`` (the template carries its own special tokens, so the
server adds none); ``interface_options.version`` picks the Llama Guard 3 (default) or 4
headers. The answer is ``safe`` (-> ALLOW) or ``unsafe`` followed by a line of violated category
codes (-> BLOCK); the codes must be categories the prompt defined.
"""

from __future__ import annotations

import re
from typing import ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

CATEGORY_CODES = ("S1",)
_CODES = re.compile(r"\A(S\d+)(\s*,\s*S\d+)*\Z")


class LlamaGuardInterface(NativeInterface):
    """Llama Guard 3/4 format; custom category S1 = the authorization policy."""

    name = "llama-guard"
    template_files = ("llama_guard.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        "'safe' (-> ALLOW) or 'unsafe' plus a line of defined category codes such as S1 "
        "(-> BLOCK); nothing else")

    def __init__(self, version: int = 3) -> None:
        if version not in (3, 4):
            raise ReviewerError(f"llama-guard: version must be 3 or 4, not {version!r}")
        self.version = version

    def render(self, case: PublicCase) -> ChatRequest:
        """The complete Llama Guard prompt as a raw completion."""
        # The assistant header is followed by a blank line, as in the model's own template.
        prompt = self.text("llama_guard.j2", case, version=self.version).rstrip("\n") + "\n\n"
        return ChatRequest(prompt=prompt,
                           options={"add_special_tokens": False})

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """``safe`` alone, or ``unsafe`` with an optional line of known category codes."""
        lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
        first = lines[0].lower()
        if first == "safe":
            if len(lines) > 1:
                return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE, "text after 'safe'")
            return ReviewOutcome.decided(Decision.ALLOW)
        if first != "unsafe":
            return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                             f"{lines[0][:40]!r} is not safe or unsafe")
        if len(lines) > 2:
            return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE, "text after the categories")
        if len(lines) == 2:
            codes_line = lines[1].upper()
            if not _CODES.match(codes_line):
                return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                                 f"{lines[1][:40]!r} is not category codes")
            codes = [c.strip() for c in codes_line.split(",")]
            unknown = [c for c in codes if c not in CATEGORY_CODES]
            if unknown:
                return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                                 f"undefined category {unknown[0]}")
            return ReviewOutcome.decided(Decision.BLOCK, checks=[{"categories": codes}])
        return ReviewOutcome.decided(Decision.BLOCK)
