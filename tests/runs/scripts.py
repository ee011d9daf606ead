"""Scripted reviewer answers used by the core tests (importable as 'tests.runs.scripts:NAME')."""

from __future__ import annotations

import asyncio
import os
import time

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.errors import TransportError


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


DOWN_MARKER = "EX-c64055c2cb7187da"
"""The example case whose server is 'down' in :func:`down_for_one`."""


def down_for_one(request: ChatRequest) -> str:
    """ALLOW, but the server is always down for one example case (it stays unrecorded)."""
    if DOWN_MARKER in request.messages[-1]["content"]:
        raise TransportError("http://127.0.0.1:9/v1: ConnectError: connection refused")
    return '{"decision": "ALLOW"}'


async def slow_allow_logged(request: ChatRequest) -> ChatResponse:
    """ALLOW after a delay, appending the case's source id to $AUTHPAIRS_TEST_LOG (one line per
    review) so tests can prove that no case was reviewed twice."""
    await asyncio.sleep(float(os.environ.get("AUTHPAIRS_TEST_DELAY", "0.02")))
    content = request.messages[-1]["content"]
    marker = next((w for w in content.replace('"', " ").split() if w.startswith("EX-")), "?")
    log = os.environ.get("AUTHPAIRS_TEST_LOG")
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(f"{os.getpid()} {marker}\n")
    return ChatResponse(text='{"decision": "ALLOW"}', finish_reason="stop", input_tokens=3,
                        output_tokens=2)
