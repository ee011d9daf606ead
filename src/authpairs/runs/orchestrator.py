"""Async orchestration of one run: bounded concurrency, one formal attempt per case, resume.

For each case that has no record yet in the run: claim it (so a second process on the same run
never reviews it too; claims are taken a block of cases per transaction, ``concurrency`` cases
or more when cases finish fast), render the public case, ask the reviewer, retry *transport*
failures only (recorded as infrastructure attempts, honouring a bounded ``Retry-After``), copy
the raw output into the formal attempt, parse it (a parser that raises still yields an
*unavailable* outcome), dispatch it to the enforcement point (if any), and store the case record
with its attempts atomically (finished cases are stored in batches by
:class:`~authpairs.runs.writer.RecordWriter`, one transaction per batch). A case whose transport
failures exhaust the retries gets no case record -- it is never scored as a decision -- and a
later re-run of the same command tries it again.

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

from authpairs.backends.base import ChatResponse, TransportError
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.review.outcome import ReasonCode, ReviewOutcome
from authpairs.review.reviewers import Reviewer
from authpairs.runs.progress import ProgressDisplay, RichProgress, SilentProgress
from authpairs.runs.records import AttemptRecord, CaseRecord
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


def _attempt(run_id: str, case_id: str, number: int, kind: str, input_sha: str,
             started: float, **fields: object) -> AttemptRecord:
    return AttemptRecord(run_id=run_id, case_id=case_id, attempt_no=number, kind=kind,
                         input_sha256=input_sha, latency_s=time.perf_counter() - started,
                         **fields)  # type: ignore[arg-type]


def short_cause(error: str) -> str:
    """A short cause for display: the message without the endpoint URL prefix."""
    head = error.splitlines()[0] if error else "unknown"
    if head.startswith(("http://", "https://")) and ": " in head:
        head = head.split(": ", 1)[1]
    return head[:120]


def safe_parse(reviewer: Reviewer, response: ChatResponse) -> ReviewOutcome:
    """The reviewer's parse; anything it raises is an *unavailable* outcome, never a crash."""
    try:
        return reviewer.parse(response)
    except Exception as exc:  # parsers must not raise; this is the last line of defence
        return ReviewOutcome.unavailable(ReasonCode.PARSER_ERROR,
                                         f"parser raised {type(exc).__name__}")


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
                 on_case: Callable[[CaseRecord], None] | None = None) -> None:
        self.run_id = run_id
        self.reviewer = reviewer
        self.store = store
        self.enforcer = enforcer
        self.concurrency = concurrency
        self.infra_retries = infra_retries
        self.backoff_s = backoff_s
        self.lease_s = lease_s
        self.on_case = on_case
        self.on_retry: Callable[[str, str], None] | None = None

    def _retry_delay(self, number: int, exc: TransportError) -> float:
        delay: float = self.backoff_s * 2.0 ** (number - 1)
        if exc.retry_after is not None:
            delay = max(delay, min(exc.retry_after, MAX_RETRY_AFTER_S))
        return delay

    async def review_case(self, case: Case) -> tuple[CaseRecord | None, list[AttemptRecord]]:
        """Review one case: returns its record (None if infrastructure failed) and attempts."""
        request = self.reviewer.render(case.public)
        input_sha = request.sha256()
        attempts: list[AttemptRecord] = []
        for number in range(1, self.infra_retries + 2):
            started = time.perf_counter()
            try:
                response = await self.reviewer.answer(request)
            except TransportError as exc:
                attempts.append(_attempt(self.run_id, case.case_id, number, "infrastructure",
                                         input_sha, started, error=str(exc)))
                if number <= self.infra_retries:
                    delay = self._retry_delay(number, exc)
                    cause = short_cause(str(exc))
                    log.warning("case %s: attempt %d failed (%s); retrying in %.1f s",
                                case.case_id, number, cause, delay)
                    if self.on_retry is not None:
                        self.on_retry(case.case_id, cause)
                    await asyncio.sleep(delay)
                continue
            # The raw output is copied into the formal attempt before the parser sees it.
            attempts.append(_attempt(
                self.run_id, case.case_id, number, "formal", input_sha, started,
                output_text=response.text, reasoning_text=response.reasoning,
                finish_reason=response.finish_reason, input_tokens=response.input_tokens,
                output_tokens=response.output_tokens, reasoning_tokens=response.reasoning_tokens))
            outcome = safe_parse(self.reviewer, response)
            effect = None
            if self.enforcer is not None and case.public.effect is not None:
                # Decision-only cases (native track) carry no effect and are not enforced.
                effect = self.enforcer.enforce(case.case_id, case.public.effect, outcome.dispatch)
            record = CaseRecord.from_review(self.run_id, case, input_sha, outcome, response,
                                            effect, infra_attempts=number - 1)
            return record, attempts
        return None, attempts

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

        def on_stored(record: CaseRecord, stored: bool) -> None:
            if not stored:  # another process on the same run recorded it first
                state.recorded_elsewhere += 1
            else:
                state.completed_now += 1
                display.note(None)
                if record.effect is not None and not record.effect.audit_ok:
                    state.audit_failures.append(record.case_id)
                if self.on_case is not None:
                    self.on_case(record)
            display.advance()

        largest = max(self.concurrency, MIN_BATCH)  # a record batch, and the largest claim
        writer = RecordWriter(self.store, on_stored, batch_size=largest)
        unclaimed = iter(pending)
        claimed: deque[Case] = deque()
        blocks = ClaimBlocks(self.concurrency, largest)

        def next_case() -> Case | None:
            """The next case this process holds a claim on; claims a block of cases (see
            :class:`ClaimBlocks`) in one transaction whenever the held ones are handed out."""
            while not claimed:
                size = blocks.next_size(time.monotonic())
                block = list(itertools.islice(unclaimed, size))
                if not block:
                    return None
                held = set(self.store.claim_many(self.run_id, [c.case_id for c in block],
                                                 self.lease_s))
                claimed.extend(c for c in block if c.case_id in held)
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

        async def worker() -> None:
            while (case := next_case()) is not None:
                record, attempts = await self.review_case(case)
                if record is not None:
                    writer.add(record, attempts)
                    continue
                self.store.add_attempts(attempts)
                self.store.release(self.run_id, case.case_id)
                state.infrastructure_failed.append(case.case_id)
                last = next((a.error for a in reversed(attempts) if a.error), None)
                state.infrastructure_causes[case.case_id] = short_cause(last or "")
                display.advance()

        display.start(self.run_id, len(cases), state.already_done)
        flusher = asyncio.ensure_future(writer.flush_when_due())
        workers = [asyncio.ensure_future(worker()) for _ in range(max(1, self.concurrency))]
        try:
            await asyncio.gather(*workers)
        finally:
            for task in (*workers, flusher):  # on an error, the other workers stop too
                task.cancel()
            try:
                writer.flush()  # what finished is stored, even when the run stops on an error
            finally:
                display.close()
        return state
