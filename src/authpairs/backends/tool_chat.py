"""Chat completions with ``tools`` (function calling): the agent's side of the model seam.

A reviewer's backend answers one rendered :class:`~authpairs.backends.base.ChatRequest` with
text; an agent's model is handed a conversation (system, user, assistant turns with
``tool_calls``, tool results) and the tools as OpenAI function tools, and answers with text, tool
calls or both. :func:`make_tool_chat` builds one from an ordinary backend configuration:

* ``openai``: ``POST /chat/completions`` with ``tools`` through
  :class:`~authpairs.backends.openai_http.OpenAIBackend` (vLLM with ``--enable-auto-tool-choice``,
  llama.cpp with ``--jinja``, Ollama, OpenAI);
* ``local``: the same over the embedded llama.cpp server (its Jinja chat templates are on, so a
  template with a tool format renders ``tools``; one without falls back to llama.cpp's generic
  JSON tool-call format);
* ``scripted``: a Python function ``f(messages, tools) -> reply`` (tests): the reply is a
  :class:`ToolChatResponse` or a mapping ``{"content": ..., "tool_calls": [{"name": ...,
  "arguments": {...} or "raw JSON text"}]}``.

Transport problems raise :class:`TransportError`, other failures :class:`BackendError`, as for
reviewer backends.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, cast

from pydantic import BaseModel, Field

from authpairs.backends.base import BackendError, ChatRequest, TransportError
from authpairs.backends.config import (
    BackendConfigBase,
    LocalBackendConfig,
    OpenAIBackendConfig,
    SamplingConfig,
    ScriptedBackendConfig,
)
from authpairs.backends.openai_http import OpenAIBackend, build_payload
from authpairs.errors import ConfigError
from authpairs.registry import RegistryError, load_object

log = logging.getLogger("authpairs.agent")

__all__ = ["ToolCall", "ToolChat", "ToolChatResponse", "make_tool_chat",
           "parse_tool_completion"]


class ToolCall(BaseModel):
    """One tool call the model made: its id, the tool's name and the arguments as the raw JSON
    text the model wrote (parsed by the caller, which must cope with text that is not JSON)."""

    id: str
    name: str
    arguments: str = "{}"

    def as_message_part(self) -> dict[str, Any]:
        """The call as an assistant message's ``tool_calls`` entry (OpenAI format)."""
        return {"id": self.id, "type": "function",
                "function": {"name": self.name, "arguments": self.arguments}}


class ToolChatResponse(BaseModel):
    """One turn of the agent's model: text and/or tool calls, with usage."""

    text: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    finish_reason: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

    def as_message(self) -> dict[str, Any]:
        """The turn as the assistant message that goes back into the conversation."""
        message: dict[str, Any] = {"role": "assistant", "content": self.text or ""}
        if self.tool_calls:
            message["tool_calls"] = [call.as_message_part() for call in self.tool_calls]
        return message


class ToolChat(Protocol):
    """A model that answers a conversation with tools. Use as ``async with chat: ...``."""

    async def __aenter__(self) -> ToolChat: ...

    async def __aexit__(self, *exc: object) -> None: ...

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   sampling: SamplingConfig) -> ToolChatResponse:
        """One model turn for ``messages`` with ``tools`` offered."""
        ...

    def describe(self) -> dict[str, Any]:
        """Facts about the model for the run header (kind, model, file hash, endpoints)."""
        ...


def _arguments_text(value: object) -> str:
    if isinstance(value, str):
        return value
    return json.dumps(value, sort_keys=True, ensure_ascii=False)


