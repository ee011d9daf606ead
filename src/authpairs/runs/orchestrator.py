"""Async orchestration of one run: bounded concurrency, one formal attempt per case, resume.

``concurrency`` workers in one :class:`asyncio.TaskGroup` share one iterator of claimed cases
(:func:`~authpairs.runs.claims.claimed_cases`: only cases without a record, claimed so that a
second process on the same run never reviews them too). Each worker reviews its case with the
run's :class:`~authpairs.runs.case_runner.CaseRunner` (render, ask within the deadline, retry
*transport* failures only, parse, enforce) and hands the records (``build_records``) to the
:class:`~authpairs.runs.writer.RecordWriter`, which stores each case record with its attempts
atomically, in batches. A case whose transport failures exhaust the retries gets no case record
(its attempts are stored, its claim freed) -- it is never scored as a decision -- and a later
re-run of the same command tries it again.
When the run stops, the claims it still holds are freed.

Retries are shown on the progress line and logged (logger ``authpairs.runs``) without flooding:
the first failure of each cause, then counts (:class:`~authpairs.runs.retry.FailureLog`).
When every endpoint of the reviewer is down (its circuit breakers opened:
:class:`~authpairs.backends.base.EndpointDownError`), the run stops: what finished is stored,
the claims are freed, and :attr:`RunProgress.stopped` says why; the same command resumes it.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import authpairs.main_job as main_job
from authpairs.backends.base import EndpointDownError
from authpairs.cases.dataset import CaseSource, Dataset
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.errors import error_message
from authpairs.review.reviewers import Reviewer
from authpairs.runs.case_runner import CaseRunner, short_cause
from authpairs.runs.claims import ClaimBlocks, claimed_cases
from authpairs.runs.progress import ProgressDisplay, RichProgress, SilentProgress
from authpairs.runs.reviewed import build_records
from authpairs.runs.store import RecordStore
from authpairs.runs.writer import RecordWriter

#: Finished cases are stored in batches of at least this many (more when the concurrency is
#: higher); a batch that does not fill is stored after the writer's delay
#: (:data:`~authpairs.runs.writer.DEFAULT_MAX_DELAY_S`) all the same.
#: It is also the largest claim (:class:`~authpairs.runs.claims.ClaimBlocks`).
MIN_BATCH = 64


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
    #: run and wrote every entry of its chain itself (``RecordStore.written_chains``), else None.
    written_chain: tuple[str, int] | None = None

    @property
    def missing(self) -> int:
        """Cases still without a record after this invocation."""
        return self.total - self.already_done - self.completed_now - self.recorded_elsewhere

    def cause_summary(self) -> dict[str, int]:
        """How many cases failed for each (last) infrastructure cause."""
        counts = Counter(self.infrastructure_causes.values())
        return dict(sorted(counts.items(), key=lambda kv: (-kv[1], kv[0])))


class RunOrchestrator:
    """Runs the pending cases of one run against one reviewer (see the module docstring).

    ``deadline_s`` bounds each attempt to ask the reviewer (None: no deadline).
    """

    def __init__(self, run_id: str, reviewer: Reviewer, store: RecordStore, *,
                 enforcer: Enforcer | None = None, concurrency: int = main_job.CONCURRENCY,
                 infra_retries: int = main_job.INFRA_RETRIES, lease_s: float = 3600.0,
                 deadline_s: float | None = None) -> None:
        self.run_id = run_id
        self.store = store
        self.concurrency = max(1, concurrency)
        self.lease_s = lease_s
        self.runner = CaseRunner(reviewer, enforcer=enforcer, deadline_s=deadline_s,
                                 infra_retries=infra_retries)

    async def run(self, cases: CaseSource | Sequence[Case], *,
                  progress: bool | ProgressDisplay = True) -> RunProgress:
        """Review every case of ``cases`` that has no record yet (and is not claimed by another
        live process working on the same run). The cases are read as the run goes (a
        :class:`~authpairs.cases.case_file.CaseFile` from its file). ``progress`` shows it
        (True: a rich bar, False: nothing)."""
        if isinstance(cases, Sequence):  # a plain list of cases
            cases = Dataset("cases", list(cases))
        done = self.store.done_case_ids(self.run_id)
        ids = cases.case_ids()
        books = _Books(RunProgress(self.run_id, total=len(ids),
                                   already_done=sum(1 for i in ids if i in done)),
                       progress if not isinstance(progress, bool)
                       else RichProgress() if progress else SilentProgress())
        del ids
        self.runner.on_retry = books.retrying
        largest = max(self.concurrency, MIN_BATCH)
        writer = RecordWriter(self.store, books.stored, batch_size=largest)
        claims = claimed_cases(self.store, self.run_id,
                               (c for c in cases if c.case_id not in done),
                               ClaimBlocks(self.concurrency, largest), self.lease_s, books.skipped)

        books.display.start(self.run_id, books.state.total, books.state.already_done)
        try:
            async with asyncio.TaskGroup() as group:
                flusher = group.create_task(writer.flush_when_due())
                await asyncio.wait([group.create_task(self._work(claims, writer, books))
                                    for _ in range(self.concurrency)])
                flusher.cancel()
        except BaseExceptionGroup as failures:  # a failing worker or flusher stops them all
            books.state.stopped = _stop_reason(failures)
        finally:
            self.runner.failures.flush()
            try:
                writer.flush()  # what finished is stored, even when the run stops on an error
            finally:
                try:  # what is still claimed was not recorded: free it for the next invocation
                    self.store.release_all(self.run_id)
                finally:
                    books.display.close()
        return books.state

    async def _work(self, claims: Iterator[Case], writer: RecordWriter, books: _Books) -> None:
        """One worker: review claimed cases until there are none left and hand the records of
        each to the writer (a case whose retries ran out: its attempts only, and no record)."""
        for case in claims:
            review = await self.runner.review(case)
            try:  # one turn of the loop before the records: a reviewer that never
                await asyncio.sleep(0)  # suspends (a baseline) must not hold it all run
            finally:  # a run stopped at that turn still stores the answer it received
                if review.effect is not None and not review.effect.audit_ok:
                    books.audit_failed.add(case.case_id)
                record, attempts = build_records(self.run_id, case, review)
                writer.add(record, attempts)
                if record is None:
                    books.infrastructure_failed(case.case_id, review.attempts[-1].error or "")


@dataclass
class _Books:
    """What a run keeps count of as cases are stored, skipped or failed, and shows."""

    state: RunProgress
    display: ProgressDisplay
    audit_failed: set[str] = field(default_factory=set)  # enforced cases whose audit failed

    def retrying(self, case_id: str, cause: str) -> None:
        self.display.note(f"retrying {case_id}: {cause}")

    def stored(self, case_id: str, stored: bool) -> None:
        if not stored:  # another process on the same run recorded it first
            self.state.recorded_elsewhere += 1
        else:
            self.state.completed_now += 1
            self.display.note(None)
            if case_id in self.audit_failed:
                self.audit_failed.discard(case_id)
                self.state.audit_failures.append(case_id)
        self.display.advance()

    def skipped(self, case_id: str, recorded: bool) -> None:
        if recorded:
            self.state.recorded_elsewhere += 1
        else:
            self.state.claimed_elsewhere.append(case_id)
        self.display.advance()

    def infrastructure_failed(self, case_id: str, error: str) -> None:
        self.state.infrastructure_failed.append(case_id)
        self.state.infrastructure_causes[case_id] = short_cause(error)
        self.display.advance()


def _stop_reason(failures: BaseExceptionGroup[BaseException]) -> str:
    """Why the run stopped when every failure is an endpoint that is down; any other failure
    (a batch that could not be stored, a non-retryable backend error) is raised as it is."""
    for failure in failures.exceptions:
        if not isinstance(failure, EndpointDownError):
            raise failure
    return error_message(failures.exceptions[0])
