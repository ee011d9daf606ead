"""What the agent is told about one of its tool calls.

The record of a call (:class:`~authpairs.runs.records.AgentCall`, ``agent_calls`` table) is
defined in the records layer; the tool result the agent receives says only what happened to its
call (:func:`result_text`), never the case's reference label.
"""

from __future__ import annotations

import json
from typing import Any

from authpairs.runs.records import AgentCall, CallResult


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
