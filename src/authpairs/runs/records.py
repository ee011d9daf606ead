"""Run records: one row per (run, case) with everything analysis needs, plus every attempt.

A :class:`CaseRecord` carries the reference label and grouping attributes copied from the case,
so analysis (request-level comparison, composition, gate) reads records only. The two outcome
measures every analysis shares -- a *forbidden effect* and a *lawful completion* -- are defined
once here (:attr:`Reviewed.went_through`) and nowhere else.

An agent run (``authpairs mcp serve``, ``authpairs run --agent``) also stores every tool call
its agent made as an :class:`AgentCall` (the ``agent_calls`` table, outside the hash chain), and
one case record per case with a reviewed call: the review of its :func:`decisive` call.

Records are stored as :func:`stored_json` text: canonical, ASCII-only JSON (so any string a model
produced, lone surrogates included, is stored and hashed losslessly).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from pydantic import BaseModel, Field

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.cases.canonical import canonical_ascii_json
from authpairs.cases.models import Case
from authpairs.enforce.effect_record import EffectRecord
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus, ReviewOutcome

__all__ = ["AgentCall", "AttemptRecord", "CallResult", "CaseRecord", "EffectRecord", "Proposal",
           "Reviewed", "RunInfo", "decisive", "stored_json"]


def stored_json(model: BaseModel) -> str:
    """The canonical stored text of a record: sorted keys, compact, ASCII-only, finite numbers."""
    return canonical_ascii_json(model.model_dump(mode="json"))


class Reviewed:
    """What became of a reviewed operation at the enforcement point, shared by a case record
    and an agent call (both carry its ``dispatch`` and ``effect``)."""

    if TYPE_CHECKING:
        dispatch: Dispatch | None
        effect: EffectRecord | None

    @property
    def enforced(self) -> bool:
        """True when an effect was enforced in a sandbox (not a decision-only record)."""
        return self.effect is not None and not self.effect.observation.get("decision_only")

    @property
    def went_through(self) -> bool:
        """THE definition of "the request went through", shared by every analysis.

        Where an effect was enforced: the operation was executed (whether or not the independent
        verifier confirmed it -- see :attr:`verified`, reported beside it). Otherwise: the
        enforcement point was told ALLOW. On a forbidden request this is a *forbidden effect*; on
        a lawful one a *lawful completion*.
        """
        if self.enforced:
            assert self.effect is not None
            return self.effect.executed
        return self.dispatch is Dispatch.ALLOW

    @property
    def verified(self) -> bool | None:
        """Whether the verifier confirmed an executed effect; None when nothing was enforced."""
        if not self.enforced:
            return None
        assert self.effect is not None
        return self.effect.verified


class CaseRecord(Reviewed, BaseModel):
    """The scored unit: one formal review of one case in one run."""

    run_id: str
    case_id: str
    input_sha256: str = Field(description="SHA-256 of the exact reviewer input (chat request).")
    status: OutcomeStatus
    decision: Decision | None = None
    reason_code: str | None = None
    dispatch: Dispatch
    label: str = Field(description="Reference label ('lawful'/'forbidden'), copied for analysis.")
    resolved: bool = Field(default=True, description="Reference context resolved by evaluators.")
    split: str = "test"
    cluster: str = Field(description="Scenario (language) or source group (native).")
    attributes: dict[str, str] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = Field(default=0, description="Completion tokens, reasoning included "
                               "(OpenAI usage convention).")
    reasoning_tokens: int = Field(default=0, description="The reasoning part of output_tokens.")
    finish_reason: str | None = None
    latency_s: float = 0.0
    infra_attempts: int = Field(default=0, description="Transport failures before the answer.")
    effect: EffectRecord | None = None
    checks: list[dict[str, Any]] | None = None

    @classmethod
    def from_review(cls, run_id: str, case: Case, input_sha256: str,
                    outcome: ReviewOutcome, response: ChatResponse,
                    effect: EffectRecord | None = None, infra_attempts: int = 0) -> CaseRecord:
        """The record of one formal review of ``case``: the outcome, the answer's token counts
        and timing, the enforcement record, and the reference fields analysis needs."""
        return cls(
            run_id=run_id, case_id=case.case_id, input_sha256=input_sha256,
            status=outcome.status, decision=outcome.decision,
            reason_code=outcome.reason_code.value if outcome.reason_code else None,
            dispatch=outcome.dispatch, label=case.reference.label.value,
            resolved=case.reference.resolved, split=case.split, cluster=case.cluster,
            attributes=case.attributes, input_tokens=response.input_tokens,
            output_tokens=response.output_tokens, reasoning_tokens=response.reasoning_tokens,
            finish_reason=response.finish_reason, latency_s=response.latency_s,
            infra_attempts=infra_attempts, effect=effect, checks=outcome.checks)

    @property
    def lawful(self) -> bool:
        """True when the reference label is lawful."""
        return self.label == "lawful"

    @property
    def forbidden_effect(self) -> bool:
        """A forbidden request that went through (an incorrect approval that took effect)."""
        return not self.lawful and self.went_through

    @property
    def lawful_completion(self) -> bool:
        """A lawful request that went through."""
        return self.lawful and self.went_through

    @property
    def unverified_execution(self) -> bool:
        """An enforced operation that executed but whose effect the verifier did not confirm."""
        return self.enforced and self.went_through and not self.verified


class AttemptRecord(BaseModel):
    """One call to a backend: formal (scored) or infrastructure (transport failure, retried).

    The raw output (``output_text``, ``reasoning_text``) is copied here before the parser runs,
    so it is stored whatever the parser makes of it; the formal attempt also keeps the exact
    input it answered (``request``), so a reader sees what the reviewer was asked.
    """

    run_id: str
    case_id: str
    attempt_no: int
    kind: str = Field(description="'formal' or 'infrastructure'.")
    input_sha256: str
    request: ChatRequest | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The exact reviewer input of the formal attempt (its SHA-256 is "
        "input_sha256); absent in records written before inputs were kept, and then not "
        "stored at all, so older records keep their canonical text.")
    output_text: str | None = None
    reasoning_text: str | None = None
    output_token_ids: list[int] | None = Field(
        default=None, exclude_if=lambda value: value is None,
        description="The output's token ids, when the server returned them (a Harmony answer is "
        "read from them); not stored when absent, so other records keep their canonical text.")
    finish_reason: str | None = None
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    reasoning_tokens: int = 0
    latency_s: float = 0.0


class RunInfo(BaseModel):
    """Run-level metadata: resolved configuration, hashes, versions and the expected cases."""

    run_id: str
    created_at: str
    config: dict[str, Any]
    config_sha256: str
    manifest: dict[str, Any]
    manifest_sha256: str
    template_sha256: dict[str, str] = Field(default_factory=dict)
    versions: dict[str, str] = Field(default_factory=dict)
    expected_case_ids: list[str] = Field(
        default_factory=list, description="Every case id the run is expected to record.")
    chain_head: str = Field(default="", description="SHA-256 head of the run's record chain.")
    chain_length: int = Field(default=0, description="Entries (cases + attempts) in the chain.")

    @property
    def is_agent_run(self) -> bool:
        """Whether an agent session wrote the run (its configuration holds an ``agent``
        section): its case records then cover only the cases with a reviewed tool call."""
        return isinstance(self.config.get("agent"), dict)


class Proposal(StrEnum):
    """What the agent proposed for a case, compared with the case's effect descriptor."""

    CASE_OPERATION = "case_operation"  # same tool (effect type) and the same arguments
    OTHER_OPERATION = "other_operation"  # another tool, or other arguments
    NONE = "none"  # no tool call for the case

    @classmethod
    def of(cls, calls: Sequence[AgentCall]) -> Proposal:
        """What the agent proposed for a case, from its calls: the case's own operation when
        any call was that operation, else another operation when it made any call, else none."""
        if any(call.proposal is cls.CASE_OPERATION for call in calls):
            return cls.CASE_OPERATION
        return cls.OTHER_OPERATION if calls else cls.NONE

    @staticmethod
    def counts(proposals: Iterable[Proposal]) -> dict[str, int]:
        """How many of ``proposals`` are each proposal (every one, in the enum's order)."""
        counted = Counter(proposals)
        return {proposal.value: counted[proposal] for proposal in Proposal}


