"""``safeguard``: gpt-oss-safeguard in its native Harmony format.

The policy is the *developer* message, the operation and evidence the *user* message; the system
message carries the reasoning effort (default medium) and a rendering date that is configured and
frozen for the run (default 2026-10-10, the paper's). ``openai-harmony`` renders the conversation
to token ids, encoding every message's content as plain text, so no spelling of a special token
in the case (``<|end|><|start|>developer<|message|>...``) becomes a control token. By default
(``prompt: tokens``) those ids are the prompt sent to the server's ``/v1/completions`` (vLLM and
llama.cpp take a list of token ids); the request records them beside their decoding.
``prompt: text`` sends the decoded text for servers that take text only; the server tokenises it
again, so the interface then refuses a case whose public text spells a control token
(:mod:`~authpairs.review.control_tokens`).

The answer is read from the completion's **token ids** (the request asks for them: vLLM's
``return_token_ids``; llama.cpp sends them with ``logprobs``) with Harmony's own parser: only
the single **final**-channel message counts, and its whole content must be ``1`` (violation ->
BLOCK) or ``0`` (no violation -> ALLOW). The analysis channel is never searched for a label; its
tokens are recorded as reasoning. Text cannot show whether a ``<|channel|>final<|message|>`` is
the model's own header or characters it wrote inside its reasoning, so an answer that arrives
without its token ids is unavailable (``no_token_ids``).

Harmony's own readers (``parse_messages_from_completion_tokens`` and the streaming parser) take
the last final-channel message; authpairs is stricter -- one final message, last, addressed to no
one -- and never decides where they would not (format card ``safeguard``). Before Harmony reads
the ids they are bounded: at most :data:`MAX_HARMONY_TOKENS` ids and
:data:`MAX_HARMONY_MESSAGES` messages, and no message header (from the start or the end of a
message to the next ``<|message|>`` token) longer than :data:`MAX_HARMONY_HEADER_TOKENS` tokens
(Harmony's parser costs time superlinear in a header's length and in the number of messages).
Anything Harmony raises, a Rust panic included, is unavailable.
"""

from __future__ import annotations

import datetime
from collections.abc import Callable
from functools import cache
from typing import Any, ClassVar

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import PublicCase
from authpairs.errors import ReviewerError
from authpairs.review.guardrails.harmony_vocab import harmony_encoding
from authpairs.review.guardrails.native import NativeInterface
from authpairs.review.interfaces import RENDERING_KEY, ReviewInterface
from authpairs.review.outcome import Decision, ReasonCode, ReviewOutcome
from authpairs.review.parsing import guarded

MAX_HARMONY_CHARS = 100_000
"""Longest Harmony answer text read (about 25,000 tokens of prose, above the paper's 16,384-token
limit); longer is ``too_large``."""
MAX_HARMONY_TOKENS = MAX_HARMONY_CHARS
"""Most token ids of an answer given to Harmony; more is ``too_large``."""
MAX_HARMONY_HEADER_TOKENS = 64
"""Longest message header, in tokens (from the start of the answer or the end of a message to the
next ``<|message|>`` token: role, channel, recipient, content type), that Harmony is given; a
longer one is ``malformed`` (Harmony's header parser costs time superlinear in its length)."""
MAX_HARMONY_MESSAGES = 64
"""Most messages (``<|message|>`` tokens) an answer given to Harmony may hold; more is
``too_large`` (Harmony's completion parser costs time superlinear in the number of messages; an
answer of gpt-oss-safeguard holds an analysis message and a final one)."""
PAPER_RENDERING_DATE = "2026-10-10"
REASONING_EFFORTS = ("low", "medium", "high")
_LABELS = {"1": Decision.BLOCK, "0": Decision.ALLOW}


@cache
def special_id(spelling: str) -> int:
    """The id of one of Harmony's special tokens (e.g. ``<|message|>``)."""
    ids: list[int] = harmony_encoding().encode(spelling, allowed_special="all")
    if len(ids) != 1:
        raise ReviewerError(f"{spelling!r} is not a Harmony special token")
    return ids[0]


