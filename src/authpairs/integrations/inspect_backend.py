"""Backend kind ``inspect``: the answers an Inspect AI model gave in one epoch of an eval log.

An imported Inspect run (:mod:`authpairs.integrations.inspect_import`) names its reviewer with
this kind: the Inspect model (``mockllm/model``, ``openai-api/local/SmolLM2``), its base URL,
the eval id, the epoch and the generation settings Inspect sent. The configuration is plain
data, so ``authpairs audit``, ``runs`` and ``score`` read it without Inspect installed. Built as
a backend (``authpairs run`` with this configuration), it answers each reviewer input with the
output Inspect recorded for exactly that input (by SHA-256) in that epoch: the authpairs run
path re-scores the Inspect answers without calling the model.

The kind is registered through authpairs' own ``authpairs.backends`` entry point (the
integrations sit above the run layer, which cannot name them).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from pydantic import Field

from authpairs.backends.base import NoResources
from authpairs.backends.config import BackendConfigBase, SamplingConfig
from authpairs.errors import BackendError

if TYPE_CHECKING:
    from authpairs.backends.base import ChatRequest, ChatResponse

KIND = "inspect"

#: Inspect generation settings that say how a request is delivered, not what is asked or how
#: the model decodes: left out of the run identity.
OPERATIONAL = frozenset({"max_retries", "timeout", "attempt_timeout", "stream_idle_timeout",
                         "max_connections", "adaptive_connections", "extra_headers", "cache",
                         "batch", "fallback_models"})


class InspectBackendConfig(BackendConfigBase):
    """An Inspect model's answers in one epoch of one eval (see the module docstring)."""

    kind: Literal["inspect"] = "inspect"
    base_url: str | None = Field(default=None, description="The model's base URL, if any.")
    eval_id: str = Field(description="Inspect's id of the eval that produced the answers.")
    epoch: int = Field(default=1, ge=1, description="The epoch whose answers these are.")
    epochs: int = Field(default=1, ge=1, description="How many epochs the eval ran.")
    log: str = Field(default="", description="The eval log (where the answers are read from).")
    generate_config: dict[str, Any] = Field(
        default_factory=dict, description="Inspect's effective GenerateConfig (task settings "
        "with the eval's overrides), unset values left out.")

    factory: ClassVar[str] = "authpairs.integrations.inspect_backend:InspectLogBackend"

    def identity(self) -> dict[str, Any]:
        """Model, eval, epoch count and decoding settings; not the log's location, the URL
        spelling or delivery settings (timeouts, connections), and not the epoch: the epochs of
        one eval are repetitions of one configuration, one run each."""
        identity = self.model_dump(mode="json", exclude={"log", "base_url", "deadline_s",
                                                         "epoch"})
        identity["generate_config"] = {k: v for k, v in self.generate_config.items()
                                       if k not in OPERATIONAL}
        return identity


class InspectLogBackend(NoResources):
    """Answers each input with the output recorded for it in one epoch of an Inspect log.

    The log is read when the backend is entered, in a worker thread: Inspect's log reader,
    called inside a running event loop, patches asyncio for the whole process (nest_asyncio).
    """

    name = KIND

    def __init__(self, config: InspectBackendConfig) -> None:
        """The backend of ``config`` (the registered factory); enter it to read the log."""
        self.config = config
        self.answers: dict[str, ChatResponse] | None = None

    def load(self) -> InspectLogBackend:
        """Read the configured epoch's answers from the log (a different eval is refused)."""
        from authpairs.integrations.inspect_import import epoch_answers, read_log

        log = read_log(Path(self.config.log))
        if log.eval.eval_id != self.config.eval_id:
            raise BackendError(f"{self.config.log}: holds eval {log.eval.eval_id}, not "
                               f"{self.config.eval_id}")
        self.answers = epoch_answers(log, self.config.epoch)
        return self

    async def __aenter__(self) -> InspectLogBackend:
        return await asyncio.to_thread(self.load)

    def describe(self) -> dict[str, Any]:
        """Which model, eval and epoch answered."""
        return {"kind": KIND, "model": self.config.model, "eval_id": self.config.eval_id,
                "epoch": self.config.epoch, "log": self.config.log}

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """The recorded answer to exactly this input, or :class:`BackendError`."""
        if self.answers is None:
            raise BackendError("inspect: the backend was not entered (the log is read then)")
        answer = self.answers.get(request.sha256())
        if answer is None:
            raise BackendError(f"inspect: epoch {self.config.epoch} of eval "
                               f"{self.config.eval_id} has no answer for input "
                               f"{request.sha256()[:16]} (different prompt, interface or case)")
        return answer
