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
"""

from __future__ import annotations

import datetime
from typing import Any, ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome

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


def message_text(message: Any) -> str:
    """The concatenated text content of a Harmony message."""
    return "".join(getattr(part, "text", "") or "" for part in message.content)


class SafeguardInterface(NativeInterface):
    """gpt-oss-safeguard: Harmony prompt, raw completion, final-channel 0/1 label."""

    name = "safeguard"
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
        """Record the analysis (non-final) channel text and its token count as reasoning."""
        if not response.text:
            return response
        try:
            messages = parse_harmony(response.text)
        except Exception:  # malformed Harmony: parse() classifies it; keep the raw response
            return response
        thinking = [message_text(m) for m in messages if m.channel != "final"]
        if not thinking:
            return response
        encoding = harmony_encoding()
        count = sum(len(encoding.encode(t, allowed_special="all")) for t in thinking)
        return response.model_copy(update={
            "reasoning": response.reasoning or "\n".join(thinking),
            "reasoning_tokens": response.reasoning_tokens or count})

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Harmony's parser; the single final message must be exactly ``0`` or ``1``."""
        import openai_harmony

        try:
            messages = parse_harmony(text)
        except openai_harmony.HarmonyError as exc:
            return ReviewOutcome.unavailable(ReasonCode.MALFORMED, f"not Harmony: {exc}")
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