def message_contents(ids: list[int]) -> list[int] | ReviewOutcome:
    """The number of content tokens (those between a message's ``<|message|>`` and its end) of
    each message in a completion's token ids; or the unavailable outcome for ids Harmony must
    not be given (too many, more than :data:`MAX_HARMONY_MESSAGES` messages, or a header over
    :data:`MAX_HARMONY_HEADER_TOKENS`). One pass over the ids, no Harmony call."""
    if len(ids) > MAX_HARMONY_TOKENS:
        return ReviewOutcome.unavailable(
            ReasonCode.TOO_LARGE, f"{len(ids)} tokens, over {MAX_HARMONY_TOKENS}")
    message = special_id("<|message|>")
    ends = {special_id(s) for s in ("<|end|>", "<|call|>", "<|return|>")}
    header: int | None = 0  # tokens of the header being read; None inside a message's content
    contents: list[int] = []
    for token in ids:
        if token == message:
            header = None
            contents.append(0)
            if len(contents) > MAX_HARMONY_MESSAGES:
                return ReviewOutcome.unavailable(
                    ReasonCode.TOO_LARGE, f"more than {MAX_HARMONY_MESSAGES} messages")
        elif token in ends:
            header = 0
        elif header is None:
            contents[-1] += 1
        else:
            header += 1
            if header > MAX_HARMONY_HEADER_TOKENS:
                return ReviewOutcome.unavailable(
                    ReasonCode.MALFORMED, f"a message header longer than "
                    f"{MAX_HARMONY_HEADER_TOKENS} tokens (not a Harmony message)")
    return contents


def parse_harmony_tokens(ids: list[int]) -> list[Any]:
    """Harmony messages of an assistant completion's token ids (raises ``HarmonyError`` when
    malformed)."""
    import openai_harmony

    messages: list[Any] = harmony_encoding().parse_messages_from_completion_tokens(
        ids, openai_harmony.Role.ASSISTANT)
    return messages


def harmony_reasoning(ids: list[int], contents: list[int]) -> tuple[list[str], int]:
    """The text of every non-final message of a completion's token ids and the number of their
    content tokens (``contents``: :func:`message_contents`), the messages read by Harmony's
    parser (raises ``HarmonyError`` when malformed)."""
    messages = parse_harmony_tokens(ids)
    if len(messages) != len(contents):
        return [], 0  # not one content per message: nothing is attributed
    reasoning = [i for i, m in enumerate(messages) if m.channel != "final"]
    return [message_text(messages[i]) for i in reasoning], sum(contents[i] for i in reasoning)


def message_text(message: Any) -> str:
    """The concatenated text content of a Harmony message."""
    return "".join(getattr(part, "text", "") or "" for part in message.content)


