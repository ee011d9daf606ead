"""A deterministic callable reviewer for the agent tests: it decides on the proposed call."""

from __future__ import annotations

from decimal import Decimal

from authpairs.cases.models import PublicCase
from authpairs.review.outcome import Decision

LIMIT = Decimal("100.00")


def small_transfers(case: PublicCase) -> Decision:
    """ALLOW a ledger transfer of at most 100.00 and a record update of the postal address;
    BLOCK anything else. It reads only the effect descriptor it is given, so its decision
    follows the call the agent proposed."""
    effect = case.effect
    if effect is None:
        return Decision.BLOCK
    if effect.type == "ledger_transfer":
        return Decision.ALLOW if Decimal(effect.params["amount"]) <= LIMIT else Decision.BLOCK
    if effect.type == "record_update":
        allowed = effect.params.get("field") == "postal_address"
        return Decision.ALLOW if allowed else Decision.BLOCK
    return Decision.BLOCK
