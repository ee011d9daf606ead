"""The enforcement point of agent mode: each tool call reviewed, enforced and recorded.

An :class:`AgentSession` is one run (one ``authpairs mcp serve`` process). A tool call for a
case becomes the case with its effect descriptor replaced by the call (the call the agent
actually proposed); the configured reviewer reviews that through the same
:class:`~authpairs.runs.case_runner.CaseRunner` as ``authpairs run``, ALLOW executes it in the
sandbox and the verifier judges what was executed.

What is recorded, in the run's records file:

* every call: an :class:`~authpairs.runs.records.AgentCall` (``agent_calls`` table), stored as
  the call finishes, and the reviewer's attempts for it (the ``attempts`` table, numbered on
  across the calls of the case);
* one case record per case that had a reviewed call (one the reviewer answered), stored when
  the session closes: the review of its :func:`~authpairs.runs.records.decisive` call, the
  first that went through (executed, or ALLOW when nothing is enforced), else the last reviewed
  -- so the case record says whether the stack let an operation through for the case. A case
  without a reviewed call has no case record; its calls (if any) say why.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field
from typing import Any

from authpairs.agent.tools import proposal_of, proposed_descriptor
from authpairs.backends.base import EndpointDownError
from authpairs.cases.dataset import Dataset
from authpairs.cases.effect_types import descriptor_problems
from authpairs.cases.models import Case, EffectDescriptor
from authpairs.errors import BackendError, ReviewerError
from authpairs.review.outcome import Dispatch, OutcomeStatus
from authpairs.runs.case_runner import CaseRunner
from authpairs.runs.records import (
    AgentCall,
    CallResult,
    CaseRecord,
    decisive,
    stored_json,
)
from authpairs.runs.reviewed import build_records
from authpairs.runs.store import RecordStore

log = logging.getLogger("authpairs.agent")


@dataclass
class _CaseState:
    """What the session holds for one case: its calls, attempt counter, reviews by call."""

    calls: list[AgentCall] = field(default_factory=list)
    attempts: int = 0
    reviews: dict[int, CaseRecord] = field(default_factory=dict)


class AgentSession:
    """Reviews, enforces and records the tool calls of one run (see the module docstring).

    Calls are handled one at a time (the enforcer takes one case at a time, and the call
    numbers follow the order the calls arrived in).
    """

    def __init__(self, run_id: str, cases: Dataset, runner: CaseRunner,
                 store: RecordStore) -> None:
        self.run_id = run_id
        self.cases = cases.by_id()
        self.runner = runner
        self.store = store
        self._state = {case_id: _CaseState() for case_id in self.cases}
        self._lock = asyncio.Lock()
        self._closed = False
        #: Why the reviewer can no longer answer (its endpoints are down), else None: the agent
        #: runner stops after the case in progress.
        self.stopped: EndpointDownError | None = None

    async def call(self, case_id: str, tool: str, arguments: dict[str, Any] | None,
                   selected_by: str = "") -> AgentCall:
        """Handle one tool call for ``case_id``: review the proposed operation in the case's
        context, enforce the dispatch, record the call and its attempts; return the record (a
        KeyError when the session does not serve ``case_id``)."""
        case = self.cases[case_id]
        if self._closed:
            raise RuntimeError("the agent session is closed")
        async with self._lock:
            state = self._state[case_id]
            proposed = proposed_descriptor(tool, arguments)
            base: dict[str, Any] = {
                "run_id": self.run_id, "case_id": case_id, "call_no": len(state.calls) + 1,
                "selected_by": selected_by, "tool": tool, "arguments": proposed.params,
                "proposal": proposal_of(case.public.effect, proposed)}
            problems = descriptor_problems(proposed)
            if problems:
                call = AgentCall(**base, result=CallResult.INVALID,
                                 error="; ".join(f"{name}: {message}" if name else message
                                                 for name, message in problems))
            else:
                call = await self._review(case, proposed, state, base)
            state.calls.append(call)
            self.store.add_agent_call(self.run_id, case_id, call.call_no, stored_json(call))
            return call

    async def _review(self, case: Case, proposed: EffectDescriptor, state: _CaseState,
                      base: dict[str, Any]) -> AgentCall:
        """Review and enforce the proposed operation; store its attempts."""
        proposed_case = case.model_copy(
            update={"public": case.public.model_copy(update={"effect": proposed})})
        try:
            review = await self.runner.review(proposed_case)
        except (BackendError, ReviewerError) as exc:
            # A reviewer that cannot answer at all (a non-retryable backend error) stops an
            # 'authpairs run'; here the call is recorded as unavailable and the agent goes on,
            # to the end of the case when the reviewer's breaker opened (every call fails).
            if isinstance(exc, EndpointDownError):
                self.stopped = exc
            log.warning("case %s, call %d: reviewer %s: %s", case.case_id, base["call_no"],
                        "down" if exc is self.stopped else "failed", exc)
            return AgentCall(**base, result=CallResult.UNAVAILABLE, error=str(exc)[:500])
        record, attempts = build_records(self.run_id, proposed_case, review)
        numbered = [attempt.model_copy(update={"attempt_no": state.attempts + index})
                    for index, attempt in enumerate(attempts, start=1)]
        state.attempts += len(numbered)
        self.store.add_attempts(numbered)
        outcome = review.outcome
        if record is None or outcome is None:  # every attempt failed in transport
            errors = [a.error for a in numbered if a.error]
            return AgentCall(**base, result=CallResult.UNAVAILABLE, infra_attempts=len(numbered),
                             input_sha256=review.request.sha256(),
                             error=errors[-1] if errors else None)
        if outcome.status is OutcomeStatus.UNAVAILABLE:
            result = CallResult.UNAVAILABLE
        elif outcome.dispatch is Dispatch.BLOCK:
            result = CallResult.BLOCKED
        elif record.went_through:
            result = CallResult.EXECUTED if record.enforced else CallResult.ALLOWED
        else:
            result = CallResult.FAILED
        state.reviews[base["call_no"]] = record
        return AgentCall(**base, result=result, input_sha256=review.request.sha256(),
                         status=outcome.status, decision=outcome.decision,
                         reason_code=outcome.reason_code.value if outcome.reason_code else None,
                         dispatch=outcome.dispatch, infra_attempts=len(numbered) - 1,
                         effect=review.effect)

    def close(self) -> list[CaseRecord]:
        """Store each case's record (see the module docstring) and stop taking calls; returns
        the case records stored. Closing twice stores nothing the second time."""
        if self._closed:
            return []
        self._closed = True
        chosen = [state.reviews[call.call_no] for state in self._state.values()
                  if (call := decisive(state.calls)) is not None]
        stored = self.store.add_cases([(record, []) for record in chosen])
        return [record for record, ok in zip(chosen, stored, strict=True) if ok]
