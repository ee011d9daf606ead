"""The retry rule both retry loops share (``RetryPolicy``): attempts, backoff, and a server's
``Retry-After`` honoured where longer than the backoff, up to ``MAX_RETRY_AFTER_S``."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from authpairs.agent.runner import AgentLoop
from authpairs.backends.tool_chat import ToolChat, ToolChatResponse
from authpairs.errors import TransportError
from authpairs.runs.agent_config import AgentModelConfig
from authpairs.runs.retry import MAX_RETRY_AFTER_S, RetryPolicy


def test_attempts_and_backoff() -> None:
    policy = RetryPolicy(retries=2, backoff_s=0.5)
    assert list(policy.attempts) == [1, 2, 3]
    assert [policy.retried(n) for n in policy.attempts] == [True, True, False]
    assert [policy.backoff(n) for n in (1, 2, 3)] == [0.5, 1.0, 2.0]


@pytest.mark.parametrize(("retry_after", "expected"), [
    (None, 1.0),  # no hint: the backoff
    (0.1, 1.0),  # a shorter hint does not shorten the backoff
    (5.0, 5.0),  # a longer one is waited
    (86_400.0, MAX_RETRY_AFTER_S),  # an absurd one only up to the bound
])
def test_delay_honours_retry_after_within_the_bound(retry_after: float | None,
                                                    expected: float) -> None:
    assert RetryPolicy(3, 0.5).delay(2, retry_after) == expected


class _BusyThenAnswers:
    """A tool chat that is busy (HTTP 429 with the given Retry-After) before it answers."""

    def __init__(self, retry_afters: list[float | None]) -> None:
        self.retry_afters = retry_afters

    async def chat(self, *args: Any) -> ToolChatResponse:
        if self.retry_afters:
            raise TransportError("HTTP 429", retry_after=self.retry_afters.pop(0))
        return ToolChatResponse(text="done", tool_calls=[])


async def test_the_agent_model_waits_by_the_same_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    waits: list[float] = []

    async def sleep(seconds: float) -> None:
        waits.append(seconds)

    monkeypatch.setattr(asyncio, "sleep", sleep)  # the loop sleeps through asyncio.sleep
    settings = AgentModelConfig.model_validate(
        {"backend": {"kind": "scripted", "script": "tests.agent.agents:stubborn"}})
    loop = AgentLoop(cast(Any, None), cast(ToolChat, _BusyThenAnswers([86_400.0, 0.01, None])),
                     settings, run_id="r", retries=3)
    reply = await loop._turn([], [])
    assert reply.text == "done"
    assert waits == [MAX_RETRY_AFTER_S, 1.0, 2.0]
