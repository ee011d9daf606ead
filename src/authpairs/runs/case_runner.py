"""The one way a case is reviewed: render -> ask -> parse -> enforce.

:class:`CaseRunner` is used by every path that reviews cases -- ``authpairs run`` and the Python
API (through :class:`~authpairs.runs.orchestrator.RunOrchestrator`) and the Inspect AI scorer
(:mod:`authpairs.integrations.inspect_task`) -- so they cannot drift apart:

1. **render** the public case into the exact reviewer input (unless the caller already sent it);
2. **ask** the reviewer under the attempt's clock
   (:class:`~authpairs.backends.liveness.AttemptClock`, the one deadline of an attempt): it
   expires when ``deadline_s`` passes without progress -- the whole answer, or the next
   streamed event of a streaming backend, which reports to this clock instead of keeping a
   deadline of its own. The reviewer's answer is the response as it is recorded (a model
   reviewer's interface has already finished it, e.g. kept a think block as reasoning). A
   transport failure or an expired clock is an *infrastructure* attempt, retried with
   exponential backoff (a server's ``Retry-After`` honoured up to
   :data:`~authpairs.runs.retry.MAX_RETRY_AFTER_S`),
   never a decision;
3. **parse** it strictly (:func:`~authpairs.runs.reviewed.safe_parse`: a parser that raises
   still yields an *unavailable* outcome);
4. **enforce** the dispatch at the enforcement point, in a worker thread so the event loop keeps
   serving the other cases in flight (the enforcer itself takes one case at a time: verifiers
   compare the sandbox before and after).

The result is a :class:`~authpairs.runs.reviewed.Review`; turning it into records is
:func:`~authpairs.runs.reviewed.build_records`.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable

import authpairs.main_job as main_job
from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.liveness import AttemptClock
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.errors import TransportError
from authpairs.review.reviewers import Reviewer
from authpairs.runs.retry import FailureLog, RetryPolicy
from authpairs.runs.reviewed import Attempt, Review, safe_parse

log = logging.getLogger("authpairs.runs")


def short_cause(error: str) -> str:
    """A short cause for display: the message without the endpoint URL prefix."""
    head = error.splitlines()[0] if error else "unknown"
    if head.startswith(("http://", "https://")) and ": " in head:
        head = head.split(": ", 1)[1]
    return head[:120]


class CaseRunner:
    """Reviews one case at a time through one reviewer (see the module docstring).

    ``deadline_s`` is how long an attempt may go without progress (None: no deadline; see
    :mod:`authpairs.backends.liveness`); ``infra_retries`` is how many infrastructure failures
    are retried after the first; ``on_retry(case_id, cause)``, once set, is told about each
    retry. Failures are logged through :class:`~authpairs.runs.retry.FailureLog`
    (``failures``): the first of each cause, then counts; an endpoint that fails every request
    stops the run through its circuit breaker (:mod:`authpairs.backends.breaker`), which raises
    instead of a transport error.
    """

    def __init__(self, reviewer: Reviewer, *, enforcer: Enforcer | None = None,
                 deadline_s: float | None = None,
                 infra_retries: int = main_job.INFRA_RETRIES) -> None:
        self.reviewer = reviewer
        self.enforcer = enforcer
        self.deadline_s = deadline_s
        self.retry = RetryPolicy(infra_retries)
        self.on_retry: Callable[[str, str], None] | None = None
        self.failures = FailureLog(log)

    async def review(self, case: Case, request: ChatRequest | None = None) -> Review:
        """Review ``case``: render (or take ``request``, the input already sent), ask with
        retries, then :meth:`conclude`. The review has no response when every attempt failed
        in transport."""
        review = Review(request if request is not None else self.reviewer.render(case.public))
        for number in self.retry.attempts:
            started = time.perf_counter()
            try:
                response = await self._ask(review.request)
            except TransportError as exc:
                review.attempts.append(Attempt(number, time.perf_counter() - started, str(exc)))
                delay = self.retry_delay(number, exc) if self.retry.retried(number) else None
                self.failures.failed(f"case {case.case_id}: attempt {number}", str(exc), delay)
                if delay is not None:
                    if self.on_retry is not None:
                        self.on_retry(case.case_id, short_cause(str(exc)))
                    await asyncio.sleep(delay)
                continue
            review.attempts.append(Attempt(number, time.perf_counter() - started))
            return await self.conclude(case, review, response)
        return review

    async def conclude(self, case: Case, review: Review, response: ChatResponse) -> Review:
        """Parse and enforce the answer ``response`` to ``review.request``. The formal attempt
        is built from this response, whatever the parser makes of it."""
        review.response = response
        review.outcome = outcome = safe_parse(self.reviewer, response)
        if self.enforcer is not None and case.public.effect is not None:
            # Decision-only cases (native track) carry no effect and are not enforced.
            review.effect = await asyncio.to_thread(self.enforcer.enforce, case.case_id,
                                                    case.public.effect, outcome.dispatch)
        return review

    async def _ask(self, request: ChatRequest) -> ChatResponse:
        clock = AttemptClock(self.deadline_s)
        try:
            async with clock:
                return await self.reviewer.answer(request)
        except TimeoutError:
            raise TransportError(clock.timeout_message()) from None

    def retry_delay(self, number: int, exc: TransportError) -> float:
        """Seconds to wait after failed attempt ``number`` (:meth:`RetryPolicy.delay`)."""
        return self.retry.delay(number, exc.retry_after)
