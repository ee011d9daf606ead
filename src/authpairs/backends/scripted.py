"""A scripted backend for unit tests and benchmarks: answers come from a Python function.

Never a default. The function receives the chat request and returns the answer text, a full
:class:`ChatResponse`, or raises :class:`TransportError` to simulate infrastructure failures.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from authpairs.backends.base import ChatRequest, ChatResponse, NoResources
from authpairs.backends.config import SamplingConfig, ScriptedBackendConfig
from authpairs.errors import AuthpairsError, BackendError
from authpairs.registry import RegistryError, load_object

Script = Callable[[ChatRequest], "str | ChatResponse | Awaitable[str | ChatResponse]"]


def load_script(spec: str, what: str = "scripted backend",
                error: type[AuthpairsError] = BackendError) -> Callable[..., Any]:
    """Import a script ``module:function`` (a module of the current folder too, as
    ``--guardrail`` finds one); anything unloadable or not callable is ``error`` naming ``what``
    (the scripted backend's, or a scripted agent's: :mod:`authpairs.backends.tool_chat`)."""
    try:
        function = load_object(spec)
    except RegistryError as exc:
        raise error(f"{what} {spec!r}: {exc}") from exc
    if not callable(function):
        raise error(f"{what} {spec!r} is not callable")
    return function


class ScriptedBackend(NoResources):
    """Answers each request by calling ``script(request)``."""

    name = "scripted"

    def __init__(self, script: Script, label: str = "scripted") -> None:
        self.script = script
        self.label = label
        self.calls = 0

    @classmethod
    def from_config(cls, config: ScriptedBackendConfig) -> ScriptedBackend:
        """Build from a :class:`ScriptedBackendConfig` (kind 'scripted', tests only)."""
        return cls(load_script(config.script), label=config.script)

    def describe(self) -> dict[str, Any]:
        """The script's name."""
        return {"kind": self.name, "script": self.label}

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """Call the script; wrap plain text as a normally finished response."""
        self.calls += 1
        result = self.script(request)
        if asyncio.iscoroutine(result) or isinstance(result, Awaitable):
            result = await result
        if isinstance(result, ChatResponse):
            return result
        return ChatResponse(text=str(result), finish_reason="stop",
                            input_tokens=sum(len(m["content"]) // 4 for m in request.messages),
                            output_tokens=len(str(result)) // 4)
