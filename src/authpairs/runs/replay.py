"""Replay: answer from an earlier run's records by exact input hash (re-score without inference).

A backend that reads run records, so it lives with the records (``runs``): its configuration
model is here too, and :mod:`authpairs.runs.config` registers it as backend kind ``replay``
(lazily, so this module loads only when a run replays).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, ClassVar, Literal

from pydantic import Field

from authpairs.backends.base import ChatRequest, ChatResponse, NoResources
from authpairs.backends.config import BackendConfigBase, SamplingConfig
from authpairs.errors import BackendError
from authpairs.runs.store import RecordStore


class ReplayBackendConfig(BackendConfigBase):
    """Answers from an earlier run's records, by exact input hash (re-scoring, no inference)."""

    kind: Literal["replay"] = "replay"
    store: str = Field(description="Records SQLite file holding the run to replay.")
    run_id: str = Field(description="The run whose answers are replayed.")

    factory: ClassVar[str] = "authpairs.runs.replay:ReplayBackend.from_config"


class ReplayBackend(NoResources):
    """Returns the recorded formal output for each reviewer input hash of ``run_id``."""

    name = "replay"

    def __init__(self, store_path: str | Path, run_id: str) -> None:
        self.store_path = Path(store_path)
        self.run_id = run_id
        with RecordStore(self.store_path, readonly=True) as store:
            if store.get_run(run_id) is None:
                raise BackendError(f"{self.store_path}: no run '{run_id}' to replay")
            self._answers = store.formal_outputs_by_input(run_id)

    @classmethod
    def from_config(cls, config: ReplayBackendConfig) -> ReplayBackend:
        """Build from a :class:`ReplayBackendConfig` (the registered factory of kind 'replay')."""
        return cls(config.store, config.run_id)

    def describe(self) -> dict[str, Any]:
        """Where the answers come from."""
        return {"kind": self.name, "store": str(self.store_path), "run_id": self.run_id}

    async def complete(self, request: ChatRequest, sampling: SamplingConfig) -> ChatResponse:
        """The recorded answer to exactly this input, or :class:`BackendError`."""
        key = request.sha256()
        attempt = self._answers.get(key)
        if attempt is None:
            raise BackendError(f"replay: run '{self.run_id}' has no answer for input {key[:16]}…"
                               " (different prompt, interface or case)")
        return ChatResponse(text=attempt.output_text, output_token_ids=attempt.output_token_ids,
                            reasoning=attempt.reasoning_text,
                            finish_reason=attempt.finish_reason,
                            input_tokens=attempt.input_tokens,
                            output_tokens=attempt.output_tokens,
                            reasoning_tokens=attempt.reasoning_tokens,
                            latency_s=0.0, endpoint=f"replay:{self.run_id}")
