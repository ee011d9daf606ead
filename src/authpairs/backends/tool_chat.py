"""Chat completions with ``tools`` (function calling): the agent's side of the model seam.

A reviewer's backend answers one rendered :class:`~authpairs.backends.base.ChatRequest` with
text; an agent's model is handed a conversation (system, user, assistant turns with
``tool_calls``, tool results) and the tools as OpenAI function tools, and answers with text, tool
calls or both. :func:`make_tool_chat` builds one from an ordinary backend configuration:

* ``openai``: ``POST /chat/completions`` through
  :class:`~authpairs.backends.openai_http.OpenAIBackend` (vLLM, llama.cpp, Ollama, OpenAI);
* ``local``: the same over the embedded llama.cpp server;
* ``scripted``: a Python function ``f(messages, tools) -> reply`` (tests): the reply is a
  :class:`ToolChatResponse` or a mapping ``{"content": ..., "tool_calls": [{"name": ...,
  "arguments": {...} or "raw JSON text"}]}``.

How the tools reach the model is the *tool format* (:data:`ToolFormat`):

* ``native``: OpenAI ``tools`` in the request; the server's chat template renders them and its
  parser turns the model's output into ``tool_calls`` (vLLM with ``--enable-auto-tool-choice``
  and a ``--tool-call-parser``, llama.cpp with ``--jinja`` and a template with a tool format).
  A template without one gets nothing: the llama.cpp of the pinned xllamacpp leaves ``tools``
  out of such a prompt (there is no generic fallback), and the model never sees a tool;
* ``json_schema``: the tools are written into the system message and every model turn is
  constrained by ``response_format`` ``json_schema`` (grammar-constrained decoding: llama.cpp,
  vLLM's guided decoding) to one *step*: ``{"tool": NAME, "arguments": {...}}`` or ``{"answer":
  TEXT}`` (:func:`step_schema`). The step is turned into the same :class:`ToolChatResponse`
  (a tool call with an id and its arguments as JSON text), so the runner and the records do not
  depend on the format. The conversation sent to the model renders earlier calls as the
  assistant's JSON steps and tool results as user messages (:func:`render_step_messages`);
* ``auto``: ``json_schema`` for the embedded server when it says (``/props``) that the model's
  chat template cannot render tools, else ``native``; ``native`` for the other kinds.

Transport problems raise :class:`TransportError`, other failures :class:`BackendError`, as for
reviewer backends.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, Protocol, Self

from pydantic import BaseModel, Field

from authpairs.backends.base import ChatRequest, NoResources
from authpairs.backends.config import (
    TOOL_FORMATS,
    BackendConfigBase,
    LocalBackendConfig,
    OpenAIBackendConfig,
    SamplingConfig,
    ScriptedBackendConfig,
    ToolFormat,
)
from authpairs.backends.openai_http import OpenAIBackend, build_payload, parse_completion
from authpairs.backends.scripted import load_script
from authpairs.errors import BackendError, ConfigError, TransportError

log = logging.getLogger("authpairs.agent")

__all__ = ["ToolCall", "ToolChat", "ToolChatResponse", "make_tool_chat", "parse_step",
           "parse_tool_completion", "render_step_messages", "step_schema", "step_system_text"]


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
    format_error: str | None = Field(
        default=None, description="Why the reply is not a step of the json_schema tool format "
        "(not JSON, cut at max_tokens, another shape); the reply is then neither a tool call "
        "nor an answer, and ``text`` is what the model wrote.")
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
    """Text, tool calls, finish reason and usage of a chat-completions body, read by the same
    rules as a reviewer's (:func:`~authpairs.backends.openai_http.parse_completion`). A body
    without the documented shape raises :class:`TransportError` naming what is wrong."""
    reply = parse_completion(body, latency_s=latency_s)
    message = body["choices"][0].get("message") if isinstance(body, dict) else None
    if not isinstance(message, dict):
        raise TransportError("malformed completion body: choices[0].message is missing")
    calls: list[ToolCall] = []
    raw_calls = message.get("tool_calls") or []
    if not isinstance(raw_calls, list):
        raise TransportError("malformed completion body: tool_calls is not a list")
    for index, raw in enumerate(raw_calls):
        function = raw.get("function") if isinstance(raw, dict) else None
        if not isinstance(function, dict) or not isinstance(function.get("name"), str):
            raise TransportError(f"malformed completion body: tool_calls[{index}] has no "
                                 "function name")
        call_id = raw["id"] if isinstance(raw.get("id"), str) and raw["id"] else f"call_{index}"
        calls.append(ToolCall(id=call_id, name=function["name"],
                              arguments=_arguments_text(function.get("arguments", "{}"))))
    return ToolChatResponse(text=reply.text, tool_calls=calls, finish_reason=reply.finish_reason,
                            input_tokens=reply.input_tokens, output_tokens=reply.output_tokens,
                            latency_s=latency_s)


STEP_INSTRUCTIONS = (
    "Reply with exactly one JSON object and nothing else. To call a tool: "
    '{"tool": NAME, "arguments": {...}} with the arguments its parameters describe; the '
    "tool's result comes back in the next user message. When you are done, or make no call: "
    '{"answer": TEXT}.')
"""The instruction that ends the system message in the json_schema tool format."""

_REF_PREFIX = "#/$defs/"


def _function(tool: dict[str, Any]) -> dict[str, Any]:
    """The ``function`` part of an OpenAI function tool (or the tool itself when unwrapped)."""
    function = tool.get("function", tool)
    return function if isinstance(function, dict) else {}


def _rewrite_refs(node: object, prefix: str) -> object:
    """``node`` with every local ``$ref`` into ``$defs`` renamed with ``prefix``."""
    if isinstance(node, dict):
        out = {key: _rewrite_refs(value, prefix) for key, value in node.items()}
        ref = out.get("$ref")
        if isinstance(ref, str) and ref.startswith(_REF_PREFIX):
            out["$ref"] = _REF_PREFIX + prefix + ref[len(_REF_PREFIX):]
        return out
    if isinstance(node, list):
        return [_rewrite_refs(value, prefix) for value in node]
    return node


def step_schema(tools: list[dict[str, Any]]) -> dict[str, Any]:
    """The JSON Schema of one model step in the json_schema tool format: ``oneOf`` a call of
    each tool (``tool`` its name as a constant, ``arguments`` its parameter schema) or an
    answer (``{"answer": string}``). A tool schema's ``$defs`` move to the top, renamed
    ``TOOL__NAME``, with its ``$ref`` rewritten, so each still resolves from the root."""
    choices: list[dict[str, Any]] = []
    definitions: dict[str, Any] = {}
    for tool in tools:
        function = _function(tool)
        name = str(function.get("name", ""))
        parameters = dict(function.get("parameters") or {"type": "object"})
        for key, value in (parameters.pop("$defs", None) or {}).items():
            definitions[f"{name}__{key}"] = _rewrite_refs(value, f"{name}__")
        choices.append({"type": "object",
                        "properties": {"tool": {"const": name},
                                       "arguments": _rewrite_refs(parameters, f"{name}__")},
                        "required": ["tool", "arguments"], "additionalProperties": False})
    choices.append({"type": "object", "properties": {"answer": {"type": "string"}},
                    "required": ["answer"], "additionalProperties": False})
    schema: dict[str, Any] = {"oneOf": choices}
    if definitions:
        schema["$defs"] = definitions
    return schema


def _without_titles(node: object) -> object:
    """A JSON Schema without its ``title`` annotations (they repeat the property names)."""
    if isinstance(node, dict):
        return {key: _without_titles(value) for key, value in node.items()
                if not (key == "title" and isinstance(value, str))}
    if isinstance(node, list):
        return [_without_titles(value) for value in node]
    return node


def step_system_text(tools: list[dict[str, Any]]) -> str:
    """The tools as the json_schema tool format writes them into the system message: each
    tool's name, description and parameters (JSON Schema, compact), then
    :data:`STEP_INSTRUCTIONS`."""
    lines = ["You have these tools:"]
    for tool in tools:
        function = _function(tool)
        parameters = json.dumps(_without_titles(function.get("parameters") or {}),
                                ensure_ascii=False, separators=(",", ":"))
        lines.append(f"- {function.get('name', '')}: {function.get('description') or ''}")
        lines.append(f"  parameters: {parameters}")
    lines.append(STEP_INSTRUCTIONS)
    return "\n".join(lines)


def _call_step(part: object, raw: str) -> str:
    """An earlier tool call of the conversation as the JSON step the model wrote for it (its
    raw text, when its arguments are not a JSON object)."""
    function = part.get("function") if isinstance(part, dict) else None
    if not isinstance(function, dict):
        return raw
    arguments = function.get("arguments", "{}")
    try:
        parsed = json.loads(arguments) if isinstance(arguments, str) else arguments
    except ValueError:
        parsed = None
    if not isinstance(parsed, dict):
        return raw or str(arguments)
    return json.dumps({"tool": function.get("name"), "arguments": parsed}, ensure_ascii=False)


def render_step_messages(messages: list[dict[str, Any]],
                         tools: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The conversation as the json_schema tool format sends it, for templates without tool
    roles: the tools (:func:`step_system_text`) appended to the system message (one is put
    first when there is none); an assistant turn with tool calls as its JSON steps (one a line);
    the tool results that follow it as one user message (``Result of NAME: TEXT`` each: llama.cpp
    drops an assistant's ``tool_calls`` and writes role ``tool`` as is into a template without a
    tool format); anything else unchanged."""
    tools_text = step_system_text(tools)
    out: list[dict[str, Any]] = []
    if not messages or messages[0].get("role") != "system":
        out.append({"role": "system", "content": tools_text})
    names: dict[str, str] = {}
    results: dict[str, Any] | None = None  # the user message of the latest tool results
    for index, message in enumerate(messages):
        role = message.get("role")
        content = message.get("content") or ""
        if index == 0 and role == "system":
            out.append({"role": "system", "content": f"{content}\n\n{tools_text}"})
        elif role == "assistant" and message.get("tool_calls"):
            parts = list(message["tool_calls"])
            for part in parts:
                function = part.get("function") if isinstance(part, dict) else None
                if isinstance(function, dict) and isinstance(part.get("id"), str):
                    names[part["id"]] = str(function.get("name", ""))
            out.append({"role": "assistant",
                        "content": "\n".join(_call_step(part, content) for part in parts)})
        elif role == "tool":
            name = names.get(str(message.get("tool_call_id")), "the tool")
            result = f"Result of {name}: {content}"
            if results is not None and out[-1] is results:
                results["content"] += "\n" + result
            else:
                results = {"role": "user", "content": result}
                out.append(results)
        else:
            out.append(dict(message))
    return out


