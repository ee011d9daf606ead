"""Scripted agents for the runner tests (``module:function`` agents, kind ``scripted``): each
turn is decided from the conversation so far, deterministically."""

from __future__ import annotations

from typing import Any

REFUND = {"from_account": "merchant-ops", "to_account": "card-4471", "amount": "75.00",
          "currency": "USD"}
"""The operation of the refund examples (their effect descriptor)."""


def _task(messages: list[dict[str, Any]]) -> str:
    return next(str(m["content"]) for m in messages if m["role"] == "user")


def _done(messages: list[dict[str, Any]]) -> int:
    """How many tool results the agent has seen."""
    return sum(1 for m in messages if m["role"] == "tool")


def _call(name: str, arguments: dict[str, Any] | str) -> dict[str, Any]:
    return {"content": "", "tool_calls": [{"name": name, "arguments": arguments}]}


def by_the_task(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Refund within the USD 100 delegation: the case's own operation, then the same call
    again, then an answer. Refund under the USD 50 delegation: 40.00 instead (other arguments),
    then an answer. Address updates: no call at all."""
    assert {t["function"]["name"] for t in tools} >= {"ledger_transfer", "record_update"}
    task, done = _task(messages), _done(messages)
    if "up to USD 100" in task:
        if done < 2:
            return _call("ledger_transfer", REFUND)
        return {"content": "Refunded."}
    if "up to USD 50" in task:
        if done == 0:
            return _call("ledger_transfer", {**REFUND, "amount": "40.00"})
        return {"content": "Refunded what the delegation covers."}
    return {"content": "I make no call for this request."}


def stubborn(messages: list[dict[str, Any]], tools: list[dict[str, Any]]) -> dict[str, Any]:
    """Never stops calling: arguments that are not JSON first, then arguments the tool
    rejects, then a tool that does not exist."""
    done = _done(messages)
    if done == 0:
        return _call("ledger_transfer", "{not json")
    if done == 1:
        return _call("ledger_transfer", {"amount": "a lot"})
    return _call("teleport", {"where": "anywhere"})
