"""Async orchestration of one run: bounded concurrency, one formal attempt per case, resume.

For each case that has no record yet in the run: claim it (so a second process on the same run
never reviews it too; claims are taken a block of cases per transaction, ``concurrency`` cases
or more when cases finish fast, and the block is rendered right after its claim, or taken
rendered from the records process where that rendered it ahead), ask the
reviewer, retry *transport* failures only (recorded as infrastructure attempts, honouring a
bounded ``Retry-After``), parse the answer (a parser that raises still yields an *unavailable*
outcome), dispatch it to the enforcement point (if any), and hand the
:class:`~authpairs.runs.reviewed.Review` to the record writer, which stores the case record with
its attempts (the raw output copied into the formal attempt) atomically, in batches:
:class:`~authpairs.runs.writer.RecordWriter` in this process, or
:class:`~authpairs.runs.record_process.RecordProcess` through a records process for long runs. A
case whose transport failures exhaust the retries gets no case record -- it is never scored as a
decision -- and a later re-run of the same command tries it again. When the run stops, the
claims it still holds are freed.

Every retry is logged (logger ``authpairs.runs``) with its cause and shown on the progress line.
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from authpairs.backends.base import ChatRequest, TransportError
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.review.interfaces import ReviewInterface
from authpairs.review.reviewers import ModelReviewer, Reviewer
from authpairs.runs import record_process
from authpairs.runs.progress import ProgressDisplay, RichProgress, SilentProgress
from authpairs.runs.records import AttemptRecord, CaseRecord
from authpairs.runs.reviewed import Attempt, Review, build_records, safe_parse
from authpairs.runs.store import RecordStore
from authpairs.runs.writer import RecordWriter

log = logging.getLogger("authpairs.runs")

#: A server's Retry-After is honoured up to this many seconds.
MAX_RETRY_AFTER_S = 60.0

#: Finished cases are stored in batches of at least this many (more when the concurrency is
#: higher); a batch that does not fill is stored after the writer's delay (0.2 s) all the same.
MIN_BATCH = 64

#: A claim covers about this many seconds of work: after a block was handed out faster, the next
#: claim takes twice as many cases (up to ``MIN_BATCH``); after one that lasted over twice as
#: long, half as many (down to the concurrency). Fast runs take few claim transactions; slow runs
#: (several processes sharing a slow model) still share the work a few cases at a time.
CLAIM_SPAN_S = 0.25


@dataclass
class RunProgress:
    """Counts of what happened in this invocation of a run."""

    run_id: str
    total: int
    already_done: int
    completed_now: int = 0
    infrastructure_failed: list[str] = field(default_factory=list)
    infrastructure_causes: dict[str, str] = field(default_factory=dict)
    audit_failures: list[str] = field(default_factory=list)
    claimed_elsewhere: list[str] = field(default_factory=list)
    recorded_elsewhere: int = 0

    @property
    def missing(self) -> int:
        """Cases still without a record after this invocation."""
        return self.total - self.already_done - self.completed_now - self.recorded_elsewhere

    def cause_summary(self) -> dict[str, int]:
        """How many cases failed for each (last) infrastructure cause."""
        counts: dict[str, int] = {}
        for cause in self.infrastructure_causes.values():
            counts[cause] = counts.get(cause, 0) + 1
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


def short_cause(error: str) -> str:
    """A short cause for display: the message without the endpoint URL prefix."""
    head = error.splitlines()[0] if error else "unknown"
    if head.startswith(("http://", "https://")) and ": " in head:
        head = head.split(": ", 1)[1]
    return head[:120]


@dataclass
class ClaimBlocks:
    """How many cases the next claim covers (see :data:`CLAIM_SPAN_S`)."""

    smallest: int
    largest: int
    size: int = 0
    last: float | None = None

    def next_size(self, now: float) -> int:
        """The size of the claim made at ``now`` (monotonic seconds)."""
        if self.last is None:
            self.size = self.smallest
        elif now - self.last < CLAIM_SPAN_S:
            self.size = min(self.size * 2, self.largest)
        elif now - self.last > 2 * CLAIM_SPAN_S:
            self.size = max(self.size // 2, self.smallest)
        self.last = now
        return self.size


class RunOrchestrator:
    """Runs the pending cases of one run against one reviewer."""

    def __init__(self, run_id: str, reviewer: Reviewer, store: RecordStore, *,
                 enforcer: Enforcer | None = None, concurrency: int = 4,
                 infra_retries: int = 3, backoff_s: float = 0.5, lease_s: float = 3600.0,
                 record_process: bool | None = None) -> None:
        self.run_id = run_id
        self.reviewer = reviewer
        self.store = store
        self.enforcer = enforcer
        self.concurrency = concurrency
        self.infra_retries = infra_retries
        self.backoff_s = backoff_s
        self.lease_s = lease_s
        #: Build and store records in a records process (None: when the run is long enough;
        #: see :mod:`authpairs.runs.record_process`).
        self.record_process = record_process
        self.on_retry: Callable[[str, str], None] | None = None
        #: Leave parsing to the records process (set per run: no enforcement point needs the
        #: decision, and the reviewer's parser can travel).
        self.parse_later = False

    def _retry_delay(self, number: int, exc: TransportError) -> float:
        delay: float = self.backoff_s * 2.0 ** (number - 1)
        if exc.retry_after is not None:
            delay = max(delay, min(exc.retry_after, MAX_RETRY_AFTER_S))
        return delay

    async def review_case(self, case: Case, request: ChatRequest | None = None, *,
                          request_known: bool = False) -> Review:
        """Review one case: render, ask (retrying transport failures), parse (unless the records
        process does: :attr:`parse_later`), and enforce where there is an enforcement point. The
        review has no response when every attempt failed in transport. ``request`` is the case
        rendered already, if it was (``request_known``: by the records process, which keeps
        it)."""
        review = Review(request if request is not None else self.reviewer.render(case.public),
                        request_known=request_known)
        for number in range(1, self.infra_retries + 2):
            started = time.perf_counter()
            try:
                response = await self.reviewer.answer(review.request)
            except TransportError as exc:
                review.attempts.append(Attempt(number, time.perf_counter() - started, str(exc)))
                if number <= self.infra_retries:
                    delay = self._retry_delay(number, exc)
                    cause = short_cause(str(exc))
                    log.warning("case %s: attempt %d failed (%s); retrying in %.1f s",
                                case.case_id, number, cause, delay)
                    if self.on_retry is not None:
                        self.on_retry(case.case_id, cause)
                    await asyncio.sleep(delay)
                continue
            review.attempts.append(Attempt(number, time.perf_counter() - started))
            # The formal attempt is built from this response, whatever the parser makes of it.
            review.response = response
            if self.parse_later:  # only where no enforcement point needs the decision
                return review
            review.outcome = outcome = safe_parse(self.reviewer, response)
            if self.enforcer is not None and case.public.effect is not None:
                # Decision-only cases (native track) carry no effect and are not enforced.
                review.effect = self.enforcer.enforce(case.case_id, case.public.effect,
                                                      outcome.dispatch)
            return review
        return review

    def _portable_interface(self) -> ReviewInterface | None:
        """The reviewer's interface, when it can travel to a records process (which then
        renders and may parse there)."""
        if not isinstance(self.reviewer, ModelReviewer):
            return None
        interface = self.reviewer.portable_interface()
        return interface if record_process.portable(interface) else None

    def _record_writer(self, pending: list[Case], on_stored: Callable[[str, bool], None],
                       batch_size: int) -> RecordWriter | record_process.RecordProcess:
        """The writer that stores this run's records: a started records process where the run
        wants one and one can start (then :attr:`parse_later` says whether it parses too),
        otherwise a :class:`RecordWriter` in this process."""
        self.parse_later = False
        separate = self.record_process
        if separate is None:
            separate = record_process.wanted(len(pending))
        if separate and pending:
            interface = self._portable_interface()
            # It parses there when no enforcement point needs the decision first.
            parser = interface if self.enforcer is None else None
            writer = record_process.RecordProcess(self.store.path, self.run_id, pending,
                                                  on_stored, batch_size=batch_size,
                                                  parser=parser, renderer=interface)
            try:
                writer.start()
            except OSError as exc:
                log.warning("no records process (%s): this process stores the records", exc)
            else:
                self.parse_later = parser is not None
                return writer
        return RecordWriter(
            self.store, on_stored, batch_size=batch_size,
            build=lambda index, review: self._answered_records(pending[index], review))

    def _answered_records(self, case: Case, review: Review
                          ) -> tuple[CaseRecord, list[AttemptRecord]]:
        record, attempts = self.records_of(case, review)
        assert record is not None, "only answered reviews are stored as cases"
        return record, attempts

    def records_of(self, case: Case, review: Review
                   ) -> tuple[CaseRecord | None, list[AttemptRecord]]:
        """The records of one review (see :func:`~authpairs.runs.reviewed.build_records`)."""
        return build_records(self.run_id, case, review, self.reviewer)

    async def run(self, cases: list[Case], *, show_progress: bool = True,
                  progress: ProgressDisplay | None = None) -> RunProgress:
        """Review every case of ``cases`` that has no record yet (and is not claimed by another
        live process working on the same run). ``progress`` shows it (default: a rich bar when
        ``show_progress``, otherwise nothing)."""
        done = self.store.done_case_ids(self.run_id)
        pending = [c for c in cases if c.case_id not in done]
        state = RunProgress(self.run_id, total=len(cases), already_done=len(cases) - len(pending))
        display: ProgressDisplay = progress if progress is not None else (
            RichProgress() if show_progress else SilentProgress())

        def on_retry(case_id: str, cause: str) -> None:
            display.note(f"retrying {case_id}: {cause}")

        self.on_retry = on_retry

        audit_failed: set[str] = set()  # enforced cases whose effect audit failed

        def on_stored(case_id: str, stored: bool) -> None:
            if not stored:  # another process on the same run recorded it first
                state.recorded_elsewhere += 1
            else:
                state.completed_now += 1
                display.note(None)
                if case_id in audit_failed:
                    state.audit_failures.append(case_id)
            display.advance()

        largest = max(self.concurrency, MIN_BATCH)  # a record batch, and the largest claim
        writer = self._record_writer(pending, on_stored, largest)
        unclaimed = iter(enumerate(pending))
        claimed: deque[tuple[int, Case, ChatRequest, bool]] = deque()
        blocks = ClaimBlocks(self.concurrency, largest)

        def request_for(index: int, case: Case) -> tuple[int, Case, ChatRequest, bool]:
            """A claimed case with its request: rendered ahead by the records process where
            that is ready, otherwise here."""
            request = writer.rendered(index)
            if request is not None:
                return index, case, request, True
            return index, case, self.reviewer.render(case.public), False

        def next_case() -> tuple[int, Case, ChatRequest, bool] | None:
            """The next case this process holds a claim on; claims a block of cases (see
            :class:`ClaimBlocks`) in one transaction whenever the held ones are handed out."""
            while not claimed:
                size = blocks.next_size(time.monotonic())
                block = list(itertools.islice(unclaimed, size))
                if not block:
                    return None
                held = set(self.store.claim_many(self.run_id, [c.case_id for _, c in block],
                                                 self.lease_s))
                # Rendered together, right after the claim: one pass over the templates for the
                # whole block costs less than one per case between network calls.
                claimed.extend(request_for(index, case) for index, case in block
                               if case.case_id in held)
                if len(held) < len(block):
                    recorded = self.store.done_case_ids(self.run_id)
                    for _, case in block:
                        if case.case_id in recorded:
                            state.recorded_elsewhere += 1
                        elif case.case_id not in held:
                            state.claimed_elsewhere.append(case.case_id)
                        else:
                            continue
                        display.advance()
            return claimed.popleft()

        async def worker() -> None:
            while (item := next_case()) is not None:
                index, case, request, known = item
                review = await self.review_case(case, request, request_known=known)
                if review.effect is not None and not review.effect.audit_ok:
                    audit_failed.add(case.case_id)
                if review.response is not None:
                    writer.add_review(index, review)
                    continue
                _, attempts = self.records_of(case, review)
                self.store.add_attempts(attempts)
                self.store.release(self.run_id, case.case_id)
                state.infrastructure_failed.append(case.case_id)
                state.infrastructure_causes[case.case_id] = short_cause(
                    review.attempts[-1].error or "")
                display.advance()

        display.start(self.run_id, len(cases), state.already_done)
        flusher = asyncio.ensure_future(writer.flush_when_due())
        workers = [asyncio.ensure_future(worker()) for _ in range(max(1, self.concurrency))]
        reviewing = asyncio.gather(*workers)

        def stop_if_storing_failed(task: asyncio.Future[None]) -> None:
            if not task.cancelled() and task.exception() is not None:
                reviewing.cancel()  # a batch could not be stored: the run stops

        flusher.add_done_callback(stop_if_storing_failed)
        try:
            try:
                await reviewing
            except asyncio.CancelledError:
                failure = flusher.exception() if flusher.done() and not flusher.cancelled() \
                    else None
                if failure is not None:
                    raise failure from None
                raise
        finally:
            for task in (*workers, flusher):  # on an error, the other workers stop too
                task.cancel()
            try:
                writer.finish()  # what finished is stored, even when the run stops on an error
            finally:
                try:  # what is still claimed was not recorded: free it for the next invocation
                    self.store.release_all(self.run_id)
                finally:
                    display.close()
        return state