def parse_step(reply: ToolChatResponse) -> ToolChatResponse:
    """``reply`` with its text read as a json_schema step: ``{"tool": NAME, "arguments":
    {...}}`` is one tool call (id ``call_0``, the arguments as JSON text) and no text,
    ``{"answer": TEXT}`` an answer; anything else (not JSON, cut at ``max_tokens``, another
    shape) has ``format_error`` set and no tool call. Finish reason and usage are kept."""
    text = reply.text
    try:
        step = json.loads(text) if text else None
    except ValueError:
        step = None
    if isinstance(step, dict) and set(step) == {"tool", "arguments"} and isinstance(
            step["tool"], str) and step["tool"] and isinstance(step["arguments"], dict):
        call = ToolCall(id="call_0", name=step["tool"],
                        arguments=_arguments_text(step["arguments"]))
        return reply.model_copy(update={"text": None, "tool_calls": [call]})
    if isinstance(step, dict) and set(step) == {"answer"} and isinstance(step["answer"], str):
        return reply.model_copy(update={"text": step["answer"], "tool_calls": []})
    if step is None:
        why = "an empty reply" if not text else "not JSON"
        if reply.finish_reason == "length":
            why += " (cut at max_tokens)"
    else:
        why = 'neither {"tool": NAME, "arguments": {...}} nor {"answer": TEXT}'
    return reply.model_copy(update={"tool_calls": [], "format_error": f"the reply is {why}"})


