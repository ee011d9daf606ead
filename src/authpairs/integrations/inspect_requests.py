"""Exact reviewer inputs on both sides of the Inspect AI boundary.

An authpairs :class:`~authpairs.backends.base.ChatRequest` (messages + response format) becomes an
Inspect sample input plus generation settings, and back. The round trip is exact, so the SHA-256 of
the request that an Inspect model received equals the one authpairs renders for the same case.

The response format travels in ``GenerateConfig.extra_body`` (OpenAI-compatible providers send it
as the request's ``response_format`` unchanged) rather than as Inspect's ``response_schema``, whose
schema model drops keywords such as ``minItems``/``maxItems`` and would change the input.
"""

from __future__ import annotations

from typing import Any

from inspect_ai.model import (
    ChatMessage,
    ChatMessageSystem,
    ChatMessageUser,
    GenerateConfig,
    ModelOutput,
)

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.main_job import MAX_TOKENS, TEMPERATURE

RESPONSE_FORMAT_KEY = "response_format"

# Inspect stop reasons -> OpenAI finish reasons understood by the strict parser; an unmapped
# reason passes through unchanged, so the parser marks it unavailable.
_FINISH_REASONS: dict[str, str | None] = {
    "stop": "stop",
    "max_tokens": "length",
    "model_length": "length",
    "content_filter": "content_filter",
    "tool_calls": "tool_calls",
    "unknown": None,
}


_MESSAGE_TYPES = {"system": ChatMessageSystem, "user": ChatMessageUser}


class InspectInputError(ValueError):
    """A message that cannot be part of an authpairs reviewer input (role or content)."""


def to_inspect_messages(request: ChatRequest) -> list[ChatMessage]:
    """The request's messages as Inspect chat messages (system and user only)."""
    messages: list[ChatMessage] = []
    for number, message in enumerate(request.messages):
        role = message.get("role")
        if role not in _MESSAGE_TYPES:
            raise InspectInputError(f"message {number}: role {role!r} is not system or user")
        messages.append(_MESSAGE_TYPES[role](content=message.get("content", "")))
    return messages


def from_inspect_messages(messages: list[ChatMessage] | str) -> list[dict[str, str]]:
    """Inspect input messages back as authpairs chat messages (exact text)."""
    if isinstance(messages, str):
        return [{"role": "user", "content": messages}]
    plain: list[dict[str, str]] = []
    for number, message in enumerate(messages):
        if message.role not in ("system", "user"):
            raise InspectInputError(f"input message {number}: unexpected role {message.role!r}")
        if not isinstance(message.content, str):
            raise InspectInputError(f"input message {number}: content is not plain text")
        plain.append({"role": message.role, "content": message.content})
    return plain


def generate_config_for(response_format: dict[str, Any] | None) -> GenerateConfig:
    """Generation settings for a task: authpairs' sampling defaults plus the response format."""
    extra = {RESPONSE_FORMAT_KEY: response_format} if response_format is not None else None
    return GenerateConfig(temperature=TEMPERATURE, max_tokens=MAX_TOKENS, extra_body=extra)


def response_format_of(config: GenerateConfig) -> dict[str, Any] | None:
    """The response format an Inspect generation config sends (None when unconstrained)."""
    value = (config.extra_body or {}).get(RESPONSE_FORMAT_KEY)
    return value if isinstance(value, dict) else None


def chat_request_of(messages: list[ChatMessage] | str,
                    response_format: dict[str, Any] | None) -> ChatRequest:
    """The authpairs request equivalent to an Inspect input and response format."""
    return ChatRequest(messages=from_inspect_messages(messages), response_format=response_format)


def response_of(output: ModelOutput) -> ChatResponse:
    """An Inspect model output as the :class:`ChatResponse` authpairs' parsers read."""
    usage = output.usage
    return ChatResponse(
        text=output.completion if output.choices else None,
        finish_reason=(_FINISH_REASONS.get(output.stop_reason, output.stop_reason)
                       if output.choices else None),
        input_tokens=usage.input_tokens if usage else 0,
        output_tokens=usage.output_tokens if usage else 0,
        reasoning_tokens=(usage.reasoning_tokens or 0) if usage else 0,
        latency_s=output.time or 0.0)
