"""Review: interfaces render a public case, a backend answers, a strict parser decides."""

from authpairs.review.outcome import (
    Decision,
    Dispatch,
    OutcomeStatus,
    ReasonCode,
    ReviewOutcome,
)

__all__ = ["Decision", "Dispatch", "OutcomeStatus", "ReasonCode", "ReviewOutcome"]
