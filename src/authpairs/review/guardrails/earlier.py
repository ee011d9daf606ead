"""Earlier renderings of native interfaces, for auditing the records those versions wrote.

An interface whose rendering or parsing changed declares its current rendering
(:meth:`~authpairs.review.interfaces.ReviewInterface.rendering`, kept in the run header's
template hashes); a header without it was written by the version before, and
:meth:`~authpairs.review.interfaces.ReviewInterface.as_recorded` gives the interface as that
version rendered and parsed, so ``authpairs audit`` re-checks honest old records by the rules
they were made under. Nothing here runs a review: a run is built by
:func:`~authpairs.review.interfaces.get_interface` (the current rendering), and a run whose header
holds another rendering is never resumed (:meth:`~authpairs.runs.store.RecordStore.open_run`).

* :class:`EarlierSafeguard` -- safeguard before token ids: the prompt sent as the decoded text,
  the answer read from its text (re-encoded with every special token allowed).
* :class:`EarlierLlamaGuard` -- llama-guard before token ids: the decoded prompt sent as text
  (byte-identical to the old template's rendering), the old template's hash.
* :class:`EarlierNemoSelfCheck` -- nemo-self-check before ``<think>`` handling: the answer's
  whole text read by NeMo's parser (no ``<think>`` block removed), a case spelling a control
  token rendered like any other.
"""

from __future__ import annotations

import re

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.llama_guard import LlamaGuardInterface
from authpairs.review.guardrails.llama_vocab import llama_tokenizer
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.guardrails.nemo import NemoSelfCheckReviewer
from authpairs.review.guardrails.safeguard import SafeguardInterface, harmony_outcome
from authpairs.review.outcome import ReasonCode, ReviewOutcome

MAX_HARMONY_RUN = 1_000
"""Longest run of only whitespace or only non-whitespace characters the text parser gave
Harmony's tokenizer (its cost grows with the square of a run's length); longer was
``too_large``."""
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_HARMONY_RUN + 1}}}|(?<!\s)\s{{{MAX_HARMONY_RUN + 1}}}")
MAX_HARMONY_HEADER = 256
"""Longest message header, in characters, the text parser gave Harmony; longer was
``malformed``."""
_ENDS = r"<\|end\|>|<\|call\|>|<\|return\|>"
_LONG_HEADER = re.compile(
    rf"(?:\A|{_ENDS})(?:(?!<\|message\|>|{_ENDS}).){{{MAX_HARMONY_HEADER + 1}}}", re.DOTALL)
LLAMA_GUARD_TEMPLATE_SHA256 = (
    "9fd53c8d9e708b7017a644a020e1392d133bd3eff88aa505278816db85531e5f")
"""SHA-256 of ``llama_guard.j2`` as llama-guard rendered it before token ids (the template then
wrote the header tokens itself)."""


class _Undeclared:
    """Mixed in first by each earlier version below: that version declared no rendering, so the
    headers it wrote hold none."""

    def rendering(self) -> None:
        """That version declared no rendering."""
        return None


class EarlierSafeguard(_Undeclared, SafeguardInterface):
    """safeguard as it rendered and parsed before token ids (audit only)."""

    def render(self, case: PublicCase) -> ChatRequest:
        """The decoded Harmony prompt as text, special tokens kept in the output."""
        text = harmony_encoding().decode(self.prompt_tokens(case))
        return ChatRequest(prompt=text, options={"skip_special_tokens": False})

    def parse_response(self, response: ChatResponse) -> ReviewOutcome:
        """The answer's text, as that version read it (:meth:`parse_text`)."""
        return NativeInterface.parse_response(self, response)

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Harmony's parser over the text encoded with every special token allowed; the single
        final message must be exactly ``0`` or ``1``. Text Harmony must not be given (a run
        over :data:`MAX_HARMONY_RUN` or a header over :data:`MAX_HARMONY_HEADER` characters;
        :meth:`parse` has checked the length cap) is unavailable."""
        if _LONG_RUN.search(text) is not None:
            return ReviewOutcome.unavailable(
                ReasonCode.TOO_LARGE, f"a run of more than {MAX_HARMONY_RUN} characters without "
                "whitespace (or of whitespace only)")
        if _LONG_HEADER.search(text) is not None:
            return ReviewOutcome.unavailable(
                ReasonCode.MALFORMED, f"a message header longer than {MAX_HARMONY_HEADER} "
                "characters (text that is not a Harmony message)")
        return harmony_outcome(lambda: harmony_encoding().encode(text, allowed_special="all"))


class EarlierLlamaGuard(_Undeclared, LlamaGuardInterface):
    """llama-guard as it rendered before token ids (audit only; the parser is unchanged)."""

    def template_hashes(self) -> dict[str, str]:
        """The template hashes that version recorded (its own ``llama_guard.j2``)."""
        return {**super().template_hashes(), "llama_guard.j2": LLAMA_GUARD_TEMPLATE_SHA256}

    def render(self, case: PublicCase) -> ChatRequest:
        """The decoded prompt as text, the server adding no special tokens."""
        text = llama_tokenizer(self.version).decode(self.prompt_tokens(case))
        return ChatRequest(prompt=text, options={"add_special_tokens": False})


class EarlierNemoSelfCheck(_Undeclared, NemoSelfCheckReviewer):
    """nemo-self-check as it rendered and parsed before ``<think>`` handling (audit only)."""

    def __init__(self, current: NemoSelfCheckReviewer) -> None:
        self.backend = current.backend
        self.sampling = current.sampling
        self.rails = current.rails
        self.settings = current.settings
        self._inputs = {}

    def render(self, case: PublicCase) -> ChatRequest:
        """NeMo's task prompt, no case refused for the control tokens it spells."""
        return self.task_request(case)

    def parsed_content(self, text: str, reasoning: str | None) -> str:
        """The answer's whole text: no ``<think>`` block removed, the reasoning not read."""
        return text

