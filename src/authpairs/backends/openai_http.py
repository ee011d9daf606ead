"""OpenAI-compatible chat completions over HTTP: vLLM, llama.cpp server, Ollama, OpenAI.

A request with a raw ``prompt`` (native formats such as Harmony) goes to ``/completions``
instead, with the same sampling, deadline and error rules.

Requests are spread across one or several base URLs (the least-loaded endpoint first) with a
bounded number in flight per endpoint. Sampling parameters, a JSON-schema ``response_format`` and
an ``extra_body`` passthrough (e.g. vLLM ``chat_template_kwargs``) are sent as given. Each request
has a deadline. Refused connections, timeouts, HTTP 429 and 5xx raise
:class:`~authpairs.backends.base.TransportError`; other 4xx raise
:class:`~authpairs.backends.base.BackendError`.
"""

from __future__ import annotations

import asyncio
import os
import time
from typing import Any

import httpx

from authpairs.backends.base import BackendError, ChatRequest, ChatResponse, TransportError
from authpairs.backends.config import OpenAIBackendConfig, SamplingConfig

_SAMPLING_FIELDS = ("temperature", "top_p", "top_k", "min_p", "presence_penalty",
                    "repetition_penalty", "seed", "max_tokens")


class _Endpoint:
    def __init__(self, base_url: str, limit: int) -> None:
        self.base_url = base_url.rstrip("/")
        self.semaphore = asyncio.Semaphore(limit)
        self.in_flight = 0


def build_payload(model: str, request: ChatRequest, sampling: SamplingConfig,
                  extra_body: dict[str, Any],
                  param_names: dict[str, str] | None = None) -> dict[str, Any]:
    """The JSON body of a chat-completions call.

    ``param_names`` renames sampling fields for servers that spell them differently (llama.cpp
    calls ``repetition_penalty`` ``repeat_penalty``).
    """
    payload: dict[str, Any] = {"model": model, "messages": request.messages}
    names = param_names or {}
    for name in _SAMPLING_FIELDS:
        value = getattr(sampling, name)
        if value is not None:
            payload[names.get(name, name)] = value
    if request.response_format is not None:
        payload["response_format"] = request.response_format
    if request.prompt is not None:
        # Raw completion (POST /completions): the prompt replaces the chat messages.
        del payload["messages"]
        payload["prompt"] = request.prompt
    payload.update(request.options or {})
    for key, value in extra_body.items():  # the configuration wins; nested dicts are merged
        current = payload.get(key)
        payload[key] = ({**current, **value} if isinstance(current, dict)
                        and isinstance(value, dict) else value)
    return payload


def parse_completion(body: dict[str, Any]) -> ChatResponse:
    """Read text, reasoning, finish reason and token counts from a chat-completions body."""
    try:
        choice = body["choices"][0]
        message = choice.get("message") or {}
    except (KeyError, IndexError, TypeError) as exc:
        raise TransportError(f"malformed completion body: {str(body)[:200]}") from exc
    usage = body.get("usage") or {}
    details = usage.get("completion_tokens_details") or {}
    text = message.get("content") if "message" in choice else choice.get("text")
    return ChatResponse(
        text=text,
        reasoning=message.get("reasoning_content") or message.get("reasoning"),
        finish_reason=choice.get("finish_reason"),
        input_tokens=int(usage.get("prompt_tokens") or 0),
        output_tokens=int(usage.get("completion_tokens") or 0),
        reasoning_tokens=int(details.get("reasoning_tokens") or 0),
    )


def completion_path(request: ChatRequest) -> str:
    """``completions`` for a raw-prompt request, ``chat/completions`` otherwise."""
    return "completions" if request.prompt is not None else "chat/completions"


class OpenAIBackend:
    """Chat completions against one or several OpenAI-compatible servers."""

    name = "openai"

    def __init__(self, base_urls: list[str], model: str, *, concurrency_per_endpoint: int = 4,
                 deadline_s: float = 3600.0, extra_body: dict[str, Any] | None = None,
                 api_key: str | None = None, param_names: dict[str, str] | None = None,
                 transport: httpx.AsyncBaseTransport | None = None) -> None:
        if not base_urls:
            raise BackendError("the openai backend needs at least one base URL")
        self.model = model
        self.deadline_s = deadline_s
        self.extra_body = dict(extra_body or {})
        self.param_names = dict(param_names or {})
        self._endpoints = [_Endpoint(u, concurrency_per_endpoint) for u in base_urls]
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(headers=headers, transport=transport,
                                         timeout=httpx.Timeout(deadline_s))

    @classmethod
    def from_config(cls, config: OpenAIBackendConfig) -> OpenAIBackend:
        """Build from an :class:`OpenAIBackendConfig` (the registered factory of kind 'openai')."""
        if not config.model:
            raise BackendError("backend.model is required for the openai backend")
        return cls.from_env(config.base_urls, config.model, config.api_key_env,
                            concurrency_per_endpoint=config.concurrency_per_endpoint,
                            deadline_s=config.deadline_s, extra_body=config.extra_body)

    @classmethod
    def from_env(cls, base_urls: list[str], model: str, api_key_env: str,
                 **kwargs: Any) -> OpenAIBackend:
        """Build with the API key read from the environment variable ``api_key_env``."""
        return cls(base_urls, model, api_key=os.environ.get(api_key_env), **kwargs)

    async def __aenter__(self) -> OpenAIBackend:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self._client.aclose()

    def describe(self) -> dict[str, Any]:
        """Endpoints and model name for the run record."""
        return {"kind": self.name, "model": self.model,
                "base_urls": [e.base_url for e in self._endpoints]}

    def _pick(self) -> _Endpoint:
        return min(self._endpoints, key=lambda e: e.in_flight)

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """POST one chat completion to the least-loaded endpoint, within the deadline."""
        endpoint = self._pick()
        endpoint.in_flight += 1
        try:
            async with endpoint.semaphore:
                started = time.perf_counter()
                payload = build_payload(self.model, request, sampling, self.extra_body,
                                        self.param_names)
                try:
                    reply = await asyncio.wait_for(
                        self._client.post(f"{endpoint.base_url}/{completion_path(request)}",
                                          json=payload),
                        timeout=self.deadline_s)
                except (httpx.TransportError, TimeoutError) as exc:
                    raise TransportError(
                        f"{endpoint.base_url}: {type(exc).__name__}: {exc}") from exc
                elapsed = time.perf_counter() - started
        finally:
            endpoint.in_flight -= 1
        if reply.status_code == 429 or reply.status_code >= 500:
            raise TransportError(f"{endpoint.base_url}: HTTP {reply.status_code}: "
                                 f"{reply.text[:200]}")
        if reply.status_code >= 400:
            raise BackendError(f"{endpoint.base_url}: HTTP {reply.status_code}: "
                               f"{reply.text[:500]}")
        try:
            body = reply.json()
        except ValueError as exc:
            raise TransportError(f"{endpoint.base_url}: response is not JSON") from exc
        response = parse_completion(body)
        return response.model_copy(update={"latency_s": elapsed, "endpoint": endpoint.base_url})