def parse_tool_completion(body: object, latency_s: float = 0.0) -> ToolChatResponse:
    """Text, tool calls, finish reason and usage of a chat-completions body. A body without the
    documented shape raises :class:`TransportError` naming what is wrong."""
    if not isinstance(body, dict):
        raise TransportError(f"malformed completion body: top level is {type(body).__name__}")
    choices = body.get("choices")
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise TransportError("malformed completion body: 'choices' is missing or empty")
    message = choices[0].get("message")
    if not isinstance(message, dict):
        raise TransportError("malformed completion body: choices[0].message is not an object")
    content = message.get("content")
    if content is not None and not isinstance(content, str):
        raise TransportError("malformed completion body: choices[0].message.content is "
                             f"{type(content).__name__}, not a string")
    calls: list[ToolCall] = []
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise TransportError("malformed completion body: tool_calls is not a list")
    for index, raw in enumerate(raw_calls):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise TransportError(f"malformed completion body: tool_calls[{index}] has no "
                                 "function name")
        call_id = raw.get("id") if isinstance(raw.get("id"), str) and raw.get("id") else (
            f"call_{index}")
        calls.append(ToolCall(id=str(call_id), name=function["name"],
                              arguments=_arguments_text(function.get("arguments", "{}"))))
    usage = body.get("usage") if isinstance(body.get("usage"), dict) else {}
    assert isinstance(usage, dict)

    def count(key: str) -> int:
        value = usage.get(key)
        return int(value) if isinstance(value, int | float) and value >= 0 else 0

    finish = choices[0].get("finish_reason")
    return ToolChatResponse(text=content, tool_calls=calls,
                            finish_reason=finish if isinstance(finish, str) else None,
                            input_tokens=count("prompt_tokens"),
                            output_tokens=count("completion_tokens"), latency_s=latency_s)


class HTTPToolChat:
    """Tool-calling chat completions through an :class:`OpenAIBackend` (its endpoints,
    deadline, sampling-field names and ``extra_body``)."""

    def __init__(self, backend: OpenAIBackend, owned: bool = True) -> None:
        self.backend = backend
        self._owned = owned

    async def __aenter__(self) -> HTTPToolChat:
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._owned:
            await self.backend.__aexit__(*exc)

    def payload(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                sampling: SamplingConfig) -> dict[str, Any]:
        """The request body: the backend's model, sampling and ``extra_body``, the
        conversation, the tools and ``tool_choice: auto`` (when there are tools)."""
        payload = build_payload(self.backend.model, ChatRequest(), sampling,
                                self.backend.extra_body, self.backend.param_names)
        payload["messages"] = messages
        if tools:
            payload["tools"] = tools
            payload.setdefault("tool_choice", "auto")
        return payload

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   sampling: SamplingConfig) -> ToolChatResponse:
        """POST one turn and read its text and tool calls."""
        body, elapsed, endpoint = await self.backend.post_json(
            "chat/completions", self.payload(messages, tools, sampling))
        try:
            return parse_tool_completion(body, latency_s=elapsed)
        except TransportError as exc:
            raise TransportError(f"{endpoint}: {exc}") from exc

    def describe(self) -> dict[str, Any]:
        """The backend's description."""
        return self.backend.describe()