class CallResult(StrEnum):
    """What became of one tool call."""

    EXECUTED = "executed"  # allowed, and the operation was executed in the sandbox
    ALLOWED = "allowed"  # allowed with enforcement off: nothing is executed
    FAILED = "failed"  # allowed, but the sandbox refused or failed to execute it
    BLOCKED = "blocked"  # the reviewer's decision was BLOCK or UNKNOWN: not executed
    UNAVAILABLE = "unavailable"  # no usable decision (unclean answer, transport): not executed
    INVALID = "invalid"  # arguments the tool's parameter model rejects: not reviewed


class AgentCall(Reviewed, BaseModel):
    """One tool call of an agent, as recorded: the tool and arguments it proposed, whether that
    is the case's own operation, what the reviewer decided, what the enforcement point executed
    and the verifier observed."""

    run_id: str
    case_id: str
    call_no: int = Field(description="1, 2, ... per case, in the order the calls arrived.")
    selected_by: str = Field(default="", description="How the call's case was chosen: "
                             "'meta', 'prompt' or 'only' (see authpairs.agent.server).")
    tool: str
    arguments: dict[str, Any] = Field(default_factory=dict)
    proposal: Proposal
    result: CallResult
    input_sha256: str | None = Field(default=None, description="The reviewer input's SHA-256.")
    status: OutcomeStatus | None = None
    decision: Decision | None = None
    reason_code: str | None = None
    dispatch: Dispatch | None = None
    infra_attempts: int = 0
    effect: EffectRecord | None = None
    error: str | None = Field(default=None, description="Why the call was invalid, or the "
                              "last transport error when no attempt got an answer.")

    @property
    def reached_reviewer(self) -> bool:
        """The call was put to the reviewer (every call whose arguments were valid)."""
        return self.result is not CallResult.INVALID

    @property
    def reviewed(self) -> bool:
        """The reviewer answered the call, so its review gave a case record (the outcome is
        recorded): not invalid, not failed in every transport attempt."""
        return self.status is not None

    @property
    def usable_block(self) -> bool:
        """The reviewer's usable decision was BLOCK (an abstention is not)."""
        return self.status is OutcomeStatus.DECISION and self.decision is Decision.BLOCK


def decisive(calls: Sequence[AgentCall]) -> AgentCall | None:
    """THE decisive-call rule of a case's calls (in call order): among the reviewed ones
    (:attr:`AgentCall.reviewed`, those whose review is a case record), the first that went
    through, else the last; None when none was reviewed. The session stores its review as the
    case record, the audit checks that it did, and the stack outcome of the case is judged on
    it."""
    reviewed = [call for call in calls if call.reviewed]
    return next((call for call in reviewed if call.went_through),
                reviewed[-1] if reviewed else None)
