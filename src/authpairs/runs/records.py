"""Run records: one row per (run, case) with everything analysis needs, plus every attempt.

A :class:`CaseRecord` carries the reference label and grouping attributes copied from the case,
so analysis (issue: request-level comparison, composition, gate) reads records only.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from authpairs.enforce.records import EffectRecord
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus

__all__ = ["AttemptRecord", "CaseRecord", "EffectRecord", "RunInfo"]


class CaseRecord(BaseModel):
    """The scored unit: one formal review of one case in one run."""

    run_id: str
    case_id: str
    input_sha256: str = Field(description="SHA-256 of the exact reviewer input (chat request).")
    status: OutcomeStatus
    decision: Decision | None = None
    reason_code: str | None = None
    dispatch: Dispatch
    label: str = Field(description="Reference label ('lawful'/'forbidden'), copied for analysis.")
    resolved: bool = Field(default=True, description="Reference context resolved by evaluators.")
    split: str = "test"
    cluster: str = Field(description="Scenario (language) or source group (native).")
    attributes: dict[str, str] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = Field(default=0, description="Completion tokens, reasoning included "
                               "(OpenAI usage convention).")
    reasoning_tokens: int = Field(default=0, description="The reasoning part of output_tokens.")
    finish_reason: str | None = None
    latency_s: float = 0.0
    infra_attempts: int = Field(default=0, description="Transport failures before the answer.")
    effect: EffectRecord | None = None
    checks: list[dict[str, Any]] | None = None

    @property
    def lawful(self) -> bool:
        """True when the reference label is lawful."""
        return self.label == "lawful"

    @property
    def completed(self) -> bool:
        """A lawful-side 'completion': the request was approved (and, with effects, executed).

        Where an effect was enforced, completion requires a verified executed effect; otherwise
        it is a usable ALLOW.
        """
        if self.effect is not None:
            return self.effect.executed and self.effect.verified
        return self.dispatch is Dispatch.ALLOW


class AttemptRecord(BaseModel):
    """One call to a backend: formal (scored) or infrastructure (transport failure, retried)."""

    run_id: str
    case_id: str
    attempt_no: int
    kind: str = Field(description="'formal' or 'infrastructure'.")
    input_sha256: str
    output_text: str | None = None
    reasoning_text: str | None = None
    finish_reason: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_s: float = 0.0


class RunInfo(BaseModel):
    """Run-level metadata: resolved configuration, hashes and versions."""

    run_id: str
    created_at: str
    config: dict[str, Any]
    config_sha256: str
    manifest: dict[str, Any]
    manifest_sha256: str
    template_sha256: dict[str, str] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
