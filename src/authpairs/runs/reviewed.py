"""What reviewing one case produced (:class:`Review`), and the records made from it.

:class:`~authpairs.runs.case_runner.CaseRunner` reviews a case (render, ask, parse, enforce);
:func:`build_records` turns that review into its :class:`~authpairs.runs.records.CaseRecord` and
:class:`~authpairs.runs.records.AttemptRecord` rows (hashing the input, copying the raw output and
the reference fields).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Protocol

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import Case
from authpairs.enforce.effect_record import EffectRecord
from authpairs.review.outcome import ReasonCode, ReviewOutcome
from authpairs.review.parsing import FATAL
from authpairs.runs.records import AttemptRecord, CaseRecord


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

    ``response`` and ``outcome`` are None when every attempt failed in transport (the case then
    gets no record); ``effect`` is None when nothing was enforced.
    """

    request: ChatRequest
    response: ChatResponse | None = None
    outcome: ReviewOutcome | None = None
    effect: EffectRecord | None = None
    attempts: list[Attempt] = field(default_factory=list)


class Parser(Protocol):
    """What classifies an answer (a reviewer, or the part of one that parses)."""

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Classify the response."""
        ...


_SURROGATE = re.compile("[\ud800-\udfff]")


def as_stored(response: ChatResponse) -> ChatResponse:
    """``response`` with its text as a record reads it back.

    Records are JSON, and JSON spells a high surrogate followed by a low one exactly as the
    character the pair encodes, so such a pair reads back as that character. The parser is given
    the same text (lone surrogates stay as they are), so that re-parsing a stored output, as
    ``authpairs audit`` does, gives the outcome the run recorded."""
    text = response.text
    if text is None or _SURROGATE.search(text) is None:
        return response
    joined = text.encode("utf-16", "surrogatepass").decode("utf-16", "surrogatepass")
    return response if joined == text else response.model_copy(update={"text": joined})


def safe_parse(parser: Parser, response: ChatResponse) -> ReviewOutcome:
    """The parser's outcome for the response as it is stored (:func:`as_stored`); anything the
    parser raises is an *unavailable* outcome, never a crash.

    ``BaseException`` subclasses count (a Rust panic raised through pyo3 is one); only
    :data:`~authpairs.review.parsing.FATAL` (KeyboardInterrupt, SystemExit, task cancellation)
    propagates."""
    try:
        return parser.parse(as_stored(response))
    except FATAL:
        raise
    except BaseException as exc:  # parsers must not raise; this is the last line of defence
        return ReviewOutcome.unavailable(ReasonCode.PARSER_ERROR,
                                         f"parser raised {type(exc).__name__}")


def build_records(run_id: str, case: Case, review: Review
                  ) -> tuple[CaseRecord | None, list[AttemptRecord]]:
    """The case record (None when no attempt got an answer) and every attempt of ``review``;
    the formal attempt holds the exact input and the raw output, whatever the parser made of
    it."""
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
            input_sha256=input_sha, request=review.request, latency_s=attempt.latency_s,
            output_text=response.text, output_token_ids=response.output_token_ids,
            reasoning_text=response.reasoning, finish_reason=response.finish_reason,
            input_tokens=response.input_tokens, output_tokens=response.output_tokens,
            reasoning_tokens=response.reasoning_tokens))
    if response is None or review.outcome is None:
        return None, attempts
    record = CaseRecord.from_review(run_id, case, input_sha, review.outcome, response,
                                    review.effect, infra_attempts=len(review.attempts) - 1)
    return record, attempts