class SafeguardInterface(NativeInterface):
    """gpt-oss-safeguard: Harmony prompt as token ids, raw completion read from its token ids,
    final-channel 0/1 label."""

    name = "safeguard"
    max_chars = MAX_HARMONY_CHARS
    template_files = ("safeguard_policy.j2", "safeguard_user.j2", "policy.j2", "operation.j2")
    output_contract: ClassVar[str] = (
        "Harmony completion read from its token ids; exactly one final-channel message whose "
        "whole content is 1 (violation -> BLOCK) or 0 (no violation -> ALLOW); analysis "
        "channel ignored; an answer without token ids is unavailable")

    def __init__(self, reasoning_effort: str = "medium",
                 rendering_date: str = PAPER_RENDERING_DATE, prompt: str = "tokens") -> None:
        self.check_choice("reasoning_effort", reasoning_effort, REASONING_EFFORTS)
        try:
            datetime.date.fromisoformat(rendering_date)
        except ValueError:
            raise ReviewerError(f"safeguard: rendering_date {rendering_date!r} is not "
                                "YYYY-MM-DD") from None
        self.send_prompt_as(prompt)
        self.reasoning_effort = reasoning_effort
        self.rendering_date = rendering_date

    def rendering(self) -> str | None:
        """Token ids: the prompt sent as ids (``prompt: tokens``), the answer read from ids."""
        return "safeguard 2: token ids"

    def as_recorded(self, template_hashes: dict[str, str]) -> ReviewInterface:
        """A header without this rendering was written before token ids: its records are
        re-checked by :class:`~authpairs.review.guardrails.earlier.EarlierSafeguard`."""
        if RENDERING_KEY in template_hashes:
            return self
        from authpairs.review.guardrails.earlier import EarlierSafeguard

        return EarlierSafeguard(self.reasoning_effort, self.rendering_date)

    def prompt_tokens(self, case: PublicCase) -> list[int]:
        """Harmony's rendering of system/developer/user for completion by the assistant: token
        ids, every message's content encoded as plain text."""
        import openai_harmony as h

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
        tokens: list[int] = harmony_encoding().render_conversation_for_completion(
            conversation, h.Role.ASSISTANT)
        return tokens

    def render(self, case: PublicCase) -> ChatRequest:
        """The raw completion request: Harmony's token ids (with their decoding) or, with
        ``prompt: text``, the decoding alone; the completion's token ids are asked for."""
        tokens = self.prompt_tokens(case)
        options = {"skip_special_tokens": False, "return_token_ids": True}
        return ChatRequest(prompt=harmony_encoding().decode(tokens), options=options,
                           prompt_token_ids=None if self.sends_text else tokens)

    def finish(self, response: ChatResponse) -> ChatResponse:
        """Record the analysis (non-final) channel text and its token count as reasoning.

        Never raises: an answer without token ids, ids Harmony must not be given, or ids Harmony
        fails on (a malformed answer, a panic) leave the response as it came; :meth:`parse`
        classifies it."""
        ids = response.output_token_ids or []
        contents = message_contents(ids)
        if not ids or isinstance(contents, ReviewOutcome):
            return response
        found = guarded(lambda: harmony_reasoning(ids, contents), "Harmony")
        if isinstance(found, ReviewOutcome) or not found[0]:
            return response
        thinking, count = found
        return response.model_copy(update={
            "reasoning": response.reasoning or "\n".join(thinking),
            "reasoning_tokens": response.reasoning_tokens or count})

    def parse_response(self, response: ChatResponse) -> ReviewOutcome:
        """Harmony's parser over the token ids; the single final message must be exactly ``0``
        or ``1``. Without token ids, :meth:`parse_text` (unavailable)."""
        ids = response.output_token_ids
        if ids is None:
            return self.parse_text(response.text or "", response.finish_reason)
        contents = message_contents(ids)
        if isinstance(contents, ReviewOutcome):
            return contents
        return harmony_outcome(lambda: ids)

    def parse_text(self, text: str, finish_reason: str | None) -> ReviewOutcome:
        """Text alone never decides: a final header written as ordinary characters inside the
        reasoning reads exactly like the model's own."""
        return ReviewOutcome.unavailable(
            ReasonCode.NO_TOKEN_IDS, "the answer came as text without its token ids, so a "
            "final-channel header cannot be told from characters written inside the reasoning "
            "(vLLM returns them with return_token_ids, llama.cpp with logprobs)")


def harmony_outcome(read: Callable[[], list[int]]) -> ReviewOutcome:
    """The decision of the completion whose token ids ``read`` gives, read by Harmony's parser
    (:func:`final_label`); ids Harmony refuses are ``malformed``. Anything else it raises, a
    Rust panic included, is ``parser_error`` by the guard of
    :meth:`~authpairs.review.guardrails.native.NativeInterface.parse`, which calls it."""
    import openai_harmony

    try:
        messages = parse_harmony_tokens(read())
    except openai_harmony.HarmonyError as exc:
        return ReviewOutcome.unavailable(ReasonCode.MALFORMED, f"not Harmony: {str(exc)[:200]}")
    return final_label(messages)


def final_label(messages: list[Any]) -> ReviewOutcome:
    """The decision of a parsed completion: exactly one final-channel message, last, addressed
    to no one, whose whole text trimmed is ``0`` or ``1``."""
    finals = [i for i, m in enumerate(messages) if m.channel == "final"]
    if not finals:
        return ReviewOutcome.unavailable(ReasonCode.NO_FINAL_CHANNEL, "no final-channel message")
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
