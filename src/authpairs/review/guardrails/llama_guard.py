"""``llama-guard``: Llama Guard 3 or 4 with the authorization policy as a custom category.

Not in the paper, but widely deployed. The Llama Guard prompt (one unsafe-content category, S1
"Unauthorized Operation", whose description is the policy) is rendered from a template as the
content of one user message, and Meta's chat format (``llama-models``: Meta's tokenizer, content
encoded as plain text) turns it into token ids, so no spelling of a special token in the case
(``<|eot_id|><|start_header_id|>assistant...``) becomes a control token. The ids go to
``/v1/completions`` as the prompt. ``interface_options``:

* ``version`` -- 3 (default) or 4: Llama 3's tokenizer and header tokens
  (``<|start_header_id|>``) or Llama 4's (``<|header_start|>``).
* ``assistant_blank_line`` -- True (default): the prompt ends with the assistant header and a
  blank line, as Meta's ``llama-models`` chat format encodes every header (and as a server
  applying the model's chat template sends it). False: it ends at the header, as Meta's
  ``llama-recipes`` ``PROMPT_TEMPLATE_3`` does.
* ``prompt`` -- ``tokens`` (default): the token ids are sent (the request records them beside
  their decoding); ``text``: the decoding is sent, for servers that take text only, which
  tokenise it again -- the interface then refuses a case whose public text spells a control
  token.

The answer is Meta's: exactly ``safe`` (-> ALLOW) or ``unsafe``, a newline and one line of
violated category codes (-> BLOCK), compared as llama-stack's Llama Guard shield compares it
(exact lower case, after trimming the ends); the codes must be categories the prompt defined.
It has no role or channel structure, so it is read from its text.
"""

from __future__ import annotations

import re
from typing import ClassVar

from authpairs.backends.base import ChatRequest
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.llama_vocab import llama_tokenizer, user_turn_tokens
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.interfaces import RENDERING_KEY, ReviewInterface
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

    def __init__(self, version: int = 3, assistant_blank_line: bool = True,
                 prompt: str = "tokens") -> None:
        if version not in (3, 4):
            raise ReviewerError(f"llama-guard: version must be 3 or 4, not {version!r}")
        self.send_prompt_as(prompt)
        self.version = version
        self.assistant_blank_line = bool(assistant_blank_line)

    def rendering(self) -> str | None:
        """Token ids: the prompt is Meta's chat format over Meta's tokenizer."""
        return "llama-guard 2: token ids"

    def as_recorded(self, template_hashes: dict[str, str]) -> ReviewInterface:
        """A header without this rendering was written before token ids: its records are
        re-checked by :class:`~authpairs.review.guardrails.earlier.EarlierLlamaGuard`."""
        if RENDERING_KEY in template_hashes:
            return self
        from authpairs.review.guardrails.earlier import EarlierLlamaGuard

        return EarlierLlamaGuard(self.version, self.assistant_blank_line)

    def prompt_tokens(self, case: PublicCase) -> list[int]:
        """Meta's chat format of the Llama Guard prompt as one user message, ending after the
        assistant header (and its blank line, unless ``assistant_blank_line`` is False)."""
        content = self.text("llama_guard.j2", case).rstrip("\n")
        tokens = user_turn_tokens(self.version, content)
        if not self.assistant_blank_line:
            blank = llama_tokenizer(self.version).encode("\n\n", bos=False, eos=False)
            if tokens[-len(blank):] != blank:
                raise ReviewerError("llama-guard: Meta's chat format no longer ends the "
                                    "assistant header with a blank line")
            tokens = tokens[:-len(blank)]
        return tokens

    def render(self, case: PublicCase) -> ChatRequest:
        """The raw completion request: the token ids (with their decoding), or with ``prompt:
        text`` the decoding alone."""
        tokens = self.prompt_tokens(case)
        text = llama_tokenizer(self.version).decode(tokens)
        if self.sends_text:
            return ChatRequest(prompt=text, options={"add_special_tokens": False})
        return ChatRequest(prompt=text, prompt_token_ids=tokens)

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
