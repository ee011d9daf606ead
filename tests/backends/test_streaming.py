"""Streamed replies and the deadline rule (an attempt is abandoned only when no progress arrives
for the deadline), against a real loopback HTTP server that streams server-sent events.

Intervals are tens of milliseconds, so the whole file runs in a few seconds: a slow stream whose
total is several deadlines long completes in one attempt; a stream that stops is a timeout
within the deadline plus slack; a cut stream is a transport error, retried; the assembled answer
is the one the server gives without streaming.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from authpairs.backends.base import ChatRequest, ChatResponse
from authpairs.backends.config import LocalBackendConfig, OpenAIBackendConfig, SamplingConfig
from authpairs.backends.liveness import AttemptClock, paused
from authpairs.backends.openai_http import (
    STREAM_EVENT_MARGIN,
    OpenAIBackend,
    StreamAssembler,
    parse_completion,
)
from authpairs.errors import TransportError
from authpairs.runs import case_runner
from authpairs.runs.api import run_async
from authpairs.runs.config import RunConfig, config_from_dict
from authpairs.runs.store import RecordStore
from tests.backends.fake_server import FaultServer

REQUEST = ChatRequest(messages=[{"role": "user", "content": "hi"}])
DEADLINE_S = 0.2


def _config(server: FaultServer, records: Path, *, retries: int, stream: bool = True,
            deadline_s: float = DEADLINE_S) -> RunConfig:
    return config_from_dict({
        "dataset": "examples", "split": "all", "limit": 1, "enforce": False,
        "concurrency": 1, "infra_retries": retries, "records": str(records), "run_id": "s",
        "reviewer": {"interface": "direct", "backend": {
            "kind": "openai", "base_urls": [server.base_url], "model": "m",
            "deadline_s": deadline_s, "stream": stream}}})


def _fields(response: ChatResponse) -> dict[str, Any]:
    return response.model_dump(exclude={"latency_s"})


async def test_a_streamed_reply_reads_as_the_plain_one() -> None:
    async with FaultServer(["ok", "ok"]) as server:
        async with OpenAIBackend([server.base_url], "m") as plain:
            expected = await plain.complete(REQUEST, SamplingConfig())
        async with OpenAIBackend([server.base_url], "m", stream=True) as streamed:
            got = await streamed.complete(REQUEST, SamplingConfig(max_tokens=8))
    assert _fields(got) == _fields(expected)
    assert got.text == '{"decision": "ALLOW"}' and got.output_tokens == 5
    assert server.bodies[0].get("stream") is None
    assert server.bodies[1]["stream"] is True
    assert server.bodies[1]["stream_options"] == {"include_usage": True}


def _sse(events: list[Any]) -> list[str]:
    lines = [": keep-alive comment", ""]
    for event in events:
        lines += [f"data: {json.dumps(event)}", ""]
    return [*lines, "data: [DONE]", ""]


@pytest.mark.parametrize("reasoning_key", ["reasoning_content", "reasoning"])
def test_assembly_keeps_reasoning_finish_and_usage(reasoning_key: str) -> None:
    usage = {"prompt_tokens": 9, "completion_tokens": 6,
             "completion_tokens_details": {"reasoning_tokens": 2}}
    plain = {"choices": [{"index": 0, "finish_reason": "length", "message": {
        "role": "assistant", "content": "héllo wörld", reasoning_key: "think"}}], "usage": usage}
    events = [{"choices": [{"index": 0, "delta": {"role": "assistant"}}]},
              {"choices": [{"index": 0, "delta": {reasoning_key: "thi"}}]},
              {"choices": [{"index": 0, "delta": {reasoning_key: "nk"}}]},
              {"choices": [{"index": 0, "delta": {"content": "héllo"}},
                           {"index": 1, "delta": {"content": "other choice"}}]},
              {"choices": [{"index": 0, "delta": {"content": " wörld"},
                            "finish_reason": "length"}]},
              {"choices": [], "usage": usage}]
    assembler = StreamAssembler(raw=False, max_events=64)
    progressed = sum(assembler.add_line(line) for line in _sse(events))
    assert progressed == len(events) + 1  # every data event, [DONE] included; comments are not
    assert parse_completion(assembler.body()) == parse_completion(plain)


def test_assembly_of_a_raw_completion_stream() -> None:
    plain = {"choices": [{"index": 0, "text": "<|start|>ok", "finish_reason": "stop"}],
             "usage": {"prompt_tokens": 3, "completion_tokens": 2}}
    events = [{"choices": [{"index": 0, "text": "<|start|>"}]},
              {"choices": [{"index": 0, "text": "ok", "finish_reason": "stop"}]},
              {"choices": [], "usage": plain["usage"]}]
    assembler = StreamAssembler(raw=True, max_events=8)
    for line in _sse(events):
        assembler.add_line(line)
    assert parse_completion(assembler.body()) == parse_completion(plain)


@pytest.mark.parametrize(("lines", "cause"), [
    (["data: {not json"], "not JSON"),
    (["data: [1]"], "top level is list"),
    (['data: {"error": {"message": "boom"}}'], "error in the stream: {'message': 'boom'}"),
    (['data: {"choices": {"a": 1}}'], "'choices' is not a list"),
    (['data: {"choices": [{"delta": {"content": 5}}]}'], "delta.content is int"),
    (['data: {"choices": [{"delta": {"content": "a"}}]}'], "before its end marker"),
    (["data: {}"] * 5, "more than 4 events"),
])
def test_malformed_streams_are_transport_errors(lines: list[str], cause: str) -> None:
    assembler = StreamAssembler(raw=False, max_events=4)
    with pytest.raises(TransportError) as info:
        for line in lines:
            assembler.add_line(line)
        assembler.body()
    assert cause in str(info.value)


async def test_a_slow_stream_that_keeps_progressing_completes_in_one_attempt(
        tmp_path: Path) -> None:
    """21 pieces 45 ms apart: a reply about 1 s long (over four deadlines), each gap under a
    quarter of one."""
    records = tmp_path / "r.sqlite"
    async with FaultServer(["stream:45:21"]) as server:
        started = time.monotonic()
        state = await run_async(_config(server, records, retries=2), progress=False)
        elapsed = time.monotonic() - started
    assert state.completed_now == 1 and not state.infrastructure_failed
    assert server.requests == ["stream:45:21"]  # asked once: never abandoned, never retried
    assert elapsed > 4 * DEADLINE_S
    with RecordStore(records, readonly=True) as store:
        attempts = store.attempts("s")
        cases = store.case_records("s")
    assert [a.kind for a in attempts] == ["formal"]
    assert attempts[0].output_text == '{"decision": "ALLOW"}'
    assert cases[0].decision is not None and cases[0].decision.value == "ALLOW"


async def test_the_same_slow_reply_unstreamed_is_a_timeout(tmp_path: Path) -> None:
    """The contrast: a reply delivered in one piece after 1 s misses a 0.2 s deadline."""
    async with FaultServer(["trickle:1"]) as server:
        state = await run_async(_config(server, tmp_path / "r.sqlite", retries=0, stream=False),
                                progress=False)
    assert state.completed_now == 0
    assert set(state.cause_summary()) == {
        "timeout: no complete reply within the 0.2 s deadline"}


async def test_a_stalled_stream_is_an_infrastructure_timeout_never_a_decision(
        tmp_path: Path) -> None:
    records = tmp_path / "r.sqlite"
    async with FaultServer(["stall:3"]) as server:
        started = time.monotonic()
        state = await run_async(_config(server, records, retries=0), progress=False)
        elapsed = time.monotonic() - started
    assert state.completed_now == 0 and len(state.infrastructure_failed) == 1
    assert set(state.cause_summary()) == {
        "timeout: the streamed reply stalled: no progress for 0.2 s (the deadline) after 3 "
        "events"}
    assert elapsed < DEADLINE_S + 1.5  # the deadline after the last event, plus slack
    with RecordStore(records, readonly=True) as store:
        assert store.case_records("s") == []  # no decision
        attempts = store.attempts("s")
    assert [a.kind for a in attempts] == ["infrastructure"]
    assert attempts[0].output_text is None


async def test_a_cut_stream_is_a_transport_error_and_is_retried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(case_runner.CaseRunner, "retry_delay", lambda self, n, exc: 0.01)
    records = tmp_path / "r.sqlite"
    async with FaultServer(["cut:2", "stream:10:4"]) as server:
        state = await run_async(_config(server, records, retries=1), progress=False)
    assert state.completed_now == 1 and server.requests == ["cut:2", "stream:10:4"]
    with RecordStore(records, readonly=True) as store:
        attempts = store.attempts("s")
    assert [a.kind for a in attempts] == ["infrastructure", "formal"]
    assert attempts[0].error is not None and "RemoteProtocolError" in attempts[0].error


async def test_a_server_that_closes_after_each_stream_is_never_reused() -> None:
    """llama.cpp's server advertises keep-alive but closes the connection after a streamed
    reply; a request sent on that connection would fail ("Server disconnected without sending a
    response"). Streamed requests ask for their own connection, so none fails."""
    async with FaultServer(close_after_stream=0.05) as server, OpenAIBackend(
            [server.base_url], "m", stream=True) as backend:
        for _ in range(20):
            await backend.complete(REQUEST, SamplingConfig())
    assert len(server.requests) == 20


async def test_a_stream_longer_than_the_output_limit_allows_is_refused() -> None:
    flood = 8 + STREAM_EVENT_MARGIN
    async with FaultServer([f"flood:{flood}"]) as server, OpenAIBackend(
            [server.base_url], "m", stream=True) as backend:
        with pytest.raises(TransportError, match=f"more than {flood} events"):
            await backend.complete(REQUEST, SamplingConfig(max_tokens=8))


async def test_a_backend_on_its_own_keeps_the_same_rule() -> None:
    """Outside a run the backend's own deadline_s is the stall interval."""
    async with FaultServer(["stream:50:10", "stall:2"]) as server, OpenAIBackend(
            [server.base_url], "m", stream=True, deadline_s=DEADLINE_S) as backend:
        response = await backend.complete(REQUEST, SamplingConfig())
        assert response.text == '{"decision": "ALLOW"}'
        with pytest.raises(TransportError, match=r"stalled: no progress for 0\.2 s") as info:
            await backend.complete(REQUEST, SamplingConfig())
        assert str(info.value).startswith(server.base_url)


async def test_waiting_for_a_slot_does_not_count_against_the_deadline() -> None:
    """One slot, two slow streams: the second waits 0.5 s for the slot, longer than the
    deadline, and is not abandoned for it."""
    async with FaultServer(default="stream:50:10") as server, OpenAIBackend(
            [server.base_url], "m", stream=True, deadline_s=DEADLINE_S,
            concurrency_per_endpoint=1) as backend:

        async def attempt() -> str | None:
            async with AttemptClock(DEADLINE_S):
                return (await backend.complete(REQUEST, SamplingConfig())).text

        texts = list(await asyncio.gather(attempt(), attempt()))
    assert texts == ['{"decision": "ALLOW"}'] * 2 and server.peak_in_flight == 1


async def test_the_clock_expires_without_progress_and_pauses_on_request() -> None:
    async with AttemptClock(0.1) as clock:
        for _ in range(5):
            await asyncio.sleep(0.05)
            clock.progress()
        with paused():
            await asyncio.sleep(0.2)
    assert clock.events == 5
    with pytest.raises(TimeoutError):
        async with AttemptClock(0.1):
            await asyncio.sleep(0.3)
    async with AttemptClock(None) as endless:  # no deadline
        await asyncio.sleep(0.01)
        endless.progress()


def test_streaming_is_the_local_default_and_never_part_of_the_identity() -> None:
    assert LocalBackendConfig().stream is True
    assert OpenAIBackendConfig().stream is False
    assert LocalBackendConfig(stream=False).identity() == LocalBackendConfig().identity()
    assert (OpenAIBackendConfig(model="m", stream=True).identity()
            == OpenAIBackendConfig(model="m").identity())
