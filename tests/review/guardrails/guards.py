"""Example user guardrails used by the tests (importable as tests.review.guardrails.guards:NAME)."""

from __future__ import annotations

from authpairs.cases.models import PublicCase
from authpairs.review.outcome import Decision


def review(case: PublicCase) -> Decision:
    """Block refunds above 50, allow everything else (a toy rule, for plumbing)."""
    amount = float(case.request.arguments.get("amount", 0) or 0)
    return Decision.BLOCK if amount > 50 else Decision.ALLOW


async def review_async(case: PublicCase) -> str:
    """Answer with a PolicyGuard-style label (parsed with parser=policyguard)."""
    return "violation" if "revoked" in str(case.evidence.model_dump()) else "no_violation"


def raises(case: PublicCase) -> Decision:
    """A guardrail that fails."""
    raise RuntimeError("guard exploded")


def wrong_type(case: PublicCase) -> int:
    """A guardrail that returns the wrong type."""
    return 1
