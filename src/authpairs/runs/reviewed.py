"""What reviewing one case produced (:class:`Review`), and the records made from it.

The run's workers only review: render, ask, parse and (with an enforcement point) enforce.
Turning a review into its :class:`~authpairs.runs.records.CaseRecord` and
:class:`~authpairs.runs.records.AttemptRecord` rows (hashing the input, copying the raw output and
the reference fields) is :func:`build_records`, done by whichever record writer stores them (see
:mod:`authpairs.runs.writer` and :mod:`authpairs.runs.record_process`).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import Case
from authpairs.enforce.records import EffectRecord
from authpairs.review.outcome import ReviewOutcome
from authpairs.runs.records import AttemptRecord, CaseFacts, CaseRecord


@dataclass(slots=True)
class Attempt:
    """One call to the reviewer: its number, how long it took, and the transport error that
    ended it (None for the formal attempt, the one that got an answer)."""

    number: int
    latency_s: float
    error: str | None = None


@dataclass(slots=True)
class Review:
    """What reviewing one case produced, before it is turned into records.

    ``response`` and ``outcome`` are None when every attempt failed in transport (the case gets
    no record).
    """

    request: ChatRequest
    response: ChatResponse | None = None
    outcome: ReviewOutcome | None = None
    effect: EffectRecord | None = None
    attempts: list[Attempt] = field(default_factory=list)


def build_records(run_id: str, case: Case | CaseFacts, review: Review
                  ) -> tuple[CaseRecord | None, list[AttemptRecord]]:
    """The case record (None when no attempt got an answer) and every attempt of ``review``;
    the formal attempt holds the raw output, whatever the parser made of it."""
    input_sha = review.request.sha256()
    response = review.response
    attempts: list[AttemptRecord] = []
    for attempt in review.attempts:
        if attempt.error is not None or response is None:
            attempts.append(AttemptRecord(
                run_id=run_id, case_id=case.case_id, attempt_no=attempt.number,
                kind="infrastructure", input_sha256=input_sha, latency_s=attempt.latency_s,
                error=attempt.error))
            continue
        attempts.append(AttemptRecord(
            run_id=run_id, case_id=case.case_id, attempt_no=attempt.number, kind="formal",
            input_sha256=input_sha, latency_s=attempt.latency_s, output_text=response.text,
            reasoning_text=response.reasoning, finish_reason=response.finish_reason,
            input_tokens=response.input_tokens, output_tokens=response.output_tokens,
            reasoning_tokens=response.reasoning_tokens))
    if response is None or review.outcome is None:
        return None, attempts
    record = CaseRecord.from_review(run_id, case, input_sha, review.outcome, response,
                                    review.effect, infra_attempts=len(review.attempts) - 1)
    return record, attempts
