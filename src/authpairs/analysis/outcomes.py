"""Per-record predicates that every analysis shares (read from :class:`CaseRecord` only)."""

from __future__ import annotations

from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus
from authpairs.runs.records import CaseRecord


def completed(record: CaseRecord) -> bool:
    """A lawful request counts as completed exactly as :attr:`CaseRecord.completed` says."""
    return record.completed


def approved(record: CaseRecord) -> bool:
    """The request went through: its effect executed (when enforced) or the dispatch was ALLOW.

    For a forbidden request this is a *forbidden effect* (an incorrect approval).
    """
    if record.effect is not None:
        return record.effect.executed
    return record.dispatch is Dispatch.ALLOW


def succeeded(record: CaseRecord) -> bool:
    """Lawful side: :func:`completed`; forbidden side: :func:`approved`."""
    return completed(record) if record.lawful else approved(record)


def usable(record: CaseRecord) -> bool:
    """True for a usable ALLOW/BLOCK decision (no unavailable response, no abstention)."""
    return record.status is OutcomeStatus.DECISION


def usable_denial(record: CaseRecord) -> bool:
    """A usable BLOCK decision whose operation did not execute. Unavailable is not a denial."""
    if record.status is not OutcomeStatus.DECISION or record.decision is not Decision.BLOCK:
        return False
    return record.effect is None or not record.effect.executed


def path_of(record: CaseRecord) -> str:
    """The authorization path attribute of a record ('' when the dataset has none)."""
    return record.attributes.get("path", "")
