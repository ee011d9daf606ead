"""The backend seam: a rendered chat request goes in, a chat response comes out.

Every backend (OpenAI-compatible HTTP, the embedded local server, replay, the scripted test
double) implements :class:`Backend`. Transport problems raise :class:`TransportError`; the run
orchestrator records them as infrastructure attempts and retries them, never as decisions.
Configuration problems (e.g. HTTP 400/404, a replay miss) raise :class:`BackendError` and stop the
run with a clear message.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Protocol, Self, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field

from authpairs.backends.config import SamplingConfig
from authpairs.cases.canonical import sha256_hex
from authpairs.errors import BackendError

__all__ = ["Backend", "ChatRequest", "ChatResponse", "EndpointDownError", "NoResources",
           "preflight"]


class ChatRequest(BaseModel):
    """The exact reviewer input: chat messages plus an optional JSON-schema response format.

    A request with ``prompt`` set is a *raw completion* (``POST /v1/completions``): the prompt is
    already rendered in the model's native format (e.g. Harmony) and ``messages`` is empty. With
    ``prompt_token_ids`` set too, those token ids are what is sent (as the list ``prompt``, which
    vLLM and llama.cpp take), so the server tokenises nothing and no case text can become a
    control token; ``prompt`` is then their decoding, kept for readers.
    ``options`` are request-specific body fields the interface needs (e.g. Harmony parsing needs
    ``skip_special_tokens: false``); they are part of the input identity.
    """

    model_config = ConfigDict(frozen=True)

    messages: list[dict[str, str]] = Field(default_factory=list)
    response_format: dict[str, Any] | None = None
    prompt: str | None = Field(default=None, description="Raw completion prompt, if any.")
    prompt_token_ids: list[int] | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The raw prompt as the model's token ids: sent instead of the text, which "
        "is then their decoding (not dumped when absent, so records written before keep their "
        "canonical text).")
    options: dict[str, Any] | None = Field(default=None,
                                           description="Request-specific body fields.")

    def sha256(self) -> str:
        """SHA-256 of the canonical request: the identity used for records and replay.

        Fields left at None (``prompt``, ``prompt_token_ids``, ``options``) are omitted, so
        chat requests keep the identity they had before raw completions existed.
        """
        data = self.model_dump(mode="json")
        for optional in ("prompt", "prompt_token_ids", "options"):
            if data.get(optional) is None:
                data.pop(optional, None)
        return sha256_hex(data)


class ChatResponse(BaseModel):
    """What a backend returned for one request."""

    text: str | None = None
    reasoning: str | None = None
    finish_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_s: float = 0.0
    endpoint: str = Field(default="", description="Which server answered.")
    output_token_ids: list[int] | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The completion's token ids, when the server returned them (vLLM's "
        "return_token_ids, or llama.cpp's logprobs).")


@runtime_checkable
class Backend(Protocol):
    """Answers chat requests. Use as ``async with backend: ...``."""

    name: str

    async def __aenter__(self) -> Backend: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """Answer one request or raise :class:`TransportError` / :class:`BackendError`."""
        ...

    def describe(self) -> dict[str, Any]:
        """Facts about the backend for the run record (model file hash, endpoints, ...)."""
        ...


class NoResources:
    """Base of a backend (or an agent's model) that holds no resources: ``async with`` gives it
    as it is and closes nothing."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None


class EndpointDownError(BackendError):
    """Every endpoint of a backend or guardrail failed persistently (their circuit breakers,
    :mod:`authpairs.backends.breaker`, opened): the run stops, keeps its records and resumes with
    the same command."""

    hint = ("start the server or correct its address, key or model name, then re-run the same "
            "command: the cases already recorded are kept and the run resumes")


async def preflight(components: Iterable[object]) -> None:
    """Run the ``preflight()`` check of each component that has one (a backend, a guardrail, an
    agent's model: :mod:`authpairs.backends.preflight`); the first failure raises
    :class:`~authpairs.backends.preflight.PreflightError`."""
    for component in components:
        check = getattr(component, "preflight", None)
        if check is not None:
            await check()
