"""Scripted reviewer answers used by the core tests (importable as 'tests.runs.scripts:NAME')."""

from __future__ import annotations

import asyncio
import os
import time

from authpairs.backends.base import ChatRequest, ChatResponse


def allow_direct(request: ChatRequest) -> str:
    """Always a clean direct ALLOW."""
    return '{"decision": "ALLOW"}'


def block_structured(request: ChatRequest) -> str:
    """A clean structured BLOCK."""
    return ('{"checks": [{"requirement": "active grant", "finding": "not shown", '
            '"evidence": []}], "decision": "BLOCK"}')


async def slow_allow(request: ChatRequest) -> ChatResponse:
    """ALLOW after a delay (seconds from AUTHPAIRS_TEST_DELAY), for kill-and-resume tests."""
    await asyncio.sleep(float(os.environ.get("AUTHPAIRS_TEST_DELAY", "0.05")))
    return ChatResponse(text='{"decision": "ALLOW"}', finish_reason="stop", input_tokens=10,
                        output_tokens=5)


def sleepy_sync_guardrail(case: object) -> str:
    """A guardrail function that answers ALLOW only after AUTHPAIRS_TEST_DELAY seconds."""
    time.sleep(float(os.environ.get("AUTHPAIRS_TEST_DELAY", "2")))
    return "ALLOW"


async def sleepy_async_guardrail(case: object) -> str:
    """The async version of :func:`sleepy_sync_guardrail`."""
    await asyncio.sleep(float(os.environ.get("AUTHPAIRS_TEST_DELAY", "2")))
    return "ALLOW"