class HTTPToolChat:
    """Tool-calling chat completions through an :class:`OpenAIBackend` (its endpoints,
    deadline, sampling-field names and ``extra_body``), in the ``native`` or the
    ``json_schema`` tool format."""

    def __init__(self, backend: OpenAIBackend, tool_format: ToolFormat = "native") -> None:
        if tool_format not in ("native", "json_schema"):
            raise ConfigError(f"tool format {tool_format!r}: an HTTP tool chat speaks 'native' "
                              "or 'json_schema'")
        self._backend = backend
        self.tool_format: ToolFormat = tool_format

    @property
    def backend(self) -> OpenAIBackend:
        """The OpenAI-compatible client the turns go through."""
        return self._backend

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.backend.__aexit__(*exc)

    def payload(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                sampling: SamplingConfig) -> dict[str, Any]:
        """The request body: the backend's model, sampling and ``extra_body`` and the
        conversation; ``native``: the tools and ``tool_choice: auto`` (when there are tools);
        ``json_schema``: the conversation rendered by :func:`render_step_messages` and
        ``response_format`` ``json_schema`` with :func:`step_schema` (name ``step``)."""
        steps = self.tool_format == "json_schema"
        request = ChatRequest(response_format={
            "type": "json_schema", "json_schema": {"name": "step", "schema": step_schema(tools)}}
        ) if steps else ChatRequest()
        payload = build_payload(self.backend.model, request, sampling, self.backend.extra_body,
                                self.backend.param_names)
        payload["messages"] = render_step_messages(messages, tools) if steps else messages
        if tools and not steps:
            payload["tools"] = tools
            payload.setdefault("tool_choice", "auto")
        return payload

    async def preflight(self) -> None:
        """Check before a run that the agent's model server answers and serves its model."""
        await self.backend.preflight()

    async def chat(self, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                   sampling: SamplingConfig) -> ToolChatResponse:
        """POST one turn and read its text and tool calls (``json_schema``: its step)."""
        body, elapsed, endpoint = await self.backend.post_json(
            "chat/completions", self.payload(messages, tools, sampling))
        try:
            response = parse_tool_completion(body, latency_s=elapsed)
        except TransportError as exc:
            raise TransportError(f"{endpoint}: {exc}") from exc
        return parse_step(response) if self.tool_format == "json_schema" else response

    def describe(self) -> dict[str, Any]:
        """The backend's description and the tool format."""
        return {**self.backend.describe(), "tool_format": self.tool_format}


