"""What reviewing one case produced (:class:`Review`), and the records made from it.

The run's workers review: render, ask, parse and (with an enforcement point) enforce. Turning a
review into its :class:`~authpairs.runs.records.CaseRecord` and
:class:`~authpairs.runs.records.AttemptRecord` rows (hashing the input, copying the raw output and
the reference fields; parsing the answer too when nothing needed the decision earlier) is
:func:`build_records`, done by whichever record writer stores them (see
:mod:`authpairs.runs.writer` and :mod:`authpairs.runs.record_process`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Protocol

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.models import Case, PublicCase
from authpairs.enforce.records import EffectRecord
from authpairs.review.outcome import ReasonCode, ReviewOutcome
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

    ``response`` is None when every attempt failed in transport (the case gets no record).
    ``outcome`` is None when the answer is left for the records process to parse.
    """

    request: ChatRequest
    response: ChatResponse | None = None
    outcome: ReviewOutcome | None = None
    effect: EffectRecord | None = None
    attempts: list[Attempt] = field(default_factory=list)
    #: The records process rendered ``request`` and keeps it: the review crosses without it.
    request_known: bool = False

    def to_wire(self) -> WireReview:
        """This review as plain data, for another process: several times cheaper to pickle
        than the models themselves (a pydantic model pickles through its whole state)."""
        response = self.response
        return (None if self.request_known else vars(self.request),
                None if response is None else vars(response), self.outcome, self.effect,
                [(a.number, a.latency_s, a.error) for a in self.attempts])

    @classmethod
    def from_wire(cls, data: WireReview, known: ChatRequest | None = None) -> Review:
        """The review :meth:`to_wire` made ``data`` of; ``known`` is its request when the
        review crossed without it."""
        fields, response, outcome, effect, attempts = data
        if fields is not None:
            request = ChatRequest(**fields)
        elif known is not None:
            request = known
        else:
            raise ValueError("a review that crossed without its request needs the known one")
        return cls(request, None if response is None else ChatResponse(**response), outcome,
                   effect, [Attempt(*attempt) for attempt in attempts])


#: :meth:`Review.to_wire`: the request's fields (None when the records process knows the
#: request) and the response's (pydantic keeps a model's field values in its ``__dict__``), the
#: outcome, the effect, and each attempt as a tuple.
WireReview = tuple[dict[str, Any] | None, dict[str, Any] | None, ReviewOutcome | None,
                   EffectRecord | None, list[tuple[int, float, str | None]]]


class Renderer(Protocol):
    """What renders a case into the exact reviewer input (a reviewer's interface)."""

    def render(self, case: PublicCase) -> ChatRequest:
        """The exact reviewer input for ``case``."""
        ...


class Parser(Protocol):
    """What classifies an answer (a reviewer, or the part of one that parses)."""

    def parse(self, response: ChatResponse) -> ReviewOutcome:
        """Classify the response."""
        ...


def safe_parse(parser: Parser, response: ChatResponse) -> ReviewOutcome:
    """The parser's outcome; anything it raises is an *unavailable* outcome, never a crash."""
    try:
        return parser.parse(response)
    except Exception as exc:  # parsers must not raise; this is the last line of defence
        return ReviewOutcome.unavailable(ReasonCode.PARSER_ERROR,
                                         f"parser raised {type(exc).__name__}")


def build_records(run_id: str, case: Case | CaseFacts, review: Review,
                  parser: Parser | None = None
                  ) -> tuple[CaseRecord | None, list[AttemptRecord]]:
    """The case record (None when no attempt got an answer) and every attempt of ``review``;
    the formal attempt holds the raw output, whatever the parser made of it. ``parser``
    classifies the answer when the review has no outcome yet."""
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
    if response is None:
        return None, attempts
    outcome = review.outcome
    if outcome is None:
        assert parser is not None, "a review without an outcome needs a parser"
        outcome = safe_parse(parser, response)
    record = CaseRecord.from_review(run_id, case, input_sha, outcome, response, review.effect,
                                    infra_attempts=len(review.attempts) - 1)
    return record, attempts