class LocalToolChat:
    """Tool-calling chat over the embedded llama.cpp server, started on entering.

    On entering it asks the server (``/props``) whether the model's chat template renders
    tools (``chat_template_caps.supports_tools``); when it does not, llama.cpp leaves the tools
    out of the prompt, the model never sees them, and a warning says so. The answer is part of
    :meth:`describe`, so the run header records it.
    """

    def __init__(self, config: LocalBackendConfig) -> None:
        from authpairs.backends.local_server import LocalServerBackend

        self.server = LocalServerBackend.from_config(config)
        self._http: HTTPToolChat | None = None
        self.supports_tools: bool | None = None

    async def __aenter__(self) -> LocalToolChat:
        await self.server.__aenter__()
        self._http = HTTPToolChat(self.server.client, owned=False)
        try:
            self.supports_tools = await self._template_renders_tools()
        except BaseException:
            await self.server.__aexit__(None, None, None)
            raise
        if self.supports_tools is False:
            log.warning("the embedded model's chat template (%s) renders no tools: llama.cpp "
                        "leaves them out of the prompt, so the agent cannot call any",
                        self.server.gguf_path.name)
        return self

    async def _template_renders_tools(self) -> bool | None:
        """``chat_template_caps.supports_tools`` of the running server, or None when the
        server does not say."""
        import httpx

        async with httpx.AsyncClient(timeout=10.0) as client:
            try:
                reply = await client.get(f"http://127.0.0.1:{self.server.port}/props")
                caps = reply.json().get("chat_template_caps") if reply.status_code == 200 else None
            except (httpx.HTTPError, ValueError, AttributeError):
                return None
        value = caps.get("supports_tools") if isinstance(caps, dict) else None
        return value if isinstance(value, bool) else None

    async def __aexit__(self, *exc: object) -> None:
        self._http = None
        await self.server.__aexit__(*exc)

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   sampling: SamplingConfig) -> ToolChatResponse:
        """One turn through the running server."""
        if self._http is None:
            raise BackendError("local tool chat used outside 'async with'")
        return await self._http.chat(messages, tools, sampling)

    def describe(self) -> dict[str, Any]:
        """The server's description (model file and its SHA-256, settings) and whether its
        chat template renders tools (None before the server is asked)."""
        return {**self.server.describe(), "template_supports_tools": self.supports_tools}


Script = Callable[[list[dict[str, Any]], list[dict[str, Any]]], object]


class ScriptedToolChat:
    """Answers each turn by calling ``script(messages, tools)`` (tests; never a default)."""

    def __init__(self, script: Script, label: str) -> None:
        self.script = script
        self.label = label

    async def __aenter__(self) -> ScriptedToolChat:
        return self

    async def __aexit__(self, *exc: object) -> None:
        return None

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   sampling: SamplingConfig) -> ToolChatResponse:
        """The script's reply as a :class:`ToolChatResponse`."""
        reply = self.script(messages, tools)
        if asyncio.iscoroutine(reply) or isinstance(reply, Awaitable):
            reply = await reply
        if isinstance(reply, ToolChatResponse):
            return reply
        if not isinstance(reply, Mapping):
            raise BackendError(f"scripted agent {self.label}: a reply must be a mapping or a "
                               f"ToolChatResponse, not {type(reply).__name__}")
        calls = [ToolCall(id=str(call.get("id") or f"call_{index}"), name=str(call["name"]),
                          arguments=_arguments_text(call.get("arguments", {})))
                 for index, call in enumerate(reply.get("tool_calls") or [])]
        text = reply.get("content")
        return ToolChatResponse(text=None if text is None else str(text), tool_calls=calls,
                                finish_reason="tool_calls" if calls else "stop")

    def describe(self) -> dict[str, Any]:
        """The script's name."""
        return {"kind": "scripted", "script": self.label}


def _load_agent_script(spec: str) -> Script:
    """Import a scripted agent ``module:function`` (a module of the current folder too, as
    ``--guardrail`` finds one); anything unloadable or not callable is a
    :class:`ConfigError`."""
    try:
        function = load_object(spec)
    except RegistryError as exc:
        raise ConfigError(f"scripted agent {spec!r}: {exc}") from exc
    if not callable(function):
        raise ConfigError(f"scripted agent {spec!r} is not callable")
    return cast("Script", function)


def make_tool_chat(config: BackendConfigBase) -> ToolChat:
    """The tool-calling chat of an agent's backend configuration (kinds ``openai``, ``local``
    and ``scripted``); any other kind is a :class:`BackendError`."""
    if isinstance(config, OpenAIBackendConfig):
        return HTTPToolChat(OpenAIBackend.from_config(config))
    if isinstance(config, LocalBackendConfig):
        return LocalToolChat(config)
    if isinstance(config, ScriptedBackendConfig):
        return ScriptedToolChat(_load_agent_script(config.script), config.script)
    raise BackendError(f"backend kind {config.kind!r} cannot act as an agent "
                       "(openai, local or scripted)")
