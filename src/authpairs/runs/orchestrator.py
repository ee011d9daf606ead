"""Async orchestration of one run: bounded concurrency, one formal attempt per case, resume.

For each case that has no record yet in the run: claim it (so a second process on the same run
never reviews it too; claims are taken a block of cases per transaction, ``concurrency`` cases
or more when cases finish fast), review it with the run's
:class:`~authpairs.runs.case_runner.CaseRunner` (render, ask within the deadline, retry
*transport* failures only, parse, enforce), and hand its records to the
:class:`~authpairs.runs.writer.RecordWriter`, which stores each case record with its attempts
atomically, in batches. A case whose transport failures exhaust the retries gets no case record
-- it is never scored as a decision -- and a later re-run of the same command tries it again.
When the run stops, the claims it still holds are freed.

Retries are shown on the progress line and logged (logger ``authpairs.runs``) without flooding:
the first failure of each cause, then counts (:class:`~authpairs.runs.failure_log.FailureLog`).
When every endpoint of the reviewer is down (its circuit breakers opened:
:class:`~authpairs.backends.breaker.EndpointDownError`), the run stops: what finished is stored,
the claims are freed, and :attr:`RunProgress.stopped` says why; the same command resumes it.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from collections import deque
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

from authpairs.backends.breaker import EndpointDownError
from authpairs.cases.dataset import CaseSource, Dataset
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.errors import error_message
from authpairs.review.reviewers import Reviewer
from authpairs.runs.case_runner import CaseRunner, short_cause
from authpairs.runs.progress import ProgressDisplay, RichProgress, SilentProgress
from authpairs.runs.reviewed import Review, build_records
from authpairs.runs.store import RecordStore
from authpairs.runs.writer import RecordWriter

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
    #: Facts about how the run went that a user should see (e.g. a cap on requests in flight).
    notes: list[str] = field(default_factory=list)
    #: Why the run stopped before its cases were done (every endpoint down), else None: the
    #: error's message and hint.
    stopped: str | None = None
    #: The chain head and length this invocation left in the run header when it created the
    #: run and wrote every entry of its chain itself (``RecordStore.written_chain``), else None.
    written_chain: tuple[str, int] | None = None

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
    """Runs the pending cases of one run against one reviewer (see the module docstring).

    ``deadline_s`` bounds each attempt to ask the reviewer (None: no deadline).
    """

    def __init__(self, run_id: str, reviewer: Reviewer, store: RecordStore, *,
                 enforcer: Enforcer | None = None, concurrency: int = 4,
                 infra_retries: int = 3, backoff_s: float = 0.5, lease_s: float = 3600.0,
                 deadline_s: float | None = None) -> None:
        self.run_id = run_id
        self.store = store
        self.concurrency = concurrency
        self.lease_s = lease_s
        self.runner = CaseRunner(reviewer, enforcer=enforcer, deadline_s=deadline_s,
                                 infra_retries=infra_retries, backoff_s=backoff_s)

    async def run(self, cases: CaseSource | Sequence[Case], *, show_progress: bool = True,
                  progress: ProgressDisplay | None = None) -> RunProgress:
        """Review every case of ``cases`` that has no record yet (and is not claimed by another
        live process working on the same run). The cases are read as the run goes (a
        :class:`~authpairs.cases.case_file.CaseFile` from its file). ``progress`` shows it
        (default: a rich bar when ``show_progress``, otherwise nothing)."""
        if isinstance(cases, Sequence):  # a plain list of cases
            cases = Dataset("cases", list(cases))
        ids = cases.case_ids()
        done = self.store.done_case_ids(self.run_id)
        already_done = sum(1 for case_id in ids if case_id in done)
        state = RunProgress(self.run_id, total=len(ids), already_done=already_done)
        del ids
        display: ProgressDisplay = progress if progress is not None else (
            RichProgress() if show_progress else SilentProgress())
        self.runner.on_retry = lambda case_id, cause: display.note(
            f"retrying {case_id}: {cause}")

        audit_failed: set[str] = set()  # enforced cases whose effect audit failed

        def on_stored(case_id: str, stored: bool) -> None:
            if not stored:  # another process on the same run recorded it first
                state.recorded_elsewhere += 1
            else:
                state.completed_now += 1
                display.note(None)
                if case_id in audit_failed:
                    audit_failed.discard(case_id)
                    state.audit_failures.append(case_id)
            display.advance()

        largest = max(self.concurrency, MIN_BATCH)  # a record batch, and the largest claim
        writer = RecordWriter(self.store, on_stored, batch_size=largest)
        unclaimed: Iterator[Case] = (c for c in cases if c.case_id not in done)
        claimed: deque[Case] = deque()
        blocks = ClaimBlocks(self.concurrency, largest)

        def next_case() -> Case | None:
            """The next case this process holds a claim on; claims a block of cases (see
            :class:`ClaimBlocks`) in one transaction whenever the held ones are handed out."""
            while not claimed:
                block = list(itertools.islice(unclaimed, blocks.next_size(time.monotonic())))
                if not block:
                    return None
                held = set(self.store.claim_many(self.run_id, [c.case_id for c in block],
                                                 self.lease_s))
                claimed.extend(case for case in block if case.case_id in held)
                if len(held) < len(block):
                    recorded = self.store.done_case_ids(self.run_id)
                    for case in block:
                        if case.case_id in recorded:
                            state.recorded_elsewhere += 1
                        elif case.case_id not in held:
                            state.claimed_elsewhere.append(case.case_id)
                        else:
                            continue
                        display.advance()
            return claimed.popleft()

        def record_review(case: Case, review: Review) -> None:
            """Hand the review of ``case`` to the writer (or store its failed attempts)."""
            if review.effect is not None and not review.effect.audit_ok:
                audit_failed.add(case.case_id)
            record, attempts = build_records(self.run_id, case, review)
            if record is not None:
                writer.add(record, attempts)
                return
            self.store.add_attempts(attempts)
            self.store.release(self.run_id, case.case_id)
            state.infrastructure_failed.append(case.case_id)
            state.infrastructure_causes[case.case_id] = short_cause(
                review.attempts[-1].error or "")
            display.advance()

        async def worker() -> None:
            while (case := next_case()) is not None:
                review = await self.runner.review(case)
                try:
                    # One turn of the event loop for the others before this case's records
                    # are made: a reviewer that answers without suspending (a baseline) would
                    # otherwise hold the loop until the run ends (the other workers and the
                    # flusher waiting, every attempt's cancelled deadline timer left in the
                    # loop's queue), and the answers that came in with this one are read first.
                    await asyncio.sleep(0)
                finally:  # a run stopped at that turn still stores the answer it received
                    record_review(case, review)

        display.start(self.run_id, state.total, state.already_done)
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
            except EndpointDownError as exc:  # the other workers stop in the finally below
                state.stopped = error_message(exc)
        finally:
            self.runner.failures.flush()
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
