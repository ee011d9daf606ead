"""The trajectory of one case of an agent run: the agent's conversation and how it ended.

Stored once per case (``agent_trajectories`` table, records schema 5) when the case's loop
ends. The tool calls in it are the agent's side of the story; what each call became (review,
dispatch, effect) is its :class:`~authpairs.runs.records.AgentCall` row, matched by the order of
the calls.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from pydantic import BaseModel, Field


class StopReason(StrEnum):
    """Why the agent's loop for a case ended."""

    ANSWERED = "answered"  # the model answered without a tool call
    TURN_LIMIT = "turn_limit"  # max_turns model turns, the last with tool calls or a malformed step
    AGENT_ERROR = "agent_error"  # the agent's model failed (retries exhausted, bad reply)


class Trajectory(BaseModel):
    """One case of an agent run as the agent lived it."""

    run_id: str
    case_id: str
    messages: list[dict[str, Any]] = Field(
        default_factory=list, description="The conversation in OpenAI chat format: system, "
        "user (the case's task), assistant turns (with tool_calls) and tool results.")
    turns: int = Field(default=0, description="Model turns taken.")
    tool_calls: int = Field(default=0, description="Tool calls the model made (sent to the "
                            "server, and so recorded as agent calls).")
    malformed_calls: int = Field(default=0, description="Tool calls whose arguments were not a "
                                 "JSON object: answered with an error, not sent to the server.")
    stop: StopReason
    error: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0

