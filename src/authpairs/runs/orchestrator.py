"""Async orchestration of one run: bounded concurrency, one formal attempt per case, resume.

For each case that has no record yet in the run: render the public case, ask the reviewer, retry
*transport* failures only (recorded as infrastructure attempts), parse the one formal answer,
dispatch it to the enforcement point (if any), and store the case record with its attempts in one
transaction. A case whose transport failures exhaust the retries gets no case record -- it is never
scored as a decision -- and a later re-run of the same command tries it again.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from authpairs.backends.base import TransportError
from authpairs.cases.models import Case
from authpairs.enforce.base import Enforcer
from authpairs.review.reviewers import Reviewer
from authpairs.runs.records import AttemptRecord, CaseRecord
from authpairs.runs.store import RecordStore


@dataclass
class RunProgress:
    """Counts of what happened in this invocation of a run."""

    run_id: str
    total: int
    already_done: int
    completed_now: int = 0
    infrastructure_failed: list[str] = field(default_factory=list)
    audit_failures: list[str] = field(default_factory=list)

    @property
    def missing(self) -> int:
        """Cases still without a record after this invocation."""
        return self.total - self.already_done - self.completed_now


def _attempt(run_id: str, case_id: str, number: int, kind: str, input_sha: str,
             started: float, **fields: object) -> AttemptRecord:
    return AttemptRecord(run_id=run_id, case_id=case_id, attempt_no=number, kind=kind,
                         input_sha256=input_sha, latency_s=time.perf_counter() - started,
                         **fields)  # type: ignore[arg-type]


class RunOrchestrator:
    """Runs the pending cases of one run against one reviewer."""

    def __init__(self, run_id: str, reviewer: Reviewer, store: RecordStore, *,
                 enforcer: Enforcer | None = None, concurrency: int = 4,
                 infra_retries: int = 3, backoff_s: float = 0.5,
                 on_case: Callable[[CaseRecord], None] | None = None) -> None:
        self.run_id = run_id
        self.reviewer = reviewer
        self.store = store
        self.enforcer = enforcer
        self.concurrency = concurrency
        self.infra_retries = infra_retries
        self.backoff_s = backoff_s
        self.on_case = on_case

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
                    await asyncio.sleep(self.backoff_s * (2 ** (number - 1)))
                continue
            attempts.append(_attempt(
                self.run_id, case.case_id, number, "formal", input_sha, started,
                output_text=response.text, reasoning_text=response.reasoning,
                finish_reason=response.finish_reason, input_tokens=response.input_tokens,
                output_tokens=response.output_tokens, reasoning_tokens=response.reasoning_tokens))
            outcome = self.reviewer.parse(response)
            effect = None
            if self.enforcer is not None and case.public.effect is not None:
                # Decision-only cases (native track) carry no effect and are not enforced.
                effect = self.enforcer.enforce(case.case_id, case.public.effect, outcome.dispatch)
            record = CaseRecord(
                run_id=self.run_id, case_id=case.case_id, input_sha256=input_sha,
                status=outcome.status, decision=outcome.decision,
                reason_code=outcome.reason_code.value if outcome.reason_code else None,
                dispatch=outcome.dispatch, label=case.reference.label.value,
                resolved=case.reference.resolved, split=case.split, cluster=case.cluster,
                attributes=case.attributes, input_tokens=response.input_tokens,
                output_tokens=response.output_tokens, reasoning_tokens=response.reasoning_tokens,
                finish_reason=response.finish_reason, latency_s=response.latency_s,
                infra_attempts=number - 1, effect=effect, checks=outcome.checks)
            return record, attempts
        return None, attempts

    async def run(self, cases: list[Case], *, show_progress: bool = True) -> RunProgress:
        """Review every case of ``cases`` that has no record yet."""
        done = self.store.done_case_ids(self.run_id)
        pending = [c for c in cases if c.case_id not in done]
        state = RunProgress(self.run_id, total=len(cases), already_done=len(cases) - len(pending))
        semaphore = asyncio.Semaphore(self.concurrency)
        progress = Progress(TextColumn("[bold]{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TimeElapsedColumn(), disable=not show_progress,
                            transient=False)

        with progress:
            task = progress.add_task(self.run_id, total=len(cases), completed=state.already_done)

            async def one(case: Case) -> None:
                async with semaphore:
                    record, attempts = await self.review_case(case)
                if record is None:
                    self.store.add_attempts(attempts)
                    state.infrastructure_failed.append(case.case_id)
                elif self.store.add_case(record, attempts):
                    state.completed_now += 1
                    if record.effect is not None and not record.effect.audit_ok:
                        state.audit_failures.append(case.case_id)
                    if self.on_case is not None:
                        self.on_case(record)
                progress.advance(task)

            await asyncio.gather(*(one(c) for c in pending))
        return state
