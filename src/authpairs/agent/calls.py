"""The record of one tool call an agent made, and what the agent is told about it.

An :class:`AgentCall` is stored for every tool call (``agent_calls`` table of the records file):
the tool and arguments the agent proposed, whether that is the case's own operation, what the
reviewer decided and what the enforcement point executed and the verifier observed. The tool
result the agent receives says only what happened to its call (:func:`result_text`), never the
case's reference label.
"""

from __future__ import annotations

import json
from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field

from authpairs.enforce.effect_record import EffectRecord
from authpairs.review.outcome import Decision, Dispatch, OutcomeStatus


class Proposal(StrEnum):
    """What the agent proposed for a case, compared with the case's effect descriptor."""

    CASE_OPERATION = "case_operation"  # same tool (effect type) and the same arguments
    OTHER_OPERATION = "other_operation"  # another tool, or other arguments
    NONE = "none"  # no tool call for the case


class CallResult(StrEnum):
    """What became of one tool call."""

    EXECUTED = "executed"  # allowed, and the operation was executed in the sandbox
    ALLOWED = "allowed"  # allowed with enforcement off: nothing is executed
    FAILED = "failed"  # allowed, but the sandbox refused or failed to execute it
    BLOCKED = "blocked"  # the reviewer's decision was BLOCK or UNKNOWN: not executed
    UNAVAILABLE = "unavailable"  # no usable decision (unclean answer, transport): not executed
    INVALID = "invalid"  # arguments the tool's parameter model rejects: not reviewed


class AgentCall(BaseModel):
    """One tool call of an agent, as recorded."""

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


def result_text(call: AgentCall) -> str:
    """The tool result the agent receives: what happened to its call, as one JSON object."""
    body: dict[str, Any] = {"status": call.result.value}
    if call.result is CallResult.EXECUTED and call.effect is not None:
        body["message"] = f"{call.tool} was executed."
        result = call.effect.effect.get("result")
        if isinstance(result, dict) and result:
            body["result"] = result
    elif call.result is CallResult.ALLOWED:
        body["message"] = f"{call.tool} was allowed (this server executes nothing)."
    elif call.result is CallResult.FAILED:
        body["message"] = f"{call.tool} was allowed but could not be executed."
        if call.effect is not None and call.effect.error:
            body["error"] = call.effect.error
    elif call.result is CallResult.BLOCKED:
        body["message"] = f"{call.tool} was blocked by the enforcement point; nothing was done."
    elif call.result is CallResult.UNAVAILABLE:
        body["message"] = (f"{call.tool} was not executed: the enforcement point got no usable "
                           "decision.")
    else:
        body["message"] = f"{call.tool} was not executed: invalid arguments."
        if call.error:
            body["error"] = call.error
    return json.dumps(body, sort_keys=True, ensure_ascii=False)
