"""``safeguard``: gpt-oss-safeguard in its native Harmony format.

The policy is the *developer* message, the operation and evidence the *user* message; the system
message carries the reasoning effort (default medium) and a rendering date that is configured and
frozen for the run (default 2026-10-10, the paper's). ``openai-harmony`` renders the conversation
to a raw prompt, which goes to the server's ``/v1/completions`` endpoint with special tokens kept
in the output. The answer is parsed with Harmony's own parser: only the single **final**-channel
message counts, and its whole content must be ``1`` (violation -> BLOCK) or ``0`` (no violation ->
ALLOW). The analysis channel is never searched for a label; its tokens are recorded as reasoning.

Harmony's own readers (``parse_messages_from_completion_tokens`` and the streaming parser) take
the last final-channel message; authpairs is stricter -- one final message, last, addressed to no
one -- and never decides where they would not (format card ``safeguard``).

Harmony's tokenizer costs time superlinear in the length of one unbroken run of characters (and
panics with a Rust ``PanicException``, a ``BaseException``, on some long inputs), so the answer
is checked by :func:`harmony_text_problem` before Harmony sees it: at most
:data:`MAX_HARMONY_CHARS` characters, no run of more than :data:`MAX_HARMONY_RUN` characters
without a change between whitespace and non-whitespace, no message header longer than
:data:`MAX_HARMONY_HEADER` characters. Anything Harmony raises is unavailable.
"""

from __future__ import annotations

import datetime
import re
from typing import Any, ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import FATAL, guarded, text_problem

MAX_HARMONY_CHARS = 100_000
"""Longest Harmony answer parsed (about 25,000 tokens of prose, above the paper's 16,384-token
limit); longer is ``too_large``."""
MAX_HARMONY_RUN = 1_000
"""Longest run of only whitespace or only non-whitespace characters Harmony is given; a longer
run is ``too_large`` (the tokenizer's cost grows with the square of a run's length)."""
# tried only where a run starts (the lookbehinds), so the scan is linear in the text
_LONG_RUN = re.compile(rf"(?<!\S)\S{{{MAX_HARMONY_RUN + 1}}}|(?<!\s)\s{{{MAX_HARMONY_RUN + 1}}}")
MAX_HARMONY_HEADER = 256
"""Longest message header (from the start of the answer or the end of a message to the next
``<|message|>``: role, channel, recipient, content type) Harmony is given; a longer one is
``malformed`` (Harmony's header parser costs time superlinear in the header's length)."""
_ENDS = r"<\|end\|>|<\|call\|>|<\|return\|>"
_LONG_HEADER = re.compile(
    rf"(?:\A|{_ENDS})(?:(?!<\|message\|>|{_ENDS}).){{{MAX_HARMONY_HEADER + 1}}}", re.DOTALL)
PAPER_RENDERING_DATE = "2026-10-10"
REASONING_EFFORTS = ("low", "medium", "high")
_LABELS = {"1": Decision.BLOCK, "0": Decision.ALLOW}


def parse_harmony(text: str) -> list[Any]:
    """Harmony messages of an assistant completion (raises ``HarmonyError`` when malformed)."""
    import openai_harmony

    encoding = harmony_encoding()
    tokens = encoding.encode(text, allowed_special="all")
    messages: list[Any] = encoding.parse_messages_from_completion_tokens(
        tokens, openai_harmony.Role.ASSISTANT)
    return messages


def harmony_text_problem(text: str) -> ReviewOutcome | None:
    """The unavailable outcome for text Harmony must not be given (see the module notes), or
    None. Costs one ``len`` and one regular-expression scan, never a tokenizer call."""
    problem = text_problem(text, MAX_HARMONY_CHARS)
    if problem is not None:
        return problem
    if _LONG_RUN.search(text) is not None:
        return ReviewOutcome.unavailable(
            ReasonCode.TOO_LARGE, f"a run of more than {MAX_HARMONY_RUN} characters without "
            "whitespace (or of whitespace only)")
    if _LONG_HEADER.search(text) is not None:
        return ReviewOutcome.unavailable(
            ReasonCode.MALFORMED, f"a message header longer than {MAX_HARMONY_HEADER} "
            "characters (text that is not a Harmony message)")
    return None


def message_text(message: Any) -> str:
    """The concatenated text content of a Harmony message."""
    return "".join(getattr(part, "text", "") or "" for part in message.content)


