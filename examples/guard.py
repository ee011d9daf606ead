"""The bring-your-own-guardrail example of docs/guardrails.md: a plain Python function.

Run it with ``authpairs run --dataset examples --guardrail examples.guard:review``.
"""

from __future__ import annotations

from authpairs.plugins import Decision, PublicCase


def review(case: PublicCase) -> Decision:
    """Refunds need an active delegation mentioned in the evidence."""
    if case.request.action != "refund":
        return Decision.ALLOW
    text = " ".join(doc.text for doc in case.evidence.documents)
    return Decision.ALLOW if "delegation" in text and "revoked" not in text else Decision.BLOCK


def review_labels(case: PublicCase) -> str:
    """The same rule answered as PolicyGuard-style labels (parsed with ``parser: policyguard``)."""
    return "no_violation" if review(case) is Decision.ALLOW else "violation"
