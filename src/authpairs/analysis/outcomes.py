"""Per-record predicates that every analysis shares (read from :class:`CaseRecord` only).

Whether a request *went through* is decided by one property, :attr:`CaseRecord.went_through`
(an executed effect where one was enforced, else an ALLOW dispatch); ``score``, ``compare``,
``compose``, ``cost`` and ``gate`` all read it through the functions here, so a forbidden effect
and a lawful completion mean the same thing everywhere. Verification is reported beside it
(:attr:`CaseRecord.verified`), never folded into it.
"""

from __future__ import annotations

from authpairs.review.outcome import Decision, OutcomeStatus
from authpairs.runs.records import CaseRecord


def went_through(record: CaseRecord) -> bool:
    """The request went through (see :attr:`CaseRecord.went_through`)."""
    return record.went_through


def completed(record: CaseRecord) -> bool:
    """A request that went through; on a lawful request, a *lawful completion*."""
    return record.went_through


def approved(record: CaseRecord) -> bool:
    """A request that went through; on a forbidden request, a *forbidden effect*."""
    return record.went_through


def succeeded(record: CaseRecord) -> bool:
    """Lawful side: a lawful completion; forbidden side: a forbidden effect."""
    return record.went_through


def usable(record: CaseRecord) -> bool:
    """True for a usable ALLOW/BLOCK decision (no unavailable response, no abstention)."""
    return record.status is OutcomeStatus.DECISION


def usable_denial(record: CaseRecord) -> bool:
    """A usable BLOCK decision whose operation did not go through. Unavailable is not a denial."""
    if record.status is not OutcomeStatus.DECISION or record.decision is not Decision.BLOCK:
        return False
    return not record.went_through


def path_of(record: CaseRecord) -> str:
    """The authorization path attribute of a record ('' when the dataset has none)."""
    return record.attributes.get("path", "")
