"""Run configuration: which cases, which reviewer (interface + backend), where records go.

A configuration is a YAML file (or a dict) naming components and their arguments. The *resolved*
configuration (defaults filled in) is stored with every run together with its SHA-256.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from authpairs.cases.canonical import sha256_hex
from authpairs.yamlfiles import first_error, read_yaml_mapping


class SamplingConfig(BaseModel):
    """Decoding parameters sent to an OpenAI-compatible server (None = server default)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = 0.0
    top_p: float | None = None
    top_k: int | None = None
    min_p: float | None = None
    presence_penalty: float | None = None
    repetition_penalty: float | None = None
    seed: int | None = None
    max_tokens: int = 2048


class BackendConfig(BaseModel):
    """Which backend answers chat requests.

    kinds: ``local`` (embedded xllamacpp server with a GGUF file), ``openai`` (one or several
    OpenAI-compatible base URLs: vLLM, llama.cpp server, Ollama, OpenAI), ``replay`` (answers from
    an earlier run's records), ``scripted`` (tests only).
    """

    model_config = ConfigDict(extra="forbid")

    kind: Literal["local", "openai", "replay", "scripted"] = "local"
    model: str = Field(default="", description="Model name sent to the server.")
    base_urls: list[str] = Field(default_factory=list, description="OpenAI-compatible base URLs.")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Env var holding the API key.")
    concurrency_per_endpoint: int = Field(default=4, ge=1)
    deadline_s: float = Field(default=3600.0, gt=0, description="Per-request deadline.")
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Passed through, e.g. vLLM chat_template_kwargs.")
    gguf_path: str | None = Field(default=None, description="local: GGUF file (default SmolLM2).")
    n_ctx: int = Field(default=8192, description="local: context size.")
    n_parallel: int = Field(default=2, description="local: parallel slots.")
    n_threads: int | None = Field(
        default=None, description="local: CPU threads (default: all cores but one, at most 8).")
    replay_store: str | None = Field(default=None, description="replay: records SQLite path.")
    replay_run_id: str | None = Field(default=None, description="replay: run to answer from.")
    script: str | None = Field(default=None, description="scripted (tests): 'module:function'.")


class ReviewerConfig(BaseModel):
    """A reviewer: an interface with a backend, or a baseline that calls no model."""

    model_config = ConfigDict(extra="forbid")

    interface: str = Field(default="schema",
                           description="'direct', 'structured', 'schema', or a registered name.")
    baseline: Literal["always-allow", "always-block"] | None = Field(
        default=None, description="Use a baseline reviewer instead of a model.")
    backend: BackendConfig = Field(default_factory=BackendConfig)
    sampling: SamplingConfig = Field(default_factory=SamplingConfig)


class RunConfig(BaseModel):
    """Everything that defines a run. Its hash decides whether a re-run resumes it."""

    model_config = ConfigDict(extra="forbid")

    dataset: str = Field(default="language",
                         description="'language', 'examples', 'native', or a JSONL path.")
    split: Literal["dev", "test", "all"] = "dev"
    limit: int | None = Field(default=None, ge=1, description="First N cases only.")
    reviewer: ReviewerConfig = Field(default_factory=ReviewerConfig)
    enforce: bool = Field(default=True, description="Execute ALLOWed effects in a sandbox.")
    concurrency: int = Field(default=4, ge=1, description="Cases in flight at once.")
    infra_retries: int = Field(default=3, ge=0, description="Retries after transport failures.")
    run_id: str | None = Field(default=None, description="Default: derived from the config hash.")
    records: str = Field(default="runs/authpairs.sqlite", description="SQLite records path.")

    def identity(self) -> dict[str, Any]:
        """The parts of the configuration that define the run (not where records go)."""
        return self.model_dump(mode="json", exclude={"records", "run_id"})

    def sha256(self) -> str:
        """SHA-256 of :meth:`identity`."""
        return sha256_hex(self.identity())

    def resolved_run_id(self) -> str:
        """The run id: explicit, or ``run-`` + 12 hex digits of the config hash."""
        return self.run_id or f"run-{self.sha256()[:12]}"


class ConfigError(ValueError):
    """A configuration file is malformed; the message names the file and field."""


def load_config(path: str | Path, overrides: dict[str, Any] | None = None) -> RunConfig:
    """Load a YAML run configuration, then apply dotted-key ``overrides``
    (e.g. ``{"reviewer.interface": "direct"}``)."""
    raw = read_yaml_mapping(path, "configuration", ConfigError)
    return config_from_dict(raw, overrides, origin=str(path))


def config_from_dict(raw: dict[str, Any], overrides: dict[str, Any] | None = None,
                     origin: str = "<config>") -> RunConfig:
    """Build a :class:`RunConfig` from plain data plus dotted-key overrides."""
    data = dict(raw)
    for dotted, value in (overrides or {}).items():
        node = data
        *parents, leaf = dotted.split(".")
        for key in parents:
            node = node.setdefault(key, {})
        node[leaf] = value
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        field, message = first_error(exc)
        raise ConfigError(f"{origin}: field '{field}': {message}") from exc
