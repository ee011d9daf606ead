"""The record of one enforcement: what was executed and what the independent verifier observed."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class EffectRecord(BaseModel):
    """What the enforcement point did for one case and what the independent verifier observed.

    ``audit_ok`` is False when the observation does not match the dispatch (an ALLOW that did not
    take effect as described, a BLOCK that changed something, or unrelated resources changed).
    """

    executed: bool = Field(description="True when the operation was executed (dispatch ALLOW).")
    effect_type: str | None = None
    effect: dict[str, Any] = Field(default_factory=dict, description="What the executor did.")
    observation: dict[str, Any] = Field(
        default_factory=dict, description="What the independent verifier read back."
    )
    verified: bool = Field(
        default=False, description="True when the verifier confirmed the executed effect."
    )
    audit_ok: bool = Field(default=True, description="Observation matches the dispatch.")
    error: str | None = Field(default=None, description="Executor or verifier error message.")
