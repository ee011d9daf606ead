"""``llama-guard``: Llama Guard 3 or 4 with the authorization policy as a custom category.

Not in the paper, but widely deployed. The Llama Guard prompt (one unsafe-content category, S1
"Unauthorized Operation", whose description is the policy) is rendered from a template as a raw
prompt and sent to ``/v1/completions`` (the template carries its own special tokens, so the
server adds none). ``interface_options``:

* ``version`` -- 3 (default) or 4: the Llama 3 (``<|start_header_id|>``) or Llama 4
  (``<|header_start|>``) header tokens.
* ``assistant_blank_line`` -- True (default): the prompt ends with the assistant header and a
  blank line, as Meta's ``llama-models`` chat format encodes every header (and as a server
  applying the model's chat template sends it). False: it ends at the header, as Meta's
  ``llama-recipes`` ``PROMPT_TEMPLATE_3`` does.

The answer is Meta's: exactly ``safe`` (-> ALLOW) or ``unsafe``, a newline and one line of
violated category codes (-> BLOCK), compared as llama-stack's Llama Guard shield compares it
(exact lower case, after trimming the ends); the codes must be categories the prompt defined.
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
_CODES = re.compile(r"S[0-9]+(?: ?, ?S[0-9]+)*")
_LABEL_WORDS = ("safe", "unsafe")


class LlamaGuardInterface(NativeInterface):
    """Llama Guard 3/4 format; custom category S1 = the authorization policy."""

    name = "llama-guard"
    template_files = ("llama_guard.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        "exactly 'safe' (-> ALLOW) or 'unsafe', newline, one line of defined category codes "
        "such as S1 (-> BLOCK); lower case, nothing else (llama-stack's check)")

    def __init__(self, version: int = 3, assistant_blank_line: bool = True) -> None:
        if version not in (3, 4):
            raise ReviewerError(f"llama-guard: version must be 3 or 4, not {version!r}")
        self.version = version
        self.assistant_blank_line = bool(assistant_blank_line)

    def render(self, case: PublicCase) -> ChatRequest:
        """The complete Llama Guard prompt as a raw completion."""
        prompt = self.text("llama_guard.j2", case, version=self.version).rstrip("\n")
        if self.assistant_blank_line:
            prompt += "\n\n"
        return ChatRequest(prompt=prompt, options={"add_special_tokens": False})

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """``safe``, or ``unsafe`` + newline + defined codes; llama-stack's exact comparison."""
        answer = text.strip()
        if answer == "safe":
            return ReviewOutcome.decided(Decision.ALLOW)
        head, newline, codes_line = answer.partition("\n")
        if head == "safe":
            return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE, "text after 'safe'")
        if head != "unsafe":
            if head.strip().lower() in _LABEL_WORDS:
                return ReviewOutcome.unavailable(
                    ReasonCode.NO_LABEL, f"{head[:40]!r}: llama-stack accepts only lower-case "
                    "'safe' or 'unsafe' starting a line of its own")
            return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                             f"{head[:40]!r} is not safe or unsafe")
        if not newline:
            return ReviewOutcome.unavailable(
                ReasonCode.MISSING_FIELD, "'unsafe' without its line of category codes "
                "(llama-stack requires one)")
        if _CODES.fullmatch(codes_line) is None:
            return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                             f"{codes_line[:40]!r} is not one line of codes")
        codes = [code.strip() for code in codes_line.split(",")]
        unknown = [code for code in codes if code not in CATEGORY_CODES]
        if unknown:
            return ReviewOutcome.unavailable(ReasonCode.INVALID_VALUE,
                                             f"undefined category {unknown[0]}")
        return ReviewOutcome.decided(Decision.BLOCK, checks=[{"categories": codes}])
