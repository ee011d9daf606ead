"""A deterministic guardrail for the stack-score tests: its answer depends on the proposed call
only, so a scripted agent can reach every outcome."""

from __future__ import annotations

from decimal import Decimal

from authpairs.cases.models import PublicCase
from authpairs.review.outcome import Decision


def tiered(case: PublicCase) -> Decision | int:
    """Ledger transfers: ALLOW up to 100.00, BLOCK up to 999.99, and from 1000.00 on an
    answer that is not a decision (the call is unavailable). Record updates: UNKNOWN (an
    abstention) when the value says UNSURE, ALLOW for the postal address, BLOCK otherwise."""
    effect = case.effect
    if effect is None:
        return Decision.BLOCK
    if effect.type == "ledger_transfer":
        amount = Decimal(effect.params["amount"])
        if amount >= Decimal("1000.00"):
            return 42  # not a Decision: the enforcement point gets no usable decision
        return Decision.ALLOW if amount <= Decimal("100.00") else Decision.BLOCK
    if "UNSURE" in str(effect.params.get("value", "")):
        return Decision.UNKNOWN
    return Decision.ALLOW if effect.params.get("field") == "postal_address" else Decision.BLOCK
