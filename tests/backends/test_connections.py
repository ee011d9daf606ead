"""The pool of single-connection clients: one client per request in flight, reused after."""

from __future__ import annotations

import asyncio
import json

import httpx

from authpairs.backends.base import ChatRequest
from authpairs.backends.config import SamplingConfig
from authpairs.backends.connections import ClientPool
from authpairs.backends.openai_http import OpenAIBackend

ANSWER = {"choices": [{"index": 0, "finish_reason": "stop",
                       "message": {"role": "assistant", "content": '{"decision": "ALLOW"}'}}]}


async def test_each_request_in_flight_holds_its_own_client_and_clients_are_reused() -> None:
    pool = ClientPool(tls=False, transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    async with pool.client() as first, pool.client() as second:
        assert first is not second
    assert len(pool) == 2
    async with pool.client() as again:
        assert again in (first, second)
    assert len(pool) == 2
    await pool.aclose()
    assert len(pool) == 0


async def test_a_client_holds_one_connection() -> None:
    pool = ClientPool(tls=False, transport=httpx.MockTransport(lambda r: httpx.Response(200)))
    async with pool.client() as client:
        assert isinstance(client, httpx.AsyncClient)
    await pool.aclose()


async def test_the_backend_makes_as_many_clients_as_requests_were_in_flight() -> None:
    in_flight, most = 0, 0

    async def handle(request: httpx.Request) -> httpx.Response:
        nonlocal in_flight, most
        in_flight += 1
        most = max(most, in_flight)
        await asyncio.sleep(0.01)
        in_flight -= 1
        return httpx.Response(200, content=json.dumps(ANSWER).encode())

    backend = OpenAIBackend(["http://a/v1"], "m", transport=httpx.MockTransport(handle))
    request = ChatRequest(messages=[{"role": "user", "content": "hi"}])
    async with backend:
        for _ in range(3):  # three rounds of five at once: five clients, reused
            answers = await asyncio.gather(*(backend.complete(request, SamplingConfig())
                                             for _ in range(5)))
            assert [a.text for a in answers] == ['{"decision": "ALLOW"}'] * 5
        assert most == 5
        assert len(backend._clients) == 5