class LocalToolChat(HTTPToolChat):
    """Tool-calling chat over the embedded llama.cpp server, started on entering.

    On entering it asks the server (``/props``) whether the model's chat template renders
    tools (``chat_template_caps.supports_tools``). With ``tool_format: auto`` a template that
    does not (SmolLM2's) gets the ``json_schema`` format, any other ``native``; with ``native``
    and a template that renders no tools llama.cpp leaves them out of the prompt, the model
    never sees them, and a warning says so. The answer and the format used are part of
    :meth:`describe`, so the run header records them.
    """

    def __init__(self, config: LocalBackendConfig, tool_format: ToolFormat = "auto") -> None:
        from authpairs.backends.local_server import LocalServerBackend

        self.server = LocalServerBackend.from_config(config)
        self.tool_format = tool_format
        """The format in use: the requested one, ``auto`` resolved on entering, once the server
        has said whether its template renders tools."""
        self.supports_tools: bool | None = None

    @property
    def backend(self) -> OpenAIBackend:
        """The running server's OpenAI-compatible client (inside ``async with``)."""
        return self.server.client

    async def __aenter__(self) -> Self:
        await self.server.__aenter__()
        try:
            self.supports_tools = await self._template_renders_tools()
        except BaseException:
            await self.server.__aexit__(None, None, None)
            raise
        if self.tool_format == "auto":
            self.tool_format = "json_schema" if self.supports_tools is False else "native"
            log.info("agent tool format: %s (the chat template of %s renders tools: %s)",
                     self.tool_format, self.server.gguf_path.name, self.supports_tools)
        if self.tool_format == "native" and self.supports_tools is False:
            log.warning("the embedded model's chat template (%s) renders no tools: llama.cpp "
                        "leaves them out of the prompt, so the agent cannot call any (use "
                        "tool_format json_schema)", self.server.gguf_path.name)
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
        await self.server.__aexit__(*exc)

    async def preflight(self) -> None:
        """Check before a run that the embedded server started and answers."""
        await self.server.preflight()

    def describe(self) -> dict[str, Any]:
        """The server's description (model file and its SHA-256, settings), whether its
        chat template renders tools (None before the server is asked) and the tool format in
        use."""
        return {**self.server.describe(), "template_supports_tools": self.supports_tools,
                "tool_format": self.tool_format}


Script = Callable[[list[dict[str, Any]], list[dict[str, Any]]], object]


class ScriptedToolChat(NoResources):
    """Answers each turn by calling ``script(messages, tools)`` (tests; never a default)."""

    def __init__(self, script: Script, label: str) -> None:
        self.script = script
        self.label = label

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


def make_tool_chat(config: BackendConfigBase, tool_format: ToolFormat = "auto") -> ToolChat:
    """The tool-calling chat of an agent's backend configuration (kinds ``openai``, ``local``
    and ``scripted``) in ``tool_format`` (``auto``: see the module docstring); any other kind
    is a :class:`BackendError`, a format the kind cannot speak a :class:`ConfigError` (a
    scripted agent answers the conversation itself: ``native`` or ``auto`` only)."""
    if tool_format not in TOOL_FORMATS:
        raise ConfigError(f"unknown tool format {tool_format!r} "
                          f"(one of: {', '.join(TOOL_FORMATS)})")
    if isinstance(config, OpenAIBackendConfig):
        return HTTPToolChat(OpenAIBackend.from_config(config),
                            tool_format="native" if tool_format == "auto" else tool_format)
    if isinstance(config, LocalBackendConfig):
        return LocalToolChat(config, tool_format)
    if isinstance(config, ScriptedBackendConfig):
        if tool_format == "json_schema":
            raise ConfigError("a scripted agent takes the tools natively: tool_format "
                              "json_schema is for model servers (openai, local)")
        return ScriptedToolChat(load_script(config.script, "scripted agent", ConfigError),
                                config.script)
    raise BackendError(f"backend kind {config.kind!r} cannot act as an agent "
                       "(openai, local or scripted)")
