"""The scripted agent of docs/agents.md: a plain Python function in place of a model.

Run it with ``authpairs run --dataset examples --guardrail examples.guard:review --agent
examples.scripted_agent:act``. Each turn it is handed the conversation so far (OpenAI chat
messages) and the tools (OpenAI function tools), and returns the assistant's turn: text, tool
calls, or both. A fixed agent like this one tests a harness or a guardrail without a model.
"""

from __future__ import annotations

from typing import Any

REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}
"""The refund of the example cases, as the ledger_transfer tool takes it."""


def act(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Ask for a refund once, whatever the evidence says; make no call for anything else; stop
    once a tool result came back."""
    if any(message["role"] == "tool" for message in messages):
        return {"content": "Done: the tool result says what happened."}
    task = next(message["content"] for message in messages if message["role"] == "user")
    if "action: refund" in task:
        return {"content": "", "tool_calls": [{"name": "ledger_transfer", "arguments": REFUND}]}
    return {"content": "I make no call for this request."}
