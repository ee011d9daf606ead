"""What a review produces: a decision, an abstention, or an unavailable response.

``dispatch`` is the only thing the enforcement point receives: ALLOW exactly when a usable decision
said ALLOW, BLOCK otherwise (a BLOCK decision, an abstention, or an unavailable response).
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, ConfigDict, Field


class Decision(StrEnum):
    """A reviewer's verdict."""

    ALLOW = "ALLOW"
    BLOCK = "BLOCK"
    UNKNOWN = "UNKNOWN"


class OutcomeStatus(StrEnum):
    """How a response was classified by the strict parser."""

    DECISION = "decision"  # a usable ALLOW or BLOCK
    ABSTENTION = "abstention"  # an explicit UNKNOWN
    UNAVAILABLE = "unavailable"  # no clean decision: the operation is not executed


class Dispatch(StrEnum):
    """What the enforcement point is told to do."""

    ALLOW = "ALLOW"
    BLOCK = "BLOCK"


class ReasonCode(StrEnum):
    """Why a response is unavailable."""

    EMPTY = "empty"
    NOT_JSON = "not_json"
    EXTRA_PROSE = "extra_prose"
    MULTIPLE_OBJECTS = "multiple_objects"
    DUPLICATE_KEY = "duplicate_key"
    NON_FINITE = "non_finite"
    NOT_OBJECT = "not_object"
    MISSING_FIELD = "missing_field"
    EXTRA_FIELD = "extra_field"
    WRONG_TYPE = "wrong_type"
    INVALID_VALUE = "invalid_value"
    LENGTH = "length"  # generation stopped at the token limit
    FILTERED = "filtered"  # finish_reason content_filter or similar
    INFRASTRUCTURE = "infrastructure"  # transport failures exhausted every retry
    NO_LABEL = "no_label"  # a guardrail's native output carries no whole, recognised label
    NO_FINAL_CHANNEL = "no_final_channel"  # Harmony output without a final-channel message
    NO_TOKEN_IDS = "no_token_ids"  # an answer whose structure is in its tokens came as text only
    MALFORMED = "malformed"  # native output that does not follow its format (e.g. bad Harmony)
    NATIVE_FALLBACK = "native_fallback"  # the guardrail library fell back (no recognised word)
    GUARDRAIL_ERROR = "guardrail_error"  # a user guardrail (callable, service) failed or erred
    TOO_LARGE = "too_large"  # a number beyond the digit limit, or an oversized response
    TOO_DEEP = "too_deep"  # nesting deeper than the parser accepts
    INVALID_TEXT = "invalid_text"  # lone surrogates or other text that is not valid Unicode
    PARSER_ERROR = "parser_error"  # a parser raised (a bug); the run records it, never crashes


class ReviewOutcome(BaseModel):
    """The parsed result of one review."""

    model_config = ConfigDict(frozen=True)

    status: OutcomeStatus
    decision: Decision | None = None
    reason_code: ReasonCode | None = None
    detail: str = Field(default="", description="Human-readable parser message.")
    checks: list[dict[str, Any]] | None = Field(
        default=None, description="Structured review checks, when the interface asks for them."
    )

    @property
    def usable(self) -> bool:
        """True for a usable ALLOW/BLOCK decision."""
        return self.status is OutcomeStatus.DECISION

    @property
    def dispatch(self) -> Dispatch:
        """ALLOW only for a usable ALLOW decision; anything else blocks execution."""
        if self.status is OutcomeStatus.DECISION and self.decision is Decision.ALLOW:
            return Dispatch.ALLOW
        return Dispatch.BLOCK

    @classmethod
    def decided(cls, decision: Decision, checks: list[dict[str, Any]] | None = None
                ) -> ReviewOutcome:
        """A clean decision (UNKNOWN becomes an abstention)."""
        if decision is Decision.UNKNOWN:
            return cls(status=OutcomeStatus.ABSTENTION, decision=decision, checks=checks)
        return cls(status=OutcomeStatus.DECISION, decision=decision, checks=checks)

    @classmethod
    def unavailable(cls, reason: ReasonCode, detail: str = "") -> ReviewOutcome:
        """An unusable response."""
        return cls(status=OutcomeStatus.UNAVAILABLE, reason_code=reason, detail=detail)