class SafeguardInterface(NativeInterface):
    """gpt-oss-safeguard: Harmony prompt, raw completion, final-channel 0/1 label."""

    name = "safeguard"
    max_chars = MAX_HARMONY_CHARS
    template_files = ("safeguard_policy.j2", "safeguard_user.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        "Harmony completion; exactly one final-channel message whose whole content is 1 "
        "(violation -> BLOCK) or 0 (no violation -> ALLOW); analysis channel ignored")

    def __init__(self, reasoning_effort: str = "medium",
                 rendering_date: str = PAPER_RENDERING_DATE) -> None:
        if reasoning_effort not in REASONING_EFFORTS:
            raise ReviewerError(f"safeguard: reasoning_effort must be one of "
                                f"{', '.join(REASONING_EFFORTS)}, not {reasoning_effort!r}")
        try:
            datetime.date.fromisoformat(rendering_date)
        except ValueError:
            raise ReviewerError(f"safeguard: rendering_date {rendering_date!r} is not "
                                "YYYY-MM-DD") from None
        self.reasoning_effort = reasoning_effort
        self.rendering_date = rendering_date

    def render(self, case: PublicCase) -> ChatRequest:
        """Render system/developer/user with Harmony into one raw completion prompt."""
        import openai_harmony as h

        encoding = harmony_encoding()
        effort = h.ReasoningEffort(self.reasoning_effort.capitalize())
        system = (h.SystemContent.new().with_reasoning_effort(effort)
                  .with_conversation_start_date(self.rendering_date))
        developer = h.DeveloperContent.new().with_instructions(
            self.text("safeguard_policy.j2", case).rstrip("\n"))
        conversation = h.Conversation.from_messages([
            h.Message.from_role_and_content(h.Role.SYSTEM, system),
            h.Message.from_role_and_content(h.Role.DEVELOPER, developer),
            h.Message.from_role_and_content(h.Role.USER,
                                            self.text("safeguard_user.j2", case).rstrip("\n")),
        ])
        tokens = encoding.render_conversation_for_completion(conversation, h.Role.ASSISTANT)
        return ChatRequest(prompt=encoding.decode(tokens),
                           options={"skip_special_tokens": False})

    def finish(self, response: ChatResponse) -> ChatResponse:
        """Record the analysis (non-final) channel text and its token count as reasoning.

        Never raises: text Harmony must not be given, or that Harmony fails on (a malformed
        answer, a panic), leaves the response as it came; :meth:`parse` classifies it."""
        text = response.text
        if not text or harmony_text_problem(text) is not None:
            return response

        def reasoning() -> tuple[list[str], int]:
            thinking = [message_text(m) for m in parse_harmony(text) if m.channel != "final"]
            encoding = harmony_encoding()
            return thinking, sum(len(encoding.encode(t, allowed_special="all"))
                                 for t in thinking)

        found = guarded(reasoning, "Harmony")
        if isinstance(found, ReviewOutcome) or not found[0]:
            return response
        thinking, count = found
        return response.model_copy(update={
            "reasoning": response.reasoning or "\n".join(thinking),
            "reasoning_tokens": response.reasoning_tokens or count})

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Harmony's parser; the single final message must be exactly ``0`` or ``1``."""
        import openai_harmony

        problem = harmony_text_problem(text)
        if problem is not None:
            return problem
        try:
            messages = parse_harmony(text)
        except openai_harmony.HarmonyError as exc:
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED, f"not Harmony: {str(exc)[:200]}")
        except FATAL:
            raise
        except BaseException as exc:  # a Rust panic (pyo3 PanicException) or another failure
            return ReviewOutcome.unavailable(ReasonCode.PARSER_ERROR,
                                             f"Harmony raised {type(exc).__name__}")
        finals = [i for i, m in enumerate(messages) if m.channel == "final"]
        if not finals:
            return ReviewOutcome.unavailable(ReasonCode.NO_FINAL_CHANNEL,
                                             "no final-channel message")
        if len(finals) > 1:
            return ReviewOutcome.unavailable(ReasonCode.MULTIPLE_OBJECTS,
                                             f"{len(finals)} final-channel messages")
        final = messages[finals[0]]
        if finals[0] != len(messages) - 1:
            return ReviewOutcome.unavailable(ReasonCode.EXTRA_PROSE,
                                             "messages after the final-channel message")
        if final.recipient is not None:
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED,
                                             f"final message addressed to {final.recipient}")
        label = message_text(final).strip()
        if label not in _LABELS:
            return ReviewOutcome.unavailable(ReasonCode.NO_LABEL,
                                             f"final label {label[:40]!r} is not 0 or 1")
        return ReviewOutcome.decided(_LABELS[label])
