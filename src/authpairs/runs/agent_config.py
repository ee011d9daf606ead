"""The agent model of an agent run (``authpairs run --agent``): which model acts as the agent.

The agent is configured like a reviewer's model -- a backend of any tool-calling kind plus its
sampling -- in the ``agent:`` section of a run configuration, separate from the reviewer (the
guardrail), which stays in ``reviewer:``::

    agent:
      backend: {kind: openai, base_urls: ["http://127.0.0.1:8000/v1"], model: Qwen/Qwen3-8B}
      sampling: {temperature: 0.0, seed: 7, max_tokens: 1024}
      max_turns: 8
      tool_format: auto   # native (OpenAI tools), json_schema (constrained JSON steps) or auto

Moving the agent from the embedded server to vLLM is a change of ``agent.backend`` only.
:func:`agent_from_spec` reads the shorthand of the ``--agent`` option.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from authpairs.backends.config import (
    BackendConfig,
    LocalBackendConfig,
    OpenAIBackendConfig,
    SamplingConfig,
    ScriptedBackendConfig,
    ToolFormat,
)
from authpairs.errors import ConfigError
from authpairs.yamlfiles import first_error, read_yaml_mapping

AGENT_BACKEND_KINDS = ("local", "openai", "scripted")
"""Backend kinds that can act as an agent (they answer chat completions with ``tools``)."""


class AgentModelConfig(BaseModel):
    """The model that acts as the agent, and how long it may go on per case."""

    model_config = ConfigDict(extra="forbid")

    backend: BackendConfig = Field(
        # its own server settings: all cores but one, no speculative decoding
        default_factory=lambda: LocalBackendConfig(n_threads=None, speculative="none"),
        description="The agent's model: 'local' (the embedded SmolLM2 server), 'openai' (any "
        "OpenAI-compatible server with tool calling: vLLM, llama.cpp, Ollama) or 'scripted' "
        "(a Python function, for tests).")
    sampling: SamplingConfig = Field(default_factory=lambda: SamplingConfig(max_tokens=512),
                                     description="The agent's decoding parameters.")
    max_turns: int = Field(default=8, ge=1, le=100, description="Model turns per case; a "
                           "case ends earlier when the model answers without a tool call.")
    system_prompt: str | None = Field(default=None, description="The agent's system message "
                                      "(default: the runner's, see authpairs.agent.runner).")
    tool_format: ToolFormat = Field(
        default="auto", description="How the tools reach the model: 'native' (OpenAI tools, "
        "rendered by the server's chat template), 'json_schema' (the tools in the system "
        "message, each turn constrained to one JSON step by response_format json_schema) or "
        "'auto' (json_schema for the embedded server when its template renders no tools, "
        "else native).")

    @model_validator(mode="after")
    def _tool_calling_kind(self) -> AgentModelConfig:
        """Only backend kinds that can call tools act as an agent."""
        if self.backend.kind not in AGENT_BACKEND_KINDS:
            raise ValueError(f"agent backend kind {self.backend.kind!r} cannot act as an agent "
                             f"(one of: {', '.join(AGENT_BACKEND_KINDS)})")
        if self.backend.kind == "scripted" and self.tool_format == "json_schema":
            raise ValueError("a scripted agent takes the tools natively: tool_format "
                             "json_schema is for model servers (openai, local)")
        return self

    def identity(self) -> dict[str, Any]:
        """What can change the agent's behaviour: its backend identity, sampling, turn limit,
        system prompt and tool format (``auto``, the default, is left out, so configurations
        written before the field existed keep their hash)."""
        data = self.model_dump(mode="json")
        data["backend"] = self.backend.identity()
        if data["tool_format"] == "auto":
            del data["tool_format"]
        return data


def agent_from_spec(spec: str, model: str | None = None) -> AgentModelConfig:
    """The agent of an ``--agent AGENT`` option:

    * ``embedded``: the embedded SmolLM2 server (kind ``local``);
    * ``http(s)://HOST/v1``: an OpenAI-compatible server; ``model`` names the model;
    * ``FILE.yaml``: an agent section of its own (backend, sampling, max_turns, system_prompt);
    * ``module:function``: a scripted agent (kind ``scripted``: the function answers each
      turn; see :mod:`authpairs.backends.tool_chat`).

    A spec that is none of these is a :class:`ConfigError` naming ``--agent``.
    """
    try:
        if spec == "embedded":
            return AgentModelConfig()
        if spec.startswith(("http://", "https://")):
            if not model:
                raise ConfigError(f"--agent {spec}: an OpenAI-compatible server needs the model "
                                  "name: add --agent-model NAME")
            return AgentModelConfig(backend=OpenAIBackendConfig(base_urls=[spec], model=model))
        if spec.endswith((".yaml", ".yml")):
            raw = read_yaml_mapping(Path(spec), "agent configuration", ConfigError)
            return AgentModelConfig.model_validate(raw)
        module, _, function = spec.partition(":")
        if module and function and "/" not in spec:
            return AgentModelConfig(backend=ScriptedBackendConfig(script=spec))
    except ValidationError as exc:
        field, message = first_error(exc)
        raise ConfigError(f"--agent {spec}: field '{field}': {message}") from exc
    raise ConfigError(f"--agent {spec!r}: expected 'embedded', an http(s):// base URL, a .yaml "
                      "agent configuration or module:function")
